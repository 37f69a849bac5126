package main

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// fillTypes gives every untyped value of g the type its op's result-type
// rule derives (fxgraph.InferMissingTypes), so that the writer, which needs
// a TensorMeta for every value, can write any node. A value node whose type
// cannot be derived is an error naming it.
func fillTypes(g *fxgraph.Graph, reg *ops.Registry) error {
	if _, left := fxgraph.InferMissingTypes(g, reg); left == 0 {
		return nil
	}
	for n := range g.All() {
		switch n.Op() {
		case fxgraph.Placeholder, fxgraph.GetAttr, fxgraph.CallFunction:
			if n.Type() != nil {
				continue
			}
			if n.Op() == fxgraph.CallFunction {
				_, err := fxgraph.InferType(n, reg)
				return fmt.Errorf("node %q (%s): cannot compute its type: %w", n.Name(), targetString(n), err)
			}
			return fmt.Errorf("node %q (%s): has no type", n.Name(), targetString(n))
		}
	}
	return nil
}
