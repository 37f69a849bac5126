package typed

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// InferTypes gives every untyped get_attr node reading a tensor the
// tensor's type, and every untyped call_function node the type its
// op's result rule computes from its inputs' types (as [ResultRule] reads
// them). Placeholders must already be typed. Nodes that already have a
// type keep it. Call_module and output nodes are left alone. It fails,
// naming the node, when a type cannot be computed.
func InferTypes(g *fxgraph.Graph, reg *ops.Registry) error {
	if reg == nil {
		reg = ops.Default()
	}
	rule := ResultRule(reg)
	for _, n := range g.Nodes() {
		if n.Type() != nil {
			continue
		}
		switch n.Op() {
		case fxgraph.Placeholder:
			if n.NumUsers() > 0 {
				return fmt.Errorf("typed: infer types: placeholder %q has no type", n.Name())
			}
		case fxgraph.GetAttr:
			if a, ok := g.Attr(n.TargetName()); ok {
				if t, ok := a.(*tensor.Tensor); ok && t != nil {
					n.SetType(ops.Plain(t.DType(), ops.ShapeInts(t.Shape())...))
				}
			}
		case fxgraph.CallFunction:
			if err := inferCall(n, reg, rule); err != nil {
				return err
			}
		}
	}
	return nil
}

func inferCall(n *fxgraph.Node, reg *ops.Registry, rule func(*fxgraph.Node, *ops.OpDef, []ops.Value) (ops.Type, error)) error {
	t := n.Target()
	if t == ops.GetItem {
		src, _ := n.Arg(0).(*fxgraph.Node)
		idx, ok := n.Arg(1).(int64)
		if src == nil || !ok {
			return fmt.Errorf("typed: infer types: node %q: want getitem(node, int)", n.Name())
		}
		tt, ok := src.Type().(ops.TupleType)
		if !ok || idx < 0 || int(idx) >= len(tt.Elems) {
			return fmt.Errorf("typed: infer types: node %q: %q has no tuple type with element %d", n.Name(), src.Name(), idx)
		}
		n.SetType(tt.Elems[idx])
		return nil
	}
	var o ops.Overload
	switch x := t.(type) {
	case ops.Overload:
		o = x
	case ops.Packet:
		r, err := reg.Resolve(x, n.Args(), n.Kwargs())
		if err != nil {
			return fmt.Errorf("typed: infer types: node %q: %w", n.Name(), err)
		}
		o = r
	default:
		return fmt.Errorf("typed: infer types: node %q: no type rule for %s", n.Name(), t)
	}
	def, ok := reg.Op(o)
	if !ok {
		return fmt.Errorf("typed: infer types: node %q: %s is not in the registry", n.Name(), o)
	}
	full, err := def.Schema.Normalize(n.Args(), n.Kwargs())
	if err != nil {
		return fmt.Errorf("typed: infer types: node %q (%s): %w", n.Name(), o, err)
	}
	for i, a := range full {
		full[i], err = ops.MapValue(a, func(x ops.Value) (ops.Value, error) {
			ref, ok := x.(*fxgraph.Node)
			if !ok {
				return x, nil
			}
			if ref.Type() == nil {
				return nil, fmt.Errorf("typed: infer types: node %q: input %q has no type", n.Name(), ref.Name())
			}
			return ref.Type(), nil
		})
		if err != nil {
			return err
		}
	}
	typ, err := rule(n, def, full)
	if err != nil {
		return fmt.Errorf("typed: infer types: node %q (%s): %w", n.Name(), o, err)
	}
	n.SetType(typ)
	return nil
}
