package fxgraph

import (
	"errors"
	"fmt"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ErrNoTypeRule is returned by InferType for a node whose type cannot be
// derived: an op without a result-type rule, an input without a type, a
// call_module or call_method node.
var ErrNoTypeRule = errors.New("no result-type rule applies")

// InferType derives n's type from its op's result-type rule applied to its
// inputs' types (arguments normalised with the schema; a packet resolves to
// the first overload whose schema fits, as an eager call would). An op
// without a rule (see ops/RULES.md) has a type only when its schema says
// the result is an argument it writes (an in-place or out= op): that
// argument's type. For operator.getitem it is the indexed element of the
// source's tuple type.
// It does not change n. reg nil means ops.Default().
func InferType(n *Node, reg *ops.Registry) (ops.Type, error) {
	if reg == nil {
		reg = ops.Default()
	}
	if n.op != CallFunction || n.target == nil {
		return nil, fmt.Errorf("node %s (%s): %w", n, n.op, ErrNoTypeRule)
	}
	if n.target == ops.GetItem {
		return inferGetItem(n)
	}
	var def *ops.OpDef
	switch t := n.target.(type) {
	case ops.Overload:
		d, ok := reg.Op(t)
		if !ok {
			return nil, fmt.Errorf("node %s: %s is not in the registry: %w", n, t, ErrNoTypeRule)
		}
		def = d
	case ops.Packet:
		o, err := reg.Resolve(t, n.args, n.Kwargs())
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n, err)
		}
		def, _ = reg.Op(o)
	default:
		return nil, fmt.Errorf("node %s: callable %s: %w", n, n.target, ErrNoTypeRule)
	}
	if def == nil {
		return nil, fmt.Errorf("node %s (%s): %w", n, n.target, ErrNoTypeRule)
	}
	if def.Result == nil {
		return inferWritten(n, def)
	}
	full, err := def.Schema.Normalize(n.args, n.Kwargs())
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n, err)
	}
	typed := make([]ops.Value, len(full))
	for i, a := range full {
		m, err := ops.MapValue(a, func(x ops.Value) (ops.Value, error) {
			ref, ok := x.(*Node)
			if !ok {
				return x, nil
			}
			if ref == nil || ref.typ == nil {
				return nil, fmt.Errorf("node %s: input %s has no type: %w", n, ref, ErrNoTypeRule)
			}
			return ref.typ, nil
		})
		if err != nil {
			return nil, err
		}
		typed[i] = m
	}
	t, err := ops.ApplyRule(def.Result, typed)
	if err != nil {
		return nil, fmt.Errorf("node %s (%s): %w", n, n.target, err)
	}
	return t, nil
}

// inferWritten types a node of an op without a result-type rule when its
// schema settles the type: a single result that is a written argument
// ("add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)", an out= form) has
// that argument's type. Any other op without a rule has no type to infer.
func inferWritten(n *Node, def *ops.OpDef) (ops.Type, error) {
	s := def.Schema
	if len(s.Returns) == 1 && s.Returns[0].Type.Write && !s.Returns[0].Type.List {
		if k := s.AliasedArg(0); k >= 0 {
			full, err := s.Normalize(n.args, n.Kwargs())
			if err != nil {
				return nil, fmt.Errorf("node %s: %w", n, err)
			}
			if src, ok := full[k].(*Node); ok && src != nil && src.typ != nil {
				return src.typ, nil
			}
		}
	}
	return nil, fmt.Errorf("node %s (%s): %w", n, n.target, ErrNoTypeRule)
}

func inferGetItem(n *Node) (ops.Type, error) {
	src, ok := n.Arg(0).(*Node)
	idx, ok2 := n.Arg(1).(int64)
	if !ok || !ok2 || src == nil {
		return nil, fmt.Errorf("node %s: getitem wants (node, int): %w", n, ErrNoTypeRule)
	}
	tt, ok := src.typ.(ops.TupleType)
	if !ok || idx < 0 || idx >= int64(len(tt.Elems)) || tt.Elems[idx] == nil {
		return nil, fmt.Errorf("node %s: source %s has no tuple type with element %d: %w", n, src, idx, ErrNoTypeRule)
	}
	return tt.Elems[idx], nil
}

// InferMissingTypes gives every untyped node of g a type where one can be
// derived, in program order (so a chain of new nodes is typed front to
// back): a get_attr reading a tensor attribute gets that tensor's dtype and
// shape, and a call_function node the type its op's rule derives from its
// inputs. Nodes whose type cannot be derived stay untyped; their count is
// returned. Existing types are never changed: a node's type is a contract
// that rewrites derive on purpose.
func InferMissingTypes(g *Graph, reg *ops.Registry) (filled, left int) {
	for n := range g.All() {
		if n.typ != nil {
			continue
		}
		if n.op == GetAttr {
			if t, ok := g.attrs[n.targetName].(interface {
				DType() tensor.DType
				Shape() []int
			}); ok {
				n.SetType(ops.Plain(t.DType(), ops.ShapeInts(t.Shape())...))
				filled++
			}
			continue
		}
		if n.op != CallFunction {
			continue
		}
		t, err := InferType(n, reg)
		if err != nil {
			left++
			continue
		}
		n.SetType(t)
		filled++
	}
	return filled, left
}
