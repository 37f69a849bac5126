package typed

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// RunTyped runs a lifted (or partly lifted) graph with the quantized
// semantics of typed-rewrites.md 2.5: every compute node dequantizes its
// typed inputs with their own types, computes in float32 and quantizes its
// result with its own type. It lowers a copy of g to explicit q/dq nodes
// and interprets that; g is not modified.
func RunTyped(g *fxgraph.Graph, inputs []*tensor.Tensor, opts interp.Options) ([]ops.Value, error) {
	c, _ := g.Clone()
	if _, err := Lower(c, opts.Registry); err != nil {
		return nil, fmt.Errorf("typed: run: %w", err)
	}
	return interp.Run(c, inputs, opts)
}
