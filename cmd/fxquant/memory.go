package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"github.com/fxquant/fxquant/pt2"
)

// startingHeap is the heap size up to which run lets garbage collect
// before its first collections (see startHeapAt).
const startingHeap = 64 << 20

// startHeapAt lets the heap grow to about want bytes before the garbage
// collector runs, as the Go compiler does for itself (cmd/compile's
// AdjustStartingHeap): a run allocates several times its live heap, and
// at GOGC 100 a small live heap is collected over and over (on the
// 500-layer MLP a dozen times, about 15% of its CPU time). Until the live
// heap passes want/2 the collector runs only at a memory limit of want
// (GOGC off); from then on GOGC and the limit are back to what they were,
// where GOGC alone lets the heap reach want anyway. The process never
// holds more than want for garbage's sake: measured on the 500-layer MLP,
// peak RSS is unchanged. stop ends it early and restores both settings
// (safe to call more than once).
func startHeapAt(want int64) (stop func()) {
	var mu sync.Mutex
	oldGC := debug.SetGCPercent(-1)
	oldLimit := debug.SetMemoryLimit(want)
	done := false
	end := func() {
		if !done {
			debug.SetMemoryLimit(oldLimit)
			debug.SetGCPercent(oldGC)
			done = true
		}
	}
	if oldGC < 0 || oldLimit < want { // GOGC=off or a lower GOMEMLIMIT: the user's
		end()
		return func() {}
	}
	afterEachGC(func() bool {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return false
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 || s[0].Value.Uint64() > uint64(want)/2 {
			end()
			return false
		}
		return true
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		end()
	}
}

// afterEachGC calls fn after each garbage collection (from the
// finalizer goroutine) until fn returns false.
func afterEachGC(fn func() bool) {
	type sentinel struct{ _ [16]byte } // big enough not to be a tiny allocation
	var arm func()
	arm = func() {
		s := new(sentinel)
		runtime.SetFinalizer(s, func(*sentinel) {
			if fn() {
				arm()
			}
		})
	}
	arm()
}

// bigWeights is the weight size from which run lowers the garbage
// collector's target (see lowGCFor).
const bigWeights = 256 << 20

// bigProgramGCPercent is GOGC for programs of bigWeights or more.
const bigProgramGCPercent = 25

// lowGCFor lowers the garbage collector's target for a program with large
// weights and returns the function that restores it. The live heap of a
// run is mostly the quantized weights (a quarter of the float ones, which
// stay in the mapped archive), and the garbage between collections is
// dequantized weights the interpreter has let go; at GOGC 100 that garbage
// may grow to the live heap's size before a collection, at 25 to a
// quarter of it. Measured on TestRunPeakRSS's 1.07 GB program: peak RSS
// 1.78x the weights at GOGC 100, 1.52x at 25 (and still 1.52x at 10, or
// with a memory limit: the rest is live), for about 5% more CPU time.
//
// stopStart, when the program is big, ends a startHeapAt adjustment first.
func lowGCFor(p *pt2.Program, stopStart func()) (restore func()) {
	var n int64
	for _, t := range p.LiftedAttrs() {
		n += int64(t.Numel()) * int64(t.DType().Size())
	}
	if n < bigWeights {
		return func() {}
	}
	stopStart()
	old := debug.SetGCPercent(bigProgramGCPercent)
	return func() { debug.SetGCPercent(old) }
}
