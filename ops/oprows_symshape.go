package ops

import (
	"fmt"
	"slices"
)

// symshapeRows are the ops of symbolic shapes that programs exported with
// torch.export.Dim call. The schema is copied from
// ../shared/fixtures/schemas/torch-2.14.1-ops.json.
var symshapeRows = []opRow{
	{schema: "aten::sym_size.int(Tensor self, int dim) -> SymInt", result: ruleSymSize, doc: "size of one dimension, a SymInt when the dimension is symbolic"},
}

// symshapeKernels are the kernels of symshapeRows.
var symshapeKernels = map[string]KernelFunc{
	"aten.sym_size.int": atenOp(func(r *argReader) (Value, error) {
		x, dim := r.tensor(0, "self"), r.int(1, "dim")
		if r.err != nil {
			return nil, r.err
		}
		shape := x.Shape()
		d := dim
		if d < 0 {
			d += len(shape)
		}
		if d < 0 || d >= len(shape) {
			return nil, fmt.Errorf("dim %d out of range for a tensor of rank %d", dim, len(shape))
		}
		return int64(shape[d]), nil
	}),
}

// symScalarFuncs are the functions of Python's operator module that
// torch.export records (as "_operator.<name>") for arithmetic on SymInts,
// with their arity.
var symScalarFuncs = map[string]int{"add": 2, "sub": 2, "mul": 2, "floordiv": 2, "mod": 2, "neg": 1}

// SymScalarArity reports whether c is an operator-module function on
// symbolic ints (operator.mul of a sym_size and 2) and its number of
// arguments.
func SymScalarArity(c Callable) (int, bool) {
	if c.Module != "operator" {
		return 0, false
	}
	n, ok := symScalarFuncs[c.Name]
	return n, ok
}

// ruleSymSize: sym_size.int(self, dim) is a SymInt; dim must index self.
func ruleSymSize(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	if dim, ok := args[1].(int64); ok && (dim >= int64(x.Rank()) || dim < -int64(x.Rank())) {
		return nil, shapeErr(1, "dim", "dim %d out of range for %s", dim, x)
	}
	return PyType{Name: "SymInt"}, nil
}

// TypeAccepts reports whether a node's recorded type got agrees with the
// type want that a result-type rule computed, where the rule could not
// know a dimension: a dimension want leaves open (ops.DynamicDim without a
// symbol, printed "?") may be any size or symbolic size in got, as when a
// rule meets a symbolic input (linear of f32[s77, 16] gives f32[?, 32]
// for the recorded f32[s77, 32]). Element types and every known dimension
// must be equal. Tuples are compared element by element.
func TypeAccepts(want, got Type) bool {
	if TypesEqual(want, got) {
		return true
	}
	switch w := want.(type) {
	case TensorType:
		g, ok := got.(TensorType)
		if !ok || len(w.Shape) != len(g.Shape) || (w.Elem == nil) != (g.Elem == nil) || (w.Elem != nil && !w.Elem.Equal(g.Elem)) {
			return false
		}
		ws, gs := w.symbols(), g.symbols()
		for i := range w.Shape {
			if w.Shape[i] == DynamicDim && ws[i] == "" {
				continue
			}
			if w.Shape[i] != g.Shape[i] || ws[i] != gs[i] {
				return false
			}
		}
		return true
	case TupleType:
		g, ok := got.(TupleType)
		if !ok || len(w.Elems) != len(g.Elems) {
			return false
		}
		for i, e := range w.Elems {
			if !TypeAccepts(e, g.Elems[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// symbolicViewShape is the shape of view/reshape when the size list holds
// symbolic elements (SymInt nodes, which reach the rule as DynamicDim just
// as a literal -1 does): each symbolic element and the one literal -1 are
// unknown dimensions; ok is false when every element is a literal int.
func symbolicViewShape(args []Value, size []int64) ([]int64, bool) {
	var elems []Value
	switch l := get(args, 1).(type) {
	case List:
		elems = l
	case Tuple:
		elems = l
	default:
		return nil, false
	}
	if len(elems) != len(size) {
		return nil, false
	}
	sym := false
	for _, e := range elems {
		if _, isInt := e.(int64); !isInt {
			sym = true
		}
	}
	if !sym {
		return nil, false
	}
	return slices.Clone(size), true
}

// Sentinel sizes stand for symbolic dimensions while a result-type rule
// runs (see ApplyRule): base + k*symSentinelStep for the k-th distinct
// dimension expression, with one of two bases. They are far above real
// sizes, and a product of two stays within int64.
const (
	symSentinelBase1 = int64(1) << 30
	symSentinelBase2 = int64(3) << 29
	symSentinelStep  = int64(7919)
	symSentinelMax   = 4096
)

// ApplyRule runs a result-type rule on argument types of which some have
// symbolic dimensions (f32[s77, 16]) and gives the result the symbols the
// rule carried through. The rule runs twice, each symbolic dimension
// entering as a distinct sentinel size from one of two sets: a result
// dimension equal to the same symbol's sentinel in both runs is that
// symbol again, wherever the rule moved it (linear keeps the batch,
// transpose swaps it, q/dq keep the shape); one equal in both runs does
// not depend on the symbols and is kept; any other (a product, a
// quotient, a convolution's output size) is left open ("?"), as are the
// rule's own unknown sizes, and the verifier accepts a recorded size there
// (TypeAccepts). Without symbolic inputs, or when the rule refuses the
// sentinel sizes, it is rule(args).
func ApplyRule(rule TypeFunc, args []Value) (Type, error) {
	if !hasSymbolic(args) {
		return rule(args) // static types: the rule alone, no copies
	}
	var order []string
	index := map[string]int64{}
	var subst func(v Value, base int64) Value
	subst = func(v Value, base int64) Value {
		switch x := v.(type) {
		case TensorType:
			if len(x.Syms) == 0 {
				return x
			}
			shape := slices.Clone(x.Shape)
			for i, s := range x.Syms {
				if s == "" || i >= len(shape) || shape[i] != DynamicDim {
					continue
				}
				k, ok := index[s]
				if !ok {
					if len(order) >= symSentinelMax {
						continue
					}
					k = int64(len(order))
					index[s] = k
					order = append(order, s)
				}
				shape[i] = base + k*symSentinelStep
			}
			return TensorType{Shape: shape, Elem: x.Elem}
		case List:
			out := make(List, len(x))
			for i, e := range x {
				out[i] = subst(e, base)
			}
			return out
		case Tuple:
			out := make(Tuple, len(x))
			for i, e := range x {
				out[i] = subst(e, base)
			}
			return out
		}
		return v
	}
	run := func(base int64) (Type, error) {
		sargs := make([]Value, len(args))
		for i, a := range args {
			sargs[i] = subst(a, base)
		}
		return rule(sargs)
	}
	t1, err := run(symSentinelBase1)
	if len(order) == 0 || err != nil {
		return rule(args)
	}
	t2, err := run(symSentinelBase2)
	if err != nil {
		return rule(args)
	}
	symbolAt := func(d1, d2 int64) (string, bool) {
		k1, k2 := d1-symSentinelBase1, d2-symSentinelBase2
		if k1 != k2 || k1 < 0 || k1%symSentinelStep != 0 || k1/symSentinelStep >= int64(len(order)) {
			return "", false
		}
		return order[k1/symSentinelStep], true
	}
	var back func(a, b Type) Type
	back = func(a, b Type) Type {
		switch x := a.(type) {
		case TensorType:
			y, ok := b.(TensorType)
			if !ok || len(y.Shape) != len(x.Shape) {
				return a
			}
			var syms []string
			shape := slices.Clone(x.Shape)
			for i, d := range shape {
				if d == y.Shape[i] {
					continue // independent of the symbols (or the rule's own ?)
				}
				shape[i] = DynamicDim
				if s, ok := symbolAt(d, y.Shape[i]); ok {
					if syms == nil {
						syms = make([]string, len(shape))
					}
					syms[i] = s
				}
			}
			return TensorType{Shape: shape, Elem: x.Elem, Syms: syms}
		case TupleType:
			y, ok := b.(TupleType)
			if !ok || len(y.Elems) != len(x.Elems) {
				return a
			}
			out := TupleType{Elems: make([]Type, len(x.Elems))}
			for i, e := range x.Elems {
				if e != nil {
					out.Elems[i] = back(e, y.Elems[i])
				}
			}
			return out
		}
		return a
	}
	return back(t1, t2), nil
}

// hasSymbolic reports whether an argument (or an element of a list or
// tuple argument) is a tensor type with symbolic dimensions.
func hasSymbolic(args []Value) bool {
	for _, a := range args {
		switch x := a.(type) {
		case TensorType:
			if len(x.Syms) > 0 {
				return true
			}
		case List:
			if hasSymbolic(x) {
				return true
			}
		case Tuple:
			if hasSymbolic(x) {
				return true
			}
		}
	}
	return false
}
