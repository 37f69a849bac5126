package main

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// fillTypes gives every untyped node of g the type its op's result-type
// rule computes from its inputs' types (get_attr nodes: their tensor's type;
// operator.getitem: the element of its input's tuple type), in program
// order, so that the writer, which needs a TensorMeta for every value, can
// write nodes that convert created without a type. Nodes that already have
// a type are left alone. A node whose type cannot be computed is an error
// naming it.
func fillTypes(g *fxgraph.Graph, reg *ops.Registry) error {
	if reg == nil {
		reg = ops.Default()
	}
	for n := range g.All() {
		if n.Type() != nil {
			continue
		}
		t, err := inferType(g, n, reg)
		if err != nil {
			return fmt.Errorf("node %q (%s): cannot compute its type: %w", n.Name(), targetString(n), err)
		}
		if t != nil {
			n.SetType(t)
		}
	}
	return nil
}

// inferType computes n's type; nil, nil for nodes that have none (output,
// call_module).
func inferType(g *fxgraph.Graph, n *fxgraph.Node, reg *ops.Registry) (ops.Type, error) {
	switch n.Op() {
	case fxgraph.GetAttr:
		v, ok := g.Attr(n.TargetName())
		if !ok {
			return nil, fmt.Errorf("no attribute %q", n.TargetName())
		}
		t, ok := v.(*tensor.Tensor)
		if !ok {
			return nil, nil
		}
		return ops.MakePlainType(ops.ShapeInts(t.Shape()), t.DType())
	case fxgraph.CallFunction:
	default:
		return nil, nil
	}
	if n.Target() == ops.GetItem {
		src, ok := n.Arg(0).(*fxgraph.Node)
		idx, ok2 := n.Arg(1).(int64)
		if !ok || !ok2 {
			return nil, fmt.Errorf("want getitem(node, int), got %v", n.Args())
		}
		tt, ok := src.Type().(ops.TupleType)
		if !ok || idx < 0 || int(idx) >= len(tt.Elems) {
			return nil, fmt.Errorf("input %q has type %v, want a tuple with element %d", src.Name(), src.Type(), idx)
		}
		return tt.Elems[idx], nil
	}
	var candidates []ops.Overload
	switch t := n.Target().(type) {
	case ops.Overload:
		candidates = []ops.Overload{t}
	case ops.Packet:
		candidates = reg.Overloads(t)
	default:
		return nil, fmt.Errorf("no result-type rule for %v", n.Target())
	}
	var firstErr error
	for _, o := range candidates {
		def, ok := reg.Op(o)
		if !ok || def.Result == nil {
			continue
		}
		full, err := def.Schema.Normalize(n.Args(), n.Kwargs())
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		typed := make([]ops.Value, len(full))
		for i, a := range full {
			m, err := ops.MapValue(a, func(x ops.Value) (ops.Value, error) {
				if ref, ok := x.(*fxgraph.Node); ok {
					if ref.Type() == nil {
						return nil, fmt.Errorf("input %q has no type", ref.Name())
					}
					return ref.Type(), nil
				}
				return x, nil
			})
			if err != nil {
				return nil, err
			}
			typed[i] = m
		}
		t, err := def.Result(typed)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return t, nil
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("the registry has no result-type rule for %v", n.Target())
	}
	return nil, firstErr
}
