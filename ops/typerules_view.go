package ops

import (
	"slices"
)

// Result-type rules of the aten view ops. A view keeps its source's element
// type (quantized types included) through [ViewType], which remaps or
// refuses a per-axis quantized axis.

// identityMap returns the axis map of a view that keeps every dimension.
func identityMap(rank int) []int {
	m := make([]int, rank)
	for i := range m {
		m[i] = i
	}
	return m
}

// spanMap is the axis map of a view that replaces axes a..b (inclusive)
// of a rank-rank tensor by m axes: axes before a keep their place, axes
// after b shift, and a replaced axis maps to the one axis taking its
// place when a single axis becomes a single axis, to -1 otherwise.
func spanMap(rank, a, b, m int) []int {
	amap := make([]int, rank)
	for k := range amap {
		switch {
		case k < a:
			amap[k] = k
		case k > b:
			amap[k] = k - (b - a + 1) + m
		case a == b && m == 1:
			amap[k] = a
		default:
			amap[k] = -1
		}
	}
	return amap
}

// rulePermute: permute(self, dims).
func rulePermute(args []Value) (Type, error) {
	x, dims, err := selfIntsArgs(args, "dims")
	if err != nil {
		return nil, err
	}
	if len(dims) != x.Rank() {
		return nil, argErr(1, "dims", "want a permutation of %d dimensions, got %v", x.Rank(), dims)
	}
	shape := make([]int64, x.Rank())
	amap := make([]int, x.Rank())
	seen := make([]bool, x.Rank())
	for j, d := range dims {
		k, err := normDim(d, x.Rank(), 1, "dims")
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, argErr(1, "dims", "dimension %d repeats in %v", d, dims)
		}
		seen[k] = true
		shape[j] = x.Shape[k]
		amap[k] = j
	}
	return ViewType(x, shape, amap...)
}

// transposeType swaps dimensions a and b.
func transposeType(x TensorType, a, b int) (Type, error) {
	shape := slices.Clone(x.Shape)
	amap := identityMap(x.Rank())
	if x.Rank() > 0 {
		shape[a], shape[b] = shape[b], shape[a]
		amap[a], amap[b] = b, a
	}
	return ViewType(x, shape, amap...)
}

// ruleTransposeInt: transpose.int(self, dim0, dim1).
func ruleTransposeInt(args []Value) (Type, error) {
	x, d0, d1, err := selfIntPairArgs(args, "dim0", "dim1")
	if err != nil {
		return nil, err
	}
	a, err := normDim(d0, x.Rank(), 1, "dim0")
	if err != nil {
		return nil, err
	}
	b, err := normDim(d1, x.Rank(), 2, "dim1")
	if err != nil {
		return nil, err
	}
	return transposeType(x, a, b)
}

// ruleT: t(self) transposes a matrix; vectors and scalars are unchanged.
func ruleT(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	if x.Rank() > 2 {
		return nil, shapeErr(0, "self", "want rank <= 2, got %s", x)
	}
	if x.Rank() < 2 {
		return ViewType(x, x.Shape, identityMap(x.Rank())...)
	}
	return transposeType(x, 0, 1)
}

// inferShape resolves one -1 in a view/reshape size.
func inferShape(x TensorType, size []int64) ([]int64, error) {
	shape := slices.Clone(size)
	infer := -1
	known := int64(1)
	dynamic := false
	for k, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = k
		case d == -1:
			return nil, argErr(1, "size", "only one dimension can be inferred, got %v", size)
		case d < -1:
			return nil, argErr(1, "size", "invalid size %d in %v", d, size)
		default:
			known *= d
		}
	}
	// A symbolic size element arrives as DynamicDim too; it is treated as
	// the dimension to infer only when no literal -1 is present.
	total := x.Numel()
	if total < 0 {
		dynamic = true
	}
	if infer >= 0 {
		switch {
		case dynamic:
			shape[infer] = DynamicDim
		case known == 0 || total%known != 0:
			return nil, shapeErr(1, "size", "%v does not fit %d elements of %s", size, total, x)
		default:
			shape[infer] = total / known
		}
		return shape, nil
	}
	if !dynamic && known != total {
		return nil, shapeErr(1, "size", "%v has %d elements, self %s has %d", size, known, x, total)
	}
	return shape, nil
}

// ruleView: view(self, size) and reshape(self, shape).
func ruleView(args []Value) (Type, error) {
	x, size, err := selfIntsArgs(args, "size")
	if err != nil {
		return nil, err
	}
	if shape, ok := symbolicViewShape(args, size); ok {
		return ViewType(x, shape)
	}
	shape, err := inferShape(x, size)
	if err != nil {
		return nil, err
	}
	return ViewType(x, shape)
}

// ruleFlatten: flatten.using_ints(self, start_dim, end_dim).
func ruleFlatten(args []Value) (Type, error) {
	x, s, e, err := selfIntPairArgs(args, "start_dim", "end_dim")
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return ViewType(x, []int64{1})
	}
	a, err := normDim(s, x.Rank(), 1, "start_dim")
	if err != nil {
		return nil, err
	}
	b, err := normDim(e, x.Rank(), 2, "end_dim")
	if err != nil {
		return nil, err
	}
	if a > b {
		return nil, argErr(1, "start_dim", "start_dim %d comes after end_dim %d", s, e)
	}
	shape := slices.Clone(x.Shape[:a])
	shape = append(shape, mulDims(x.Shape[a:b+1]...))
	shape = append(shape, x.Shape[b+1:]...)
	return ViewType(x, shape, spanMap(x.Rank(), a, b, 1)...)
}

// ruleUnsqueeze: unsqueeze(self, dim).
func ruleUnsqueeze(args []Value) (Type, error) {
	x, k, err := selfDimArgs(args, 1)
	if err != nil {
		return nil, err
	}
	shape := slices.Insert(slices.Clone(x.Shape), k, 1)
	amap := make([]int, x.Rank())
	for j := range amap {
		amap[j] = j
		if j >= k {
			amap[j] = j + 1
		}
	}
	return ViewType(x, shape, amap...)
}

// squeezeType drops the size-1 dimensions marked in drop.
func squeezeType(x TensorType, drop []bool) (Type, error) {
	shape := []int64{}
	amap := make([]int, x.Rank())
	for k, d := range x.Shape {
		if drop[k] && d == 1 {
			amap[k] = -1
			continue
		}
		amap[k] = len(shape)
		shape = append(shape, d)
	}
	return ViewType(x, shape, amap...)
}

// ruleSqueeze: squeeze(self) drops every size-1 dimension.
func ruleSqueeze(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	drop := make([]bool, x.Rank())
	for k := range drop {
		drop[k] = true
	}
	return squeezeType(x, drop)
}

// ruleSqueezeDim: squeeze.dim(self, dim).
func ruleSqueezeDim(args []Value) (Type, error) {
	x, k, err := selfDimArgs(args, 0)
	if err != nil {
		return nil, err
	}
	drop := make([]bool, x.Rank())
	if x.Rank() > 0 {
		drop[k] = true
	}
	return squeezeType(x, drop)
}

// ruleSqueezeDims: squeeze.dims(self, dim list).
func ruleSqueezeDims(args []Value) (Type, error) {
	x, ds, err := selfIntsArgs(args, "dim")
	if err != nil {
		return nil, err
	}
	drop := make([]bool, x.Rank())
	for _, d := range ds {
		k, err := normDim(d, x.Rank(), 1, "dim")
		if err != nil {
			return nil, err
		}
		if x.Rank() > 0 {
			drop[k] = true
		}
	}
	return squeezeType(x, drop)
}

// ruleExpand: expand(self, size): -1 keeps a dimension; new leading
// dimensions are added; only size-1 dimensions can grow. A grown dimension
// no longer holds one value per index, so a per-axis element type survives
// only if its axis is not grown.
func ruleExpand(args []Value) (Type, error) {
	x, size, err := selfIntsArgs(args, "size")
	if err != nil {
		return nil, err
	}
	if len(size) < x.Rank() {
		return nil, argErr(1, "size", "%v has fewer dimensions than self %s", size, x)
	}
	lead := len(size) - x.Rank()
	shape := slices.Clone(size)
	amap := make([]int, x.Rank())
	for k, d := range x.Shape {
		j := k + lead
		amap[k] = j
		switch {
		case size[j] == -1:
			shape[j] = d
		case d == size[j] || d < 0 || size[j] < 0:
		case d == 1:
			amap[k] = -1
		default:
			return nil, shapeErr(1, "size", "dimension %d of size %d cannot expand to %d", k, d, size[j])
		}
	}
	for j := 0; j < lead; j++ {
		if size[j] == -1 {
			return nil, argErr(1, "size", "-1 is not allowed in a new leading dimension")
		}
	}
	return ViewType(x, shape, amap...)
}

// ruleSliceTensor: slice.Tensor(self, dim, start?, end?, step).
func ruleSliceTensor(args []Value) (Type, error) {
	x, k, err := selfDimArgs(args, 0)
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return nil, shapeErr(0, "self", "cannot slice a 0-dim tensor")
	}
	start, hasStart, err := optIntArg(args, 2, "start")
	if err != nil {
		return nil, err
	}
	end, hasEnd, err := optIntArg(args, 3, "end")
	if err != nil {
		return nil, err
	}
	step, err := symIntArg(args, 4, "step")
	if err != nil {
		return nil, err
	}
	if _, lit := get(args, 4).(int64); lit && step <= 0 {
		return nil, argErr(4, "step", "want a positive step, got %d", step)
	}
	n := x.Shape[k]
	shape := slices.Clone(x.Shape)
	_, startLit := get(args, 2).(int64)
	_, endLit := get(args, 3).(int64)
	if n < 0 || step < 0 || (hasStart && !startLit) || (hasEnd && !endLit) {
		shape[k] = DynamicDim
	} else {
		if !hasStart {
			start = 0
		}
		if !hasEnd {
			end = n
		}
		clampIdx := func(v int64) int64 {
			if v < 0 {
				v += n
			}
			return min(max(v, 0), n)
		}
		s, e := clampIdx(start), clampIdx(end)
		size := int64(0)
		if e > s {
			size = (e - s + step - 1) / step
		}
		shape[k] = size
	}
	amap := identityMap(x.Rank())
	if shape[k] != x.Shape[k] {
		amap[k] = -1 // a sliced quantized axis no longer has one scale per index
	}
	return ViewType(x, shape, amap...)
}

// ruleSelectInt: select.int(self, dim, index) drops dimension dim.
func ruleSelectInt(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	d, err := intArg(args, 1, "dim")
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return nil, shapeErr(0, "self", "cannot select from a 0-dim tensor")
	}
	k, err := normDim(d, x.Rank(), 1, "dim")
	if err != nil {
		return nil, err
	}
	idx, err := symIntArg(args, 2, "index")
	if err != nil {
		return nil, err
	}
	if _, lit := get(args, 2).(int64); lit && x.Shape[k] >= 0 && (idx >= x.Shape[k] || idx < -x.Shape[k]) {
		n := x.Shape[k]
		return nil, argErr(2, "index", "index %d out of range for dimension %d of size %d", idx, k, n)
	}
	shape := slices.Delete(slices.Clone(x.Shape), k, k+1)
	return ViewType(x, shape, spanMap(x.Rank(), k, k, 0)...)
}

// ruleAliasSelf: ops whose result is self's value with self's type
// (contiguous, copy_ returns its mutated self).
func ruleAliasSelf(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	return ViewType(x, x.Shape, identityMap(x.Rank())...)
}

// ruleNoResult: ops returning "()" (assertions).
func ruleNoResult(args []Value) (Type, error) {
	if _, err := tensorArg(args, 0, "a"); err != nil {
		return nil, err
	}
	return TupleType{}, nil
}
