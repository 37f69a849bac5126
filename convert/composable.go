package convert

import (
	"fmt"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
)

// recordAnnotations is ComposableQuantizer._record_and_validate_annotations:
// every annotation of g is recorded in seen; one that is no longer the
// object recorded for its node (torchao compares Python ids, fxquant
// pointers) or that has disappeared is an error naming quantizer i and the
// node.
func recordAnnotations(g *fxgraph.Graph, seen map[*fxgraph.Node]*QuantizationAnnotation, i int, q Quantizer) error {
	for n := range g.All() {
		a := Annotation(n)
		prev, had := seen[n]
		switch {
		case a != nil && had && prev != a:
			return fmt.Errorf("quantizer %d (%s) has changed annotations on node %q: %w", i, quantizerName(q), n.Name(), ErrAnnotation)
		case a != nil:
			seen[n] = a
		case had:
			return fmt.Errorf("quantizer %d (%s) has removed annotations on node %q: %w", i, quantizerName(q), n.Name(), ErrAnnotation)
		}
	}
	return nil
}

// quantizerName is q's type name without package or pointer, as torchao's
// quantizer.__class__.__name__.
func quantizerName(q Quantizer) string {
	s := fmt.Sprintf("%T", q)
	s = strings.TrimPrefix(s, "*")
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	return s
}
