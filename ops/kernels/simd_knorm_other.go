//go:build !amd64 || purego

package kernels

func maxPoolAVX2(y *float32, idx *int64, in *float32, offs *int32, cnt, groups, sw int) {
	panic("kernels: no AVX2 kernels in this build")
}

func avgPoolAVX2(y *float32, in *float32, offs *int32, cnt, groups, sw int, div float32) {
	panic("kernels: no AVX2 kernels in this build")
}

func rowSumSmall8AVX2(x *float32, size int, acc *lanes) {
	panic("kernels: no AVX2 kernels in this build")
}

func welford4AVX2(v *float32, stride, cnt int, c *float32, m1, m2 *[4]lanes) {
	panic("kernels: no AVX2 kernels in this build")
}

func finishMomentsAVX2(tail *float32, ntail, n int, m1v, m2v *lanes, N int) (mean, variance float32) {
	panic("kernels: no AVX2 kernels in this build")
}

func meanPlanesAVX2(x *float32, hw, planes int, y *float32, div float32) {
	panic("kernels: no AVX2 kernels in this build")
}

func addMomentsVec4AVX2(c, fm0 float32, m1Add, m2Add, m1, m2 *[4]lanes) {
	panic("kernels: no AVX2 kernels in this build")
}

func layerNormOutNTAVX2(y, x, w, b *float32, n int, m, rstd float32) {
	panic("kernels: no AVX2 kernels in this build")
}

func sfenceAVX2() { panic("kernels: no AVX2 kernels in this build") }

func scaleIntoNTAVX2(y, x *float32, n int, r float32) {
	panic("kernels: no AVX2 kernels in this build")
}

func subSubNTAVX2(y, x *float32, n int, m, ls float32) {
	panic("kernels: no AVX2 kernels in this build")
}

func maxLanes4AVX2(x *float32, nvec int, acc *lanes) bool {
	panic("kernels: no AVX2 kernels in this build")
}

func maxPoolI32AVX2(y *int32, idx *int64, in *int32, offs *int32, cnt, groups, sw int) {
	panic("kernels: no AVX2 kernels in this build")
}

func subSub8AVX2(y, x *float32, d, stride int, m, ls *lanes) {
	panic("kernels: no AVX2 kernels in this build")
}
