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
		return !slices.ContainsFunc(w.Elems, func(e Type) bool {
			i := slices.Index(w.Elems, e)
			return !TypeAccepts(e, g.Elems[i])
		})
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
