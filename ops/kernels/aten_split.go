package kernels

import (
	"fmt"
	"slices"
	"sort"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file holds the structural kernels that return several views of one
// tensor (chunk, split, unbind) and the ones that build a tensor from
// several (stack), with the shapes, strides and errors PyTorch 2.14 gives.

// SplitSizes is aten.split.Tensor's partition of a dimension of the given
// size into pieces of splitSize (the last one smaller): max(ceil(size /
// splitSize), 1) pieces. A splitSize of 0 is only valid for an empty
// dimension, which then gives one empty piece.
func SplitSizes(size, splitSize int) ([]int, error) {
	if splitSize < 0 {
		return nil, argErrf("split: split_size must be non-negative, got %d", splitSize)
	}
	if splitSize == 0 {
		if size != 0 {
			return nil, argErrf("split: split_size can only be 0 if the dimension size is 0, but got size %d", size)
		}
		return []int{0}, nil
	}
	n := max((size+splitSize-1)/splitSize, 1)
	out := make([]int, n)
	for i := range out {
		out[i] = splitSize
	}
	out[n-1] = splitSize - (splitSize*n - size)
	return out, nil
}

// SplitWithSizes is aten.split_with_sizes: views of x along dim with the
// given sizes, which must be non-negative and add up to the dimension's
// size. Each view keeps x's strides, offset by the pieces before it.
func SplitWithSizes(x *tensor.Tensor, sizes []int, dim int) ([]*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("split_with_sizes: argument \"self\" is required")
	}
	if x.Dim() == 0 {
		return nil, shapeErrf("split_with_sizes: expected a tensor with at least 1 dimension, got a 0-dim tensor")
	}
	d, err := tensor.NormDim(dim, x.Dim())
	if err != nil {
		return nil, fmt.Errorf("split_with_sizes: argument \"dim\": %w", err)
	}
	total := 0
	for i, s := range sizes {
		if s < 0 {
			return nil, argErrf("split_with_sizes: argument \"split_sizes\": entry %d is negative (%d)", i, s)
		}
		total += s
	}
	if total != x.Size(d) {
		return nil, shapeErrf("split_with_sizes: split sizes %v add up to %d, but dimension %d of %v has size %d", sizes, total, d, x.Shape(), x.Size(d))
	}
	out := make([]*tensor.Tensor, len(sizes))
	start := 0
	for i, s := range sizes {
		shape, strides := x.Shape(), x.Strides()
		shape[d] = s
		if out[i], err = x.NewView(shape, strides, x.Offset()+start*strides[d]); err != nil {
			return nil, fmt.Errorf("split_with_sizes: %w", err)
		}
		start += s
	}
	return out, nil
}

// Split is aten.split.Tensor: views of x along dim, each splitSize long
// except the last (see [SplitSizes]).
func Split(x *tensor.Tensor, splitSize, dim int) ([]*tensor.Tensor, error) {
	if x == nil || x.Dim() == 0 {
		return nil, shapeErrf("split: expected a tensor with at least 1 dimension")
	}
	d, err := tensor.NormDim(dim, x.Dim())
	if err != nil {
		return nil, fmt.Errorf("split: argument \"dim\": %w", err)
	}
	sizes, err := SplitSizes(x.Size(d), splitSize)
	if err != nil {
		return nil, err
	}
	return SplitWithSizes(x, sizes, d)
}

// Chunk is aten.chunk: x split along dim into pieces of ceil(size /
// chunks), so there may be fewer than chunks pieces (as in PyTorch,
// chunk(6 rows, 4) gives three pieces of 2). chunks must be positive.
func Chunk(x *tensor.Tensor, chunks, dim int) ([]*tensor.Tensor, error) {
	if chunks <= 0 {
		return nil, argErrf("chunk: argument \"chunks\": expects chunks to be greater than 0, got %d", chunks)
	}
	if x == nil || x.Dim() == 0 {
		return nil, shapeErrf("chunk: expects at least a 1-dimensional tensor")
	}
	d, err := tensor.NormDim(dim, x.Dim())
	if err != nil {
		return nil, fmt.Errorf("chunk: argument \"dim\": %w", err)
	}
	size := x.Size(d)
	splitSize := (size + chunks - 1) / chunks
	// PyTorch: an empty dimension split into chunks gives chunks empty
	// pieces (split_size 0 with a zero-size dim would give one).
	if splitSize == 0 && size == 0 {
		sizes := make([]int, chunks)
		return SplitWithSizes(x, sizes, d)
	}
	return Split(x, splitSize, d)
}

// Unbind is aten.unbind.int: the views x.select(dim, i) for every i.
func Unbind(x *tensor.Tensor, dim int) ([]*tensor.Tensor, error) {
	if x == nil || x.Dim() == 0 {
		return nil, shapeErrf("unbind: dimension specified as %d but tensor has no dimensions", dim)
	}
	d, err := tensor.NormDim(dim, x.Dim())
	if err != nil {
		return nil, fmt.Errorf("unbind: argument \"dim\": %w", err)
	}
	out := make([]*tensor.Tensor, x.Size(d))
	for i := range out {
		if out[i], err = x.Select(d, i); err != nil {
			return nil, fmt.Errorf("unbind: %w", err)
		}
	}
	return out, nil
}

// Unflatten is aten.unflatten.int: dimension dim of x replaced by sizes
// (one -1 inferred), as the view PyTorch computes (ATen's unflatten calls
// view, so the strides follow computeStride).
func Unflatten(x *tensor.Tensor, dim int, sizes []int) (*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("unflatten: argument \"self\" is required")
	}
	if len(sizes) == 0 {
		return nil, argErrf("unflatten: sizes must be non-empty")
	}
	d, err := tensor.NormDim(dim, x.Dim())
	if err != nil {
		return nil, fmt.Errorf("unflatten: argument \"dim\": %w", err)
	}
	if x.Dim() == 0 {
		return nil, shapeErrf("unflatten: cannot unflatten a 0-dim tensor")
	}
	inner, err := tensor.InferShape(sizes, x.Size(d))
	if err != nil {
		return nil, fmt.Errorf("unflatten: argument \"sizes\": provided sizes %v don't multiply up to the size of dim %d (%d) in the input tensor: %w", sizes, d, x.Size(d), err)
	}
	shape := x.Shape()
	shape = slices.Concat(shape[:d], inner, shape[d+1:])
	return x.View(shape...)
}

// Stack is aten.stack: the tensors, which must all have the same shape and
// dtype, joined along a new dimension dim (in -(rank+1)..rank).
func Stack(ts []*tensor.Tensor, dim int) (*tensor.Tensor, error) {
	if len(ts) == 0 {
		return nil, argErrf("stack: expects a non-empty TensorList")
	}
	for i, t := range ts {
		if t == nil {
			return nil, argErrf("stack: argument \"tensors\"[%d] is None", i)
		}
		if !slices.Equal(t.Shape(), ts[0].Shape()) {
			return nil, shapeErrf("stack: expects each tensor to be equal size, but got %v at entry 0 and %v at entry %d", ts[0].Shape(), t.Shape(), i)
		}
	}
	d, err := tensor.NormDim(dim, ts[0].Dim()+1)
	if err != nil {
		return nil, fmt.Errorf("stack: argument \"dim\": %w", err)
	}
	us := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		if us[i], err = t.Unsqueeze(d); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
	}
	return Cat(us, d)
}

// DenseStrides returns the strides PyTorch's empty_like (and so clone,
// and every op that allocates "like" an input under preserve_format) gives
// a new tensor like x: x's own strides when x is non-overlapping and dense
// (a permutation of a contiguous layout, size-1 dims aside), otherwise
// the contiguous strides. ok reports which case applied.
func DenseStrides(x *tensor.Tensor) (strides []int, ok bool) {
	shape, st := x.Shape(), x.Strides()
	if x.Dim() == 0 {
		return nil, true
	}
	perm := make([]int, len(shape))
	for i := range perm {
		perm[i] = i
	}
	// Innermost first: ascending stride, ties broken by larger dim index
	// as ATen's is_non_overlapping_and_dense does.
	sort.SliceStable(perm, func(a, b int) bool {
		if st[perm[a]] != st[perm[b]] {
			return st[perm[a]] < st[perm[b]]
		}
		return perm[a] > perm[b]
	})
	want := 1
	for _, d := range perm {
		if shape[d] == 1 {
			continue
		}
		if st[d] != want {
			return tensor.ContiguousStrides(shape), false
		}
		want *= shape[d]
	}
	return st, true
}

// CloneLike is aten.clone with memory_format preserve: a copy of x with
// [DenseStrides] (x's strides when x is dense, contiguous otherwise).
func CloneLike(x *tensor.Tensor) (*tensor.Tensor, error) {
	st, ok := DenseStrides(x)
	c := x.Contiguous()
	if c == x {
		c = x.Clone()
	}
	if !ok || x.Numel() <= 1 {
		return c, nil
	}
	return restride(c, st)
}

// restride returns a tensor with the values of the contiguous tensor c
// stored with the given (dense) strides.
func restride(c *tensor.Tensor, strides []int) (*tensor.Tensor, error) {
	shape := c.Shape()
	if slices.Equal(strides, tensor.ContiguousStrides(shape)) {
		return c, nil
	}
	out, err := tensor.Zeros(c.DType(), c.Numel())
	if err != nil {
		return nil, err
	}
	v, err := out.NewView(shape, strides, 0)
	if err != nil {
		return nil, err
	}
	if err := copyInto(v, c); err != nil {
		return nil, err
	}
	return v, nil
}

// copyInto writes the values of the contiguous tensor src into the
// (possibly strided) view dst of the same shape and dtype.
func copyInto(dst, src *tensor.Tensor) error {
	switch d := dst.Storage().(type) {
	case []float32:
		return scatter(d, dst, src)
	case []float64:
		return scatter(d, dst, src)
	case []int64:
		return scatter(d, dst, src)
	case []int32:
		return scatter(d, dst, src)
	case []int16:
		return scatter(d, dst, src)
	case []int8:
		return scatter(d, dst, src)
	case []uint8:
		return scatter(d, dst, src)
	case []bool:
		return scatter(d, dst, src)
	case []uint16:
		return scatter(d, dst, src)
	case []uint32:
		return scatter(d, dst, src)
	case []uint64:
		return scatter(d, dst, src)
	case []complex64:
		return scatter(d, dst, src)
	case []complex128:
		return scatter(d, dst, src)
	}
	return fmt.Errorf("%w: cannot lay out %s with strides", ErrUnsupportedDType, dst.DType())
}

func scatter[E any](d []E, dst, src *tensor.Tensor) error {
	s, ok := src.Storage().([]E)
	if !ok {
		return fmt.Errorf("%w: storage mismatch for %s", ErrUnsupportedDType, src.DType())
	}
	i := 0
	dst.Indices(func(p int) {
		d[p] = s[i]
		i++
	})
	return nil
}

// IteratorStrides returns the strides PyTorch's TensorIterator gives a
// new output of the given (broadcast) shape computed elementwise from
// inputs: the dimensions are ordered as reorder_dimensions orders them
// (by the inputs' strides, in order, skipping broadcast dimensions; equal
// strides put the smaller size innermost) and the output is dense in that
// order. With no informative input the result is contiguous. Inputs of
// another rank (0-dim scalars) only broadcast.
func IteratorStrides(shape []int, inputs ...*tensor.Tensor) []int {
	n := len(shape)
	if n == 0 {
		return nil
	}
	// Broadcast strides of each input in the output's dims.
	var ops [][]int
	for _, t := range inputs {
		if t == nil || t.Dim() == 0 {
			continue
		}
		if t.Dim() > n {
			return tensor.ContiguousStrides(shape)
		}
		st := make([]int, n)
		ts, tst := t.Shape(), t.Strides()
		lead := n - len(ts)
		for i := range ts {
			if ts[i] == 1 && shape[lead+i] != 1 {
				st[lead+i] = 0
			} else {
				st[lead+i] = tst[i]
			}
		}
		ops = append(ops, st)
	}
	perm := reorderDims(shape, ops, false)
	out := make([]int, n)
	next := 1
	for _, d := range perm {
		out[d] = next
		next *= shape[d]
	}
	return out
}

// reorderDims is TensorIterator's reorder_dimensions: the dimensions of
// shape, innermost first, ordered by the operands' strides (ops, each in
// the shape's dims), in order, skipping zero (broadcast or reduced)
// strides; equal strides put the smaller size innermost. With reduction,
// ops[0] is the output and its reduced (zero-stride) dimensions go first.
func reorderDims(shape []int, ops [][]int, reduction bool) []int {
	n := len(shape)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = n - 1 - i
	}
	// shouldSwap: 1 if d0 should come after d1, -1 before, 0 undecided.
	shouldSwap := func(d0, d1 int) int {
		if reduction {
			if z0, z1 := ops[0][d0] == 0, ops[0][d1] == 0; z0 != z1 {
				if z1 {
					return 1
				}
				return -1
			}
		}
		for _, st := range ops {
			s0, s1 := st[d0], st[d1]
			if s0 == 0 || s1 == 0 {
				continue
			}
			if s0 < s1 {
				return -1
			}
			if s0 > s1 {
				return 1
			}
			if shape[d0] > shape[d1] {
				return 1
			}
		}
		return 0
	}
	for i := 1; i < n; i++ {
		d1 := i
		for d0 := i - 1; d0 >= 0; d0-- {
			c := shouldSwap(perm[d0], perm[d1])
			if c > 0 {
				perm[d0], perm[d1] = perm[d1], perm[d0]
				d1 = d0
			} else if c < 0 {
				break
			}
		}
	}
	return perm
}

// Restride returns a tensor with the values of t laid out with the given
// dense strides (a permutation of a contiguous layout), or t itself when
// it already has them.
func Restride(t *tensor.Tensor, strides []int) (*tensor.Tensor, error) {
	if slices.Equal(t.Strides(), strides) {
		return t, nil
	}
	return restride(t.Contiguous(), strides)
}

// SuggestsChannelsLast reports whether a 4-D tensor's strides make
// PyTorch's suggest_memory_format() answer channels_last
// (is_channels_last_strides_2d_s4: strides non-decreasing in the order C,
// W, H, N, with ATen's rules for size-1 and ambiguous dimensions).
func SuggestsChannelsLast(t *tensor.Tensor) bool {
	if t == nil || t.Dim() != 4 {
		return false
	}
	sizes, strides := t.Shape(), t.Strides()
	if strides[1] == 0 {
		return false
	}
	minStride := 0
	for _, d := range []int{1, 3, 2, 0} {
		if sizes[d] == 0 || strides[d] < minStride {
			return false
		}
		if d == 0 && minStride == strides[1] {
			return false
		}
		minStride = strides[d]
		if sizes[d] > 1 {
			minStride *= sizes[d]
		}
	}
	return true
}

// ChannelsLastStrides returns the channels-last strides of a 4-D shape
// [N, C, H, W]: C innermost, then W, H and N.
func ChannelsLastStrides(shape []int) []int {
	c, h, w := shape[1], shape[2], shape[3]
	return []int{h * w * c, 1, w * c, c}
}
