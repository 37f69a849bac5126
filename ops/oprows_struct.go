package ops

import (
	"slices"

	"github.com/fxquant/fxquant/ops/kernels"
)

// structRows are the structural ops of real CNN and transformer exports
// that the hand-picked aten table lacked: the list-returning splits read
// through operator.getitem, unflatten, stack and the in-place dropout of
// torchvision's classifiers. Each schema is copied exactly from PyTorch
// 2.14.1's operator table (torch-2.14.1-ops.json). A tensor-list result is
// typed as the tuple of its pieces, as the pt2 reader types it.
var structRows = []opRow{
	{schema: "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", result: ruleChunk, doc: "split into pieces of ceil(size / chunks) along dim (views)"},
	{schema: "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", result: ruleSplit, doc: "split into pieces of split_size along dim, the last one smaller (views)"},
	{schema: "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]", result: ruleSplitWithSizes, doc: "split into pieces of the given sizes along dim (views)"},
	{schema: "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", result: ruleUnbind, doc: "every select(dim, i) (views)"},
	{schema: "aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)", result: ruleUnflatten, view: true, doc: "split dimension dim into sizes (one -1 inferred), a view"},
	{schema: "aten::stack(Tensor[] tensors, int dim=0) -> Tensor", result: ruleStack, doc: "join equal-shaped tensors along a new dimension"},
	{schema: "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor", result: ruleConvTranspose2d, doc: "2-D transposed convolution (weight [in, out/groups, kH, kW])"},
}

// ruleConvTranspose2d: conv_transpose2d.input(input, weight, bias, stride,
// padding, output_padding, groups, dilation), checked as the equivalent
// transposed aten.convolution.
func ruleConvTranspose2d(args []Value) (Type, error) {
	return ruleConvolution([]Value{get(args, 0), get(args, 1), get(args, 2), get(args, 3), get(args, 4), get(args, 7), true, get(args, 5), get(args, 6)})
}

// ruleUnflatten: unflatten.int(self, dim, sizes).
func ruleUnflatten(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	dim, err := intArg(args, 1, "dim")
	if err != nil {
		return nil, err
	}
	sizes, err := intsArg(args, 2, "sizes")
	if err != nil {
		return nil, err
	}
	if len(sizes) == 0 {
		return nil, argErr(2, "sizes", "must be non-empty")
	}
	if x.Rank() == 0 {
		return nil, argErr(0, "self", "cannot unflatten a 0-dim tensor")
	}
	d, err := normDim(dim, x.Rank(), 1, "dim")
	if err != nil {
		return nil, err
	}
	inner := slices.Clone(sizes)
	infer, known := -1, int64(1)
	for k, s := range inner {
		switch {
		case s == -1 && infer < 0:
			infer = k
		case s < 0:
			return nil, argErr(2, "sizes", "invalid size %d in %v", s, sizes)
		default:
			known *= s
		}
	}
	n := x.Shape[d]
	switch {
	case n == DynamicDim:
		if infer >= 0 {
			inner[infer] = DynamicDim
		}
	case infer >= 0:
		if known == 0 || n%known != 0 {
			return nil, shapeErr(2, "sizes", "%v does not fit dimension %d of size %d", sizes, d, n)
		}
		inner[infer] = n / known
	case known != n:
		return nil, shapeErr(2, "sizes", "%v don't multiply up to the size of dim %d (%d)", sizes, d, n)
	}
	shape := slices.Concat(x.Shape[:d], inner, x.Shape[d+1:])
	return ViewType(x, shape, spanMap(x.Rank(), d, d, len(inner))...)
}

// ruleStack: stack(tensors, dim).
func ruleStack(args []Value) (Type, error) {
	ts, ok := Sequence(get(args, 0))
	if !ok || len(ts) == 0 {
		return nil, argErr(0, "tensors", "want a non-empty list of tensors, got %s", describe(get(args, 0)))
	}
	dim, err := intArg(args, 1, "dim")
	if err != nil {
		return nil, err
	}
	first, ok := ts[0].(TensorType)
	if !ok || first.Elem == nil {
		return nil, argErr(0, "tensors", "element 0: want a tensor, got %s", describe(ts[0]))
	}
	for k, v := range ts[1:] {
		t, ok := v.(TensorType)
		if !ok || t.Elem == nil || !slices.Equal(t.Shape, first.Shape) || !t.Elem.Equal(first.Elem) {
			return nil, shapeErr(0, "tensors", "element %d is %s, want %s like element 0", k+1, describe(v), first)
		}
	}
	d, err := normDim(dim, first.Rank()+1, 1, "dim")
	if err != nil {
		return nil, err
	}
	shape := slices.Insert(slices.Clone(first.Shape), d, int64(len(ts)))
	return TensorType{Elem: first.Elem, Shape: shape}, nil
}

// splitArgs reads self and dim (argument 2) of the split family; the
// dimension must be static.
func splitArgs(args []Value, name string) (TensorType, int, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return TensorType{}, 0, err
	}
	if x.Rank() == 0 {
		return TensorType{}, 0, argErr(0, "self", "%s needs at least one dimension", name)
	}
	dim, err := intArg(args, 2, "dim")
	if err != nil {
		return TensorType{}, 0, err
	}
	d, err := normDim(dim, x.Rank(), 2, "dim")
	if err != nil {
		return TensorType{}, 0, err
	}
	if x.Shape[d] == DynamicDim {
		return TensorType{}, 0, argErr(0, "self", "%s of symbolic dimension %d has no static piece count", name, d)
	}
	return x, d, nil
}

// piecesType is the tuple of views of x with dimension d cut into sizes.
func piecesType(x TensorType, d int, sizes []int) (Type, error) {
	return viewsTuple(x, len(sizes), func(i int) []int64 {
		shape := slices.Clone(x.Shape)
		shape[d] = int64(sizes[i])
		return shape
	}, identityMap(x.Rank()))
}

// viewsTuple is the tuple of n views of x, view i of shape shape(i),
// each with the axis map amap.
func viewsTuple(x TensorType, n int, shape func(i int) []int64, amap []int) (Type, error) {
	out := TupleType{Elems: make([]Type, n)}
	for i := range out.Elems {
		t, err := ViewType(x, shape(i), amap...)
		if err != nil {
			return nil, err
		}
		out.Elems[i] = t
	}
	return out, nil
}

// ruleSplit: split.Tensor(self, split_size, dim).
func ruleSplit(args []Value) (Type, error) {
	x, d, err := splitArgs(args, "split")
	if err != nil {
		return nil, err
	}
	n, err := intArg(args, 1, "split_size")
	if err != nil {
		return nil, err
	}
	sizes, err := kernels.SplitSizes(int(x.Shape[d]), int(n))
	if err != nil {
		return nil, argErr(1, "split_size", "%v", err)
	}
	return piecesType(x, d, sizes)
}

// ruleChunk: chunk(self, chunks, dim).
func ruleChunk(args []Value) (Type, error) {
	x, d, err := splitArgs(args, "chunk")
	if err != nil {
		return nil, err
	}
	n, err := intArg(args, 1, "chunks")
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, argErr(1, "chunks", "must be greater than 0, got %d", n)
	}
	size := int(x.Shape[d])
	if size == 0 {
		return piecesType(x, d, make([]int, n))
	}
	sizes, err := kernels.SplitSizes(size, (size+int(n)-1)/int(n))
	if err != nil {
		return nil, argErr(1, "chunks", "%v", err)
	}
	return piecesType(x, d, sizes)
}

// ruleSplitWithSizes: split_with_sizes(self, split_sizes, dim).
func ruleSplitWithSizes(args []Value) (Type, error) {
	x, d, err := splitArgs(args, "split_with_sizes")
	if err != nil {
		return nil, err
	}
	ss, err := intsArg(args, 1, "split_sizes")
	if err != nil {
		return nil, err
	}
	sizes := make([]int, len(ss))
	total := int64(0)
	for i, s := range ss {
		if s < 0 {
			return nil, argErr(1, "split_sizes", "entry %d is %d, want a non-negative static size", i, s)
		}
		sizes[i] = int(s)
		total += s
	}
	if total != x.Shape[d] {
		return nil, shapeErr(1, "split_sizes", "%v add up to %d, dimension %d has size %d", ss, total, d, x.Shape[d])
	}
	return piecesType(x, d, sizes)
}

// ruleUnbind: unbind.int(self, dim).
func ruleUnbind(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	dim, err := intArg(args, 1, "dim")
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return nil, argErr(0, "self", "unbind needs at least one dimension")
	}
	d, err := normDim(dim, x.Rank(), 1, "dim")
	if err != nil {
		return nil, err
	}
	if x.Shape[d] == DynamicDim {
		return nil, argErr(0, "self", "unbind of symbolic dimension %d has no static piece count", d)
	}
	shape := slices.Delete(slices.Clone(x.Shape), d, d+1)
	return viewsTuple(x, int(x.Shape[d]), func(int) []int64 { return shape }, spanMap(x.Rank(), d, d, 0))
}
