package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Benchmarks of issue 15 for the non-convolution kernels, on the shapes
// that testdata/bench/torch_bench.py times PyTorch 2.14 with (one thread):
// GB/s counts the float32 side once (input of a quantize, output of a
// dequantize, input of the others) per second of process CPU time.

// cpuTimer reports the process CPU time per op (the machine is shared:
// wall time depends on the other processes; with -cpu 1 the CPU time is
// the work of the one goroutine plus the runtime's).
type cpuTimer struct{ start float64 }

func startCPU() cpuTimer { return cpuTimer{processCPUSeconds()} }

// report adds cpu-ms/op and GB/s of bytes per op over that CPU time.
func (c cpuTimer) report(b *testing.B, bytes int) {
	cpu := (processCPUSeconds() - c.start) * 1e9 / float64(b.N)
	b.ReportMetric(cpu/1e6, "cpu-ms/op")
	if cpu > 0 {
		b.ReportMetric(float64(bytes)/cpu, "GB/s")
	}
}

// benchCPU runs f as sub-benchmark name and reports bytes per op over
// the CPU time (cpuTimer.report).
func benchCPU(b *testing.B, name string, bytes int, f func() error) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		c := startCPU()
		for b.Loop() {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		c.report(b, bytes)
	})
}

func kqFloats(seed uint64, shape ...int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, tensor.Numel(shape))
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return tensor.MustFromData(tensor.Float32, shape, v)
}

func kqScales(n int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(9, 9))
	s := make([]float32, n)
	for i := range s {
		s[i] = 0.01 + 0.01*float32(r.Float64())
	}
	return tensor.MustFromData(tensor.Float32, []int{n}, s)
}

func kqZeroPoints(d tensor.DType, n int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(8, 8))
	z := make([]int64, n)
	for i := range z {
		z[i] = int64(r.IntN(10) - 5)
	}
	t, err := qIntTensor(d, []int{n}, z)
	if err != nil {
		panic(err)
	}
	return t
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func BenchmarkKQuant(b *testing.B) {
	const n, k = 4096, 4096
	x := kqFloats(1, n, k)
	bytes := 4 * n * k
	run := func(name string, f func() (*tensor.Tensor, error)) {
		benchCPU(b, name, bytes, func() error { _, err := f(); return err })
	}
	flat := must(x.Reshape(n * k))
	run("quantize_per_tensor/16M", func() (*tensor.Tensor, error) {
		return QuantizePerTensor(flat, 0.02, 3, -128, 127, tensor.Int8)
	})
	qt := must(QuantizePerTensor(flat, 0.02, 3, -128, 127, tensor.Int8))
	run("dequantize_per_tensor/16M", func() (*tensor.Tensor, error) {
		return DequantizePerTensor(qt, 0.02, 3, -128, 127, tensor.Int8, tensor.Float32)
	})
	sc, zp := kqScales(n), kqZeroPoints(tensor.Int64, n)
	run("quantize_per_channel/4096x4096", func() (*tensor.Tensor, error) {
		return QuantizePerChannel(x, sc, zp, 0, -128, 127, tensor.Int8)
	})
	qc := must(QuantizePerChannel(x, sc, zp, 0, -128, 127, tensor.Int8))
	run("dequantize_per_channel/4096x4096", func() (*tensor.Tensor, error) {
		return DequantizePerChannel(qc, sc, zp, 0, -128, 127, tensor.Int8, tensor.Float32)
	})
	s8, z8 := must(sc.Reshape(n, 1)), must(kqZeroPoints(tensor.Int32, n).Reshape(n, 1))
	run("quantize_affine/int8-row", func() (*tensor.Tensor, error) {
		return QuantizeAffine(x, []int{1, k}, s8, z8, tensor.Int8, -128, 127)
	})
	qa := must(QuantizeAffine(x, []int{1, k}, s8, z8, tensor.Int8, -128, 127))
	run("dequantize_affine/int8-row", func() (*tensor.Tensor, error) {
		return DequantizeAffine(qa, []int{1, k}, s8, z8, tensor.Int8, -128, 127, tensor.Float32)
	})
	s4 := must(kqScales(n*k/32).Reshape(n, k/32))
	z4 := tensor.MustZeros(tensor.Int32, n, k/32)
	run("quantize_affine/int4-g32", func() (*tensor.Tensor, error) {
		return QuantizeAffine(x, []int{1, 32}, s4, z4, tensor.Int8, -8, 7)
	})
	q4 := must(QuantizeAffine(x, []int{1, 32}, s4, z4, tensor.Int8, -8, 7))
	run("dequantize_affine/int4-g32", func() (*tensor.Tensor, error) {
		return DequantizeAffine(q4, []int{1, 32}, s4, z4, tensor.Int8, -8, 7, tensor.Float32)
	})
}

func BenchmarkKNorm(b *testing.B) {
	x := kqFloats(2, 64, 128, 512)
	w, bias := kqFloats(3, 512), kqFloats(4, 512)
	benchCPU(b, "layer_norm/64x128x512", 4*x.Numel(), func() error {
		_, _, _, err := LayerNorm(x, []int{512}, w, bias, 1e-5)
		return err
	})
	benchCPU(b, "softmax/64x128x512", 4*x.Numel(), func() error {
		_, err := Softmax(x, 2)
		return err
	})
	benchCPU(b, "log_softmax/64x128x512", 4*x.Numel(), func() error {
		_, err := LogSoftmax(x, 2)
		return err
	})
	// softmax over channels of a CNN activation (not the last dim)
	xc := kqFloats(8, 8, 64, 56, 56)
	benchCPU(b, "softmax_dim1/8x64x56x56", 4*xc.Numel(), func() error {
		_, err := Softmax(xc, 1)
		return err
	})
	benchCPU(b, "log_softmax_dim1/8x64x56x56", 4*xc.Numel(), func() error {
		_, err := LogSoftmax(xc, 1)
		return err
	})
}

func BenchmarkKPool(b *testing.B) {
	xm := kqFloats(5, 8, 64, 112, 112)
	benchCPU(b, "max_pool2d/8x64x112x112-k3s2p1", 4*xm.Numel(), func() error {
		_, _, err := MaxPool2d(xm, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, false)
		return err
	})
	// the reference representation's int32 max_pool2d
	xmd := must(tensor.Data[float32](xm))
	iv := make([]int32, len(xmd))
	for i, v := range xmd {
		iv[i] = int32(v * 40)
	}
	xi := tensor.MustFromData(tensor.Int32, xm.Shape(), iv)
	benchCPU(b, "max_pool2d_int32/8x64x112x112-k3s2p1", 4*xi.Numel(), func() error {
		_, _, err := MaxPool2d(xi, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, false)
		return err
	})
	xa := kqFloats(6, 8, 64, 56, 56)
	benchCPU(b, "avg_pool2d/8x64x56x56-k3s2p1", 4*xa.Numel(), func() error {
		_, err := AvgPool2d(xa, []int{3, 3}, []int{2, 2}, []int{1, 1}, false, true, 0)
		return err
	})
	xg := kqFloats(7, 8, 512, 7, 7)
	benchCPU(b, "adaptive_avg_pool2d/8x512x7x7-1", 4*xg.Numel(), func() error {
		_, err := AdaptiveAvgPool2d(xg, []int{1, 1})
		return err
	})
}

// BenchmarkKBinary: element-wise add on 4M int32 elements (the integer
// arithmetic of the reference representation) and a broadcast float32 mul.
func BenchmarkKBinary(b *testing.B) {
	const n = 1 << 22
	r := rand.New(rand.NewPCG(10, 10))
	iv := make([]int32, n)
	for i := range iv {
		iv[i] = int32(r.IntN(256) - 128)
	}
	xi := tensor.MustFromData(tensor.Int32, []int{n}, iv)
	benchCPU(b, "add_int32/4M", 4*n, func() error {
		_, err := Binary(OpAdd, T(xi), T(xi), nil)
		return err
	})
	xf := kqFloats(11, 1024, n/1024)
	row := kqFloats(12, n/1024)
	benchCPU(b, "mul_f32_broadcast/4M", 4*n, func() error {
		_, err := Binary(OpMul, T(xf), T(row), nil)
		return err
	})
}
