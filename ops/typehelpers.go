package ops

import (
	"fmt"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file holds the type constructors for rewrites and result rules
// (typed-rewrites.md 3.8 and 4.4). Each makes the caller say where every
// part of the result comes from. There is deliberately no helper that
// copies an operand's type and changes its shape: a view uses [ViewType],
// a compute node uses [ContractType] (the type of the value it replaces),
// and anything else names both parts with [MakeType].

// MakeType returns the tensor type with the given shape and element type,
// both stated by the caller. It validates that the element type fits the
// shape: a per-axis type needs rank > axis and, when the dimension at the
// axis is static, one scale per index along it. The shape is copied.
func MakeType(shape []int64, elem Element) (TensorType, error) {
	if elem == nil {
		return TensorType{}, fmt.Errorf("ops: make type %v: no element type", shape)
	}
	if err := CheckElementFits(shape, elem); err != nil {
		return TensorType{}, err
	}
	return TensorType{Shape: slices.Clone(shape), Elem: elem}, nil
}

// MakePlainType returns the type with the given shape and the plain dtype
// d: the result of a compute op whose dtype the caller has computed.
func MakePlainType(shape []int64, d tensor.DType) (TensorType, error) {
	if !d.Valid() {
		return TensorType{}, fmt.Errorf("ops: make type %v: invalid dtype %v", shape, d)
	}
	return MakeType(shape, Scalar{d})
}

// CheckElementFits reports whether elem may be the element type of a
// tensor of the given shape (the per-axis integrity rules of
// typed-rewrites.md 3.2); it wraps [ErrBadAxis].
func CheckElementFits(shape []int64, elem Element) error {
	for i, d := range shape {
		if d < DynamicDim {
			return fmt.Errorf("ops: shape %v: dimension %d is %d", shape, i, d)
		}
	}
	pa, ok := elem.(UniformQuantizedPerAxis)
	if !ok {
		return nil
	}
	if pa.Axis >= len(shape) {
		return fmt.Errorf("%w: axis %d of %s needs rank > %d, shape is %v", ErrBadAxis, pa.Axis, pa, pa.Axis, shape)
	}
	if d := shape[pa.Axis]; d >= 0 && d != int64(len(pa.Scales)) {
		return fmt.Errorf("%w: dimension %d has size %d but %s has %d scales", ErrBadAxis, pa.Axis, d, pa, len(pa.Scales))
	}
	return nil
}

// ViewType returns the type of a pure view of src (reshape, view,
// transpose, permute, squeeze, unsqueeze, flatten, expand...) with the new
// shape. The element type is src's: a view does not change the stored
// bits. A per-axis quantized element type has its axis remapped:
//
//   - axisMap, when given, has one entry per dimension of src: the result
//     dimension that source dimension becomes, or -1 when it does not
//     survive as a dimension of its own (it is merged or split);
//   - without axisMap the view is a row-major reshape, and the quantized
//     dimension survives only if some result dimension has the same size
//     and the same number of elements before it.
//
// A view that does not keep the quantized dimension intact is refused with
// an error wrapping [ErrBadAxis] (requantizing to per-tensor would change
// numerics, so it is the caller's decision). When both shapes are static
// and no axisMap is given, their element counts must agree.
func ViewType(src TensorType, shape []int64, axisMap ...int) (TensorType, error) {
	if src.Elem == nil {
		return TensorType{}, fmt.Errorf("ops: view of %s: source has no element type", src)
	}
	if len(axisMap) > 0 && len(axisMap) != src.Rank() {
		return TensorType{}, fmt.Errorf("ops: view of %s: axis map has %d entries, want %d", src, len(axisMap), src.Rank())
	}
	if len(axisMap) == 0 {
		a, b := mulDims(src.Shape...), mulDims(shape...)
		if a >= 0 && b >= 0 && a != b {
			return TensorType{}, fmt.Errorf("ops: view of %s as %v: %w: %d elements, want %d", src, shape, ErrShape, b, a)
		}
	}
	elem := src.Elem
	if pa, ok := elem.(UniformQuantizedPerAxis); ok {
		if pa.Axis >= src.Rank() {
			return TensorType{}, fmt.Errorf("ops: view of %s: %w: axis %d beyond rank %d", src, ErrBadAxis, pa.Axis, src.Rank())
		}
		na := -1
		if len(axisMap) > 0 {
			na = axisMap[pa.Axis]
		} else {
			na = survivingAxis(src.Shape, pa.Axis, shape)
		}
		if na < 0 || na >= len(shape) {
			return TensorType{}, fmt.Errorf("ops: view of %s as %v: %w: quantized axis %d does not survive intact", src, shape, ErrBadAxis, pa.Axis)
		}
		pa.Axis = na
		elem = pa
	}
	return MakeType(shape, elem)
}

// survivingAxis finds the result dimension of a row-major reshape that is
// exactly the source dimension axis, or -1.
func survivingAxis(src []int64, axis int, dst []int64) int {
	before := mulDims(src[:axis]...)
	size := src[axis]
	if before < 0 || size < 0 {
		return -1
	}
	for j := range dst {
		if mulDims(dst[:j]...) == before && dst[j] == size {
			return j
		}
	}
	return -1
}

// ContractType returns the result type of a compute node (norm,
// elementwise, conv...) built to replace the value of type replaced: the
// element type and its quantization parameters come from the replaced
// value's contract, never from an operand. shape is the new node's shape;
// for a replacement it is usually replaced.Shape itself, and a per-axis
// element type must fit it.
func ContractType(replaced TensorType, shape []int64) (TensorType, error) {
	if replaced.Elem == nil {
		return TensorType{}, fmt.Errorf("ops: contract type: replaced value %s has no element type", replaced)
	}
	return MakeType(shape, replaced.Elem)
}

// WithElement returns the type with shape taken from shapeFrom and the
// element type elem, both named by the caller; it is [MakeType] for the
// common case where the shape source is another type.
func WithElement(shapeFrom TensorType, elem Element) (TensorType, error) {
	return MakeType(shapeFrom.Shape, elem)
}
