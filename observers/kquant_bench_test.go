package observers_test

import (
	"testing"
	"time"

	"github.com/fxquant/fxquant/observers"
)

// BenchmarkHistogramCPU times the HistogramObserver on the 1M-element
// tensor of ops/kernels/testdata/bench/torch_bench.py with process CPU
// time (the machine is shared): observe with the same range, observe with
// a range that doubles (rebin), and the range search.
func BenchmarkHistogramCPU(b *testing.B) {
	const n = 1 << 20
	x := benchInput(n)
	xv, _ := x.Float64s()
	w := make([]float32, n)
	for i, v := range xv {
		w[i] = float32(v) * 2
	}
	x2 := benchInputFrom(w)
	newObs := func(b *testing.B) *observers.HistogramObserver {
		o, err := observers.NewHistogramObserver(observers.Config{DType: observers.QInt8})
		if err != nil {
			b.Fatal(err)
		}
		if err := o.Observe(x); err != nil {
			b.Fatal(err)
		}
		return o
	}
	b.Run("observe-same/1M", func(b *testing.B) {
		o := newObs(b)
		b.ReportAllocs()
		c := startCPU()
		for b.Loop() {
			if err := o.Observe(x); err != nil {
				b.Fatal(err)
			}
		}
		c.report(b, 4*n)
	})
	b.Run("observe-widen/1M", func(b *testing.B) {
		b.ReportAllocs()
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			o := newObs(b)
			b.StartTimer()
			t0 := processCPU()
			if err := o.Observe(x2); err != nil {
				b.Fatal(err)
			}
			cpu += processCPU() - t0
		}
		b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
	})
	b.Run("qparams/1M", func(b *testing.B) {
		o := newObs(b)
		b.ReportAllocs()
		c := startCPU()
		for b.Loop() {
			if _, err := o.CalculateQParams(); err != nil {
				b.Fatal(err)
			}
		}
		c.report(b, 0)
	})
}

// cpuTimer reports the process CPU time per op (the machine is shared:
// wall time depends on the other processes).
type cpuTimer struct{ start time.Duration }

func startCPU() cpuTimer { return cpuTimer{processCPU()} }

// report adds cpu-ms/op and, for bytes > 0, GB/s over that CPU time.
func (c cpuTimer) report(b *testing.B, bytes int) {
	cpu := float64(processCPU()-c.start) / float64(b.N)
	b.ReportMetric(cpu/1e6, "cpu-ms/op")
	if bytes > 0 && cpu > 0 {
		b.ReportMetric(float64(bytes)/cpu, "GB/s")
	}
}
