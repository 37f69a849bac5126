//go:build !amd64 || purego

package kernels

// haveFMA32x8 is false where no assembly kernels exist: the pure-Go
// kernels run.
const haveFMA32x8 = false

func convTile16x6(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int) {
	panic("kernels: no assembly kernels on this platform")
}

func convTile16x3(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int) {
	panic("kernels: no assembly kernels on this platform")
}

func convTile16x1(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int) {
	panic("kernels: no assembly kernels on this platform")
}

func dwRun(x, w, bias, out *float32, taps *int64, ntaps, nvec, npos, xstride, ostride int) {
	panic("kernels: no assembly kernels on this platform")
}

func gemmTile4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int) {
	panic("kernels: no assembly kernels on this platform")
}

func dwPlanes(x, w, bias, out *float32, taps *int64, ntaps, npos, nch, xcs, ocs int) {
	panic("kernels: no assembly kernels on this platform")
}

func convTile64x1(x, w, acc *float32, taps *int64, ntaps, nc, wstride, astride, fresh int) {
	panic("kernels: no assembly kernels on this platform")
}

func packT8x8(src *float32, stride int, dst *float32, rows *int32) {
	panic("kernels: no assembly kernels on this platform")
}
