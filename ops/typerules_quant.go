package ops

import (
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Result-type rules of the quantized_decomposed and torchao ops
// (torchao-pt2e.md 1.2 and 1.3) and of higher_order.out_dtype. Argument
// positions follow the schemas in oprows_quant.go.

// quantBounds are the dtypes the decomposed ops' bounds table accepts.
func quantBounds(d tensor.DType) (lo, hi int64, ok bool) {
	switch d {
	case tensor.UInt8, tensor.Int8, tensor.UInt16, tensor.Int16, tensor.Int32:
		return d.IntRange()
	case tensor.Float8E4M3FN:
		return -448, 448, true
	case tensor.Float8E5M2:
		return -57344, 57344, true
	}
	return 0, 0, false
}

// checkQRange checks literal quant_min/quant_max against dtype's bounds.
// Tensor-valued bounds (the .tensor2 overloads) are not checked.
func checkQRange(args []Value, posMin, posMax int, d tensor.DType, posDType int) error {
	lo, hi, ok := quantBounds(d)
	if !ok {
		return argErr(posDType, "dtype", "%s is not a quantized dtype (want uint8, int8, uint16, int16, int32 or float8)", d)
	}
	qmin, okMin := get(args, posMin).(int64)
	qmax, okMax := get(args, posMax).(int64)
	if okMin && qmin < lo {
		return argErr(posMin, "quant_min", "%d is below %s's minimum %d", qmin, d, lo)
	}
	if okMax && qmax > hi {
		return argErr(posMax, "quant_max", "%d is above %s's maximum %d", qmax, d, hi)
	}
	if okMin && okMax && qmin > qmax {
		return argErr(posMin, "quant_min", "%d is above quant_max %d", qmin, qmax)
	}
	return nil
}

// quantDTypeArg reads the decomposed ops' dtype argument at posDType and
// checks the literal quant_min/quant_max at posMin/posMax against it.
func quantDTypeArg(args []Value, posMin, posMax, posDType int) (tensor.DType, error) {
	d, err := dtypeArg(args, posDType, "dtype")
	if err != nil {
		return d, err
	}
	return d, checkQRange(args, posMin, posMax, d, posDType)
}

// floatInput checks that argument i is a float tensor.
func floatInput(args []Value, i int, name string) (TensorType, error) {
	x, err := tensorArg(args, i, name)
	if err != nil {
		return x, err
	}
	if !x.DType().IsFloat() {
		return x, argErr(i, name, "want a float tensor, got %s", x)
	}
	return x, nil
}

// ruleQuantizePerTensor: quantize_per_tensor.{default,tensor,tensor2}
// (input, scale, zero_point, quant_min, quant_max, dtype) -> dtype[input.shape].
func ruleQuantizePerTensor(args []Value) (Type, error) {
	x, err := floatInput(args, 0, "input")
	if err != nil {
		return nil, err
	}
	for k, name := range []string{"scale", "zero_point"} {
		if t, ok := get(args, 1+k).(TensorType); ok && t.Numel() > 1 {
			return nil, shapeErr(1+k, name, "want one element, got %s", t)
		}
	}
	d, err := quantDTypeArg(args, 3, 4, 5)
	if err != nil {
		return nil, err
	}
	return plainOf(d, x.Shape), nil
}

// ruleDequantizePerTensor: dequantize_per_tensor.* (input, scale, zp,
// quant_min, quant_max, dtype, *, out_dtype?) -> out_dtype or f32.
func ruleDequantizePerTensor(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	d, err := dtypeArg(args, 5, "dtype")
	if err != nil {
		return nil, err
	}
	if x.DType() != d {
		return nil, argErr(0, "input", "want dtype %s (the dtype argument), got %s", d, x)
	}
	if err := checkQRange(args, 3, 4, d, 5); err != nil {
		return nil, err
	}
	out, err := optDTypeArg(args, 6, "out_dtype", tensor.Float32)
	if err != nil {
		return nil, err
	}
	return plainOf(out, x.Shape), nil
}

// ruleChooseQParams: choose_qparams{,_symmetric}.tensor(input, quant_min,
// quant_max, eps, dtype) -> (f64[1] scale, i64[1] zero_point).
func ruleChooseQParams(args []Value) (Type, error) {
	if _, err := floatInput(args, 0, "input"); err != nil {
		return nil, err
	}
	if _, err := quantDTypeArg(args, 1, 2, 4); err != nil {
		return nil, err
	}
	qmin, _ := get(args, 1).(int64)
	qmax, _ := get(args, 2).(int64)
	if qmin > 0 || qmax < 0 {
		return nil, argErr(1, "quant_min", "want quant_min <= 0 <= quant_max, got [%d, %d]", qmin, qmax)
	}
	return tupleOf(plainOf(tensor.Float64, []int64{1}), plainOf(tensor.Int64, []int64{1})), nil
}

// checkChannelParams checks that a per-channel scales/zero_points tensor
// is 1-D with one entry per index along axis.
func checkChannelParams(args []Value, pos int, name string, n int64, optional bool) error {
	var t TensorType
	if optional {
		var ok bool
		var err error
		if t, ok, err = optTensorArg(args, pos, name); err != nil || !ok {
			return err
		}
	} else {
		var err error
		if t, err = tensorArg(args, pos, name); err != nil {
			return err
		}
	}
	if t.Rank() != 1 || (n >= 0 && t.Shape[0] >= 0 && t.Shape[0] != n) {
		return shapeErr(pos, name, "want [%d], got %s", n, t)
	}
	return nil
}

// perChannel checks (input, scales, zero_points, axis, quant_min,
// quant_max, dtype) and returns the input.
func perChannel(args []Value, dequant bool) (TensorType, tensor.DType, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return x, 0, err
	}
	axis, err := intArg(args, 3, "axis")
	if err != nil {
		return x, 0, err
	}
	if axis < 0 || int(axis) >= x.Rank() {
		return x, 0, argErr(3, "axis", "want 0 <= axis < %d (the input's rank), got %d", x.Rank(), axis)
	}
	n := x.Shape[axis]
	if err := checkChannelParams(args, 1, "scales", n, false); err != nil {
		return x, 0, err
	}
	if err := checkChannelParams(args, 2, "zero_points", n, dequant); err != nil {
		return x, 0, err
	}
	d, err := quantDTypeArg(args, 4, 5, 6)
	if err != nil {
		return x, 0, err
	}
	if dequant && x.DType() != d {
		return x, 0, argErr(0, "input", "want dtype %s (the dtype argument), got %s", d, x)
	}
	if !dequant && !x.DType().IsFloat() {
		return x, 0, argErr(0, "input", "want a float tensor, got %s", x)
	}
	return x, d, nil
}

// ruleQuantizePerChannel: quantize_per_channel.default -> dtype[input.shape].
func ruleQuantizePerChannel(args []Value) (Type, error) {
	x, d, err := perChannel(args, false)
	if err != nil {
		return nil, err
	}
	return plainOf(d, x.Shape), nil
}

// ruleDequantizePerChannel: dequantize_per_channel.default -> out_dtype or f32.
func ruleDequantizePerChannel(args []Value) (Type, error) {
	x, _, err := perChannel(args, true)
	if err != nil {
		return nil, err
	}
	out, err := optDTypeArg(args, 7, "out_dtype", tensor.Float32)
	if err != nil {
		return nil, err
	}
	return plainOf(out, x.Shape), nil
}

// ruleChooseQParamsPerToken: choose_qparams_per_token{,_asymmetric}(input,
// dtype) -> (f64[..., 1], i64[..., 1]).
func ruleChooseQParamsPerToken(args []Value) (Type, error) {
	x, err := floatInput(args, 0, "input")
	if err != nil {
		return nil, err
	}
	if _, err := dtypeArg(args, 1, "dtype"); err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return nil, shapeErr(0, "input", "want rank >= 1, got %s", x)
	}
	shape := slices.Clone(x.Shape)
	shape[len(shape)-1] = 1
	return tupleOf(plainOf(tensor.Float64, shape), plainOf(tensor.Int64, shape)), nil
}

// perTokenParams checks scales/zero_points of shape [..., 1] (any shape
// with one entry per token).
func perTokenParams(args []Value, x TensorType, optionalZP bool) error {
	tokens := mulDims(x.Shape[:max(x.Rank()-1, 0)]...)
	for k, name := range []string{"scales", "zero_points"} {
		var t TensorType
		var ok bool
		var err error
		if k == 1 && optionalZP {
			t, ok, err = optTensorArg(args, 1+k, name)
		} else {
			t, err = tensorArg(args, 1+k, name)
			ok = err == nil
		}
		if err != nil {
			return err
		}
		if ok && tokens >= 0 && t.Numel() >= 0 && t.Numel() != tokens {
			return shapeErr(1+k, name, "want %d elements (one per token of %s), got %s", tokens, x, t)
		}
	}
	return nil
}

// ruleQuantizePerToken: quantize_per_token(input, scales, zero_points,
// quant_min, quant_max, dtype) -> dtype[input.shape].
func ruleQuantizePerToken(args []Value) (Type, error) {
	x, err := floatInput(args, 0, "input")
	if err != nil {
		return nil, err
	}
	if err := perTokenParams(args, x, false); err != nil {
		return nil, err
	}
	d, err := quantDTypeArg(args, 3, 4, 5)
	if err != nil {
		return nil, err
	}
	return plainOf(d, x.Shape), nil
}

// ruleDequantizePerToken: dequantize_per_token(..., dtype, output_dtype) -> output_dtype.
func ruleDequantizePerToken(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	if err := perTokenParams(args, x, false); err != nil {
		return nil, err
	}
	if _, err := dtypeArg(args, 5, "dtype"); err != nil {
		return nil, err
	}
	out, err := dtypeArg(args, 6, "output_dtype")
	if err != nil {
		return nil, err
	}
	return plainOf(out, x.Shape), nil
}

// channelGroup checks the 2-D input and group_size of the per-channel-group ops.
func channelGroup(args []Value, posGroup int) (TensorType, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return x, err
	}
	if x.Rank() != 2 {
		return x, shapeErr(0, "input", "want a 2-D tensor, got %s", x)
	}
	g, err := intArg(args, posGroup, "group_size")
	if err != nil {
		return x, err
	}
	if g <= 1 {
		return x, argErr(posGroup, "group_size", "want group_size > 1, got %d", g)
	}
	if k := x.Shape[1]; k >= 0 && g <= k && k%g != 0 {
		return x, argErr(posGroup, "group_size", "%d does not divide the %d columns of %s", g, k, x)
	}
	return x, nil
}

// ruleQuantizePerChannelGroup: (input, scales, zero_points, quant_min,
// quant_max, dtype, group_size) -> dtype[input.shape].
func ruleQuantizePerChannelGroup(args []Value) (Type, error) {
	x, err := channelGroup(args, 6)
	if err != nil {
		return nil, err
	}
	if !x.DType().IsFloat() {
		return nil, argErr(0, "input", "want a float tensor, got %s", x)
	}
	d, err := dtypeArg(args, 5, "dtype")
	if err != nil {
		return nil, err
	}
	return plainOf(d, x.Shape), nil
}

// ruleDequantizePerChannelGroup: (..., dtype, group_size, output_dtype) -> output_dtype.
func ruleDequantizePerChannelGroup(args []Value) (Type, error) {
	x, err := channelGroup(args, 6)
	if err != nil {
		return nil, err
	}
	out, err := dtypeArg(args, 7, "output_dtype")
	if err != nil {
		return nil, err
	}
	return plainOf(out, x.Shape), nil
}

// ruleFakeQuantPerChannel: the input's shape and dtype.
func ruleFakeQuantPerChannel(args []Value) (Type, error) {
	x, err := floatInput(args, 0, "input")
	if err != nil {
		return nil, err
	}
	axis, err := intArg(args, 3, "axis")
	if err != nil {
		return nil, err
	}
	if axis < 0 || int(axis) >= x.Rank() {
		return nil, argErr(3, "axis", "want 0 <= axis < %d, got %d", x.Rank(), axis)
	}
	return plainOf(x.DType(), x.Shape), nil
}

// ruleConvertElementType: convert_element_type.no_fuse(input, dtype).
func ruleConvertElementType(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	d, err := dtypeArg(args, 1, "dtype")
	if err != nil {
		return nil, err
	}
	return plainOf(d, x.Shape), nil
}

// blockReduction applies get_reduction_params (torchao-pt2e.md 1.3) and
// returns the qparam shape for keepdim false and true.
func blockReduction(x TensorType, block []int64, pos int) (noKeep, keep []int64, err error) {
	if len(block) != x.Rank() {
		return nil, nil, argErr(pos, "block_size", "want %d entries (the input's rank), got %v", x.Rank(), block)
	}
	noKeep, keep = []int64{}, []int64{}
	for i, b := range block {
		n := x.Shape[i]
		if b <= 0 {
			return nil, nil, argErr(pos, "block_size", "entry %d is %d, want a positive size", i, b)
		}
		switch {
		case n < 0:
			noKeep = append(noKeep, DynamicDim)
			keep = append(keep, DynamicDim)
		case b != n && b > 1:
			if n%b != 0 {
				return nil, nil, argErr(pos, "block_size", "entry %d (%d) does not divide dimension size %d", i, b, n)
			}
			noKeep = append(noKeep, n/b)
			keep = append(keep, n/b)
		case b != 1:
			keep = append(keep, 1) // b == n > 1: reduced whole
		default:
			noKeep = append(noKeep, n)
			keep = append(keep, n)
		}
	}
	return noKeep, keep, nil
}

// checkAffineParams checks the scale/zero_point of an affine op hold one
// value per block.
func checkAffineParams(args []Value, x TensorType, block []int64, posBlock int, zpOptional bool) error {
	noKeep, _, err := blockReduction(x, block, posBlock)
	if err != nil {
		return err
	}
	want := mulDims(noKeep...)
	for k, name := range []string{"scale", "zero_point"} {
		pos := 2 + k
		t, ok, err := optTensorArg(args, pos, name)
		if err != nil {
			return err
		}
		if !ok {
			if k == 0 || !zpOptional {
				return argErr(pos, name, "want a tensor, got None")
			}
			continue
		}
		if n := t.Numel(); want >= 0 && n >= 0 && n != want {
			return shapeErr(pos, name, "want %d elements (one per block %v of %s), got %s", want, block, x, t)
		}
	}
	return nil
}

// affineBlockArgs reads quantize_affine's and dequantize_affine's
// block_size (argument 1) and checks their scale and optional zero_point
// against it.
func affineBlockArgs(args []Value, x TensorType) error {
	block, err := intsArg(args, 1, "block_size")
	if err != nil {
		return err
	}
	return checkAffineParams(args, x, block, 1, true)
}

// ruleQuantizeAffine: torchao.quantize_affine(input, block_size, scale,
// zero_point?, output_dtype, quant_min?, quant_max?) -> output_dtype[input.shape].
func ruleQuantizeAffine(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	if d := x.DType(); d != tensor.Float32 && d != tensor.Float16 && d != tensor.BFloat16 {
		return nil, argErr(0, "input", "want float32, float16 or bfloat16, got %s", x)
	}
	if err := affineBlockArgs(args, x); err != nil {
		return nil, err
	}
	d, err := dtypeArg(args, 4, "output_dtype")
	if err != nil {
		return nil, err
	}
	return plainOf(d, x.Shape), nil
}

// ruleDequantizeAffine: torchao.dequantize_affine(input, block_size, scale,
// zero_point?, input_dtype, quant_min?, quant_max?, output_dtype=float32).
func ruleDequantizeAffine(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	if err := affineBlockArgs(args, x); err != nil {
		return nil, err
	}
	in, err := dtypeArg(args, 4, "input_dtype")
	if err != nil {
		return nil, err
	}
	if x.DType() != in.Storage() {
		return nil, argErr(0, "input", "want dtype %s (the input_dtype argument), got %s", in, x)
	}
	out, err := optDTypeArg(args, 7, "output_dtype", tensor.Float32)
	if err != nil {
		return nil, err
	}
	if out != tensor.Float32 && out != tensor.Float16 && out != tensor.BFloat16 {
		return nil, argErr(7, "output_dtype", "want float32, float16 or bfloat16, got %s", out)
	}
	return plainOf(out, x.Shape), nil
}

// ruleChooseQParamsAffine: torchao.choose_qparams_affine(input?,
// mapping_type, block_size, target_dtype, quant_min?, quant_max?, eps?,
// scale_dtype?, zero_point_dtype?, keepdim) -> (scale, zero_point).
// scale_dtype defaults to the input's dtype; zero_point_dtype to int32 for
// ASYMMETRIC and to the scale's dtype for the symmetric mappings.
func ruleChooseQParamsAffine(args []Value) (Type, error) {
	x, err := floatInput(args, 0, "input")
	if err != nil {
		return nil, err
	}
	mapping, err := stringArg(args, 1, "mapping_type")
	if err != nil {
		return nil, err
	}
	switch mapping {
	case "SYMMETRIC", "SYMMETRIC_NO_CLIPPING_ERR", "ASYMMETRIC":
	default:
		return nil, argErr(1, "mapping_type", "want SYMMETRIC, SYMMETRIC_NO_CLIPPING_ERR or ASYMMETRIC, got %q", mapping)
	}
	block, err := intsArg(args, 2, "block_size")
	if err != nil {
		return nil, err
	}
	noKeep, keep, err := blockReduction(x, block, 2)
	if err != nil {
		return nil, err
	}
	if _, err := dtypeArg(args, 3, "target_dtype"); err != nil {
		return nil, err
	}
	sd, err := optDTypeArg(args, 7, "scale_dtype", x.DType())
	if err != nil {
		return nil, err
	}
	zdef := sd
	if mapping == "ASYMMETRIC" {
		zdef = tensor.Int32
	}
	zd, err := optDTypeArg(args, 8, "zero_point_dtype", zdef)
	if err != nil {
		return nil, err
	}
	kd, err := boolArg(args, 9, "keepdim")
	if err != nil {
		return nil, err
	}
	shape := noKeep
	if kd {
		shape = keep
	}
	return tupleOf(plainOf(sd, shape), plainOf(zd, shape)), nil
}

// ruleReferenceDQLinearInt4: torchao.reference_dqlinear_int4(x_fp32 [..., K],
// x_eps, weight_i4 [N, K], weight_scale, weight_zero_point, bias_fp32?,
// group_size) -> f32[..., N].
func ruleReferenceDQLinearInt4(args []Value) (Type, error) {
	x, err := floatInput(args, 0, "x_fp32")
	if err != nil {
		return nil, err
	}
	w, err := tensorArg(args, 2, "weight_i4")
	if err != nil {
		return nil, err
	}
	if w.Rank() != 2 {
		return nil, shapeErr(2, "weight_i4", "want [out_features, in_features], got %s", w)
	}
	if x.Rank() < 1 {
		return nil, shapeErr(0, "x_fp32", "want rank >= 1, got %s", x)
	}
	k := x.Shape[x.Rank()-1]
	if k >= 0 && w.Shape[1] >= 0 && k != w.Shape[1] {
		return nil, shapeErr(2, "weight_i4", "want [*, %d] to match x_fp32 %s, got %s", k, x, w)
	}
	if _, err := intsArg(args, 6, "group_size"); err != nil {
		return nil, err
	}
	shape := append(slices.Clone(x.Shape[:x.Rank()-1]), w.Shape[0])
	return plainOf(tensor.Float32, shape), nil
}

// ruleOutDType: higher_order.out_dtype(op, out_dtype, *args): the wrapped
// op's result shape with the dtype out_dtype. The wrapped op's arguments
// follow the two schema arguments; the rule needs them (and op as an
// [Overload] of the default registry) to compute the shape.
func ruleOutDType(args []Value) (Type, error) {
	d, err := dtypeArg(args, 1, "out_dtype")
	if err != nil {
		return nil, err
	}
	op, ok := outDTypeOp(get(args, 0))
	if !ok {
		return nil, argErr(0, "op", "want an op overload such as aten.linear.default, got %s", describe(get(args, 0)))
	}
	def, ok := Default().Op(op)
	if !ok || def.Result == nil {
		return nil, argErr(0, "op", "%s has no result-type rule", op)
	}
	if len(args) <= 2 {
		return nil, argErr(2, "args", "the arguments of %s were not passed", op)
	}
	inner, err := def.Schema.Normalize(args[2:], nil)
	if err != nil {
		return nil, argErr(2, "args", "%v", err)
	}
	t, err := def.Result(inner)
	if err != nil {
		return nil, argErr(2, "args", "%s: %v", op, err)
	}
	tt, ok := t.(TensorType)
	if !ok {
		return nil, argErr(0, "op", "%s returns %s, want one tensor", op, t)
	}
	return plainOf(d, tt.Shape), nil
}
