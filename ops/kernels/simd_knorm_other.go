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

func addMomentsVecAVX2(c, fm0 float32, m1Add, m2Add, m1, m2 *lanes) {
	panic("kernels: no AVX2 kernels in this build")
}
