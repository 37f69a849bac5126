package interp

import (
	"errors"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ErrSymbol is wrapped by the [NodeError] of a placeholder whose input
// does not fit its symbolic type: a size outside its symbol's range, two
// sizes that give one symbol different values, a dimension whose
// expression disagrees with the size, or a wrong rank.
var ErrSymbol = errors.New("input does not fit the symbolic shape")

// bindSymbols gives each symbol of the placeholders' types its value from
// the inputs of this run, as PyTorch's ExportedProgram.module() checks its
// inputs (torch/_export/utils.py, _check_symint): a dimension that is a
// bare symbol binds it, and one that is an expression of a symbol no other
// dimension binds solves for it (when linear in it); a size must lie in
// the range recorded for the dimension's symbol or expression
// (fxgraph.Symbol.Admits: the upper bound, and the lower bound when it is
// above 2, since PyTorch allows 0 and 1 at runtime); every expression must
// evaluate to its size, and static dimensions must match. Placeholders
// without a symbolic type are not checked.
func bindSymbols(g *fxgraph.Graph, ph []*fxgraph.Node, bound map[*fxgraph.Node]ops.Value) (map[string]int64, error) {
	symbolic := false
	for _, n := range ph {
		if tt, ok := n.Type().(ops.TensorType); ok && len(tt.Syms) > 0 {
			symbolic = true
			break
		}
	}
	if !symbolic {
		return nil, nil // static programs pay nothing
	}
	vals := map[string]int64{}
	from := map[string]string{}
	type pending struct {
		n    *fxgraph.Node
		dim  int
		e    *ops.SymExpr
		size int64
	}
	var later []pending
	fail := func(n *fxgraph.Node, format string, args ...any) error {
		return &NodeError{Node: n.Name(), Target: "placeholder", Err: fmt.Errorf("%w: placeholder %q: %s", ErrSymbol, n.TargetName(), fmt.Sprintf(format, args...))}
	}
	for _, n := range ph {
		tt, ok := n.Type().(ops.TensorType)
		if !ok || len(tt.Syms) == 0 {
			continue
		}
		x, ok := bound[n].(*tensor.Tensor)
		if !ok || x == nil {
			continue
		}
		shape := x.Shape()
		if len(shape) != tt.Rank() {
			return nil, fail(n, "input of rank %d (shape %v) for type %s", len(shape), shape, tt)
		}
		for i, want := range tt.Shape {
			size := int64(shape[i])
			if want >= 0 {
				if size != want {
					return nil, fail(n, "dim %d: size %d, want %d (type %s)", i, size, want, tt)
				}
				continue
			}
			if i >= len(tt.Syms) || tt.Syms[i] == "" {
				continue // "?": any size
			}
			e, err := ops.ParseSymExpr(tt.Syms[i])
			if err != nil {
				return nil, fail(n, "dim %d: %v", i, err)
			}
			// The range recorded for the dimension's symbol, or for its
			// expression (a derived Dim's "2*s74"), by PyTorch's rule.
			if sym, ok := g.Symbol(tt.Syms[i]); ok && !sym.Admits(size) {
				what := "symbol"
				if e.Kind != ops.SymSymbol {
					what = "expression"
				}
				return nil, fail(n, "dim %d: size %d is outside the range %s of %s %s", i, size, sym.RangeString(), what, tt.Syms[i])
			}
			if e.Kind != ops.SymSymbol {
				later = append(later, pending{n, i, e, size})
				continue
			}
			s := e.Name
			if v, ok := vals[s]; ok && v != size {
				return nil, fail(n, "dim %d: size %d, but %s gave symbol %s the value %d", i, size, from[s], s, v)
			}
			vals[s] = size
			from[s] = fmt.Sprintf("placeholder %q dim %d", n.TargetName(), i)
		}
	}
	for _, p := range later {
		// A dimension that is the only place of a symbol, as a derived
		// Dim gives (2*s0 for Dim batch = 2*_b), solves for it when the
		// expression is linear in it: s = (size - f(0)) / (f(1) - f(0)).
		var unbound []string
		for _, name := range p.e.Symbols() {
			if _, ok := vals[name]; !ok {
				unbound = append(unbound, name)
			}
		}
		if len(unbound) == 1 {
			name := unbound[0]
			if x, ok := p.e.SolveFor(name, func(n string) (int64, bool) { v, ok := vals[n]; return v, ok }, p.size); ok {
				vals[name] = x // its own range is not checked, as in PyTorch
			}
			if _, ok := vals[name]; !ok {
				return nil, fail(p.n, "dim %d: size %d: no value of symbol %s gives %s = %d", p.dim, p.size, name, p.e, p.size)
			}
		}
		v, err := p.e.Eval(func(name string) (int64, bool) { v, ok := vals[name]; return v, ok })
		if err != nil {
			return nil, fail(p.n, "dim %d: %s: %v", p.dim, p.e, err)
		}
		if v != p.size {
			return nil, fail(p.n, "dim %d: size %d, but %s = %d", p.dim, p.size, p.e, v)
		}
	}
	return vals, nil
}

// symScalarKinds gives the SymExpr kind each operator function of symScalar
// is evaluated with (sub and neg through a factor -1).
var symScalarKinds = map[string]ops.SymKind{"add": ops.SymAdd, "sub": ops.SymAdd, "mul": ops.SymMul, "floordiv": ops.SymFloorDiv, "mod": ops.SymMod, "neg": ops.SymMul}

// symScalar runs a function of Python's operator module on ints, as a
// program's arithmetic on symbolic sizes (operator.mul(sym_size, 2)) does;
// ok is false for other callables.
func symScalar(c ops.Callable, args []ops.Value, kwargs []ops.Kwarg) (ops.Value, bool, error) {
	if c.Module != "operator" {
		return nil, false, nil
	}
	kind, ok := symScalarKinds[c.Name]
	if !ok {
		return nil, false, nil
	}
	want := 2
	if c.Name == "neg" {
		want = 1
	}
	if len(args) != want || len(kwargs) > 0 {
		return nil, true, fmt.Errorf("%w: operator.%s takes %d positional arguments, got %d and %d keywords", ErrInputs, c.Name, want, len(args), len(kwargs))
	}
	ints := make([]*ops.SymExpr, len(args))
	for i, a := range args {
		v, ok := a.(int64)
		if !ok {
			return nil, true, fmt.Errorf("%w: operator.%s: argument %d: want an int, got %T", ErrUnsupported, c.Name, i, a)
		}
		ints[i] = ops.SymInt(v)
	}
	switch c.Name {
	case "sub":
		ints[1] = &ops.SymExpr{Kind: ops.SymMul, Args: []*ops.SymExpr{ops.SymInt(-1), ints[1]}}
	case "neg":
		ints = append(ints, ops.SymInt(-1))
	}
	v, err := (&ops.SymExpr{Kind: kind, Args: ints}).Eval(nil)
	if err != nil {
		return nil, true, fmt.Errorf("operator.%s: %w", c.Name, err)
	}
	return v, true, nil
}

// CheckSymbols checks positional inputs (one per placeholder, in order, as
// [Run] takes them) against the placeholders' symbolic types without
// running g, and returns each symbol's value. The errors are those of a
// run: a *[NodeError] of the placeholder wrapping [ErrSymbol], naming the
// dimension, the size and the symbol's range.
func CheckSymbols(g *fxgraph.Graph, inputs []*tensor.Tensor) (map[string]int64, error) {
	ph := g.Placeholders()
	bound := make(map[*fxgraph.Node]ops.Value, len(ph))
	for i, p := range ph {
		if i < len(inputs) && inputs[i] != nil {
			bound[p] = inputs[i]
		}
	}
	return bindSymbols(g, ph, bound)
}
