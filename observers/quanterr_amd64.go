//go:build amd64 && !purego

package observers

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels of quanterr_amd64.s at run time (the
// operating system saving the YMM registers included, which
// cpu.X86.HasAVX checks). They run, lane by lane, the float32 and float64
// operations of the Go code they replace, in the same order and without
// fused multiply-adds, so both give the same bits; the tests run both and
// compare. Building with -tags purego leaves only the Go code.
var useAVX2 = cpu.X86.HasAVX && cpu.X86.HasAVX2

// quantErrNormAVX2 sets n[i] for i < cnt (a multiple of 8) to the norm
// term of [quantErr.eval] for source bin i, whose begin and end offsets are
// sb[i] and se[i] and density dens[i]; k holds the 8-lane constants.
//
//go:noescape
func quantErrNormAVX2(n, sb, se, dens *float32, cnt int, k *qeConsts)

// minMaxAVX2 sets lo and hi to the per-lane minimum and maximum of the
// vectors x[8j:8j+8], j < nvec (nvec >= 1), and reports whether any
// element is NaN (lo and hi are then unusable). A lane's zero may have
// either sign.
//
//go:noescape
func minMaxAVX2(x *float32, nvec int, lo, hi *[8]float32) (nan bool)

// sumRows4AVX2 adds, for g < ngroups in order, the four vectors
// x[32g+8k : 32g+8k+8] to acc[k] (ngroups >= 1).
//
//go:noescape
func sumRows4AVX2(x *float32, ngroups int, acc *[4][8]float32)

// histcAVX2 counts the vectors x[8j:8j+8], j < nvec, into h as histc's
// loop does (k = int((x - lo) * bins / width), k == bins -> bins-1) and
// returns how many it counted: it stops before the first vector with an
// element outside [lo, hi] (or NaN). k's constants must keep every
// quotient below bins + 1 (see histc).
//
//go:noescape
func histcAVX2(h, x *float32, nvec int, k *histcConsts) (done int)

// offsetsAVX2 sets off[i] = float32(k0+i) * bw and end[i] = off[i] + bw
// for i < 8*nvec (nvec >= 1, |k0+i| < 2**24).
//
//go:noescape
func offsetsAVX2(off, end *float32, nvec int, k0 int32, bw float32)

// divByAVX2 sets dst[i] = src[i] / b for i < 8*nvec (nvec >= 1).
//
//go:noescape
func divByAVX2(dst, src *float32, nvec int, b float32)
