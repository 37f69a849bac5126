package observers_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/tensor"
)

// BenchmarkHistogramCalib is one HistogramObserver's life in a
// calibration run: four batches observed, then the qparams. "mlp" is an
// activation of the 500-layer MLP of cmd/fxquant's BenchmarkRunMLP500
// (batch 4 x 64 features, ReLU'd: a sparse, spiky 2048-bin histogram);
// "dense" is 4 batches of 64k normal elements (most bins filled).
func BenchmarkHistogramCalib(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
		relu bool
	}{{"mlp", 4 * 64, true}, {"dense", 1 << 16, false}} {
		r := rand.New(rand.NewPCG(3, 7))
		var xs [4]*tensor.Tensor
		for k := range xs {
			v := make([]float32, c.n)
			for i := range v {
				f := float32(r.NormFloat64() * (1 + 0.1*float64(k)))
				if c.relu {
					f = max(f, 0)
				}
				v[i] = f
			}
			xs[k] = benchInputFrom(v)
		}
		// observed is a new observer that has seen xs.
		observed := func(b *testing.B) *observers.HistogramObserver {
			o, err := observers.NewHistogramObserver(observers.Config{DType: observers.QUInt8})
			if err != nil {
				b.Fatal(err)
			}
			for _, x := range xs {
				if err := o.Observe(x); err != nil {
					b.Fatal(err)
				}
			}
			return o
		}
		b.Run(c.name+"/observe+qparams", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := observed(b).CalculateQParams(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/search", func(b *testing.B) {
			o := observed(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := o.SearchRange(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPerChannelObserve observes a constant [out, in] weight along
// axis 0, as calibration does once per batch; MB/s counts the weight.
func BenchmarkPerChannelObserve(b *testing.B) {
	for _, sh := range [][2]int{{64, 64}, {1024, 1024}} {
		x := benchInput(sh[0] * sh[1])
		x, err := x.Reshape(sh[0], sh[1])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strconv.Itoa(sh[0])+"x"+strconv.Itoa(sh[1]), func(b *testing.B) {
			o, err := observers.NewPerChannelMinMaxObserver(observers.Config{DType: observers.QInt8, QScheme: observers.PerChannelSymmetric})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(4 * sh[0] * sh[1]))
			b.ReportAllocs()
			for b.Loop() {
				if err := o.Observe(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
