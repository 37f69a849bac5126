//go:build amd64 && !purego

package kernels

// useAVX2 selects the AVX2+FMA assembly kernels of simd_amd64.s at run
// time. Each computes, lane by lane, exactly the float32 operations of its
// pure-Go counterpart (a hardware fused multiply-add is the single
// rounding [FMA32] emulates), so both give the same bits; the tests run
// both and compare. Building with -tags purego leaves only the Go code.
var useAVX2 = haveFMA32x8

// expSubAVX2 sets dst[i] = sleefExpf(src[i] - m) for i < n, n a multiple of 8.
//
//go:noescape
func expSubAVX2(dst, src *float32, n int, m float32)

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

// sumLanesAVX2 sets acc to x[0:8] plus, lane by lane in order, the
// vectors x[8k:8k+8] for 0 < k < nvec (nvec >= 1).
//
//go:noescape
func sumLanesAVX2(x *float32, nvec int, acc *lanes)

// scaleAVX2 multiplies y[i] by r for i < n, n a multiple of 8.
//
//go:noescape
func scaleAVX2(y *float32, n int, r float32)
