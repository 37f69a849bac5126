package ops

// The op lists of the PT2E passes, stated once. Each accepts the
// quantized_decomposed overloads pt2e inserts and the torchao affine op in
// both forms (its packet, which older torchao's convert inserted, and every
// overload of it, which fxquant's convert and torch.export write): the
// corrected behaviour of torchao-pt2e.md section 0. Each call returns a
// fresh set the caller may extend.

// QuantizeOps returns the quantize targets: quantized_decomposed
// quantize_per_tensor.default and .tensor, quantize_per_channel.default,
// and torchao.quantize_affine in both forms. It is convert's _QUANT_OPS
// (the fold constraint) and the quantize list of metadata porting and
// DuplicateDQ's dynamic skip.
func QuantizeOps() *TargetSet {
	s := NewTargetSet(
		MustOverload("quantized_decomposed.quantize_per_tensor.default"),
		MustOverload("quantized_decomposed.quantize_per_tensor.tensor"),
		MustOverload("quantized_decomposed.quantize_per_channel.default"),
	)
	s.AddPacketAndOverloads(MustPacket("torchao.quantize_affine"))
	return s
}

// DequantizeOps returns the dequantize targets: quantized_decomposed
// dequantize_per_tensor.default and .tensor, dequantize_per_channel.default,
// and torchao.dequantize_affine in both forms (metadata porting,
// DuplicateDQ, and with convert_element_type.no_fuse added, constant
// folding's don't-fold list).
func DequantizeOps() *TargetSet {
	s := NewTargetSet(
		MustOverload("quantized_decomposed.dequantize_per_tensor.default"),
		MustOverload("quantized_decomposed.dequantize_per_tensor.tensor"),
		MustOverload("quantized_decomposed.dequantize_per_channel.default"),
	)
	s.AddPacketAndOverloads(MustPacket("torchao.dequantize_affine"))
	return s
}

// ChooseQParamsOps returns the run-time qparam targets of dynamic
// quantization: quantized_decomposed choose_qparams.tensor and
// choose_qparams_symmetric.tensor, and torchao.choose_qparams_affine in
// both forms.
func ChooseQParamsOps() *TargetSet {
	s := NewTargetSet(
		MustOverload("quantized_decomposed.choose_qparams.tensor"),
		MustOverload("quantized_decomposed.choose_qparams_symmetric.tensor"),
	)
	s.AddPacketAndOverloads(MustPacket("torchao.choose_qparams_affine"))
	return s
}
