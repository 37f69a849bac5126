package kernels

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

// splitAt returns the element counts before, along and after dim.
func splitAt(shape []int, dim int) (outer, d, inner int) {
	return tensor.Numel(shape[:dim]), shape[dim], tensor.Numel(shape[dim+1:])
}

// Softmax returns exp(x - max) / sum(exp(x - max)) along dim, in the order
// of operations of PyTorch's CPU kernels (elem_softmax.go): bit-exact with
// PyTorch 2.14 (AVX2) for float32 on the stored vectors.
func Softmax(x *tensor.Tensor, dim int) (*tensor.Tensor, error) {
	return softmaxImpl("softmax", x, dim, false)
}

// LogSoftmax returns x - max - log(sum(exp(x - max))) along dim, in the
// order of operations of PyTorch's CPU kernels (elem_softmax.go):
// bit-exact with PyTorch 2.14 (AVX2) for float32 on the stored vectors.
func LogSoftmax(x *tensor.Tensor, dim int) (*tensor.Tensor, error) {
	return softmaxImpl("log_softmax", x, dim, true)
}

// reduceShape returns the result shape of reducing dims (normalised) of
// shape, with or without kept dims.
func reduceShape(shape []int, dims []int, keepdim bool) []int {
	red := make([]bool, len(shape))
	for _, d := range dims {
		red[d] = true
	}
	var out []int
	for i, s := range shape {
		if red[i] {
			if keepdim {
				out = append(out, 1)
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// reduceRows permutes the reduced dims of t to the end and returns its
// values as float64 rows, one row per output element.
func reduceRows(op string, t *tensor.Tensor, dims []int) (rows [][]float64, err error) {
	var kept, red []int
	isRed := make([]bool, t.Dim())
	for _, d := range dims {
		isRed[d] = true
	}
	for i := 0; i < t.Dim(); i++ {
		if isRed[i] {
			red = append(red, i)
		} else {
			kept = append(kept, i)
		}
	}
	p, err := t.Permute(append(kept, red...)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	vals, err := p.Float64s()
	if err != nil {
		return nil, fmt.Errorf("%s: argument \"self\": %w", op, err)
	}
	shape := t.Shape()
	n := 1
	for _, d := range red {
		n *= shape[d]
	}
	m := 1
	for _, d := range kept {
		m *= shape[d]
	}
	rows = make([][]float64, m)
	for i := range rows {
		rows[i] = vals[i*n : (i+1)*n]
	}
	return rows, nil
}

// Sum is aten.sum.dim_IntList: the sum over dims (every dim when empty),
// keeping them as size 1 with keepdim. dtype (Unknown for none) sets the
// result dtype; by default float inputs keep their dtype and integer and
// bool inputs give int64. Float32 and float64 sums in their own dtype
// follow ATen's cascade_sum on the AVX2 kernels bit for bit, for any dims
// and strides (aten_sum.go); other float sums (float16, bfloat16, or a
// dtype other than the input's) accumulate in float64 and round once,
// which can differ from PyTorch in the last bit.
func Sum(x *tensor.Tensor, dims []int, keepdim bool, dtype tensor.DType) (*tensor.Tensor, error) {
	return reduce("sum", x, dims, keepdim, dtype, false)
}

// Mean is aten.mean.dim: the sum over dims divided by their element count
// (as PyTorch's CPU mean: the cascade sum, then one division in the
// result dtype); see [Sum] for which dtypes are bit-exact. Integer inputs need a float dtype, as in PyTorch.
func Mean(x *tensor.Tensor, dims []int, keepdim bool, dtype tensor.DType) (*tensor.Tensor, error) {
	return reduce("mean", x, dims, keepdim, dtype, true)
}

func reduce(op string, x *tensor.Tensor, dims []int, keepdim bool, dtype tensor.DType, mean bool) (*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("%s: argument \"self\" is required", op)
	}
	nd, err := normDims("dim", dims, x.Dim(), true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	out := dtype
	if out == tensor.Unknown {
		out = x.DType()
		if !x.DType().IsFloat() {
			if mean {
				return nil, fmt.Errorf("%s: %w", op, dtypeErr("self", x.DType(), "a float tensor (or pass dtype)"))
			}
			out = tensor.Int64
		}
	}
	if x.DType().IsComplex() {
		return nil, fmt.Errorf("%s: %w", op, dtypeErr("self", x.DType(), "a real tensor"))
	}
	if x.Dim() == 0 {
		nd = nil
	}
	shape := reduceShape(x.Shape(), nd, keepdim)
	if out == x.DType() && (out == tensor.Float32 || out == tensor.Float64) {
		if res, ok := cascadeSumTensor(x, nd, mean); ok {
			if f, ok := res.([]float32); ok {
				return fromFloat32(out, shape, f), nil
			}
			return tensor.FromData(out, shape, res.([]float64))
		}
	}
	rows, err := reduceRows(op, x, nd)
	if err != nil {
		return nil, err
	}
	switch {
	case isFloatCompute(out) || out == tensor.Float64:
		res := make([]float64, len(rows))
		for i, r := range rows {
			s := 0.0
			for _, v := range r {
				s += v
			}
			if mean {
				s /= float64(len(r))
			}
			res[i] = s
		}
		if out == tensor.Float64 {
			return tensor.FromData(out, shape, res)
		}
		f := make([]float32, len(res))
		for i, v := range res {
			f[i] = float32(v)
		}
		return fromFloat32(out, shape, f), nil
	case out.IsInteger() || out == tensor.Bool:
		if mean {
			return nil, fmt.Errorf("%s: %w", op, dtypeErr("dtype", out, "a float dtype"))
		}
		res := make([]int64, len(rows))
		for i, r := range rows {
			var s int64
			for _, v := range r {
				s += int64(v)
			}
			res[i] = s
		}
		return fromInt64(out, shape, res)
	}
	return nil, fmt.Errorf("%s: %w", op, dtypeErr("dtype", out, "a real dtype"))
}

// Amax is aten.amax: the maximum over dims (every dim when empty); NaN
// propagates. It fails on an empty reduction.
func Amax(x *tensor.Tensor, dims []int, keepdim bool) (*tensor.Tensor, error) {
	return extreme("amax", x, dims, keepdim, true)
}

// Amin is aten.amin: the minimum over dims; see [Amax].
func Amin(x *tensor.Tensor, dims []int, keepdim bool) (*tensor.Tensor, error) {
	return extreme("amin", x, dims, keepdim, false)
}

func extreme(op string, x *tensor.Tensor, dims []int, keepdim, isMax bool) (*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("%s: argument \"self\" is required", op)
	}
	nd, err := normDims("dim", dims, x.Dim(), true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if x.Dim() == 0 {
		nd = nil
	}
	rows, err := reduceRows(op, x, nd)
	if err != nil {
		return nil, err
	}
	shape := reduceShape(x.Shape(), nd, keepdim)
	res := make([]float64, len(rows))
	for i, r := range rows {
		if len(r) == 0 {
			return nil, shapeErrf("%s: reduction over an empty dim of %v", op, x.Shape())
		}
		m := r[0]
		for _, v := range r[1:] {
			if m != m {
				break
			}
			if v != v || (isMax && v > m) || (!isMax && v < m) {
				m = v
			}
		}
		res[i] = m
	}
	switch dt := x.DType(); {
	case isFloatCompute(dt):
		f := make([]float32, len(res))
		for i, v := range res {
			f[i] = float32(v)
		}
		return fromFloat32(dt, shape, f), nil
	case dt == tensor.Float64:
		return tensor.FromData(dt, shape, res)
	case dt.IsInteger() || dt == tensor.Bool:
		iv := make([]int64, len(res))
		for i, v := range res {
			iv[i] = int64(v)
		}
		return fromInt64(dt, shape, iv)
	}
	return nil, fmt.Errorf("%s: %w", op, dtypeErr("self", x.DType(), "a real tensor"))
}
