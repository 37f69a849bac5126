package kernels

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

func benchFloats(n int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(1, 1))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return tensor.MustFromData(tensor.Float32, []int{n}, v)
}

func BenchmarkQuantizePerTensor(b *testing.B) {
	for _, n := range []int{1 << 20, 1 << 24} {
		x := benchFloats(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(4 * n)) // float32 input bytes
			for b.Loop() {
				if _, err := QuantizePerTensor(x, 0.02, 3, -128, 127, tensor.Int8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDequantizePerTensor(b *testing.B) {
	for _, n := range []int{1 << 20, 1 << 24} {
		q, err := QuantizePerTensor(benchFloats(n), 0.02, 3, -128, 127, tensor.Int8)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(4 * n)) // float32 output bytes
			for b.Loop() {
				if _, err := DequantizePerTensor(q, 0.02, 3, -128, 127, tensor.Int8, tensor.Float32); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// int4 weights of a 4096x4096 linear with groups of 32 along K.
func benchInt4Weight(n, k, g int) (*tensor.Tensor, *tensor.Tensor) {
	r := rand.New(rand.NewPCG(2, 2))
	w := make([]int8, n*k)
	for i := range w {
		w[i] = int8(r.IntN(16) - 8)
	}
	s := make([]float32, n*k/g)
	for i := range s {
		s[i] = 0.01 + 0.001*float32(r.Float64())
	}
	return tensor.MustFromData(tensor.Int8, []int{n, k}, w), tensor.MustFromData(tensor.Float32, []int{n, k / g}, s)
}

func BenchmarkDequantizeInt4Group(b *testing.B) {
	const n, k, g = 4096, 4096, 32
	w, s := benchInt4Weight(n, k, g)
	zp := tensor.MustZeros(tensor.Int32, n, k/g)
	b.SetBytes(int64(4 * n * k)) // float32 output bytes
	for b.Loop() {
		if _, err := DequantizeAffine(w, []int{1, g}, s, zp, tensor.Int8, -8, 7, tensor.Float32); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReferenceDQLinearInt4(b *testing.B) {
	const m, n, k, g = 8, 4096, 4096, 32
	w, s := benchInt4Weight(n, k, g)
	x := benchFloats(m * k)
	x, _ = x.Reshape(m, k)
	bias := tensor.MustZeros(tensor.Float32, n)
	zp := tensor.MustZeros(tensor.Int32, n, k/g)
	for b.Loop() {
		if _, err := ReferenceDQLinearInt4(x, 1.1920929e-07, w, s, zp, bias, []int{1, g}, DQLinearInt4Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
