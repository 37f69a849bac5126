//go:build amd64 && !purego

package kernels

// useAVX2 selects the AVX2+FMA assembly kernels of simd_amd64.s at run
// time. Each computes, lane by lane, exactly the float32 operations of its
// pure-Go counterpart (a hardware fused multiply-add is the single
// rounding [FMA32] emulates), so both give the same bits; the tests run
// both and compare. Building with -tags purego leaves only the Go code.
var useAVX2 = haveFMA32x8

// welfordAVX2 runs cnt Welford updates of rowwiseMoments on the 8 lanes
// m1, m2: for vector j of v, d = v - m1, m1 = fma(d, c[j], m1),
// m2 = fma(d, v - m1, m2).
//
//go:noescape
func welfordAVX2(v *float32, cnt int, c *float32, m1, m2 *lanes)

// layerNormOutAVX2 sets y[i] = fma((x[i] - m) * rstd, w[i], b[i]) for
// i < n, n a multiple of 8.
//
//go:noescape
func layerNormOutAVX2(y, x, w, b *float32, n int, m, rstd float32)

// quantizeAVX2 sets dst[i] = clamp(round_half_even(src[i]*inv) + zp, lo,
// hi) (NaN gives 0) as int8, or uint8 when unsigned, for i < n, n a
// multiple of 8; [lo, hi] must lie within the dtype's range.
//
//go:noescape
func quantizeAVX2(dst *byte, src *float32, n int, inv, zp, lo, hi float32, unsigned bool)

// dequantizeAVX2 sets dst[i] = (float32(src[i]) - zp) * scale for int8
// (or uint8 when unsigned) src, i < n, n a multiple of 8.
//
//go:noescape
func dequantizeAVX2(dst *float32, src *byte, n int, zp, scale float32, unsigned bool)

// scaleAVX2 multiplies y[i] by r for i < n, n a multiple of 8.
//
//go:noescape
func scaleAVX2(y *float32, n int, r float32)

// expSumAVX2 sets dst[i] = sleefExpf(src[i] - m) for i < n, n a positive
// multiple of 8, and sums the results: acc = dst[0:8] + dst[8:16] + ...,
// lane by lane in that order.
//
//go:noescape
func expSumAVX2(dst, src *float32, n int, m float32, acc *lanes)

// subSubAVX2 sets y[i] = (x[i] - m) - ls for i < n, n a multiple of 8.
//
//go:noescape
func subSubAVX2(y, x *float32, n int, m, ls float32)

// softmaxInner8AVX2 is softmaxInner's vector branch for 8 neighbouring
// inner positions (lanes) along a dim of d > 0 elements stride bytes
// apart: the vecMaximum chain, Sleef exp with the sum from 0 in order,
// then the division.
//
//go:noescape
func softmaxInner8AVX2(y, x *float32, d, stride int)

// maxExpSum8AVX2 computes, for 8 neighbouring inner positions (lanes)
// along a dim of d > 0 elements stride bytes apart, logSoftmaxInner's
// maximum (from -inf, v > m replaces) and its sum of Sleef exp(x - m) from
// 0 in order.
//
//go:noescape
func maxExpSum8AVX2(x *float32, d, stride int, m, sum *lanes)

// softmaxInner16AVX2 is softmaxInner8AVX2 on 16 neighbouring positions
// (two independent lane groups).
//
//go:noescape
func softmaxInner16AVX2(y, x *float32, d, stride int)

// maxExpSum16AVX2 is maxExpSum8AVX2 on 16 neighbouring positions: lanes
// m[0], sum[0] for the first 8, m[1], sum[1] for the next 8.
//
//go:noescape
func maxExpSum16AVX2(x *float32, d, stride int, m, sum *[2]lanes)
