//go:build !amd64 || purego

package observers

// useAVX2 is false without the amd64 assembly: the pure-Go loops run.
var useAVX2 = false

func quantErrNormAVX2(n, sb, se, dens *float32, cnt int, k *qeConsts) {
	panic("observers: no AVX2 kernels in this build")
}

func minMaxAVX2(x *float32, nvec int, lo, hi *[8]float32) bool {
	panic("observers: no AVX2 kernels in this build")
}

func sumRows4AVX2(x *float32, ngroups int, acc *[4][8]float32) {
	panic("observers: no AVX2 kernels in this build")
}

func histcAVX2(h, x *float32, nvec int, k *histcConsts) int {
	panic("observers: no AVX2 kernels in this build")
}

func offsetsAVX2(off, end *float32, nvec int, k0 int32, bw float32) {
	panic("observers: no AVX2 kernels in this build")
}

func divByAVX2(dst, src *float32, nvec int, b float32) {
	panic("observers: no AVX2 kernels in this build")
}
