// Package kernels holds fxquant's reference kernels: typed Go functions
// over [tensor.Tensor] that reproduce PyTorch's arithmetic. Package ops
// adapts them to its registry rows (kernels_quant_table.go,
// kernels_aten_table.go); kernels itself imports only ops/tensor, the
// standard library, gonum and golang.org/x/sys/cpu.
//
// # Vector kernels
//
// The float32 convolutions that replay oneDNN (jit, jit_1x1, jit_dw and
// the gemm convolution's avx512_core and gemv_n orders) and the reference
// sgemm behind [Linear], [Mm], [Addmm], [Bmm] and ATen's native
// convolution run on AVX2 + FMA assembly (conv_fast_amd64.s) when the CPU
// has it, chosen at run time, and on the pure-Go code otherwise (or with
// the purego build tag). Each vector lane is one output element, so every
// element keeps the chain of operations PyTorch gives it: VFMADD231PS is
// the single-rounding fused multiply-add [FMA32] computes, VMULPS and
// VADDPS the separately rounded product and sum of the sgemm. Both paths
// give the same bits; tests compare them on random shapes. Large
// problems split their output rows over goroutines, each element still
// computed by one.
//
// The same holds for softmax and log_softmax along the last dim, layer_norm
// and pooling (simd_amd64.s, simd_knorm_amd64.s): softmax's max, Sleef exp
// and reduce_all sum run 8 lanes of a row at a time; layer_norm runs the
// Welford chunks of four rows interleaved, each row with its own merge
// order; max_pool2d, avg_pool2d and adaptive_avg_pool2d compute 8 outputs
// of a row at once, one per lane, each window read in PyTorch's order.
// Outputs larger than the caches are written with non-temporal stores.
//
// # Quantization kernels
//
// The quant*.go files implement every quantize, dequantize and
// choose_qparams op of torchao-pt2e.md section 1: the quantized_decomposed
// ops ([QuantizePerTensor], [DequantizePerTensor], [ChooseQParams],
// [QuantizePerChannel], [QuantizePerToken], [QuantizePerChannelGroup],
// [FakeQuantPerChannel], ...), the torchao affine ops ([QuantizeAffine],
// [DequantizeAffine], [ChooseQParamsAffine]) with any block size, and
// [ReferenceDQLinearInt4]. Each doc comment gives the exact float32 or
// float64 formula it follows, including where the zero point enters the
// rounding, and what happens to NaN, infinities and -0.0. Rounding is half
// to even (math.RoundToEven) and every intermediate product is converted
// explicitly so that the compiler cannot fuse it into an FMA.
//
// The reference-representation helpers [ToDType], [Round], [Clamp],
// [ClampTensor] and [OutDType] follow PyTorch's casting rules: float to int
// truncates toward zero.
//
// # Errors
//
// Kernels never panic on bad input. Errors name the argument and what was
// expected, and wrap [ErrBadArgument], [ErrUnsupportedDType] or
// [tensor.ErrShape].
package kernels
