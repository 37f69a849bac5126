package kernels

import (
	"errors"
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

// ErrUnsupportedDType is wrapped by every error an aten kernel returns for
// a tensor whose dtype it does not take.
var ErrUnsupportedDType = errors.New("kernels: unsupported dtype")

// ErrBadArgument is wrapped by aten kernel errors about a non-tensor
// argument (a dim out of range, a negative size, an unknown mode, ...).
// Shape mismatches between tensors wrap [tensor.ErrShape] instead.
var ErrBadArgument = errors.New("kernels: bad argument")

func shapeErrf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{tensor.ErrShape}, args...)...)
}

func argErrf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadArgument}, args...)...)
}

func dtypeErr(arg string, got tensor.DType, want string) error {
	return fmt.Errorf("%w: argument %q: want %s, got %s", ErrUnsupportedDType, arg, want, got)
}

// isFloatCompute reports whether d is a float dtype the float kernels run:
// float32, and float16/bfloat16 computed in float32 and rounded back.
func isFloatCompute(d tensor.DType) bool {
	return d == tensor.Float32 || d == tensor.Float16 || d == tensor.BFloat16
}

// floatArg returns t's elements in row-major order as float32: the storage
// itself for a contiguous float32 tensor (callers must not write to it), a
// converted copy for float16 and bfloat16. Other dtypes are an error naming
// the argument.
func floatArg(name string, t *tensor.Tensor) ([]float32, error) {
	if t == nil {
		return nil, argErrf("argument %q: want a tensor, got None", name)
	}
	switch t.DType() {
	case tensor.Float32:
		return tensor.Data[float32](t)
	case tensor.Float16, tensor.BFloat16:
		raw, err := tensor.Data[uint16](t)
		if err != nil {
			return nil, err
		}
		out := make([]float32, len(raw))
		if t.DType() == tensor.Float16 {
			for i, h := range raw {
				out[i] = tensor.Float16ToFloat32(h)
			}
		} else {
			for i, h := range raw {
				out[i] = tensor.BFloat16ToFloat32(h)
			}
		}
		return out, nil
	}
	return nil, dtypeErr(name, t.DType(), "a float32, float16 or bfloat16 tensor")
}

// optFloatArg is floatArg for an optional tensor: nil gives nil data.
func optFloatArg(name string, t *tensor.Tensor, wantLen int) ([]float32, error) {
	if t == nil {
		return nil, nil
	}
	d, err := floatArg(name, t)
	if err != nil {
		return nil, err
	}
	if len(d) != wantLen {
		return nil, shapeErrf("argument %q: want %d elements, got shape %v", name, wantLen, t.Shape())
	}
	return d, nil
}

// fromFloat32 builds a contiguous tensor of dtype dt (float32, float16 or
// bfloat16) from float32 values, rounding to nearest even for the 16-bit
// types. data is taken over for float32.
func fromFloat32(dt tensor.DType, shape []int, data []float32) *tensor.Tensor {
	switch dt {
	case tensor.Float16:
		raw := make([]uint16, len(data))
		for i, v := range data {
			raw[i] = tensor.Float32ToFloat16(v)
		}
		return tensor.MustFromData(dt, shape, raw)
	case tensor.BFloat16:
		raw := make([]uint16, len(data))
		for i, v := range data {
			raw[i] = tensor.Float32ToBFloat16(v)
		}
		return tensor.MustFromData(dt, shape, raw)
	}
	return tensor.MustFromData(tensor.Float32, shape, data)
}

// normDims normalises a list of dims for a tensor of the given rank and
// rejects repeats. An empty list means every dim when allIfEmpty is set.
func normDims(arg string, dims []int, rank int, allIfEmpty bool) ([]int, error) {
	if len(dims) == 0 && allIfEmpty {
		out := make([]int, rank)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	seen := make([]bool, max(rank, 1))
	out := make([]int, len(dims))
	for i, d := range dims {
		nd, err := tensor.NormDim(d, rank)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", arg, err)
		}
		if seen[nd] {
			return nil, argErrf("argument %q: dim %d appears more than once in %v", arg, nd, dims)
		}
		seen[nd] = true
		out[i] = nd
	}
	return out, nil
}
