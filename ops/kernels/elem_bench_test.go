package kernels_test

import (
	"testing"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func elemBenchInput(n int) *tensor.Tensor {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%2000)/200 - 5
	}
	return tensor.F32([]int{n / 1000, 1000}, v...)
}

// BenchmarkElemActivations measures the PyTorch-exact activations on 64k
// float32 elements (rows of 1000).
func BenchmarkElemActivations(b *testing.B) {
	x := elemBenchInput(64000)
	for _, bc := range []struct {
		name string
		f    func(*tensor.Tensor) (*tensor.Tensor, error)
	}{
		{"sigmoid", kernels.Sigmoid},
		{"silu", kernels.Silu},
		{"tanh", kernels.Tanh},
		{"gelu", func(x *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Gelu(x, "none") }},
		{"gelu_tanh", func(x *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Gelu(x, "tanh") }},
		{"hardswish", kernels.Hardswish},
		{"softmax", func(x *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Softmax(x, -1) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(4 * x.Numel()))
			for b.Loop() {
				if _, err := bc.f(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
