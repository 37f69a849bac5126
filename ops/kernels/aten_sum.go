package kernels

import "github.com/fxquant/fxquant/ops/tensor"

// This file reproduces ATen's cascade_sum (SumKernel.cpp) for float32 and
// float64 sums over any dims, on the AVX2 kernels with one thread, as
// PyTorch 2.14 runs sum.dim_IntList, sum.default, mean.dim and
// mean.default (mean is that sum divided by the element count).
//
// A reduction is first laid out as TensorIterator lays it out: the
// reduced dimensions move to the front (innermost first by input stride),
// the kept ones follow, and adjacent dimensions that are contiguous in
// both input and output merge ([sumLayout]). The first two dimensions of
// that layout form the 2-D loop cascade_sum runs for every position of
// the others, in order, each call adding its sums into the output (which
// starts at zero). The 2-D loop picks one of four orders:
//
//   - vectorized inner sum (reduced dimension contiguous, at least 8
//     values): 8-lane vectors summed by row_sum's cascade per lane, then
//     the scalar tail, then the lanes in order;
//   - vectorized outer sum (kept dimension contiguous, at least 8): 32 or
//     8 outputs at a time, each lane a cascade over the reduced dimension;
//   - scalar inner and outer sums for the strided rest.
//
// The cascade (multi_row_sum) keeps four levels of partial sums flushed
// every 2^max(4, ceil(log2 n)/4) rows, so that only sums of similar
// magnitude meet.

// sumFloat is the float types cascade_sum runs in their own precision.
type sumFloat interface{ float32 | float64 }

// cascadeMultiRow is multi_row_sum for nrows scalar accumulators:
// load(i, k) is unit k of row i.
func cascadeMultiRow[T sumFloat](nrows, size int, load func(i, k int) T) []T {
	const numLevels = 4
	levelPower := max(4, ceilLog2(size)/numLevels)
	levelStep := 1 << levelPower
	levelMask := levelStep - 1
	acc := make([][]T, numLevels)
	for j := range acc {
		acc[j] = make([]T, nrows)
	}
	i := 0
	for i+levelStep <= size {
		for j := 0; j < levelStep; j, i = j+1, i+1 {
			for k := 0; k < nrows; k++ {
				acc[0][k] += load(i, k)
			}
		}
		for j := 1; j < numLevels; j++ {
			for k := 0; k < nrows; k++ {
				acc[j][k] += acc[j-1][k]
				acc[j-1][k] = 0
			}
			if i&(levelMask<<(j*levelPower)) != 0 {
				break
			}
		}
	}
	for ; i < size; i++ {
		for k := 0; k < nrows; k++ {
			acc[0][k] += load(i, k)
		}
	}
	for j := 1; j < numLevels; j++ {
		for k := 0; k < nrows; k++ {
			acc[0][k] += acc[j][k]
		}
	}
	return acc[0]
}

// cascadeRow is row_sum: the size units read as a (-1, 4) array summed by
// [cascadeMultiRow], the leftover units added to column 0, then columns
// 1, 2 and 3 added to column 0.
func cascadeRow[T sumFloat](size int, load func(i int) T) T {
	sizeILP := size / 4
	p := cascadeMultiRow(4, sizeILP, func(i, k int) T { return load(i*4 + k) })
	for i := sizeILP * 4; i < size; i++ {
		p[0] += load(i)
	}
	for k := 1; k < 4; k++ {
		p[0] += p[k]
	}
	return p[0]
}

// sumDim is one dimension of a reduction's iteration space: its size and
// the input and output strides in elements (output 0 when reduced).
type sumDim struct{ size, in, out int }

// sumLayout lays out the reduction of a tensor of the given shape and
// input strides over the reduced dims as TensorIterator does
// (reorder_dimensions, then coalesce_dimensions), innermost first. The
// output is contiguous in the kept dimensions.
func sumLayout(shape, strides []int, reduced []bool) []sumDim {
	n := len(shape)
	outStr := make([]int, n)
	acc := 1
	for d := n - 1; d >= 0; d-- {
		if !reduced[d] {
			outStr[d] = acc
			acc *= shape[d]
		}
	}
	if n == 0 {
		return nil
	}
	perm := reorderDims(shape, [][]int{outStr, strides}, true)
	dims := make([]sumDim, n)
	for i, d := range perm {
		dims[i] = sumDim{shape[d], strides[d], outStr[d]}
	}
	prev := 0
	for d := 1; d < n; d++ {
		a, b := dims[prev], dims[d]
		if a.size == 1 || b.size == 1 || (a.size*a.in == b.in && a.size*a.out == b.out) {
			if a.size == 1 {
				dims[prev].in, dims[prev].out = b.in, b.out
			}
			dims[prev].size *= b.size
			continue
		}
		prev++
		if prev != d {
			dims[prev] = b
		}
	}
	return dims[:prev+1]
}

// cascadeSumStrided sums x (a strided view into data) over the reduced
// dims into out (contiguous in the kept dims, zero-filled by the caller)
// in cascade_sum's order; lanes is the vector width (8 for float32, 4 for
// float64 on AVX2).
func cascadeSumStrided[T sumFloat](data []T, offset int, shape, strides []int, reduced []bool, out []T, lanes int) {
	if tensor.Numel(shape) == 0 {
		return
	}
	dims := sumLayout(shape, strides, reduced)
	for len(dims) < 2 {
		dims = append(dims, sumDim{1, 0, 0})
	}
	outer := dims[2:]
	idx := make([]int, len(outer))
	for {
		inBase, outBase := offset, 0
		for i, d := range outer {
			inBase += idx[i] * d.in
			outBase += idx[i] * d.out
		}
		cascadeLoop2d(data, inBase, out, outBase, dims[0], dims[1], lanes)
		k := 0
		for ; k < len(outer); k++ {
			idx[k]++
			if idx[k] < outer[k].size {
				break
			}
			idx[k] = 0
		}
		if k == len(outer) {
			return
		}
	}
}

// cascadeLoop2d is cascade_sum's 2-D loop body.
func cascadeLoop2d[T sumFloat](x []T, in0 int, out []T, out0 int, a, b sumDim, lanes int) {
	size0, size1 := a.size, b.size
	inS := [2]int{a.in, b.in}
	outS := [2]int{a.out, b.out}
	if outS[0] != 0 && outS[1] == 0 {
		inS[0], inS[1] = inS[1], inS[0]
		outS[0], outS[1] = outS[1], outS[0]
		size0, size1 = size1, size0
	}
	if outS[0] != 0 && outS[1] != 0 {
		// Not a reduction: out += in elementwise.
		for j := 0; j < size1; j++ {
			for i := 0; i < size0; i++ {
				out[out0+j*outS[1]+i*outS[0]] += x[in0+j*inS[1]+i*inS[0]]
			}
		}
		return
	}
	oS := outS[1]
	switch {
	case inS[0] == 1 && size0 >= lanes:
		// vectorized_inner_sum
		vecSize := size0 / lanes
		for j := 0; j < size1; j++ {
			row := in0 + j*inS[1]
			var final T
			for k := vecSize * lanes; k < size0; k++ {
				final += x[row+k]
			}
			for l := 0; l < lanes; l++ {
				final += cascadeRow(vecSize, func(i int) T { return x[row+i*lanes+l] })
			}
			out[out0+j*oS] += final
		}
	case inS[1] == 1 && size1 >= lanes:
		// vectorized_outer_sum
		j := 0
		for ; j+4*lanes <= size1; j += 4 * lanes {
			row := in0 + j
			for l := 0; l < lanes; l++ {
				sums := cascadeMultiRow(4, size0, func(i, k int) T { return x[row+i*inS[0]+k*lanes+l] })
				for k := 0; k < 4; k++ {
					out[out0+(j+k*lanes+l)*oS] += sums[k]
				}
			}
		}
		for ; j+lanes <= size1; j += lanes {
			row := in0 + j
			for l := 0; l < lanes; l++ {
				out[out0+(j+l)*oS] += cascadeRow(size0, func(i int) T { return x[row+l+i*inS[0]] })
			}
		}
		for ; j < size1; j++ {
			row := in0 + j
			out[out0+j*oS] += cascadeRow(size0, func(i int) T { return x[row+i*inS[0]] })
		}
	case inS[0] < inS[1]:
		// scalar_inner_sum
		for j := 0; j < size1; j++ {
			row := in0 + j*inS[1]
			out[out0+j*oS] += cascadeRow(size0, func(i int) T { return x[row+i*inS[0]] })
		}
	default:
		// scalar_outer_sum
		j := 0
		for ; j+3 < size1; j += 4 {
			row := in0 + j*inS[1]
			sums := cascadeMultiRow(4, size0, func(i, k int) T { return x[row+i*inS[0]+k*inS[1]] })
			for k := 0; k < 4; k++ {
				out[out0+(j+k)*oS] += sums[k]
			}
		}
		for ; j < size1; j++ {
			row := in0 + j*inS[1]
			out[out0+j*oS] += cascadeRow(size0, func(i int) T { return x[row+i*inS[0]] })
		}
	}
}

// cascadeSumTensor sums the float32 or float64 tensor x over the
// normalised dims nd as ATen does; ok is false for other dtypes.
func cascadeSumTensor(x *tensor.Tensor, nd []int, mean bool) (res any, ok bool) {
	reduced := make([]bool, x.Dim())
	count := 1
	for _, d := range nd {
		reduced[d] = true
		count *= x.Size(d)
	}
	if x.Dim() == 0 {
		count = 1
	}
	nOut := 1
	for d, s := range x.Shape() {
		if !reduced[d] {
			nOut *= s
		}
	}
	switch data := x.Storage().(type) {
	case []float32:
		out := make([]float32, nOut)
		cascadeSumStrided(data, x.Offset(), x.Shape(), x.Strides(), reduced, out, 8)
		if mean {
			c := float32(count)
			for i := range out {
				out[i] /= c
			}
		}
		return out, true
	case []float64:
		if x.DType() != tensor.Float64 {
			return nil, false
		}
		out := make([]float64, nOut)
		cascadeSumStrided(data, x.Offset(), x.Shape(), x.Strides(), reduced, out, 4)
		if mean {
			c := float64(count)
			for i := range out {
				out[i] /= c
			}
		}
		return out, true
	}
	return nil, false
}
