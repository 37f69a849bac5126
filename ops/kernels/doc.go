// Package kernels holds fxquant's reference kernels: typed Go functions
// over [tensor.Tensor] that reproduce PyTorch's arithmetic. Package ops
// adapts them to its registry rows (kernels_quant_table.go,
// kernels_aten_table.go); kernels itself imports only ops/tensor, the
// standard library and gonum.
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
