//go:build !amd64 || purego

package kernels

// useAVX2 is false without the amd64 assembly: the pure-Go loops run.
var useAVX2 = false

func welfordAVX2(v *float32, cnt int, c *float32, m1, m2 *lanes) {
	panic("kernels: no AVX2 kernels in this build")
}

func layerNormOutAVX2(y, x, w, b *float32, n int, m, rstd float32) {
	panic("kernels: no AVX2 kernels in this build")
}

func quantizeAVX2(dst *byte, src *float32, n int, inv, zp, lo, hi float32, unsigned bool) {
	panic("kernels: no AVX2 kernels in this build")
}

func dequantizeAVX2(dst *float32, src *byte, n int, zp, scale float32, unsigned bool) {
	panic("kernels: no AVX2 kernels in this build")
}

func scaleAVX2(y *float32, n int, r float32) { panic("kernels: no AVX2 kernels in this build") }

func expSumAVX2(dst, src *float32, n int, m float32, acc *lanes) {
	panic("kernels: no AVX2 kernels in this build")
}

func subSubAVX2(y, x *float32, n int, m, ls float32) { panic("kernels: no AVX2 kernels in this build") }

func softmaxInner8AVX2(y, x *float32, d, stride int) { panic("kernels: no AVX2 kernels in this build") }

func maxExpSum8AVX2(x *float32, d, stride int, m, sum *lanes) {
	panic("kernels: no AVX2 kernels in this build")
}

func softmaxInner16AVX2(y, x *float32, d, stride int) {
	panic("kernels: no AVX2 kernels in this build")
}

func maxExpSum16AVX2(x *float32, d, stride int, m, sum *[2]lanes) {
	panic("kernels: no AVX2 kernels in this build")
}
