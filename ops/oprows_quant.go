package ops

// quantRows are the quantized_decomposed ops (torchao-pt2e.md 1.2, from
// pytorch/pytorch:torch/ao/quantization/fx/_decomposed.py) and the torchao
// ops (torchao-pt2e.md 1.3, snapshot quant_primitives.py and
// reference_representation_rewrite.py), every overload listed there.
var quantRows = []opRow{
	{schema: "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
		result: ruleQuantizePerTensor, doc: "clamp(round(x * (1/scale)) + zero_point, quant_min, quant_max) cast to dtype"},
	{schema: "quantized_decomposed::quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
		result: ruleQuantizePerTensor, doc: "quantize_per_tensor with one-element scale and zero_point tensors"},
	{schema: "quantized_decomposed::quantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, Tensor quant_min, Tensor quant_max, ScalarType dtype) -> Tensor",
		result: ruleQuantizePerTensor, doc: "quantize_per_tensor with every qparam and bound as a one-element tensor"},
	{schema: "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
		result: ruleDequantizePerTensor, doc: "(x - zero_point) * scale in out_dtype (float32 when None)"},
	{schema: "quantized_decomposed::dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
		result: ruleDequantizePerTensor, doc: "dequantize_per_tensor with one-element scale and zero_point tensors"},
	{schema: "quantized_decomposed::dequantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, Tensor quant_min, Tensor quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
		result: ruleDequantizePerTensor, doc: "dequantize_per_tensor with every qparam and bound as a one-element tensor"},
	{schema: "quantized_decomposed::choose_qparams.tensor(Tensor input, int quant_min, int quant_max, float eps, ScalarType dtype) -> (Tensor, Tensor)",
		result: ruleChooseQParams, doc: "per-tensor affine qparams from aminmax: (float64[1] scale, int64[1] zero_point)"},
	{schema: "quantized_decomposed::choose_qparams_symmetric.tensor(Tensor input, int quant_min, int quant_max, float eps, ScalarType dtype) -> (Tensor, Tensor)",
		result: ruleChooseQParams, doc: "per-tensor symmetric qparams: (float64[1] scale, int64[1] zero_point)"},
	{schema: "quantized_decomposed::quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
		result: ruleQuantizePerChannel, doc: "per-channel quantize along axis with scales[c] and zero_points[c]"},
	{schema: "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
		result: ruleDequantizePerChannel, doc: "per-channel (x - zero_points[c]) * scales[c], cast to out_dtype (float32 when None)"},
	{schema: "quantized_decomposed::choose_qparams_per_token(Tensor input, ScalarType dtype) -> (Tensor, Tensor)",
		result: ruleChooseQParamsPerToken, doc: "symmetric per-token qparams along the last dim: scale = amax|x| / 127, zero_point = 0"},
	{schema: "quantized_decomposed::choose_qparams_per_token_asymmetric(Tensor input, ScalarType dtype) -> (Tensor, Tensor)",
		result: ruleChooseQParamsPerToken, doc: "asymmetric per-token qparams along the last dim (XNNPACK formula)"},
	{schema: "quantized_decomposed::quantize_per_token(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
		result: ruleQuantizePerToken, doc: "per-token clamp(round(x * (1/scale) + zero_point)) cast to dtype"},
	{schema: "quantized_decomposed::dequantize_per_token(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype, ScalarType output_dtype) -> Tensor",
		result: ruleDequantizePerToken, doc: "per-token (x - zero_point) * scale cast to output_dtype"},
	{schema: "quantized_decomposed::quantize_per_channel_group(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype, int group_size) -> Tensor",
		result: ruleQuantizePerChannelGroup, doc: "2-D groupwise quantize, one qparam pair per group_size columns of a row"},
	{schema: "quantized_decomposed::dequantize_per_channel_group(Tensor input, Tensor scales, Tensor? zero_points, int quant_min, int quant_max, ScalarType dtype, int group_size, ScalarType output_dtype) -> Tensor",
		result: ruleDequantizePerChannelGroup, doc: "2-D groupwise dequantize to output_dtype"},
	{schema: "quantized_decomposed::fake_quant_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min, int quant_max) -> Tensor",
		result: ruleFakeQuantPerChannel, doc: "per-channel quantize then dequantize, in the input's dtype"},
	{schema: "quantized_decomposed::convert_element_type.no_fuse(Tensor input, ScalarType dtype) -> Tensor",
		result: ruleConvertElementType, doc: "plain dtype cast that Inductor must not fuse away"},

	{schema: "torchao::quantize_affine(Tensor input, SymInt[] block_size, Tensor scale, Tensor? zero_point, ScalarType output_dtype, Scalar? quant_min=None, Scalar? quant_max=None) -> Tensor",
		result: ruleQuantizeAffine, doc: "blockwise clamp(round(x * (1/scale)) + zero_point, qmin, qmax) cast to output_dtype"},
	{schema: "torchao::dequantize_affine(Tensor input, SymInt[] block_size, Tensor scale, Tensor? zero_point, ScalarType input_dtype, Scalar? quant_min=None, Scalar? quant_max=None, ScalarType output_dtype=float32) -> Tensor",
		result: ruleDequantizeAffine, doc: "blockwise (x - zero_point) * scale in output_dtype"},
	{schema: "torchao::choose_qparams_affine(Tensor? input, str mapping_type, SymInt[] block_size, ScalarType target_dtype, Scalar? quant_min=None, Scalar? quant_max=None, float? eps=None, ScalarType? scale_dtype=None, ScalarType? zero_point_dtype=None, bool keepdim=False) -> (Tensor, Tensor)",
		result: ruleChooseQParamsAffine, doc: "blockwise (scale, zero_point) for the mapping type from per-block min/max"},
	{schema: "torchao::reference_dqlinear_int4(Tensor x_fp32, float x_eps, Tensor weight_i4, Tensor weight_scale, Tensor weight_zero_point, Tensor? bias_fp32, SymInt[] group_size) -> Tensor",
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
