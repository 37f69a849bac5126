package kernels

import (
	"math"
	"math/bits"
)

// This file holds the float32 building blocks that let the norm and
// pooling kernels reproduce PyTorch 2.14's CPU results bit for bit:
//
//   - [FMA32], the single-rounding float32 fused multiply-add that ATen's
//     AVX2 kernels get when GCC contracts a Vectorized<float> x*a + b
//     (batch_norm, group_norm and layer_norm's scale/shift, the Welford
//     updates of RowwiseMoments);
//   - cascadeSum, the summation order of ATen's cascade_sum (SumKernel.cpp)
//     for a contiguous inner reduction, which mean() and thus
//     adaptive_avg_pool2d to [1, 1] use;
//   - rowwiseMoments, ATen's RowwiseMoments (moments_utils.h): Welford
//     updates over 8-float lanes in chunks of 16 vectors, merged through a
//     binary stack, then the scalar tail and the lanes.
//
// The recorded fixtures come from ATen's AVX2 kernels (AVX512 machines run
// the same kernels for these ops), so the vector width is 8 float32 lanes.

// avx2Lanes is the number of float32 lanes of ATen's Vectorized<float> on
// the AVX2 kernels the fixtures were recorded with.
const avx2Lanes = 8

// FMA32 returns x·y + z computed exactly and rounded once to float32
// (round to nearest, ties to even), as a hardware float32 fused
// multiply-add does. The product of two float32 values is exact in
// float64; the sum is rounded to float64 with its error recovered by
// TwoSum, and the float64 result is nudged to an odd last bit when it is
// inexact ("round to odd"), which makes the final float32 rounding
// correct (float64 has more than 24+1 extra bits). NaN and infinities
// propagate as in IEEE arithmetic.
func FMA32(x, y, z float32) float32 {
	// Rounding the float64 sum to float32 can only differ from rounding
	// the exact sum when the float64 sum is a float32 halfway point (a
	// float64 nearer the exact sum than a midpoint between them would be
	// that midpoint) or lies in float32's subnormal range; everything
	// else, infinities and NaN included, is settled by fma32Try, inlined.
	if r, ok := fma32Try(x, y, z); ok {
		return r
	}
	return fma32RoundToOdd(x, y, z)
}

// fma32Try is the inlinable fast path of [FMA32]: r is x·y + z rounded
// once when ok; otherwise call FMA32. Hot loops write
//
//	r, ok := fma32Try(x, y, z)
//	if !ok {
//		r = FMA32(x, y, z)
//	}
//
// because FMA32 itself (a call in its body) is too big to inline.
func fma32Try(x, y, z float32) (r float32, ok bool) {
	s := float64(x)*float64(y) + float64(z)
	b := math.Float64bits(s)
	return float32(s), b&0x1fffffff != 0x10000000 && b&0x7ff0000000000000 >= 0x3810000000000000
}

// fma32RoundToOdd is the general path of [FMA32].
func fma32RoundToOdd(x, y, z float32) float32 {
	p := float64(x) * float64(y) // exact: 24+24 bits fit in 53
	c := float64(z)
	s := p + c
	if math.IsInf(s, 0) || math.IsNaN(s) || math.IsInf(p, 0) {
		return float32(s)
	}
	// TwoSum: s + e == p + c exactly.
	bb := s - p
	e := (p - (s - bb)) + (c - bb)
	if e == 0 {
		return float32(s)
	}
	b := math.Float64bits(s)
	if b&1 == 0 {
		// Move s one float64 ulp towards the exact sum, making it odd.
		if (e > 0) == (s > 0) {
			b++
		} else {
			b--
		}
		s = math.Float64frombits(b)
	}
	return float32(s)
}

// ceilLog2 is ATen's utils::CeilLog2: 1 for x <= 2, else ceil(log2(x)).
func ceilLog2(x int) int {
	if x <= 2 {
		return 1
	}
	return bits.Len64(uint64(x - 1))
}

// lanes is one Vectorized<float> register of AVX2: 8 float32 lanes, each
// rounded on its own.
type lanes [avx2Lanes]float32

// multiRowSum is ATen's multi_row_sum for nrows = 4 over size rows of
// w-wide units: unit (i, k) is x[(i*4+k)*w : (i*4+k+1)*w]. Sums go into
// four levels of accumulators that are flushed upwards every level_step
// rows, so only sums of similar magnitude meet.
func multiRowSum(x []float32, size, w int) (acc [4]lanes) {
	const numLevels = 4
	levelPower := max(4, ceilLog2(size)/numLevels)
	levelStep := 1 << levelPower
	levelMask := levelStep - 1
	var lv [numLevels][4]lanes
	load := func(i, k int, dst *lanes) {
		u := x[(i*4+k)*w:]
		for l := 0; l < w; l++ {
			dst[l] += u[l]
		}
	}
	i := 0
	for i+levelStep <= size {
		for j := 0; j < levelStep; j, i = j+1, i+1 {
			for k := 0; k < 4; k++ {
				load(i, k, &lv[0][k])
			}
		}
		for j := 1; j < numLevels; j++ {
			for k := 0; k < 4; k++ {
				for l := 0; l < w; l++ {
					lv[j][k][l] += lv[j-1][k][l]
				}
				lv[j-1][k] = lanes{}
			}
			if i&(levelMask<<(j*levelPower)) != 0 {
				break
			}
		}
	}
	for ; i < size; i++ {
		for k := 0; k < 4; k++ {
			load(i, k, &lv[0][k])
		}
	}
	for j := 1; j < numLevels; j++ {
		for k := 0; k < 4; k++ {
			for l := 0; l < w; l++ {
				lv[0][k][l] += lv[j][k][l]
			}
		}
	}
	return lv[0]
}

// rowSum is ATen's row_sum over size w-wide units of x: the units are read
// as a (-1, 4) array summed by [multiRowSum], the leftover units are added
// to column 0, then columns 1, 2 and 3 are added to column 0.
func rowSum(x []float32, size, w int) lanes {
	sizeILP := size / 4
	p := multiRowSum(x, sizeILP, w)
	for i := sizeILP * 4; i < size; i++ {
		u := x[i*w:]
		for l := 0; l < w; l++ {
			p[0][l] += u[l]
		}
	}
	for k := 1; k < 4; k++ {
		for l := 0; l < w; l++ {
			p[0][l] += p[k][l]
		}
	}
	return p[0]
}

// addLanes adds the 8 floats of u to dst lane by lane.
func addLanes(dst *lanes, u []float32) {
	u = u[:avx2Lanes]
	dst[0] += u[0]
	dst[1] += u[1]
	dst[2] += u[2]
	dst[3] += u[3]
	dst[4] += u[4]
	dst[5] += u[5]
	dst[6] += u[6]
	dst[7] += u[7]
}

// rowSumSmall8 is rowSum(x, size, 8) for size < 64, where multiRowSum's
// size/4 rows stay below its smallest level step (16): each of its four
// columns is 0 plus its units in order, plus the three empty levels (+0,
// which only turns -0 into +0, so one addition does); then the leftover units go to column 0
// and columns 1..3 are added to it.
func rowSumSmall8(x []float32, size int) lanes {
	rows := size / 4
	var p [4]lanes
	for i := 0; i < rows; i++ {
		for k := 0; k < 4; k++ {
			addLanes(&p[k], x[(i*4+k)*avx2Lanes:])
		}
	}
	// x + 0 + 0 + 0 == x + 0 for every float32 (only -0 changes, once)
	var zero lanes
	for k := 0; k < 4; k++ {
		addLanes(&p[k], zero[:])
	}
	for i := rows * 4; i < size; i++ {
		addLanes(&p[0], x[i*avx2Lanes:])
	}
	for k := 1; k < 4; k++ {
		addLanes(&p[0], p[k][:])
	}
	return p[0]
}

// cascadeSum returns the float32 sum of x in the order of ATen's
// cascade_sum for a contiguous inner reduction (SumKernel.cpp): with at
// least 8 values, vectorized_inner_sum sums the 8-float vectors by
// [rowSum] (per lane), then adds the scalar tail and then the 8 lanes in
// order to a zero accumulator; with fewer, scalar_inner_sum's [rowSum] over
// single floats. The result is added to the zero-filled output, as
// CastStoreAccumulate does.
func cascadeSum(x []float32) float32 {
	var sum float32
	if len(x) >= avx2Lanes {
		nv := len(x) / avx2Lanes
		var v lanes
		if nv < 4*16 && useAVX2 {
			rowSumSmall8AVX2(&x[0], nv, &v)
		} else if nv < 4*16 {
			v = rowSumSmall8(x, nv)
		} else {
			v = rowSum(x, nv, avx2Lanes)
		}
		var acc float32
		for _, t := range x[nv*avx2Lanes:] {
			acc += t
		}
		for _, t := range v {
			acc += t
		}
		sum = acc
	} else {
		sum = rowSum(x, len(x), 1)[0]
	}
	var out float32
	return out + sum
}

// welfordRecip holds 1/(j+1) in float32 for the Welford steps of a
// chunk of 16 vectors (ATen's c_vecs).
var welfordRecip = func() (c [16]float32) {
	for j := range c {
		c[j] = 1 / float32(j+1)
	}
	return c
}()

// rowwiseMoments is ATen's RowwiseMoments (moments_utils.h, ddof 0) on the
// AVX2 kernels: the mean and the population variance of x in float32.
// Whole 8-float vectors are taken in chunks of kChunkSize = 16; each chunk
// runs Welford per lane (m1 += δ·(1/(j+1)), m2 += δ·(x - m1)) and is merged
// into a stack of depth ceilLog2(chunks) by AddMoments, carrying upwards
// like a binary counter; the stack is then folded into slot 0. The scalar
// tail runs Welford with a division, and the 8 lanes are merged into it
// last, each with count n. Every a·b + c the compiler contracts in ATen's
// AVX2 build is an [FMA32] here.
func rowwiseMoments(x []float32) (mean, variance float32) {
	const kChunk = 16
	N := len(x)
	n := N / avx2Lanes
	m := (n + kChunk - 1) / kChunk
	depth := ceilLog2(m)
	var m0a [8]int
	var m1a, m2a [8]lanes
	m0s, m1s, m2s := m0a[:], m1a[:], m2a[:]
	if depth > len(m0a) {
		m0s, m1s, m2s = make([]int, depth), make([]lanes, depth), make([]lanes, depth)
	}
	cvec := &welfordRecip
	for i := 0; i < m; i++ {
		base := x[i*kChunk*avx2Lanes:]
		cnt := min(kChunk, n-i*kChunk)
		var m1, m2 lanes
		goCnt := cnt
		if useAVX2 && cnt > 0 {
			welfordAVX2(&base[0], cnt, &cvec[0], &m1, &m2)
			goCnt = 0
		}
		for j := 0; j < goCnt; j++ {
			v := base[j*avx2Lanes : (j+1)*avx2Lanes]
			c := cvec[j]
			for l := 0; l < avx2Lanes; l++ {
				d := v[l] - m1[l]
				a, ok := fma32Try(d, c, m1[l])
				if !ok {
					a = FMA32(d, c, m1[l])
				}
				m1[l] = a
				e := v[l] - a
				b, ok := fma32Try(d, e, m2[l])
				if !ok {
					b = FMA32(d, e, m2[l])
				}
				m2[l] = b
			}
		}
		addMomentsVec(cnt, &m1, &m2, &m0s[0], &m1s[0], &m2s[0])
		mask := i + 1
		for j := 1; j < depth && mask&1 == 0; j++ {
			addMomentsVec(m0s[j-1], &m1s[j-1], &m2s[j-1], &m0s[j], &m1s[j], &m2s[j])
			m0s[j-1], m1s[j-1], m2s[j-1] = 0, lanes{}, lanes{}
			mask >>= 1
		}
	}
	for i := 1; i < depth; i++ {
		addMomentsVec(m0s[i], &m1s[i], &m2s[i], &m0s[0], &m1s[0], &m2s[0])
	}
	return finishMoments(x[n*avx2Lanes:], n, &m1s[0], &m2s[0], N)
}

// finishMoments is the end of [rowwiseMoments]: Welford with a division
// over the scalar tail, then the 8 lanes (each with count n) merged into
// it; it returns the mean and m2/N.
func finishMoments(tail []float32, n int, m1v, m2v *lanes, N int) (mean, variance float32) {
	m0 := 0
	var m1, m2 float32
	for _, v := range tail {
		d := v - m1
		m0++
		m1 += d / float32(m0)
		m2 = FMA32(d, v-m1, m2)
	}
	for l := 0; l < avx2Lanes; l++ {
		addMoments(n, m1v[l], m2v[l], &m0, &m1, &m2)
	}
	return m1, m2 / float32(N)
}

// addMoments is ATen's AddMoments: it merges (m0Add, m1Add, m2Add) into
// (m0, m1, m2), with c = m0Add/n, m1 += c·δ and
// m2 += m2Add + δ·δ·c·m0, the multiply-adds contracted.
func addMoments(m0Add int, m1Add, m2Add float32, m0 *int, m1, m2 *float32) {
	n := *m0 + m0Add
	var c float32
	if n != 0 {
		c = float32(m0Add) / float32(n)
	}
	d := m1Add - *m1
	*m1 = FMA32(c, d, *m1)
	*m2 += FMA32(float32(d*d)*c, float32(*m0), m2Add)
	*m0 = n
}

// addMomentsVec is AddMomentsVec on every lane with one count. Unlike the
// scalar [addMoments], PyTorch 2.14's AVX2 build runs it without fused
// multiply-adds and adds m2 and m2Add first: m1 += c·δ and
// m2 = (m2 + m2Add) + δ·δ·c·m0, every operation rounded on its own. This
// was found by comparing candidate orders with PyTorch's mean and rstd on
// 102 rows of widths 136 to 9000; it matches 100 of them (the other two
// differ by 2 ULP in rstd, see [LayerNorm]).
func addMomentsVec(m0Add int, m1Add, m2Add *lanes, m0 *int, m1, m2 *lanes) {
	n := *m0 + m0Add
	var c float32
	if n != 0 {
		c = float32(m0Add) / float32(n)
	}
	fm0 := float32(*m0)
	for l := 0; l < avx2Lanes; l++ {
		d := m1Add[l] - m1[l]
		m1[l] += float32(c * d)
		m2[l] = (m2[l] + m2Add[l]) + float32(float32(float32(d*d)*c)*fm0)
	}
	*m0 = n
}
