package typed

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Equiv reports whether a and b are the same program up to node names and
// the order of independent nodes: placeholders pair up in order, then
// every node reachable from the outputs (and every node without users,
// paired in program order) must match its partner in opcode, target,
// type (exactly), arguments and keyword arguments, with node references
// matching recursively and one-to-one. get_attr nodes match by attribute
// path, and the tensors they read must be equal. Metadata is not
// compared. The error names the first pair of nodes that differ.
func Equiv(a, b *fxgraph.Graph) error {
	e := &equiv{a: a, b: b, ab: map[*fxgraph.Node]*fxgraph.Node{}, ba: map[*fxgraph.Node]*fxgraph.Node{}}
	pa, pb := a.Placeholders(), b.Placeholders()
	if len(pa) != len(pb) {
		return fmt.Errorf("typed: equiv: %d placeholders vs %d", len(pa), len(pb))
	}
	for i := range pa {
		if err := e.node(pa[i], pb[i]); err != nil {
			return err
		}
	}
	roots := func(g *fxgraph.Graph) []*fxgraph.Node {
		var r []*fxgraph.Node
		for _, n := range g.Nodes() {
			if n.NumUsers() == 0 && n.Op() != fxgraph.Placeholder {
				r = append(r, n)
			}
		}
		return r
	}
	ra, rb := roots(a), roots(b)
	if len(ra) != len(rb) {
		return fmt.Errorf("typed: equiv: %d nodes without users vs %d", len(ra), len(rb))
	}
	for i := range ra {
		if err := e.node(ra[i], rb[i]); err != nil {
			return err
		}
	}
	if a.Len() != b.Len() || len(e.ab) != a.Len() {
		return fmt.Errorf("typed: equiv: %d nodes vs %d (%d matched)", a.Len(), b.Len(), len(e.ab))
	}
	return nil
}

type equiv struct {
	a, b   *fxgraph.Graph
	ab, ba map[*fxgraph.Node]*fxgraph.Node
}

func (e *equiv) node(x, y *fxgraph.Node) error {
	if m, ok := e.ab[x]; ok {
		if m != y {
			return fmt.Errorf("typed: equiv: %q matches both %q and %q", x.Name(), m.Name(), y.Name())
		}
		return nil
	}
	if m, ok := e.ba[y]; ok {
		return fmt.Errorf("typed: equiv: %q matches both %q and %q", y.Name(), m.Name(), x.Name())
	}
	diff := func(format string, args ...any) error {
		return fmt.Errorf("typed: equiv: %q vs %q: %s", x.Name(), y.Name(), fmt.Sprintf(format, args...))
	}
	if x.Op() != y.Op() {
		return diff("opcode %s vs %s", x.Op(), y.Op())
	}
	if x.Op() == fxgraph.CallFunction {
		if x.Target() != y.Target() {
			return diff("target %s vs %s", x.Target(), y.Target())
		}
	} else if x.TargetName() != y.TargetName() {
		return diff("target %s vs %s", x.TargetName(), y.TargetName())
	}
	if !ops.TypesEqual(x.Type(), y.Type()) {
		return diff("type %v vs %v (%s)", x.Type(), y.Type(), ops.TypeDiff(x.Type(), y.Type()))
	}
	if x.Op() == fxgraph.GetAttr {
		va, _ := e.a.Attr(x.TargetName())
		vb, _ := e.b.Attr(y.TargetName())
		ta, oka := va.(*tensor.Tensor)
		tb, okb := vb.(*tensor.Tensor)
		if oka != okb || (oka && !tensor.Equal(ta, tb)) {
			return diff("attribute %q holds different values", x.TargetName())
		}
	}
	e.ab[x], e.ba[y] = y, x
	if len(x.Args()) != len(y.Args()) {
		return diff("%d args vs %d", len(x.Args()), len(y.Args()))
	}
	for i := range x.Args() {
		if err := e.value(x.Arg(i), y.Arg(i)); err != nil {
			return fmt.Errorf("%w (in arg %d of %q)", err, i, x.Name())
		}
	}
	kx, ky := x.Kwargs(), y.Kwargs()
	if len(kx) != len(ky) {
		return diff("%d kwargs vs %d", len(kx), len(ky))
	}
	for i := range kx {
		if kx[i].Name != ky[i].Name {
			return diff("kwarg %s vs %s", kx[i].Name, ky[i].Name)
		}
		if err := e.value(kx[i].Value, ky[i].Value); err != nil {
			return fmt.Errorf("%w (in kwarg %s of %q)", err, kx[i].Name, x.Name())
		}
	}
	return nil
}

func (e *equiv) value(x, y ops.Value) error {
	switch vx := x.(type) {
	case *fxgraph.Node:
		vy, ok := y.(*fxgraph.Node)
		if !ok {
			return fmt.Errorf("typed: equiv: node %q vs %v", vx.Name(), y)
		}
		return e.node(vx, vy)
	case ops.List:
		vy, ok := y.(ops.List)
		if !ok || len(vx) != len(vy) {
			return fmt.Errorf("typed: equiv: list %v vs %v", x, y)
		}
		for i := range vx {
			if err := e.value(vx[i], vy[i]); err != nil {
				return err
			}
		}
		return nil
	case ops.Tuple:
		vy, ok := y.(ops.Tuple)
		if !ok || len(vx) != len(vy) {
			return fmt.Errorf("typed: equiv: tuple %v vs %v", x, y)
		}
		for i := range vx {
			if err := e.value(vx[i], vy[i]); err != nil {
				return err
			}
		}
		return nil
	case ops.Dict:
		vy, ok := y.(ops.Dict)
		if !ok || len(vx.Keys) != len(vy.Keys) {
			return fmt.Errorf("typed: equiv: dict %v vs %v", x, y)
		}
		for i := range vx.Keys {
			if vx.Keys[i] != vy.Keys[i] {
				return fmt.Errorf("typed: equiv: dict key %q vs %q", vx.Keys[i], vy.Keys[i])
			}
			if err := e.value(vx.Values[i], vy.Values[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if _, ok := y.(*fxgraph.Node); ok {
		return fmt.Errorf("typed: equiv: %v vs node %v", x, y)
	}
	if !sameLiteral(x, y) {
		return fmt.Errorf("typed: equiv: %v (%T) vs %v (%T)", x, x, y, y)
	}
	return nil
}

// sameLiteral compares literals by kind and value; floats by their bits.
func sameLiteral(x, y ops.Value) bool {
	if fx, ok := x.(float64); ok {
		fy, ok := y.(float64)
		return ok && math.Float64bits(fx) == math.Float64bits(fy)
	}
	return fmt.Sprintf("%T", x) == fmt.Sprintf("%T", y) && ops.LiteralEqual(x, y)
}
