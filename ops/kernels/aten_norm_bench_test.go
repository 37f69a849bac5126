package kernels_test

import (
	"testing"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// The norm benchmarks run on [8, 64, 28, 28] float32 (401k elements), a
// mid-size CNN activation; bytes/s counts the input once.

func benchInput(shape ...int) *tensor.Tensor {
	return tensor.F32(shape, lcg(tensor.Numel(shape), 7)...)
}

func BenchmarkBatchNormInference(b *testing.B) {
	x := benchInput(8, 64, 28, 28)
	c := tensor.F32([]int{64}, lcg(64, 3)...)
	v := tensor.F32([]int{64}, seq(64, 0.5, 0.01)...)
	b.SetBytes(int64(4 * x.Numel()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kernels.BatchNorm(x, c, c, c, v, false, 1e-5); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGroupNorm(b *testing.B) {
	x := benchInput(8, 64, 28, 28)
	c := tensor.F32([]int{64}, lcg(64, 3)...)
	b.SetBytes(int64(4 * x.Numel()))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := kernels.GroupNorm(x, 8, c, c, 1e-5); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLayerNorm(b *testing.B) {
	x := benchInput(64, 1024)
	w := tensor.F32([]int{1024}, lcg(1024, 3)...)
	b.SetBytes(int64(4 * x.Numel()))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := kernels.LayerNorm(x, []int{1024}, w, w, 1e-5); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAdaptiveAvgPool2dMean(b *testing.B) {
	x := benchInput(8, 64, 28, 28)
	b.SetBytes(int64(4 * x.Numel()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kernels.AdaptiveAvgPool2d(x, []int{1, 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvolutionInt32 is the reference representation's integer
// conv2d: [1, 16, 32, 32] by a 3x3 [32, 16] kernel, padding 1.
func BenchmarkConvolutionInt32(b *testing.B) {
	xv := make([]int32, 16*32*32)
	for i := range xv {
		xv[i] = int32(i%255) - 127
	}
	wv := make([]int32, 32*16*9)
	for i := range wv {
		wv[i] = int32(i%253) - 126
	}
	x := tensor.MustFromData(tensor.Int32, []int{1, 16, 32, 32}, xv)
	w := tensor.MustFromData(tensor.Int32, []int{32, 16, 3, 3}, wv)
	p, err := kernels.NewConvParams(2, []int{1}, []int{1}, []int{1}, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kernels.Convolution(x, w, nil, p); err != nil {
			b.Fatal(err)
		}
	}
}
