package kernels

import (
	"math"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// BenchmarkKNormInto and BenchmarkKPoolInto time the kernels of
// BenchmarkKNorm and BenchmarkKPool writing into preallocated outputs, as
// PyTorch's out= variants do (testdata/bench/norm_pool_bench.py times
// those): on this machine a fresh 16 MB Go slice costs 2-4 ms to zero,
// as much as the kernel itself, so these isolate the kernel. GB/s counts
// the input bytes.

func BenchmarkKNormInto(b *testing.B) {
	x := kqFloats(2, 64, 128, 512)
	xd := must(tensor.Data[float32](x))
	wd := must(tensor.Data[float32](kqFloats(3, 512)))
	bd := must(tensor.Data[float32](kqFloats(4, 512)))
	const inner = 512
	rows := len(xd) / inner
	y := make([]float32, len(xd))
	ms, rs := make([]float32, rows), make([]float32, rows)
	benchCPU(b, "layer_norm/64x128x512", 4*len(xd), func() error {
		layerNormRows(xd, y, ms, rs, wd, bd, inner, 1e-5, 0, rows)
		return nil
	})
	for _, log := range []bool{false, true} {
		name := "softmax/64x128x512"
		if log {
			name = "log_softmax/64x128x512"
		}
		benchCPU(b, name, 4*len(xd), func() error {
			softmaxRows(y, xd, inner, 0, rows, log)
			return nil
		})
	}
}

func BenchmarkKPoolInto(b *testing.B) {
	xm := kqFloats(5, 8, 64, 112, 112)
	pm := must(newPool2d("max_pool2d", xm, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, false))
	xmd := must(tensor.Data[float32](xm))
	ym := make([]float32, pm.N*pm.C*pm.Ho*pm.Wo)
	im := make([]int64, len(ym))
	benchCPU(b, "max_pool2d/8x64x112x112-k3s2p1", 4*len(xmd), func() error {
		maxPoolInto(pm, xmd, float32(math.Inf(-1)), ym, im)
		return nil
	})
	xa := kqFloats(6, 8, 64, 56, 56)
	pa := must(newPool2d("avg_pool2d", xa, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1}, false))
	xad := must(tensor.Data[float32](xa))
	ya := make([]float32, pa.N*pa.C*pa.Ho*pa.Wo)
	benchCPU(b, "avg_pool2d/8x64x56x56-k3s2p1", 4*len(xad), func() error {
		avgPoolInto(pa, xad, ya, true, 0)
		return nil
	})
	xg := must(tensor.Data[float32](kqFloats(7, 8, 512, 7, 7)))
	yg := make([]float32, 8*512)
	benchCPU(b, "adaptive_avg_pool2d/8x512x7x7-1", 4*len(xg), func() error {
		meanPlanesInto(xg, yg, 49)
		return nil
	})
}
