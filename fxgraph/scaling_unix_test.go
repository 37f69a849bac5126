//go:build unix

package fxgraph

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// irCPU returns the process's user+system CPU time. Scaling checks use it
// instead of wall time, which other processes on a shared machine distort.
func irCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// irMeasure returns the least CPU time of reps runs of op on a fixture of
// size n (prepared outside the measurement by setup).
func irMeasure(t *testing.T, n, reps int, setup func(n int) any, op func(fixture any)) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range reps {
		fx := setup(n)
		runtime.GC()
		start := irCPU(t)
		op(fx)
		best = min(best, irCPU(t)-start)
	}
	return best
}

// TestLinearScaling checks that the IR operations are linear by doubling
// the graph from 60,000 to 120,000 nodes: a linear operation costs about
// 2x the CPU, a quadratic one 4x, so the limit is maxRatio = 3. (Going
// from 6,000 to 60,000 nodes also crosses the CPU caches, which adds a
// constant factor per node that has nothing to do with the algorithm; the
// benchmarks report that ratio.) CPU time is noisy on a busy shared
// machine, so the check runs only when FXQUANT_SCALING is set:
//
//	FXQUANT_SCALING=1 go test ./fxgraph -run LinearScaling -v
func TestLinearScaling(t *testing.T) {
	if os.Getenv("FXQUANT_SCALING") == "" || testing.Short() {
		t.Skip("set FXQUANT_SCALING=1 to run the scaling check")
	}
	const maxRatio = 3.0
	reg := irRegistry(t)
	opts := VerifyOptions{Registry: reg, RequireTypes: true}
	graph := func(n int) any { return irBenchGraph(t, n, false) }
	deadGraph := func(n int) any { return irBenchGraph(t, n, true) }
	text := func(n int) any { return Format(irBenchGraph(t, n, false)) }
	hub := func(n int) any {
		g := New()
		x := g.Placeholder("x", nil)
		g.Placeholder("y", nil)
		for range n / 2 {
			g.Call(irAdd, x, x)
		}
		return g
	}
	tests := []struct {
		name  string
		setup func(n int) any
		op    func(fx any)
	}{
		{"build", func(n int) any { return n }, func(fx any) { irBenchGraph(t, fx.(int), false) }},
		{"verify", graph, func(fx any) {
			if err := Verify(fx.(*Graph), opts); err != nil {
				t.Fatal(err)
			}
		}},
		{"dce", deadGraph, func(fx any) { fx.(*Graph).EliminateDeadCode(reg, nil) }},
		{"clone", graph, func(fx any) { fx.(*Graph).Clone() }},
		{"format", graph, func(fx any) { Format(fx.(*Graph)) }},
		{"parse", text, func(fx any) {
			if _, err := ParseString(fx.(string)); err != nil {
				t.Fatal(err)
			}
		}},
		{"rewire hub", hub, func(fx any) {
			g := fx.(*Graph)
			x, y := g.First(), g.First().Next()
			users := x.Users()
			g.ReplaceAllUsesWith(x, y, nil)
			for _, u := range users {
				if err := g.Erase(u); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"copy names", graph, func(fx any) {
			g := fx.(*Graph)
			c, _ := g.Clone()
			restore := c.InsertingBefore(c.Last())
			if _, err := c.GraphCopy(g, map[*Node]*Node{}); err != nil {
				t.Fatal(err)
			}
			restore()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			small := irMeasure(t, 60_000, 2, tt.setup, tt.op)
			large := irMeasure(t, 120_000, 2, tt.setup, tt.op)
			ratio := float64(large) / float64(max(small, time.Microsecond))
			t.Logf("60k: %v, 120k: %v, ratio %.2f", small, large, ratio)
			if small > 2*time.Millisecond && ratio > maxRatio {
				t.Errorf("120,000 nodes cost %.2fx the CPU of 60,000 (%v vs %v); want at most %.0fx", ratio, large, small, maxRatio)
			}
		})
	}
}
