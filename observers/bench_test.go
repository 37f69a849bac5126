package observers_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/tensor"
)

func benchInput(n int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(1, 1))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return benchInputFrom(v)
}

// benchInputFrom is the 1-D tensor of v.
func benchInputFrom(v []float32) *tensor.Tensor { return tensor.F32([]int{len(v)}, v...) }

func BenchmarkMinMaxObserve(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 20} {
		x := benchInput(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			o, err := observers.NewMinMaxObserver(observers.Config{})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				if err := o.Observe(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHistogram(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 20} {
		x := benchInput(n)
		b.Run("observe/"+strconv.Itoa(n), func(b *testing.B) {
			o, err := observers.NewHistogramObserver(observers.Config{DType: observers.QInt8})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				if err := o.Observe(x); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("qparams/"+strconv.Itoa(n), func(b *testing.B) {
			o, err := observers.NewHistogramObserver(observers.Config{DType: observers.QInt8})
			if err != nil {
				b.Fatal(err)
			}
			if err := o.Observe(x); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := o.CalculateQParams(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
