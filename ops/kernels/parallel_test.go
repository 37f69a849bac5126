package kernels

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Kernels that split their output across goroutines must give the bits
// of a one-goroutine run (and, under -race, show no data race).
func TestParallelKernelsSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	v := make([]float32, 6*64*40*40)
	for i := range v {
		v[i] = float32(r.NormFloat64() * 2)
	}
	x4 := tensor.MustFromData(tensor.Float32, []int{6, 64, 40, 40}, v)
	x2 := must(x4.Reshape(6*64*40/32, 32*40)) // rows of 1280
	w := tensor.F32([]int{1280}, v[:1280]...)
	sc := tensor.F32([]int{x2.Size(0), 40}, v[:x2.Size(0)*40]...)
	for i, s := range must(tensor.Data[float32](sc)) {
		sc.Storage().([]float32)[i] = 0.01 + abs32(s)*0.01
	}
	zp := tensor.MustZeros(tensor.Int32, x2.Size(0), 40)
	run := func() [][]float32 {
		var out [][]float32
		add := func(t *tensor.Tensor, err error) {
			if err != nil {
				panic(err)
			}
			if t.DType() != tensor.Float32 {
				f, _ := t.Float64s()
				out = append(out, convertFloats[float32](f))
				return
			}
			out = append(out, must(tensor.Data[float32](t)))
		}
		add(Softmax(x2, 1))
		add(LogSoftmax(x2, 1))
		add(Softmax(x4, 1)) // not the last dim
		add(LogSoftmax(x4, 1))
		y, m, rs, err := LayerNorm(x2, []int{1280}, w, w, 1e-5)
		add(y, err)
		add(m, nil)
		add(rs, nil)
		mp, mi, err := MaxPool2d(x4, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, false)
		add(mp, err)
		add(mi, nil)
		add(AvgPool2d(x4, []int{3, 3}, []int{2, 2}, []int{1, 1}, false, true, 0))
		add(AdaptiveAvgPool2d(x4, []int{1, 1}))
		add(QuantizePerTensor(x4, 0.02, 3, -128, 127, tensor.Int8))
		q := must(QuantizeAffine(x2, []int{1, 32}, sc, zp, tensor.Int8, -8, 7))
		add(q, nil)
		add(DequantizeAffine(q, []int{1, 32}, sc, zp, tensor.Int8, -8, 7, tensor.Float32))
		return out
	}
	prev := runtime.GOMAXPROCS(1)
	one := run()
	runtime.GOMAXPROCS(4)
	many := run()
	// and with every softmax/layer_norm output written non-temporally
	savedNT := ntMinFloats
	ntMinFloats = 0
	manyNT := run()
	ntMinFloats = savedNT
	runtime.GOMAXPROCS(prev)
	for k := range one {
		for i := range one[k] {
			if !bitsEqual32(one[k][i], many[k][i]) {
				t.Fatalf("output %d element %d: 1 thread %g, 4 threads %g", k, i, one[k][i], many[k][i])
			}
			if !bitsEqual32(one[k][i], manyNT[k][i]) {
				t.Fatalf("output %d element %d: 1 thread %g, 4 threads non-temporal %g", k, i, one[k][i], manyNT[k][i])
			}
		}
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}
