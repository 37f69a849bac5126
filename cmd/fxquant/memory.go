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

// gcSettings guards run's changes to the collector's settings, GOGC and
// the memory limit, which are the process's: runs under way in one
// process share them, so that each change is made once and undone when
// its last run ends, never restoring a value another run set.
var gcSettings struct {
	sync.Mutex
	start   *heapStart // the startHeapAt adjustment under way, nil when none
	lowered int        // runs under way that lowered GOGC (lowGCFor)
	lowOld  int        // GOGC before the first of them
}

// heapStart is one startHeapAt adjustment: the settings it replaced.
type heapStart struct {
	oldGC    int
	oldLimit int64
}

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
// (safe to call more than once). While an adjustment or a lowered GOGC
// (lowGCFor) of another run is under way, it changes nothing.
func startHeapAt(want int64) (stop func()) {
	gcSettings.Lock()
	defer gcSettings.Unlock()
	if gcSettings.start != nil || gcSettings.lowered > 0 {
		return func() {}
	}
	h := &heapStart{oldGC: debug.SetGCPercent(-1), oldLimit: debug.SetMemoryLimit(want)}
	if h.oldGC < 0 || h.oldLimit < want { // GOGC=off or a lower GOMEMLIMIT: the user's
		debug.SetMemoryLimit(h.oldLimit)
		debug.SetGCPercent(h.oldGC)
		return func() {}
	}
	gcSettings.start = h
	afterEachGC(func() bool {
		gcSettings.Lock()
		defer gcSettings.Unlock()
		if gcSettings.start != h {
			return false
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 || s[0].Value.Uint64() > uint64(want)/2 {
			endHeapStart()
			return false
		}
		return true
	})
	return func() {
		gcSettings.Lock()
		defer gcSettings.Unlock()
		if gcSettings.start == h {
			endHeapStart()
		}
	}
}

// endHeapStart ends the startHeapAt adjustment under way, if any, and
// restores the settings it replaced; gcSettings is locked.
func endHeapStart() {
	if h := gcSettings.start; h != nil {
		debug.SetMemoryLimit(h.oldLimit)
		debug.SetGCPercent(h.oldGC)
		gcSettings.start = nil
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
// For a big program it first ends a startHeapAt adjustment under way.
func lowGCFor(p *pt2.Program) (restore func()) {
	var n int64
	for _, t := range p.LiftedAttrs() {
		n += int64(t.Numel()) * int64(t.DType().Size())
	}
	if n < bigWeights {
		return func() {}
	}
	gcSettings.Lock()
	defer gcSettings.Unlock()
	endHeapStart()
	if gcSettings.lowered == 0 {
		gcSettings.lowOld = debug.SetGCPercent(bigProgramGCPercent)
	}
	gcSettings.lowered++
	return func() {
		gcSettings.Lock()
		defer gcSettings.Unlock()
		if gcSettings.lowered--; gcSettings.lowered == 0 {
			debug.SetGCPercent(gcSettings.lowOld)
		}
	}
}
