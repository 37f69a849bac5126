package kernels

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file implements the quantized_decomposed ops of torchao-pt2e.md
// section 1.2, following pytorch/pytorch:torch/ao/quantization/fx/_decomposed.py.
//
// Special values, for every quantize kernel here: +inf and values far above
// the range clamp to quant_max, -inf and far below to quant_min (the clamp
// happens in float, so nothing overflows); -0.0 quantizes like +0.0 (to the
// zero point); NaN, whose float->int cast is undefined behaviour in
// PyTorch, becomes 0 (not clamped). Dequantize kernels are exact integer to
// float maps and never see NaN.

// QuantizePerTensor is quantized_decomposed.quantize_per_tensor.default:
//
//	inv = float32(1.0 / scale)                       // Python float division
//	q = clamp(round_half_even(x * inv) + float32(zero_point), quant_min, quant_max)
//
// all in float32, then cast to dtype. float16 and bfloat16 inputs are
// widened to float32 first; other input dtypes are an error, as are bounds
// outside dtype's range. scale 0 gives inv = +inf (no error, as in PyTorch).
//
// NaN quantizes to 0 (neither clamped nor the zero point; PyTorch's cast is
// undefined there), +inf and -inf clamp to quant_max and quant_min, and
// -0.0 quantizes like +0.0, to the zero point.
func QuantizePerTensor(x *tensor.Tensor, scale float64, zeroPoint, quantMin, quantMax int64, dtype tensor.DType) (*tensor.Tensor, error) {
	if err := qCheckRange(dtype, quantMin, quantMax); err != nil {
		return nil, err
	}
	in, err := qFloatInput("input", x, false)
	if err != nil {
		return nil, err
	}
	lay, err := newQLayout(x.Shape(), x.Shape())
	if err != nil {
		return nil, err
	}
	q := &qQuant{lay: lay, inv: []float64{float64(float32(1.0 / scale))}, zp: []float64{float64(float32(zeroPoint))}, lo: quantMin, hi: quantMax}
	return q.run(in, x.Shape(), dtype)
}

// ScalarParams reads the one-element scale and zero_point tensors of the
// .tensor overloads as scale.item() (a float64) and zero_point.item() (an
// int64; a float zero point is truncated toward zero, as int() does).
func ScalarParams(scale, zeroPoint *tensor.Tensor) (float64, int64, error) {
	s, err := qItemFloat("scale", scale)
	if err != nil {
		return 0, 0, err
	}
	z, err := qItemInt("zero_point", zeroPoint)
	if err != nil {
		return 0, 0, err
	}
	return s, z, nil
}

func qItemFloat(name string, t *tensor.Tensor) (float64, error) {
	if t == nil {
		return 0, argErrf("argument %q: want a one-element tensor, got None", name)
	}
	if t.Numel() != 1 {
		return 0, shapeErrf("argument %q: want exactly one element, got shape %v", name, t.Shape())
	}
	v, err := t.Float64s()
	if err != nil {
		return 0, fmt.Errorf("argument %q: %w", name, err)
	}
	return v[0], nil
}

func qItemInt(name string, t *tensor.Tensor) (int64, error) {
	if t != nil && t.Numel() == 1 && (t.DType().IsInteger() || t.DType() == tensor.Bool) {
		v, err := t.Int64s()
		if err != nil {
			return 0, fmt.Errorf("argument %q: %w", name, err)
		}
		return v[0], nil
	}
	f, err := qItemFloat(name, t)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, argErrf("argument %q: want a finite value, got %g", name, f)
	}
	return int64(f), nil
}

// DequantizePerTensor is quantized_decomposed.dequantize_per_tensor.default:
// (fp(q) - zero_point) * scale with fp = outDType (Unknown means float32),
// each step in fp: float32(scale) for float32 output, the float64 values for
// float64; for float16/bfloat16 outputs each step is computed in float32 and
// rounded to the output type, as PyTorch's CPU kernels do. q's dtype must
// equal dtype; quant_min/quant_max are only checked against dtype.
//
// The integer input holds no NaN, infinity or -0.0: q equal to the zero
// point gives +0.0, and NaN or ±inf appear only through a non-finite
// scale (0·inf is NaN for q at the zero point).
func DequantizePerTensor(q *tensor.Tensor, scale float64, zeroPoint, quantMin, quantMax int64, dtype, outDType tensor.DType) (*tensor.Tensor, error) {
	if q == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "input")
	}
	if q.DType() != dtype {
		return nil, dtypeErr("input", q.DType(), fmt.Sprintf("dtype %s (the dtype argument)", dtype))
	}
	if err := qCheckRange(dtype, quantMin, quantMax); err != nil {
		return nil, err
	}
	if outDType == tensor.Unknown {
		outDType = tensor.Float32
	}
	lay, err := newQLayout(q.Shape(), q.Shape())
	if err != nil {
		return nil, err
	}
	switch outDType {
	case tensor.Float32, tensor.Float64:
		f64 := outDType == tensor.Float64
		s := scale
		if !f64 {
			s = float64(float32(scale))
		}
		d := &qDequant{lay: lay, scale: []float64{s}, zp: []float64{float64(zeroPoint)}, f64: f64}
		return d.run(q, outDType)
	case tensor.Float16, tensor.BFloat16:
		vals, err := q.Float64s()
		if err != nil {
			return nil, err
		}
		rnd := qHalfRounder(outDType)
		z, s := float32(zeroPoint), float32(scale)
		r := make([]float32, len(vals))
		for i, v := range vals {
			r[i] = rnd(rnd(rnd(float32(v))-z) * s)
		}
		return qFloatResult(outDType, q.Shape(), r, nil)
	}
	return nil, fmt.Errorf("%w: argument %q: want float32, float64, float16 or bfloat16, got %s", ErrUnsupportedDType, "out_dtype", outDType)
}

// qHalfRounder returns the float32 -> float16/bfloat16 -> float32 rounding.
func qHalfRounder(d tensor.DType) func(float32) float32 {
	switch d {
	case tensor.Float16:
		return func(f float32) float32 { return tensor.Float16ToFloat32(tensor.Float32ToFloat16(f)) }
	case tensor.BFloat16:
		return tensor.RoundBFloat16
	}
	return func(f float32) float32 { return f }
}

// qMinMax returns min and max of xs, propagating NaN like torch.aminmax.
// For an empty slice it returns +inf, -inf.
func qMinMax(xs []float32) (float32, float32) {
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, v := range xs {
		if v != v {
			return v, v
		}
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// DetermineQParams is determine_qparams for one (min, max) pair in float32
// (the dtype of min/max), as choose_qparams(.tensor) uses it:
//
//	min_neg = min(min, 0), max_pos = max(max, 0)
//	symmetric: scale = max(max(-min_neg, max_pos) / ((qmax - qmin) / 2), eps),
//	           zp = 128 for uint8 (the midpoint for a customised range), else 0
//	affine:    scale = max((max_pos - min_neg) / (qmax - qmin), eps),
//	           zp = clamp(qmin - round_half_even(min_neg / scale), qmin, qmax)
//
// NaN in min or max propagates into the scale (max with eps keeps NaN, as
// torch.max does) and the zero point becomes 0 before clamping.
func DetermineQParams(minV, maxV float32, quantMin, quantMax int64, dtype tensor.DType, eps float32, symmetric, customizedRange bool) (float32, int64) {
	minNeg := qMinNaN(minV, 0)
	maxPos := qMaxNaN(maxV, 0)
	if symmetric {
		amax := qMaxNaN(-minNeg, maxPos)
		scale := amax / float32(float64(quantMax-quantMin)/2)
		scale = qMaxNaN(scale, eps)
		var zp int64
		if dtype == tensor.UInt8 {
			if customizedRange {
				zp = (quantMin + quantMax) / 2
			} else {
				zp = 128
			}
		}
		return scale, zp
	}
	scale := (maxPos - minNeg) / float32(quantMax-quantMin)
	scale = qMaxNaN(scale, eps)
	r := float32(math.RoundToEven(float64(minNeg / scale)))
	zf := float32(quantMin) - r
	return scale, qClampIntF(zf, quantMin, quantMax)
}

// qMinNaN and qMaxNaN are torch.min/torch.max of two values: NaN wins.
func qMinNaN(a, b float32) float32 {
	if a != a || a < b {
		return a
	}
	return b
}

func qMaxNaN(a, b float32) float32 {
	if a != a || a > b {
		return a
	}
	return b
}

// qClampIntF clamps a float zero point to [lo, hi] and converts it (NaN -> 0
// before clamping).
func qClampIntF(v float32, lo, hi int64) int64 {
	if v != v {
		v = 0
	}
	if v < float32(lo) {
		return lo
	}
	if v > float32(hi) {
		return hi
	}
	return int64(v)
}

// ChooseQParams is quantized_decomposed.choose_qparams.tensor (symmetric
// false) and choose_qparams_symmetric.tensor (symmetric true): min/max over
// the whole input in float32, then [DetermineQParams] with eps rounded to
// float32. It returns scale as float64 [1] and zero_point as int64 [1]. It
// requires quant_min <= 0 <= quant_max and quant_min < quant_max. An empty
// input gives scale 1, zero point 0 (PyTorch warns). NaN inputs give a NaN
// scale.
//
// A NaN in the input makes the scale NaN and the zero point 0. An infinite
// min or max makes the scale +inf, and the zero point is whatever the
// formula then gives (not meaningful). -0.0 counts as 0.
func ChooseQParams(x *tensor.Tensor, quantMin, quantMax int64, eps float64, dtype tensor.DType, symmetric bool) (*tensor.Tensor, *tensor.Tensor, error) {
	if err := qCheckRange(dtype, quantMin, quantMax); err != nil {
		return nil, nil, err
	}
	if !(quantMin <= 0 && 0 <= quantMax && quantMin < quantMax) {
		return nil, nil, argErrf("quant_min, quant_max = %d, %d: want quant_min <= 0 <= quant_max and quant_min < quant_max", quantMin, quantMax)
	}
	in, err := qFloatInput("input", x, false)
	if err != nil {
		return nil, nil, err
	}
	var scale float64
	var zp int64
	if in.len() == 0 {
		scale, zp = 1, 0
	} else {
		lo, hi := qMinMax(in.f32)
		s, z := DetermineQParams(lo, hi, quantMin, quantMax, dtype, float32(eps), symmetric, false)
		scale, zp = float64(s), z
	}
	st := tensor.MustFromData(tensor.Float64, []int{1}, []float64{scale})
	zt := tensor.MustFromData(tensor.Int64, []int{1}, []int64{zp})
	return st, zt, nil
}

// qAxis checks a per-channel axis against the input rank (axis < ndim;
// negative axes count from the end).
func qAxis(axis int64, rank int) (int, error) {
	if rank == 0 {
		return 0, argErrf("argument %q: per-channel ops need an input with at least one dimension", "axis")
	}
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, argErrf("argument %q: want an axis in %d..%d for a %d-dim input, got %d", "axis", -rank, rank-1, rank, axis)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// qReciprocals returns 1/s per scale computed in the scale dtype: float32
// unless f64.
func qReciprocals(scales []float64, f64 bool) []float64 {
	inv := make([]float64, len(scales))
	for i, s := range scales {
		if f64 {
			inv[i] = 1 / s
		} else {
			inv[i] = float64(float32(1) / float32(s))
		}
	}
	return inv
}

// qZPAs rounds zero points to the compute type (float32 unless f64).
func qZPAs(zp []float64, f64 bool) []float64 {
	out := make([]float64, len(zp))
	for i, z := range zp {
		if f64 {
			out[i] = z
		} else {
			out[i] = float64(float32(z))
		}
	}
	return out
}

// QuantizePerChannel is quantized_decomposed.quantize_per_channel.default:
// per slice along axis, clamp(round_half_even(x * (1 / scales)) + zero_points,
// quant_min, quant_max), where 1/scales is a reciprocal in the scales' dtype
// (float32 for float32 scales) and the product is in float32, or float64
// when the scales are float64 (PyTorch's type promotion). Special values as
// for [QuantizePerTensor].
//
// NaN quantizes to 0 (neither clamped nor the zero point; PyTorch's cast is
// undefined there), +inf and -inf clamp to quant_max and quant_min, and
// -0.0 quantizes like +0.0, to the zero point.
func QuantizePerChannel(x, scales, zeroPoints *tensor.Tensor, axis, quantMin, quantMax int64, dtype tensor.DType) (*tensor.Tensor, error) {
	if err := qCheckRange(dtype, quantMin, quantMax); err != nil {
		return nil, err
	}
	in, err := qFloatInput("input", x, false)
	if err != nil {
		return nil, err
	}
	ax, err := qAxis(axis, x.Dim())
	if err != nil {
		return nil, err
	}
	return qQuantizeBlocks(in, x.Shape(), qBlockPerAxis(x.Shape(), ax), scales, zeroPoints, quantMin, quantMax, dtype, false, false)
}

// qQuantizeBlocks is the shared body of the per-channel, per-token,
// per-group and affine quantize ops.
func qQuantizeBlocks(in qfloats, shape, block []int, scales, zeroPoints *tensor.Tensor, quantMin, quantMax int64, dtype tensor.DType, zpBefore, allowNilZP bool) (*tensor.Tensor, error) {
	p, err := readQBlockScales(shape, block, scales, "scales")
	if err != nil {
		return nil, err
	}
	lay, s, s64 := p.lay, p.scale, p.scale64
	var zp []float64
	if zeroPoints == nil {
		if !allowNilZP {
			return nil, argErrf("argument %q: want a tensor, got None", "zero_points")
		}
		zp = make([]float64, lay.n)
	} else {
		var zint bool
		zp, zint, err = qZeroPoints("zero_points", zeroPoints)
		if err != nil {
			return nil, err
		}
		if err := qCheckNumel("zero_points", len(zp), lay); err != nil {
			return nil, err
		}
		if !zint && zeroPoints.DType() == tensor.Float64 {
			s64 = true
		}
	}
	f64 := s64 || in.f64 != nil
	inv := qReciprocals(s, s64)
	q := &qQuant{lay: lay, inv: inv, zp: qZPAs(zp, f64), f64: f64, zpBefore: zpBefore, lo: quantMin, hi: quantMax}
	return q.run(in, shape, dtype)
}

// DequantizePerChannel is quantized_decomposed.dequantize_per_channel.default:
// per slice along axis, (q - zero_points) * scales, the subtraction in
// integers (x * scales when zero_points is nil), the product in the scales'
// dtype, then cast to outDType (Unknown means float32). q's dtype must
// equal dtype.
//
// The integer input holds no NaN, infinity or -0.0: q equal to the zero
// point gives +0.0, and NaN or ±inf appear only through a non-finite
// scale (0·inf is NaN for q at the zero point).
func DequantizePerChannel(q, scales, zeroPoints *tensor.Tensor, axis, quantMin, quantMax int64, dtype, outDType tensor.DType) (*tensor.Tensor, error) {
	if q == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "input")
	}
	if q.DType() != dtype {
		return nil, dtypeErr("input", q.DType(), fmt.Sprintf("dtype %s (the dtype argument)", dtype))
	}
	if err := qCheckRange(dtype, quantMin, quantMax); err != nil {
		return nil, err
	}
	ax, err := qAxis(axis, q.Dim())
	if err != nil {
		return nil, err
	}
	return qDequantizeBlocks(q, qBlockPerAxis(q.Shape(), ax), scales, zeroPoints, outDType)
}

// qDequantizeBlocks is (q - zp) * scale per block with PyTorch promotion:
// integer zero points subtract exactly, float ones in their dtype; the
// product is in float64 if the scales or zero points are float64.
func qDequantizeBlocks(q *tensor.Tensor, block []int, scales, zeroPoints *tensor.Tensor, outDType tensor.DType) (*tensor.Tensor, error) {
	if outDType == tensor.Unknown {
		outDType = tensor.Float32
	}
	p, err := readQBlockParams(q.Shape(), block, scales, zeroPoints, "scales", "zero_points")
	if err != nil {
		return nil, err
	}
	lay, s, s64, zp, zint := p.lay, p.scale, p.scale64, p.zp, p.zpInt
	f64 := s64 || (zeroPoints != nil && zeroPoints.DType() == tensor.Float64)
	if !f64 {
		for i := range s {
			s[i] = float64(float32(s[i]))
		}
		if !zint {
			zp = qZPAs(zp, false)
		}
	}
	d := &qDequant{lay: lay, scale: s, zp: zp, intDiff: zint, f64: f64}
	return d.run(q, outDType)
}

// ChooseQParamsPerTokenAsymmetric is
// quantized_decomposed.choose_qparams_per_token_asymmetric (XNNPACK's
// formula), per row of the last dimension, in float32:
//
//	min_neg = min(amin(row), 0), max_pos = max(amax(row), 0)
//	scale = max((max_pos - min_neg) / 255, float32 eps)
//	dmin = min_neg / scale, dmax = max_pos / scale
//	zp = (-128 - dmin) if (-128 + dmin) + (127 + dmax) > 0 else (127 - dmax)
//	zp = round_half_even(clamp(zp, -128, 127))
//
// It returns scale as float64 [..., 1] and zp as int64 [..., 1]. dtype is
// not used by PyTorch beyond the schema. NaN rows give a NaN scale and
// zero point 0.
//
// A NaN in the input makes the scale NaN and the zero point 0. An infinite
// min or max makes the scale +inf, and the zero point is whatever the
// formula then gives (not meaningful). -0.0 counts as 0.
func ChooseQParamsPerTokenAsymmetric(x *tensor.Tensor, dtype tensor.DType) (*tensor.Tensor, *tensor.Tensor, error) {
	in, err := qFloatInput("input", x, false)
	if err != nil {
		return nil, nil, err
	}
	rows, k, outShape, err := qTokenRows(x)
	if err != nil {
		return nil, nil, err
	}
	const qmin, qmax = -128, 127
	eps := float32(math.Nextafter32(1, 2) - 1)
	scales := make([]float64, rows)
	zps := make([]int64, rows)
	for r := 0; r < rows; r++ {
		lo, hi := qMinMax(in.f32[r*k : (r+1)*k])
		minNeg, maxPos := qMinNaN(lo, 0), qMaxNaN(hi, 0)
		scale := (maxPos - minNeg) / float32(qmax-qmin)
		scale = qMaxNaN(scale, eps)
		dmin := minNeg / scale
		dmax := maxPos / scale
		var zp float32
		if float32(qmin+dmin)+float32(qmax+dmax) > 0 {
			zp = qmin - dmin
		} else {
			zp = qmax - dmax
		}
		if zp != zp {
			zp = 0
		}
		zp = min(max(zp, qmin), qmax)
		zps[r] = int64(math.RoundToEven(float64(zp)))
		scales[r] = float64(scale)
	}
	return tensor.MustFromData(tensor.Float64, outShape, scales), tensor.MustFromData(tensor.Int64, outShape, zps), nil
}

// qTokenRows splits x into rows of its last dimension and returns the
// qparam shape [..., 1].
func qTokenRows(x *tensor.Tensor) (rows, k int, qshape []int, err error) {
	if x.Dim() == 0 {
		return 0, 0, nil, shapeErrf("argument %q: per-token ops need at least one dimension, got a 0-dim tensor", "input")
	}
	shape := x.Shape()
	k = shape[len(shape)-1]
	if k == 0 {
		return 0, 0, nil, shapeErrf("argument %q: per-token ops need a non-empty last dimension, got shape %v", "input", shape)
	}
	rows = x.Numel() / k
	qshape = append(shape[:len(shape)-1:len(shape)-1], 1)
	return rows, k, qshape, nil
}

// ChooseQParamsPerToken is quantized_decomposed.choose_qparams_per_token:
// scale = max(amax(|row|), 1e-5) / 127 per row of the last dimension,
// computed in float32 (float16 inputs are widened; bfloat16 inputs give
// bfloat16 scales), and zero points of zeros with the scale's dtype, both
// [..., 1]. Only dtype int8 is accepted. NaN rows give NaN scales.
//
// A NaN in the input makes the scale NaN and the zero point 0. An infinite
// min or max makes the scale +inf, and the zero point is whatever the
// formula then gives (not meaningful). -0.0 counts as 0.
func ChooseQParamsPerToken(x *tensor.Tensor, dtype tensor.DType) (*tensor.Tensor, *tensor.Tensor, error) {
	if dtype != tensor.Int8 {
		return nil, nil, argErrf("argument %q: choose_qparams_per_token supports only int8, got %s", "dtype", dtype)
	}
	in, err := qFloatInput("input", x, false)
	if err != nil {
		return nil, nil, err
	}
	rows, k, outShape, err := qTokenRows(x)
	if err != nil {
		return nil, nil, err
	}
	out := make([]float32, rows)
	for r := 0; r < rows; r++ {
		m := float32(0)
		for _, v := range in.f32[r*k : (r+1)*k] {
			a := float32(math.Abs(float64(v)))
			m = qMaxNaN(a, m)
		}
		m = qMaxNaN(m, float32(1e-5))
		out[r] = m / 127
	}
	outDType := tensor.Float32
	if x.DType() == tensor.BFloat16 {
		outDType = tensor.BFloat16
	}
	st, err := qFloatResult(outDType, outShape, out, nil)
	if err != nil {
		return nil, nil, err
	}
	zt, _ := qOutput(outDType, outShape)
	return st, zt, nil
}

// QuantizePerToken is quantized_decomposed.quantize_per_token: per row of
// the last dimension, clamp(round_half_even(x * (1 / scales) + zero_points),
// quant_min, quant_max); the zero point is added before rounding. The
// arithmetic is in float64 when the scales are float64 (what
// choose_qparams_per_token_asymmetric returns), else in float32. scales and
// zero_points need one value per row.
//
// NaN quantizes to 0 (neither clamped nor the zero point; PyTorch's cast is
// undefined there), +inf and -inf clamp to quant_max and quant_min, and
// -0.0 quantizes like +0.0, to the zero point.
func QuantizePerToken(x, scales, zeroPoints *tensor.Tensor, quantMin, quantMax int64, dtype tensor.DType) (*tensor.Tensor, error) {
	if err := qCheckRange(dtype, quantMin, quantMax); err != nil {
		return nil, err
	}
	in, err := qFloatInput("input", x, true)
	if err != nil {
		return nil, err
	}
	if x.Dim() == 0 {
		return nil, shapeErrf("argument %q: per-token ops need at least one dimension, got a 0-dim tensor", "input")
	}
	return qQuantizeBlocks(in, x.Shape(), qBlockLastDim(x.Shape(), x.Size(-1)), scales, zeroPoints, quantMin, quantMax, dtype, true, false)
}

// DequantizePerToken is quantized_decomposed.dequantize_per_token:
// ((q - zero_points) * scales).to(outDType) per row of the last dimension,
// the subtraction in integers for integer zero points and the product in
// the scales' dtype (float64 for the asymmetric per-token qparams).
//
// The integer input holds no NaN, infinity or -0.0: q equal to the zero
// point gives +0.0, and NaN or ±inf appear only through a non-finite
// scale (0·inf is NaN for q at the zero point).
func DequantizePerToken(q, scales, zeroPoints *tensor.Tensor, quantMin, quantMax int64, dtype, outDType tensor.DType) (*tensor.Tensor, error) {
	if q == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "input")
	}
	if q.Dim() == 0 {
		return nil, shapeErrf("argument %q: per-token ops need at least one dimension, got a 0-dim tensor", "input")
	}
	if zeroPoints == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "zero_points")
	}
	return qDequantizeBlocks(q, qBlockLastDim(q.Shape(), q.Size(-1)), scales, zeroPoints, outDType)
}

// qGroupSize applies the per_channel_group rules: a 2-D input, group_size
// > 1, group_size > K with a [.., 1] scale means K, and K % group_size == 0.
func qGroupSize(x *tensor.Tensor, scales *tensor.Tensor, groupSize int64) (int, error) {
	if x.Dim() != 2 {
		return 0, shapeErrf("argument %q: per-channel-group ops need a 2-D input, got shape %v", "input", x.Shape())
	}
	if groupSize <= 1 {
		return 0, argErrf("argument %q: want group_size > 1, got %d", "group_size", groupSize)
	}
	k := int64(x.Size(1))
	if groupSize > k && scales != nil && scales.Dim() > 0 && scales.Size(-1) == 1 {
		groupSize = k
	}
	if k == 0 || k%groupSize != 0 {
		return 0, argErrf("argument %q: group_size %d must divide the last dimension %d", "group_size", groupSize, k)
	}
	return int(groupSize), nil
}

// QuantizePerChannelGroup is quantized_decomposed.quantize_per_channel_group:
// for a 2-D input viewed as groups of group_size along each row,
// clamp(round_half_even(x * (1 / scales) + zero_points), quant_min,
// quant_max) with the zero point added before rounding; the reciprocal is in
// the scales' dtype. Like PyTorch, a NaN input is an error.
//
// NaN quantizes to 0 (neither clamped nor the zero point; PyTorch's cast is
// undefined there), +inf and -inf clamp to quant_max and quant_min, and
// -0.0 quantizes like +0.0, to the zero point.
func QuantizePerChannelGroup(x, scales, zeroPoints *tensor.Tensor, quantMin, quantMax int64, dtype tensor.DType, groupSize int64) (*tensor.Tensor, error) {
	if err := qCheckRange(dtype, quantMin, quantMax); err != nil {
		return nil, err
	}
	in, err := qFloatInput("input", x, true)
	if err != nil {
		return nil, err
	}
	gs, err := qGroupSize(x, scales, groupSize)
	if err != nil {
		return nil, err
	}
	for i, v := range in.as64() {
		if v != v {
			return nil, argErrf("argument %q: NaN at flat index %d: quantize_per_channel_group rejects NaN", "input", i)
		}
	}
	return qQuantizeBlocks(in, x.Shape(), []int{1, gs}, scales, zeroPoints, quantMin, quantMax, dtype, true, false)
}

// DequantizePerChannelGroup is quantized_decomposed.dequantize_per_channel_group:
// (q - zero_points) * scales per group (zero points nil count as 0; integer
// zero points subtract exactly), cast to outDType (Unknown means float32).
//
// The integer input holds no NaN, infinity or -0.0: q equal to the zero
// point gives +0.0, and NaN or ±inf appear only through a non-finite
// scale (0·inf is NaN for q at the zero point).
func DequantizePerChannelGroup(q, scales, zeroPoints *tensor.Tensor, quantMin, quantMax int64, dtype tensor.DType, groupSize int64, outDType tensor.DType) (*tensor.Tensor, error) {
	if q == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "input")
	}
	gs, err := qGroupSize(q, scales, groupSize)
	if err != nil {
		return nil, err
	}
	return qDequantizeBlocks(q, []int{1, gs}, scales, zeroPoints, outDType)
}

// FakeQuantPerChannel is quantized_decomposed.fake_quant_per_channel (the
// forward): with scales cast to float32 and zero points to int32,
//
//	t = round_half_even(x * (1 / scales)) + zero_points
//	out = (clamp(t, quant_min, quant_max) - zero_points) * scales
//
// all in float32, per slice along axis. The input must be float32. NaN stays
// NaN; +-inf saturate to the range ends.
func FakeQuantPerChannel(x, scales, zeroPoints *tensor.Tensor, axis, quantMin, quantMax int64) (*tensor.Tensor, error) {
	if x == nil || x.DType() != tensor.Float32 {
		if x == nil {
			return nil, argErrf("argument %q: want a float32 tensor, got None", "input")
		}
		return nil, dtypeErr("input", x.DType(), "float32")
	}
	if quantMin > quantMax {
		return nil, argErrf("quant_min %d is greater than quant_max %d", quantMin, quantMax)
	}
	ax, err := qAxis(axis, x.Dim())
	if err != nil {
		return nil, err
	}
	p, err := readQBlockScales(x.Shape(), qBlockPerAxis(x.Shape(), ax), scales, "scales")
	if err != nil {
		return nil, err
	}
	lay, s := p.lay, p.scale
	zp, err := qParamInts("zero_points", zeroPoints)
	if err != nil {
		// float zero points are cast to int32 (truncation)
		zf, _, ferr := qZeroPoints("zero_points", zeroPoints)
		if ferr != nil || zf == nil {
			return nil, err
		}
		zp = make([]int64, len(zf))
		for i, v := range zf {
			zp[i] = castFloatToInt(v, tensor.Int32)
		}
	}
	if err := qCheckNumel("zero_points", len(zp), lay); err != nil {
		return nil, err
	}
	src, err := tensor.Data[float32](x)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(src))
	lo, hi := float32(quantMin), float32(quantMax)
	lay.chunks(func(a, b, k int) {
		sc := float32(s[k])
		inv := float32(1) / sc
		z := float32(int32(zp[k]))
		for i := a; i < b; i++ {
			t := float32(math.RoundToEven(float64(src[i]*inv))) + z
			if t < lo {
				t = lo
			} else if t > hi {
				t = hi
			}
			out[i] = float32(t-z) * sc
		}
	})
	return tensor.FromData(tensor.Float32, x.Shape(), out)
}

// ConvertElementType is quantized_decomposed.convert_element_type.no_fuse:
// a plain dtype cast, see [ToDType].
func ConvertElementType(x *tensor.Tensor, dtype tensor.DType) (*tensor.Tensor, error) {
	return ToDType(x, dtype)
}
