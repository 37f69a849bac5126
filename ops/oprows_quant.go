package ops

// quantRows are the quantized_decomposed ops (torchao-pt2e.md 1.2, from
// pytorch/pytorch:torch/ao/quantization/fx/_decomposed.py) and the torchao
// ops (torchao-pt2e.md 1.3, snapshot quant_primitives.py and
// reference_representation_rewrite.py), every overload listed there. Each
// row names an overload of PyTorch's operator table (ops/schemas), which
// supplies its schema and tags.
var quantRows = []opRow{
	{op: "quantized_decomposed.quantize_per_tensor.default",
		result: ruleQuantizePerTensor, doc: "clamp(round(x * (1/scale)) + zero_point, quant_min, quant_max) cast to dtype"},
	{op: "quantized_decomposed.quantize_per_tensor.tensor",
		result: ruleQuantizePerTensor, doc: "quantize_per_tensor with one-element scale and zero_point tensors"},
	{op: "quantized_decomposed.quantize_per_tensor.tensor2",
		result: ruleQuantizePerTensor, doc: "quantize_per_tensor with every qparam and bound as a one-element tensor"},
	{op: "quantized_decomposed.dequantize_per_tensor.default",
		result: ruleDequantizePerTensor, doc: "(x - zero_point) * scale in out_dtype (float32 when None)"},
	{op: "quantized_decomposed.dequantize_per_tensor.tensor",
		result: ruleDequantizePerTensor, doc: "dequantize_per_tensor with one-element scale and zero_point tensors"},
	{op: "quantized_decomposed.dequantize_per_tensor.tensor2",
		result: ruleDequantizePerTensor, doc: "dequantize_per_tensor with every qparam and bound as a one-element tensor"},
	{op: "quantized_decomposed.choose_qparams.tensor",
		result: ruleChooseQParams, doc: "per-tensor affine qparams from aminmax: (float64[1] scale, int64[1] zero_point)"},
	{op: "quantized_decomposed.choose_qparams_symmetric.tensor",
		result: ruleChooseQParams, doc: "per-tensor symmetric qparams: (float64[1] scale, int64[1] zero_point)"},
	{op: "quantized_decomposed.quantize_per_channel.default",
		result: ruleQuantizePerChannel, doc: "per-channel quantize along axis with scales[c] and zero_points[c]"},
	{op: "quantized_decomposed.dequantize_per_channel.default",
		result: ruleDequantizePerChannel, doc: "per-channel (x - zero_points[c]) * scales[c], cast to out_dtype (float32 when None)"},
	{op: "quantized_decomposed.choose_qparams_per_token.default",
		result: ruleChooseQParamsPerToken, doc: "symmetric per-token qparams along the last dim: scale = amax|x| / 127, zero_point = 0"},
	{op: "quantized_decomposed.choose_qparams_per_token_asymmetric.default",
		result: ruleChooseQParamsPerToken, doc: "asymmetric per-token qparams along the last dim (XNNPACK formula)"},
	{op: "quantized_decomposed.quantize_per_token.default",
		result: ruleQuantizePerToken, doc: "per-token clamp(round(x * (1/scale) + zero_point)) cast to dtype"},
	{op: "quantized_decomposed.dequantize_per_token.default",
		result: ruleDequantizePerToken, doc: "per-token (x - zero_point) * scale cast to output_dtype"},
	{op: "quantized_decomposed.quantize_per_channel_group.default",
		result: ruleQuantizePerChannelGroup, doc: "2-D groupwise quantize, one qparam pair per group_size columns of a row"},
	{op: "quantized_decomposed.dequantize_per_channel_group.default",
		result: ruleDequantizePerChannelGroup, doc: "2-D groupwise dequantize to output_dtype"},
	{op: "quantized_decomposed.fake_quant_per_channel.default",
		result: ruleFakeQuantPerChannel, doc: "per-channel quantize then dequantize, in the input's dtype"},
	{op: "quantized_decomposed.convert_element_type.no_fuse",
		result: ruleConvertElementType, doc: "plain dtype cast that Inductor must not fuse away"},

	{op: "torchao.quantize_affine.default",
		result: ruleQuantizeAffine, doc: "blockwise clamp(round(x * (1/scale)) + zero_point, qmin, qmax) cast to output_dtype"},
	{op: "torchao.dequantize_affine.default",
		result: ruleDequantizeAffine, doc: "blockwise (x - zero_point) * scale in output_dtype"},
	{op: "torchao.choose_qparams_affine.default",
		result: ruleChooseQParamsAffine, doc: "blockwise (scale, zero_point) for the mapping type from per-block min/max"},
	{op: "torchao.reference_dqlinear_int4.default",
		result: ruleReferenceDQLinearInt4, doc: "reference int4 groupwise dynamic linear: int8 activation x int4 weight, float32 result"},
}

// hopRows returns the higher-order operators, modelled as variadic
// schemas. It is a function, not a table variable, because out_dtype's rule
// consults the default registry that the rows build.
func hopRows() []opRow {
	return []opRow{
		{schema: "higher_order::out_dtype(Any op, ScalarType out_dtype, ...) -> Tensor",
			result: ruleOutDType, doc: "run op on the promoted arguments, then cast the result with .to(out_dtype) (float to int truncates)"},
	}
}
