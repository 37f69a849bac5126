//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// haveFMA32x8 reports whether this CPU runs the AVX2 + FMA kernels of
// conv_fast_amd64.s (the operating system saving the YMM registers
// included, which cpu.X86.HasAVX checks).
var haveFMA32x8 = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func convTile16x6(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int)

//go:noescape
func convTile16x3(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int)

//go:noescape
func convTile16x1(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int)

//go:noescape
func dwRun(x, w, bias, out *float32, taps *int64, ntaps, nvec, npos, xstride, ostride int)

//go:noescape
func gemmTile4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int)

//go:noescape
func dwPlanes(x, w, bias, out *float32, taps *int64, ntaps, npos, nch, xcs, ocs int)

//go:noescape
func convTile64x1(x, w, acc *float32, taps *int64, ntaps, nc, wstride, astride, fresh int)

//go:noescape
func packT8x8(src *float32, stride int, dst *float32, rows *int32)
