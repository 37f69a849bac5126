package tensor

import (
	"errors"
	"fmt"
	"slices"
)

// ErrShape is wrapped by every error about an invalid shape, dimension or
// index passed to a view operation.
var ErrShape = errors.New("tensor: bad shape")

func shapeErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrShape}, args...)...)
}

// NormDim maps a possibly negative dimension index to [0, rank) as PyTorch
// does (-1 is the last dimension). A 0-dim tensor accepts 0 and -1, as
// PyTorch's wrap_dim does for scalars. It fails for a dimension out of range.
func NormDim(dim, rank int) (int, error) {
	r := rank
	if r == 0 {
		r = 1
	}
	if dim < -r || dim >= r {
		return 0, shapeErr("dimension %d out of range for a %d-dim tensor (want %d..%d)", dim, rank, -r, r-1)
	}
	if dim < 0 {
		dim += r
	}
	return dim, nil
}

// InferShape resolves at most one -1 in shape so that the result holds numel
// elements. It fails for several -1, other negative sizes, or a count that
// does not match.
func InferShape(shape []int, numel int) ([]int, error) {
	out := append([]int(nil), shape...)
	infer := -1
	known := 1
	for i, s := range shape {
		switch {
		case s == -1:
			if infer >= 0 {
				return nil, shapeErr("shape %v has more than one -1", shape)
			}
			infer = i
		case s < 0:
			return nil, shapeErr("shape %v has negative size %d at dim %d", shape, s, i)
		default:
			known *= s
		}
	}
	if infer >= 0 {
		if known == 0 || numel%known != 0 {
			return nil, shapeErr("shape %v is invalid for input of size %d", shape, numel)
		}
		out[infer] = numel / known
		return out, nil
	}
	if known != numel {
		return nil, shapeErr("shape %v is invalid for input of size %d", shape, numel)
	}
	return out, nil
}

// viewStrides computes strides for viewing a tensor of (oldShape,
// oldStrides) as newShape without copying, following ATen's
// computeStride. It returns false when no such strides exist.
func viewStrides(oldShape, oldStrides, newShape []int) ([]int, bool) {
	newStrides := make([]int, len(newShape))
	if len(oldShape) == 0 {
		for i := range newStrides {
			newStrides[i] = 1
		}
		return newStrides, true
	}
	numel := Numel(oldShape)
	if numel == 0 {
		if slices.Equal(oldShape, newShape) {
			return append([]int(nil), oldStrides...), true
		}
		copy(newStrides, ContiguousStrides(newShape))
		return newStrides, true
	}
	viewD := len(newShape) - 1
	chunkBase := oldStrides[len(oldStrides)-1]
	tensorNumel := 1
	viewNumel := 1
	for d := len(oldShape) - 1; d >= 0; d-- {
		tensorNumel *= oldShape[d]
		if d == 0 || (oldShape[d-1] != 1 && oldStrides[d-1] != tensorNumel*chunkBase) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				newStrides[viewD] = viewNumel * chunkBase
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return nil, false
			}
			if d > 0 {
				chunkBase = oldStrides[d-1]
				tensorNumel = 1
				viewNumel = 1
			}
		}
	}
	if viewD != -1 {
		return nil, false
	}
	return newStrides, true
}

// View returns a view of t with the given shape (at most one -1), sharing
// storage, like torch.Tensor.view. It fails when the element count differs
// or t's strides cannot express the new shape without a copy.
func (t *Tensor) View(shape ...int) (*Tensor, error) {
	ns, err := InferShape(shape, t.Numel())
	if err != nil {
		return nil, fmt.Errorf("view %v as %v: %w", t.shape, shape, err)
	}
	st, ok := viewStrides(t.shape, t.strides, ns)
	if !ok {
		return nil, shapeErr("view %v (strides %v) as %v: size and stride are not compatible; use Reshape", t.shape, t.strides, ns)
	}
	return t.NewView(ns, st, t.offset)
}

// Reshape returns t with the given shape (at most one -1), like
// torch.reshape: a view when t's strides allow it, otherwise a contiguous
// copy. It fails when the element count differs.
func (t *Tensor) Reshape(shape ...int) (*Tensor, error) {
	ns, err := InferShape(shape, t.Numel())
	if err != nil {
		return nil, fmt.Errorf("reshape %v as %v: %w", t.shape, shape, err)
	}
	if st, ok := viewStrides(t.shape, t.strides, ns); ok {
		return t.NewView(ns, st, t.offset)
	}
	c := t.Clone()
	return c.NewView(ns, ContiguousStrides(ns), 0)
}

// Permute returns a view with the dimensions reordered: result dim i is t's
// dim dims[i]. dims must be a permutation of t's dimensions (negative
// indices allowed).
func (t *Tensor) Permute(dims ...int) (*Tensor, error) {
	if len(dims) != len(t.shape) {
		return nil, shapeErr("permute %v: got %d dims %v, want %d", t.shape, len(dims), dims, len(t.shape))
	}
	seen := make([]bool, len(dims))
	shape := make([]int, len(dims))
	strides := make([]int, len(dims))
	for i, d := range dims {
		nd, err := NormDim(d, len(t.shape))
		if err != nil {
			return nil, fmt.Errorf("permute %v dims %v: %w", t.shape, dims, err)
		}
		if seen[nd] {
			return nil, shapeErr("permute %v: dim %d repeated in %v", t.shape, nd, dims)
		}
		seen[nd] = true
		shape[i] = t.shape[nd]
		strides[i] = t.strides[nd]
	}
	return t.NewView(shape, strides, t.offset)
}

// Transpose returns a view with dimensions d0 and d1 swapped.
func (t *Tensor) Transpose(d0, d1 int) (*Tensor, error) {
	if len(t.shape) == 0 {
		if _, err := NormDim(d0, 0); err != nil {
			return nil, fmt.Errorf("transpose: %w", err)
		}
		if _, err := NormDim(d1, 0); err != nil {
			return nil, fmt.Errorf("transpose: %w", err)
		}
		return t.NewView(nil, nil, t.offset)
	}
	a, err := NormDim(d0, len(t.shape))
	if err != nil {
		return nil, fmt.Errorf("transpose %v: %w", t.shape, err)
	}
	b, err := NormDim(d1, len(t.shape))
	if err != nil {
		return nil, fmt.Errorf("transpose %v: %w", t.shape, err)
	}
	shape, strides := t.Shape(), t.Strides()
	shape[a], shape[b] = shape[b], shape[a]
	strides[a], strides[b] = strides[b], strides[a]
	return t.NewView(shape, strides, t.offset)
}

// Unsqueeze returns a view with a size-1 dimension inserted at dim, which
// may range over -(rank+1)..rank.
func (t *Tensor) Unsqueeze(dim int) (*Tensor, error) {
	d, err := NormDim(dim, len(t.shape)+1)
	if err != nil {
		return nil, fmt.Errorf("unsqueeze %v: %w", t.shape, err)
	}
	stride := 1
	if d < len(t.shape) {
		stride = t.shape[d] * t.strides[d]
	}
	shape := append(append(append([]int(nil), t.shape[:d]...), 1), t.shape[d:]...)
	strides := append(append(append([]int(nil), t.strides[:d]...), stride), t.strides[d:]...)
	return t.NewView(shape, strides, t.offset)
}

// Squeeze returns a view without size-1 dimensions: all of them when dims is
// empty, otherwise only those listed that have size 1 (as torch.squeeze,
// listed dims of other sizes are kept).
func (t *Tensor) Squeeze(dims ...int) (*Tensor, error) {
	drop := make([]bool, len(t.shape))
	if len(dims) == 0 {
		for i, s := range t.shape {
			drop[i] = s == 1
		}
	} else {
		for _, d := range dims {
			nd, err := NormDim(d, len(t.shape))
			if err != nil {
				return nil, fmt.Errorf("squeeze %v: %w", t.shape, err)
			}
			if len(t.shape) > 0 && t.shape[nd] == 1 {
				drop[nd] = true
			}
		}
	}
	var shape, strides []int
	for i, s := range t.shape {
		if !drop[i] {
			shape = append(shape, s)
			strides = append(strides, t.strides[i])
		}
	}
	return t.NewView(shape, strides, t.offset)
}

// Select returns the view t[..., index, ...] along dim, dropping that
// dimension. index may be negative (counted from the end).
func (t *Tensor) Select(dim, index int) (*Tensor, error) {
	if len(t.shape) == 0 {
		return nil, shapeErr("select: cannot select from a 0-dim tensor")
	}
	d, err := NormDim(dim, len(t.shape))
	if err != nil {
		return nil, fmt.Errorf("select %v: %w", t.shape, err)
	}
	n := t.shape[d]
	if index < -n || index >= n {
		return nil, shapeErr("select %v: index %d out of range for dim %d of size %d", t.shape, index, d, n)
	}
	if index < 0 {
		index += n
	}
	shape := append(append([]int(nil), t.shape[:d]...), t.shape[d+1:]...)
	strides := append(append([]int(nil), t.strides[:d]...), t.strides[d+1:]...)
	return t.NewView(shape, strides, t.offset+index*t.strides[d])
}

// Slice returns the view t[start:stop:step] along dim with Python/ATen
// semantics: negative start and stop count from the end, both are clamped
// to the dimension, and an empty range gives size 0. step must be positive.
func (t *Tensor) Slice(dim, start, stop, step int) (*Tensor, error) {
	if len(t.shape) == 0 {
		return nil, shapeErr("slice: cannot slice a 0-dim tensor")
	}
	d, err := NormDim(dim, len(t.shape))
	if err != nil {
		return nil, fmt.Errorf("slice %v: %w", t.shape, err)
	}
	if step <= 0 {
		return nil, shapeErr("slice %v dim %d: step must be positive, got %d", t.shape, d, step)
	}
	n := t.shape[d]
	start, stop = clampSliceBound(start, n), clampSliceBound(stop, n)
	size := 0
	if stop > start {
		size = (stop - start + step - 1) / step
	}
	shape, strides := t.Shape(), t.Strides()
	shape[d] = size
	strides[d] = t.strides[d] * step
	off := t.offset
	if size > 0 {
		off += start * t.strides[d]
	}
	return t.NewView(shape, strides, off)
}

func clampSliceBound(i, n int) int {
	if i < 0 {
		i += n
		if i < 0 {
			i = 0
		}
	}
	if i > n {
		i = n
	}
	return i
}

// Expand returns a view broadcasting t to shape with stride 0 along expanded
// dimensions, like torch.Tensor.expand: new leading dimensions may be added,
// -1 keeps a size, and only size-1 dimensions may grow.
func (t *Tensor) Expand(shape ...int) (*Tensor, error) {
	if len(shape) < len(t.shape) {
		return nil, shapeErr("expand %v to %v: fewer dimensions than the tensor", t.shape, shape)
	}
	lead := len(shape) - len(t.shape)
	ns := make([]int, len(shape))
	st := make([]int, len(shape))
	for i, s := range shape {
		if i < lead {
			if s < 0 {
				return nil, shapeErr("expand %v to %v: new leading dim %d cannot be %d", t.shape, shape, i, s)
			}
			ns[i], st[i] = s, 0
			continue
		}
		j := i - lead
		old := t.shape[j]
		switch {
		case s == -1 || s == old:
			ns[i], st[i] = old, t.strides[j]
		case old == 1 && s >= 0:
			ns[i], st[i] = s, 0
		default:
			return nil, shapeErr("expand %v to %v: dim %d of size %d cannot become %d", t.shape, shape, i, old, s)
		}
	}
	return t.NewView(ns, st, t.offset)
}

// Flatten merges dimensions start..end (inclusive, negative allowed) into
// one, like torch.flatten: a view when possible, otherwise a copy. A 0-dim
// tensor becomes shape [1].
func (t *Tensor) Flatten(start, end int) (*Tensor, error) {
	if len(t.shape) == 0 {
		return t.Reshape(1)
	}
	s, err := NormDim(start, len(t.shape))
	if err != nil {
		return nil, fmt.Errorf("flatten %v: %w", t.shape, err)
	}
	e, err := NormDim(end, len(t.shape))
	if err != nil {
		return nil, fmt.Errorf("flatten %v: %w", t.shape, err)
	}
	if s > e {
		return nil, shapeErr("flatten %v: start dim %d after end dim %d", t.shape, s, e)
	}
	shape := append([]int(nil), t.shape[:s]...)
	shape = append(shape, Numel(t.shape[s:e+1]))
	shape = append(shape, t.shape[e+1:]...)
	return t.Reshape(shape...)
}

// StorageIndex returns the storage position of the element at idx (one
// index per dimension, negative counted from the end).
func (t *Tensor) StorageIndex(idx ...int) (int, error) {
	if len(idx) != len(t.shape) {
		return 0, shapeErr("index %v has %d entries for a %d-dim tensor %v", idx, len(idx), len(t.shape), t.shape)
	}
	p := t.offset
	for d, i := range idx {
		n := t.shape[d]
		if i < -n || i >= n {
			return 0, shapeErr("index %d out of range for dim %d of size %d", i, d, n)
		}
		if i < 0 {
			i += n
		}
		p += i * t.strides[d]
	}
	return p, nil
}
