package kernels

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/fxquant/fxquant/ops/tensor"
)

// softmaxExp is the vectorised exp of PyTorch's softmax kernels.
var softmaxExp = sleefExpf

// softmaxImpl follows aten/src/ATen/native/cpu/SoftMaxKernel.cpp on a
// contiguous copy of x (host_softmax makes the input contiguous):
//
//   - along the last dim (_vec_softmax_lastdim, _vec_log_softmax_lastdim):
//     per row, the max and the sum are vec::reduce_all (eight lane
//     accumulators, a partial last vector, then a pairwise tree of the
//     lanes); exp is the vector exp on every element; softmax multiplies by
//     1/sum, log_softmax subtracts max then log(sum);
//   - along another dim (_vec_softmax, _vec_logsoftmax): groups of eight
//     inner positions run as vector lanes that accumulate sequentially
//     along dim; the remaining inner positions run the scalar loop with
//     glibc's expf. softmax divides by the sum.
//
// log(sum) is Sleef's logf (vec::map of Vectorized<float>::log). bfloat16
// and float16 follow ATen's reduced-precision variants
// (softmaxLastDimReduced, softmaxInnerReduced). Bit-exact with PyTorch
// 2.14 (AVX2) on the stored vectors and on 1.3 million probed float32
// elements and 26,000 probed bfloat16/float16 elements.
func softmaxImpl(op string, x *tensor.Tensor, dim int, logOut bool) (*tensor.Tensor, error) {
	xd, err := floatArg("self", x)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	shape := x.Shape()
	if len(shape) == 0 {
		shape = []int{1}
	}
	d, err := tensor.NormDim(dim, x.Dim())
	if err != nil {
		return nil, fmt.Errorf("%s: argument \"dim\": %w", op, err)
	}
	outer, D, inner := splitAt(shape, d)
	y := make([]float32, len(xd))
	if len(xd) > 0 {
		switch {
		case d == len(shape)-1 && x.DType() != tensor.Float32:
			round := reducedRounder(x.DType())
			for o := 0; o < outer; o++ {
				softmaxLastDimReduced(y[o*D:(o+1)*D], xd[o*D:(o+1)*D], logOut, round)
			}
		case d == len(shape)-1:
			// rows are independent: split them across cores (same bits)
			splitRows(outer, D, func(o0, o1 int) {
				softmaxRows(y, xd, D, o0, o1, logOut)
			})
		case logOut:
			logSoftmaxInner(y, xd, outer, D, inner)
		case x.DType() != tensor.Float32:
			softmaxInnerReduced(y, xd, outer, D, inner, reducedRounder(x.DType()))
		default:
			softmaxInner(y, xd, outer, D, inner)
		}
	}
	return fromFloat32(x.DType(), x.Shape(), y), nil
}

// vecMaximum is vec::maximum on one lane: NaN if either is NaN.
func vecMaximum(a, b float32) float32 {
	if a != a || b != b {
		return float32(math.NaN())
	}
	return max(a, b)
}

func vecAdd(a, b float32) float32 { return a + b }

// reduceAll is vec::reduce_all over data with op, after mapping each
// element with f.
func reduceAll(data []float32, f func(float32) float32, op func(a, b float32) float32) float32 {
	n := len(data)
	if n < 8 {
		acc := f(data[0])
		for i := 1; i < n; i++ {
			acc = op(acc, f(data[i]))
		}
		return acc
	}
	var acc [8]float32
	for l := range acc {
		acc[l] = f(data[l])
	}
	d := 8
	for ; d < n-n%8; d += 8 {
		for l := range acc {
			acc[l] = op(acc[l], f(data[d+l]))
		}
	}
	for l := 0; l < n-d; l++ {
		acc[l] = op(acc[l], f(data[d+l]))
	}
	return reduceLanes(acc, op)
}

// reduceLanes is vec_reduce_all on an AVX2 float vector: op across the
// lanes pairwise, the 128-bit halves first, then the 64-bit pairs, then
// the neighbours.
func reduceLanes(acc [8]float32, op func(a, b float32) float32) float32 {
	for _, m := range []int{4, 2, 1} {
		var next [8]float32
		for l := range acc {
			next[l] = op(acc[l], acc[l^m])
		}
		acc = next
	}
	return acc[0]
}

func identity(v float32) float32 { return v }

func softmaxLastDim(y, x []float32, logOut bool) {
	m := reduceAllMax(x)
	// exp(x - m) into y, then the sum of y: the same values in the same
	// order as reduce_all over the mapped row.
	var sum float32
	if n8 := len(x) &^ 7; useAVX2 && n8 > 0 {
		sum = expSumVec(y, x, m, n8)
	} else {
		expSubInto(y, x, m)
		sum = reduceAllSum(y)
	}
	if logOut {
		ls := sleefLogf(sum)
		i := 0
		if n8 := len(x) &^ 7; useAVX2 && n8 > 0 {
			subSubAVX2(&y[0], &x[0], n8, m, ls)
			i = n8
		}
		for ; i < len(x); i++ {
			y[i] = x[i] - m - ls
		}
		return
	}
	r := 1 / sum
	i := 0
	if n8 := len(y) &^ 7; useAVX2 && n8 > 0 {
		scaleAVX2(&y[0], n8, r)
		i = n8
	}
	for ; i < len(y); i++ {
		y[i] *= r
	}
}

// softmaxRows runs softmaxLastDim on rows o0 <= o < o1 (each D wide) of
// x into y. When the rows are larger than the caches, the AVX2 path
// computes exp into a row buffer and writes each finished row once, with
// non-temporal stores: the same operations, without fetching y's lines.
func softmaxRows(y, x []float32, D, o0, o1 int, logOut bool) {
	if !useAVX2 || (o1-o0)*D < ntMinFloats || D < avx2Lanes {
		for o := o0; o < o1; o++ {
			softmaxLastDim(y[o*D:(o+1)*D], x[o*D:(o+1)*D], logOut)
		}
		return
	}
	defer sfenceAVX2()
	tmp := make([]float32, D)
	n8 := D &^ 7
	for o := o0; o < o1; o++ {
		yr, xr := y[o*D:(o+1)*D], x[o*D:(o+1)*D]
		if uintptr(unsafe.Pointer(&yr[0]))%32 != 0 {
			softmaxLastDim(yr, xr, logOut)
			continue
		}
		m := reduceAllMax(xr)
		sum := expSumVec(tmp, xr, m, n8)
		if logOut {
			ls := sleefLogf(sum)
			subSubNTAVX2(&yr[0], &xr[0], n8, m, ls)
			for i := n8; i < D; i++ {
				yr[i] = xr[i] - m - ls
			}
			continue
		}
		r := 1 / sum
		scaleIntoNTAVX2(&yr[0], &tmp[0], n8, r)
		for i := n8; i < D; i++ {
			yr[i] = tmp[i] * r
		}
	}
}

// expSumVec is expSubInto(y, x, m) then reduceAllSum(y), fused: the
// AVX2 kernel computes the first n8 (a positive multiple of 8) exps and
// their 8-lane sums in reduce_all's order, then the tail joins the lanes.
func expSumVec(y, x []float32, m float32, n8 int) float32 {
	y = y[:len(x)]
	var acc lanes
	expSumAVX2(&y[0], &x[0], n8, m, &acc)
	for l, v := range x[n8:] {
		e := softmaxExp(v - m)
		y[n8+l] = e
		acc[l] += e
	}
	return reduceLanesSum(acc)
}

// reduceLanesSum is reduceLanes(acc, vecAdd) without function values.
func reduceLanesSum(a lanes) float32 {
	b := lanes{a[0] + a[4], a[1] + a[5], a[2] + a[6], a[3] + a[7]}
	c0, c1 := b[0]+b[2], b[1]+b[3]
	return c0 + c1
}

// logLanes returns sleefLogf of each lane.
func logLanes(a lanes) (ls lanes) {
	for l, v := range a {
		ls[l] = sleefLogf(v)
	}
	return ls
}

// reduceLanesMax is reduceLanes(acc, vecMaximum) without function values.
func reduceLanesMax(a lanes) float32 {
	b0, b1, b2, b3 := vecMaximum(a[0], a[4]), vecMaximum(a[1], a[5]), vecMaximum(a[2], a[6]), vecMaximum(a[3], a[7])
	return vecMaximum(vecMaximum(b0, b2), vecMaximum(b1, b3))
}

// expSubInto sets y[i] = softmaxExp(x[i] - m): softmaxLastDim's path
// without AVX2 or for rows under 8 (with AVX2, expSumVec runs instead).
func expSubInto(y, x []float32, m float32) {
	y = y[:len(x)]
	for i := range x {
		y[i] = softmaxExp(x[i] - m)
	}
}

// reduceAllMax is reduceAll(data, identity, vecMaximum) without the
// function values (vecMaximum is the builtin max: NaN wins, +0 over -0).
func reduceAllMax(data []float32) float32 {
	n := len(data)
	if n < 8 {
		return reduceAll(data, identity, vecMaximum)
	}
	var acc [8]float32
	d := 8
	if nv := n / 8; useAVX2 && !maxLanes4AVX2(&data[0], nv, (*lanes)(&acc)) {
		d = nv * 8
	} else {
		copy(acc[:], data[:8])
		for ; d < n-n%8; d += 8 {
			v := data[d : d+8]
			for l := range acc {
				acc[l] = max(acc[l], v[l])
			}
		}
	}
	for l := 0; l < n-d; l++ {
		acc[l] = max(acc[l], data[d+l])
	}
	return reduceLanesMax(acc)
}

// reduceAllSum is reduceAll(data, identity, vecAdd) without the function
// values.
func reduceAllSum(data []float32) float32 {
	n := len(data)
	if n < 8 {
		return reduceAll(data, identity, vecAdd)
	}
	var acc [8]float32
	copy(acc[:], data[:8])
	d := 8
	for ; d < n-n%8; d += 8 {
		v := data[d : d+8]
		for l := range acc {
			acc[l] += v[l]
		}
	}
	for l := 0; l < n-d; l++ {
		acc[l] += data[d+l]
	}
	return reduceLanesSum(acc)
}

func softmaxInner(y, x []float32, outer, D, inner int) {
	// outer slices are independent: split them across cores (same bits)
	splitRows(outer, D*inner, func(o0, o1 int) {
		softmaxInnerRange(y, x, D, inner, o0, o1)
	})
}

func softmaxInnerRange(y, x []float32, D, inner, o0, o1 int) {
	vecEnd := inner - inner%8
	for o := o0; o < o1; o++ {
		base := o * D * inner
		i0 := 0
		if useAVX2 && D > 0 {
			// each group of 8 positions: one lane per position, the same
			// chain as below
			for ; i0+16 <= vecEnd; i0 += 16 {
				softmaxInner16AVX2(&y[base+i0], &x[base+i0], D, 4*inner)
			}
			for ; i0 < vecEnd; i0 += 8 {
				softmaxInner8AVX2(&y[base+i0], &x[base+i0], D, 4*inner)
			}
		}
		for i := i0; i < inner; i++ {
			p := base + i
			if i < vecEnd {
				m := x[p]
				for k := 1; k < D; k++ {
					m = vecMaximum(m, x[p+k*inner])
				}
				var sum float32
				for k := 0; k < D; k++ {
					e := softmaxExp(x[p+k*inner] - m)
					y[p+k*inner] = e
					sum += e
				}
				for k := 0; k < D; k++ {
					y[p+k*inner] /= sum
				}
				continue
			}
			m := x[p]
			for k := 1; k < D; k++ {
				if v := x[p+k*inner]; m < v { // std::max
					m = v
				}
			}
			var sum float32
			for k := 0; k < D; k++ {
				e := glibcExpf(x[p+k*inner] - m)
				y[p+k*inner] = e
				sum += e
			}
			for k := 0; k < D; k++ {
				y[p+k*inner] /= sum
			}
		}
	}
}

func logSoftmaxInner(y, x []float32, outer, D, inner int) {
	// outer slices are independent: split them across cores (same bits)
	splitRows(outer, D*inner, func(o0, o1 int) {
		logSoftmaxInnerRange(y, x, D, inner, o0, o1)
	})
}

func logSoftmaxInnerRange(y, x []float32, D, inner, o0, o1 int) {
	chunk := max(128*1024/D/4, 8)
	chunk = chunk / 8 * 8
	for o := o0; o < o1; o++ {
		base := o * D * inner
		for c0 := 0; c0 < inner; c0 += chunk {
			size := min(chunk, inner-c0)
			vecEnd := size - size%8
			j0 := 0
			if useAVX2 && D > 0 {
				// 8 positions per vector, one lane each: the same chain
				for ; j0+16 <= vecEnd; j0 += 16 {
					p := base + c0 + j0
					var m, sum [2]lanes
					maxExpSum16AVX2(&x[p], D, 4*inner, &m, &sum)
					for h := range sum {
						ls := logLanes(sum[h])
						subSub8AVX2(&y[p+8*h], &x[p+8*h], D, 4*inner, &m[h], &ls)
					}
				}
				for ; j0 < vecEnd; j0 += 8 {
					p := base + c0 + j0
					var m, sum lanes
					maxExpSum8AVX2(&x[p], D, 4*inner, &m, &sum)
					ls := logLanes(sum)
					subSub8AVX2(&y[p], &x[p], D, 4*inner, &m, &ls)
				}
			}
			for j := j0; j < size; j++ {
				i := c0 + j
				p := base + i
				m := float32(math.Inf(-1))
				for k := 0; k < D; k++ {
					if v := x[p+k*inner]; v > m {
						m = v
					}
				}
				var sum float32
				for k := 0; k < D; k++ {
					if j < vecEnd {
						sum += softmaxExp(x[p+k*inner] - m)
					} else {
						sum += glibcExpf(x[p+k*inner] - m)
					}
				}
				ls := sleefLogf(sum)
				for k := 0; k < D; k++ {
					y[p+k*inner] = x[p+k*inner] - m - ls
				}
			}
		}
	}
}

// softmaxInnerReduced is ATen's _vec_softmax for bfloat16 and float16 (dim
// not last): groups of 16 inner positions compute in float32 (Sleef's
// expf, a float sum, e/sum rounded once); the remaining positions run the
// scalar loop, which rounds exp to the input's dtype before dividing. y
// holds the float32 values whose rounding is the result.
func softmaxInnerReduced(y, x []float32, outer, D, inner int, round func(float32) float32) {
	vecEnd := inner - inner%16
	for o := 0; o < outer; o++ {
		base := o * D * inner
		for i := 0; i < inner; i++ {
			p := base + i
			vec := i < vecEnd
			m := x[p]
			for k := 1; k < D; k++ {
				if vec {
					m = vecMaximum(m, x[p+k*inner])
				} else if v := x[p+k*inner]; m < v {
					m = v
				}
			}
			var sum float32
			for k := 0; k < D; k++ {
				var e float32
				if vec {
					e = softmaxExp(x[p+k*inner] - m)
				} else {
					e = glibcExpf(x[p+k*inner] - m)
				}
				sum += e
				if !vec {
					e = round(e)
				}
				y[p+k*inner] = e
			}
			for k := 0; k < D; k++ {
				y[p+k*inner] /= sum
			}
		}
	}
}

// reducedRounder rounds a float32 to bfloat16 or float16 (nearest even) and
// back.
func reducedRounder(d tensor.DType) func(float32) float32 {
	if d == tensor.BFloat16 {
		return tensor.RoundBFloat16
	}
	return func(v float32) float32 { return tensor.Float16ToFloat32(tensor.Float32ToFloat16(v)) }
}

// reduceAll16 is vec::reduce_all / map_reduce_all for bfloat16 and float16
// data (functional_bfloat16.h): 16 elements per step as two float vectors,
// combined lane by lane at the end, then the lane tree.
func reduceAll16(data []float32, f func(float32) float32, op func(a, b float32) float32) float32 {
	n := len(data)
	load := func(at, count int) [8]float32 {
		var v [8]float32
		for l := range v {
			if l < count {
				v[l] = f(data[at+l])
			} else {
				v[l] = f(0)
			}
		}
		return v
	}
	if n < 16 {
		v0 := load(0, min(n, 8))
		if n > 8 {
			v1 := load(8, n-8)
			for l := 0; l < n-8; l++ {
				v0[l] = op(v0[l], v1[l])
			}
			return reduceLanes(v0, op)
		}
		acc := v0[0]
		for l := 1; l < n; l++ {
			acc = op(acc, v0[l])
		}
		return acc
	}
	a0, a1 := load(0, 8), load(8, 8)
	d := 16
	for ; d < n-n%16; d += 16 {
		v0, v1 := load(d, 8), load(d+8, 8)
		for l := range a0 {
			a0[l] = op(a0[l], v0[l])
			a1[l] = op(a1[l], v1[l])
		}
	}
	if r := n - d; r > 0 {
		v0 := load(d, min(r, 8))
		if r > 8 {
			v1 := load(d+8, r-8)
			for l := range a0 {
				a0[l] = op(a0[l], v0[l])
			}
			for l := 0; l < r-8; l++ {
				a1[l] = op(a1[l], v1[l])
			}
		} else {
			for l := 0; l < r; l++ {
				a0[l] = op(a0[l], v0[l])
			}
		}
	}
	for l := range a0 {
		a0[l] = op(a0[l], a1[l])
	}
	return reduceLanes(a0, op)
}

// softmaxLastDimReduced is softmax and log_softmax along the last dim for
// bfloat16 and float16 (x holds the values widened to float32; y receives
// float32 values whose rounding is the result).
//
// softmax (_vec_softmax_lastdim<BFloat16>): max over 16-element blocks
// then the scalar tail; exp(x - max) with Sleef's expf over 8-lane
// vectors, summed in 8 lanes, then the scalar tail with glibc's expf added
// in order; the result is exp·(1/sum).
//
// log_softmax (_vec_log_softmax_lastdim on reduced types): max and
// sum(exp(x - max)) through the 16-element reduce_all; the sum and its log
// are stored in the input's dtype; the result is x - max - log(sum).
func softmaxLastDimReduced(y, x []float32, logOut bool, round func(float32) float32) {
	n := len(x)
	if logOut {
		m := reduceAll16(x, identity, vecMaximum)
		sum := round(reduceAll16(x, func(v float32) float32 { return softmaxExp(v - m) }, vecAdd))
		ls := round(sleefLogf(sum))
		for i, v := range x {
			y[i] = v - m - ls
		}
		return
	}
	m := float32(math.Inf(-1))
	d0 := n - n%16
	if d0 > 0 {
		var acc [8]float32
		for l := range acc {
			acc[l] = m
		}
		for d := 0; d < d0; d += 8 {
			for l := range acc {
				acc[l] = vecMaximum(acc[l], x[d+l])
			}
		}
		m = reduceLanes(acc, vecMaximum)
	}
	for _, v := range x[d0:] {
		if m < v { // std::max(max_val, data_val)
			m = v
		}
	}
	d1 := n - n%8
	var acc [8]float32
	for d := 0; d < d1; d += 8 {
		for l := range acc {
			e := softmaxExp(x[d+l] - m)
			y[d+l] = e
			acc[l] += e
		}
	}
	sum := reduceLanes(acc, vecAdd)
	for d := d1; d < n; d++ {
		e := glibcExpf(x[d] - m)
		y[d] = e
		sum += e
	}
	r := 1 / sum
	for i := range y {
		y[i] *= r
	}
}
