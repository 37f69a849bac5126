package kernels

import (
	"runtime"
	"sync"
	"unsafe"
)

// Row-blocked, parallel drivers of the float32 quantize and dequantize
// loops. Each output element's arithmetic is the one of quantChunk32 /
// dequantChunk32; only the order in which elements are visited and the
// goroutine that writes them change, so the bits are those of a serial
// run.

// parallelGrain is the number of elements below which a kernel stays on
// one goroutine (a goroutine start costs about as much as quantizing a few
// thousand elements).
const parallelGrain = 1 << 16

// splitWork runs fn over [0, n) in at most GOMAXPROCS contiguous pieces of
// at least grain units each, the first on the calling goroutine, and
// returns when all are done; it does not call fn when n <= 0.
func splitWork(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	w := runtime.GOMAXPROCS(0)
	if p := n / max(grain, 1); p < w {
		w = p
	}
	if w <= 1 {
		fn(0, n)
		return
	}
	step := (n + w - 1) / w
	var wg sync.WaitGroup
	for lo := step; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+step, n))
	}
	fn(0, min(step, n))
	wg.Wait()
}

// splitRows is splitWork over n rows of rowLen elements each, at least
// parallelGrain elements (and one row) per piece.
func splitRows(n, rowLen int, fn func(lo, hi int)) {
	splitWork(n, max(1, parallelGrain/max(rowLen, 1)), fn)
}

// rowBase returns the index of the first qparam of row r (the rows are
// the row-major vectors along the last dim).
func (l *qLayout) rowBase(r int) int {
	base := 0
	for d := len(l.shape) - 2; d >= 0; d-- {
		i := r % l.shape[d]
		r /= l.shape[d]
		base += (i / l.block[d]) * l.stride[d]
	}
	return base
}

// forRuns calls fn(a, b, k) for every run [a, b) of elements sharing
// qparam k, like chunks, but splits the work across goroutines by rows
// (or, for one qparam, by element ranges) and visits a row's runs in a
// plain loop. A last-dim block of 1 gives runs of one element; fnVec then
// gets the whole row [a, b) with its first qparam k (qparams k, k+1, ...
// follow the elements) when it is not nil.
func (l *qLayout) forRuns(fn func(a, b, k int), fnVec func(a, b, k int)) {
	total := 1
	for _, s := range l.shape {
		total *= s
	}
	if total == 0 {
		return
	}
	if l.n == 1 {
		splitWork(total, parallelGrain, func(a, b int) { fn(a, b, 0) })
		return
	}
	nd := len(l.shape)
	last, lb := l.shape[nd-1], l.block[nd-1]
	rows := total / last
	splitRows(rows, last, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			base, pos := l.rowBase(r), r*last
			if lb == 1 && fnVec != nil {
				fnVec(pos, pos+last, base)
				continue
			}
			for j, k := 0, base; j < last; j, k = j+lb, k+1 {
				fn(pos+j, pos+j+lb, k)
			}
		}
	})
}

// quantVec32 is quantChunk32 with one reciprocal scale and zero point per
// element (inv[i], zp[i]).
func quantVec32[T qint](dst []T, src, inv, zp []float32, lo, hi float32, zpBefore bool) {
	dst = dst[:len(src)]
	inv, zp = inv[:len(src)], zp[:len(src)]
	for i := range src {
		quantChunk32(dst[i:i+1], src[i:i+1], inv[i], zp[i], lo, hi, zpBefore)
	}
}

// dequantVec32 is dequantChunk32 with a scale and zero point per element.
func dequantVec32[T qint](dst []float32, src []T, zp []float64, scale []float32, intDiff bool) {
	for i := range src {
		dequantChunk32(dst[i:i+1], src[i:i+1], zp[i], scale[i], intDiff)
	}
}

// quantChunkAVX2 quantizes the leading multiple of 8 elements of an int8
// or uint8 chunk with the AVX2 kernel (the operations of quantChunk32:
// VROUNDPS rounds half to even like math.RoundToEven, and the min/max
// keep NaN for the final NaN -> 0) and returns how many it did: 0 for
// other dtypes.
func quantChunkAVX2[T qint](dst []T, src []float32, inv, zp, lo, hi float32) int {
	n8 := len(src) &^ 7
	switch d := any(dst).(type) {
	case []int8:
		if lo >= -128 && hi <= 127 {
			quantizeAVX2((*byte)(unsafe.Pointer(&d[0])), &src[0], n8, inv, zp, lo, hi, false)
			return n8
		}
	case []uint8:
		if lo >= 0 && hi <= 255 {
			quantizeAVX2(&d[0], &src[0], n8, inv, zp, lo, hi, true)
			return n8
		}
	}
	return 0
}

// dequantChunkAVX2 dequantizes the leading multiple of 8 elements of an
// int8 or uint8 chunk with the AVX2 kernel and returns how many it did.
// float32(q) - float32(zp) is exact for 8-bit q and |zp| <= 2**23, so it
// equals the integer difference of the intDiff path there.
func dequantChunkAVX2[T qint](dst []float32, src []T, zp float64, scale float32, intDiff bool) int {
	n8 := len(src) &^ 7
	z := float32(zp)
	if intDiff {
		iz := int64(zp)
		if iz < -(1<<23) || iz > 1<<23 {
			return 0
		}
		z = float32(iz)
	}
	switch s := any(src).(type) {
	case []int8:
		dequantizeAVX2(&dst[0], (*byte)(unsafe.Pointer(&s[0])), n8, z, scale, false)
		return n8
	case []uint8:
		dequantizeAVX2(&dst[0], &s[0], n8, z, scale, true)
		return n8
	}
	return 0
}
