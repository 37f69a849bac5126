package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// The convolution benchmarks run the shapes of issue 15 through
// ConvolutionWith, on the assembly kernels ("vector") and on the pure-Go
// ones ("go"), one goroutine or all (GOMAXPROCS; run with -cpu 1 for the
// one-core figure PyTorch's single-thread number compares with; see
// testdata/bench_torch.py). GFLOP/s counts 2·multiply-adds of the
// convolution; cpu-GFLOP/s divides by the process's CPU time instead of
// the wall clock.

// reportFlops reports GFLOP/s of wall-clock time and, where the process's
// CPU time is known, GFLOP/s of CPU time (cpu-GFLOP/s: the fair figure on a
// loaded machine, and with -cpu 1 the one to set beside PyTorch's
// single-thread process time).
func reportFlops(b *testing.B, flopsPerOp, cpu0 float64) {
	total := flopsPerOp * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := processCPUSeconds() - cpu0; cpu0 > 0 && cpu > 0 {
		b.ReportMetric(total/cpu/1e9, "cpu-GFLOP/s")
	}
}

func benchConv(b *testing.B, in, wt []int, pad, groups int, opt ConvOptions) {
	r := rand.New(rand.NewPCG(1, 2))
	x := tensor.F32(in, randFloats(r, tensor.Numel(in), false)...)
	w := tensor.F32(wt, randFloats(r, tensor.Numel(wt), false)...)
	bias := tensor.F32([]int{wt[0]}, randFloats(r, wt[0], false)...)
	p, err := NewConvParams(2, []int{1, 1}, []int{pad, pad}, []int{1, 1}, groups)
	if err != nil {
		b.Fatal(err)
	}
	y, err := ConvolutionWith(x, w, bias, p, opt)
	if err != nil {
		b.Fatal(err)
	}
	flops := 2 * float64(y.Numel()) * float64(wt[1]*wt[2]*wt[3])
	benchPaths(b, flops, func() error {
		_, err := ConvolutionWith(x, w, bias, p, opt)
		return err
	})
}

// benchPaths runs op as the sub-benchmarks "vector" (assembly kernels)
// and "go" (pure-Go kernels), reporting flopsPerOp as reportFlops does.
func benchPaths(b *testing.B, flopsPerOp float64, op func() error) {
	for _, vec := range []bool{true, false} {
		name := "vector"
		if !vec {
			name = "go"
		}
		b.Run(name, func(b *testing.B) {
			if vec && !haveFMA32x8 {
				b.Skip("no assembly kernels on this CPU")
			}
			defer func(v bool) { useVectorKernels = v }(useVectorKernels)
			useVectorKernels = vec
			b.ReportAllocs()
			cpu0 := processCPUSeconds()
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
			reportFlops(b, flopsPerOp, cpu0)
		})
	}
}

// BenchmarkConv2d3x3 is conv2d 3×3, 64→64 channels on 56×56, batch 1,
// padding 1 (oneDNN jit, avx512_core order by default).
func BenchmarkConv2d3x3(b *testing.B) {
	b.Run("avx512_core", func(b *testing.B) {
		benchConv(b, []int{1, 64, 56, 56}, []int{64, 64, 3, 3}, 1, 1, ConvOptions{})
	})
	b.Run("avx2", func(b *testing.B) {
		benchConv(b, []int{1, 64, 56, 56}, []int{64, 64, 3, 3}, 1, 1, ConvOptions{ISA: ConvISAAVX2})
	})
}

// BenchmarkConv2d3x3Small is conv2d 3×3, 512→512 channels on 7×7, batch
// 1, padding 1 (a ResNet's last stage: most positions touch a border).
func BenchmarkConv2d3x3Small(b *testing.B) {
	benchConv(b, []int{1, 512, 7, 7}, []int{512, 512, 3, 3}, 1, 1, ConvOptions{})
}

// BenchmarkConvDepthwise3x3 is a depthwise 3×3 convolution of 64
// channels on 56×56, batch 1, padding 1 (oneDNN jit_dw).
func BenchmarkConvDepthwise3x3(b *testing.B) {
	benchConv(b, []int{1, 64, 56, 56}, []int{64, 1, 3, 3}, 1, 64, ConvOptions{})
}

// BenchmarkConv1x1 is a 1×1 convolution 64→256 on 56×56, batch 16
// (oneDNN jit_1x1).
func BenchmarkConv1x1(b *testing.B) {
	benchConv(b, []int{16, 64, 56, 56}, []int{256, 64, 1, 1}, 0, 1, ConvOptions{})
}

// BenchmarkConv1x1Batch1 is a 1×1 convolution 64→256 on 56×56 at batch 1,
// which PyTorch runs with ATen's slow_conv2d (im2col and the reference
// sgemm, no FMA), not oneDNN.
func BenchmarkConv1x1Batch1(b *testing.B) {
	benchConv(b, []int{1, 64, 56, 56}, []int{256, 64, 1, 1}, 0, 1, ConvOptions{})
}

// BenchmarkLinearPaths is linear 64×1024 → 1024 (the reference sgemm's
// order, no FMA) on the assembly kernel and on pure Go.
func BenchmarkLinearPaths(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	x := tensor.F32([]int{64, 1024}, randFloats(r, 64*1024, false)...)
	w := tensor.F32([]int{1024, 1024}, randFloats(r, 1024*1024, false)...)
	bias := tensor.F32([]int{1024}, randFloats(r, 1024, false)...)
	benchPaths(b, 2*64*1024*1024, func() error {
		_, err := Linear(x, w, bias)
		return err
	})
}

// BenchmarkLinearSmall is one layer of the 500-layer MLP: linear of a
// 4x64 input by a 64x64 weight with bias, where packing the weight costs
// as much as the products.
func BenchmarkLinearSmall(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	x := tensor.F32([]int{4, 64}, randFloats(r, 4*64, false)...)
	w := tensor.F32([]int{64, 64}, randFloats(r, 64*64, false)...)
	bias := tensor.F32([]int{64}, randFloats(r, 64, false)...)
	benchPaths(b, 2*4*64*64, func() error {
		_, err := Linear(x, w, bias)
		return err
	})
}
