package main

import (
	"runtime/debug"

	"github.com/fxquant/fxquant/pt2"
)

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
func lowGCFor(p *pt2.Program) (restore func()) {
	var n int64
	for _, t := range p.LiftedAttrs() {
		n += int64(t.Numel()) * int64(t.DType().Size())
	}
	if n < bigWeights {
		return func() {}
	}
	old := debug.SetGCPercent(bigProgramGCPercent)
	return func() { debug.SetGCPercent(old) }
}
