package kernels

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file implements the torchao ops of torchao-pt2e.md section 1.3
// (snapshot quant_primitives.py) and torchao.reference_dqlinear_int4
// (section 6.3).

// MappingType is torchao's MappingType, passed to the ops as its name.
type MappingType string

// The mapping types of choose_qparams_affine.
const (
	Symmetric              MappingType = "SYMMETRIC"
	SymmetricNoClippingErr MappingType = "SYMMETRIC_NO_CLIPPING_ERR"
	Asymmetric             MappingType = "ASYMMETRIC"
)

// AffineBounds resolves quant_min/quant_max of the torchao ops: nil takes
// dtype's bound, and the result must lie within dtype's range.
func AffineBounds(dtype tensor.DType, quantMin, quantMax *int64) (int64, int64, error) {
	lo, hi, err := QuantBounds(dtype)
	if err != nil {
		return 0, 0, err
	}
	if quantMin != nil {
		lo = *quantMin
	}
	if quantMax != nil {
		hi = *quantMax
	}
	if err := qCheckRange(dtype, lo, hi); err != nil {
		return 0, 0, err
	}
	return lo, hi, nil
}

// QuantizeAffine is torchao.quantize_affine: per block of blockSize,
//
//	q = clamp(round_half_even(x * (1 / scale)) + zero_point, quant_min, quant_max)
//
// with 1/scale a reciprocal in the scale's dtype and the product in float32
// (float64 for a float64 scale); the zero point is added after rounding.
// scale and zeroPoint need one value per block (any shape: PyTorch views
// them). The input must be float32, float16 or bfloat16 (bfloat16/float16
// inputs with a float32 scale are computed in float32, as PyTorch
// promotes); a nil zero point is an error, as in the snapshot. The result
// has dtype outDType (Int4/UInt4 stored one per byte). Special values as
// for [QuantizePerTensor].
//
// NaN quantizes to 0 (neither clamped nor the zero point; PyTorch's cast is
// undefined there), +inf and -inf clamp to quant_max and quant_min, and
// -0.0 quantizes like +0.0, to the zero point.
func QuantizeAffine(x *tensor.Tensor, blockSize []int, scale, zeroPoint *tensor.Tensor, outDType tensor.DType, quantMin, quantMax int64) (*tensor.Tensor, error) {
	if err := qCheckRange(outDType, quantMin, quantMax); err != nil {
		return nil, err
	}
	in, err := qFloatInput("input", x, false)
	if err != nil {
		return nil, err
	}
	if zeroPoint == nil || zeroPoint.Numel() == 0 {
		return nil, argErrf("argument %q: quantize_affine needs a zero point tensor, got None or an empty tensor", "zero_point")
	}
	return qQuantizeBlocks(in, x.Shape(), blockSize, scale, zeroPoint, quantMin, quantMax, outDType, false, false)
}

// DequantizeAffine is torchao.dequantize_affine: per block,
//
//	d = float(q) - float(zero_point)   // in outDType; skipped for a nil zero point
//	d = d * scale                      // promoted with the scale's dtype
//
// then cast to outDType (float32, float16 or bfloat16; Unknown means
// float32). For float16/bfloat16 outputs q, the zero point and the
// difference are rounded to outDType, the product is computed in float32
// and rounded once. q's dtype must equal inputDType (Int4/UInt4 may come as
// their int8/uint8 storage type).
//
// The integer input holds no NaN, infinity or -0.0: q equal to the zero
// point gives +0.0, and NaN or ±inf appear only through a non-finite
// scale (0·inf is NaN for q at the zero point).
func DequantizeAffine(q *tensor.Tensor, blockSize []int, scale, zeroPoint *tensor.Tensor, inputDType tensor.DType, quantMin, quantMax int64, outDType tensor.DType) (*tensor.Tensor, error) {
	if q == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "input")
	}
	if q.DType() != inputDType && q.DType() != inputDType.Storage() {
		return nil, dtypeErr("input", q.DType(), fmt.Sprintf("input_dtype %s", inputDType))
	}
	if err := qCheckRange(inputDType, quantMin, quantMax); err != nil {
		return nil, err
	}
	if outDType == tensor.Unknown {
		outDType = tensor.Float32
	}
	switch outDType {
	case tensor.Float32:
		p, err := readQBlockParams(q.Shape(), blockSize, scale, zeroPoint, "scale", "zero_point")
		if err != nil {
			return nil, err
		}
		lay, s, s64, zp := p.lay, p.scale, p.scale64, p.zp
		if zp != nil {
			zp = qZPAs(zp, false) // zero_point.to(output_dtype)
		}
		if !s64 {
			for i := range s {
				s[i] = float64(float32(s[i]))
			}
			d := &qDequant{lay: lay, scale: s, zp: zp, f64: false}
			return d.run(q, outDType)
		}
		// float32 difference times a float64 scale: product in float64.
		d := &qDequant{lay: lay, scale: s, zp: zp, f64: true}
		return d.run(q, outDType)
	case tensor.Float16, tensor.BFloat16:
		p, err := readQBlockParams(q.Shape(), blockSize, scale, zeroPoint, "scale", "zero_point")
		if err != nil {
			return nil, err
		}
		lay, s, zp := p.lay, p.scale, p.zp
		vals, err := q.Float64s()
		if err != nil {
			return nil, err
		}
		rnd := qHalfRounder(outDType)
		r := make([]float32, len(vals))
		lay.chunks(func(a, b, k int) {
			z := float32(0)
			if zp != nil {
				z = rnd(float32(zp[k]))
			}
			sc := float32(s[k])
			for i := a; i < b; i++ {
				d := rnd(float32(vals[i]))
				if zp != nil {
					d = rnd(d - z)
				}
				r[i] = d * sc
			}
		})
		return qFloatResult(outDType, q.Shape(), r, nil)
	}
	return nil, fmt.Errorf("%w: argument %q: want float32, float16 or bfloat16, got %s", ErrUnsupportedDType, "output_dtype", outDType)
}

// AffineQParamsOptions are the optional arguments of
// [ChooseQParamsAffine]. Zero values mean PyTorch's defaults.
type AffineQParamsOptions struct {
	// Eps clamps the scale from below; nil means the smallest normal
	// number of the input dtype (1.1754944e-38 for float32).
	Eps *float64
	// ScaleDType is the scale's dtype; Unknown means the input dtype.
	ScaleDType tensor.DType
	// ZeroPointDType is the zero point's dtype; Unknown means int32 for
	// ASYMMETRIC and the scale's float dtype for the symmetric modes.
	ZeroPointDType tensor.DType
	// KeepDim gives qparams of shape [size_i / block_i for each dim];
	// otherwise dimensions reduced in full are dropped.
	KeepDim bool
}

// ChooseQParamsAffine is torchao.choose_qparams_affine: per block, min and
// max in the input dtype, min_neg = min(min, 0), max_pos = max(max, 0), then
//
//	SYMMETRIC:                 scale = max(-min_neg, max_pos) / ((qmax - qmin) / 2)
//	SYMMETRIC_NO_CLIPPING_ERR: scale = max(min_neg / qmin, max_pos / qmax)
//	both:                      zp = int((qmax + qmin + 1) / 2); scale = max(scale, eps)
//	ASYMMETRIC:                scale = max((max_pos - min_neg) / (qmax - qmin), eps)
//	                           zp = clamp(qmin - round_half_even(min_neg / scale), qmin, qmax)
//
// computed in float32 for float32 inputs; float16/bfloat16 inputs round
// every step to their dtype, as PyTorch computes in the input dtype. The
// scale is returned as opts.ScaleDType, the zero point as
// opts.ZeroPointDType (float -> int casts truncate). NaN in a block gives
// a NaN scale and zero point 0 (before clamping).
//
// A NaN in the input makes the scale NaN and the zero point 0. An infinite
// min or max makes the scale +inf, and the zero point is whatever the
// formula then gives (not meaningful). -0.0 counts as 0.
func ChooseQParamsAffine(x *tensor.Tensor, mapping MappingType, blockSize []int, targetDType tensor.DType, quantMin, quantMax int64, opts AffineQParamsOptions) (*tensor.Tensor, *tensor.Tensor, error) {
	if err := qCheckRange(targetDType, quantMin, quantMax); err != nil {
		return nil, nil, err
	}
	switch mapping {
	case Symmetric, SymmetricNoClippingErr, Asymmetric:
	default:
		return nil, nil, argErrf("argument %q: want SYMMETRIC, SYMMETRIC_NO_CLIPPING_ERR or ASYMMETRIC, got %q", "mapping_type", string(mapping))
	}
	in, err := qFloatInput("input", x, false)
	if err != nil {
		return nil, nil, err
	}
	lay, err := newQLayout(x.Shape(), blockSize)
	if err != nil {
		return nil, nil, err
	}
	inDType := x.DType()
	rnd := qHalfRounder(inDType)
	eps := float32(math.SmallestNonzeroFloat32) // placeholder, set below
	switch {
	case opts.Eps != nil:
		eps = rnd(float32(*opts.Eps))
	case inDType == tensor.Float16:
		eps = float32(math.Ldexp(1, -14))
	default: // float32 and bfloat16 share the exponent range
		eps = float32(math.Ldexp(1, -126))
	}
	lo := make([]float32, lay.n)
	hi := make([]float32, lay.n)
	for i := range lo {
		lo[i], hi[i] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	lay.chunks(func(a, b, k int) {
		l, h := qMinMax(in.f32[a:b])
		if l != l || lo[k] != lo[k] {
			lo[k], hi[k] = float32(math.NaN()), float32(math.NaN())
			return
		}
		lo[k] = min(lo[k], l)
		hi[k] = max(hi[k], h)
	})
	scales := make([]float32, lay.n)
	zpF := make([]float32, lay.n)
	qmin, qmax := float32(quantMin), float32(quantMax)
	for k := range scales {
		minNeg, maxPos := qMinNaN(lo[k], 0), qMaxNaN(hi[k], 0)
		switch mapping {
		case Symmetric, SymmetricNoClippingErr:
			var s float32
			if mapping == Symmetric {
				s = rnd(qMaxNaN(-minNeg, maxPos) / float32(float64(quantMax-quantMin)/2))
			} else {
				smin := rnd(minNeg / qmin)
				smax := rnd(maxPos / qmax)
				if smin > smax {
					s = smin
				} else {
					s = smax
				}
			}
			zpF[k] = float32(int64(float64(quantMax+quantMin+1) / 2))
			scales[k] = qMaxNaN(s, eps)
		case Asymmetric:
			s := rnd(rnd(maxPos-minNeg) / float32(quantMax-quantMin))
			s = qMaxNaN(s, eps)
			scales[k] = s
			r := float32(math.RoundToEven(float64(rnd(minNeg / s))))
			z := rnd(qmin - r)
			if z != z {
				z = 0
			}
			zpF[k] = min(max(z, qmin), qmax)
		}
	}
	shape := qAffineParamShape(lay, opts.KeepDim)
	scaleDType := opts.ScaleDType
	if scaleDType == tensor.Unknown {
		scaleDType = inDType
	}
	zpDType := opts.ZeroPointDType
	if zpDType == tensor.Unknown {
		if mapping == Asymmetric {
			zpDType = tensor.Int32
		} else {
			zpDType = inDType
		}
	}
	st, err := qFloatResult(inDType, shape, scales, nil)
	if err != nil {
		return nil, nil, err
	}
	if st, err = ToDType(st, scaleDType); err != nil {
		return nil, nil, fmt.Errorf("argument %q: %w", "scale_dtype", err)
	}
	zt, err := qFloatResult(inDType, shape, zpF, nil)
	if err != nil {
		return nil, nil, err
	}
	if zt, err = ToDType(zt, zpDType); err != nil {
		return nil, nil, fmt.Errorf("argument %q: %w", "zero_point_dtype", err)
	}
	return st, zt, nil
}

// qAffineParamShape is the qparam shape of get_reduction_params: with
// keepdim the block grid; otherwise dims reduced in full (block == size >
// 1) are dropped.
func qAffineParamShape(l *qLayout, keepdim bool) []int {
	if keepdim {
		return append([]int(nil), l.grid...)
	}
	var out []int
	for i, s := range l.shape {
		if l.block[i] == s && s != 1 {
			continue
		}
		out = append(out, l.grid[i])
	}
	if out == nil {
		out = []int{}
	}
	return out
}

// DQLinearInt4Options selects variants of [ReferenceDQLinearInt4].
type DQLinearInt4Options struct {
	// LegacyScaleShape reproduces the snapshot's bug: a 1-D weight scale
	// is reshaped to [1, N] (every output channel then uses the scales of
	// channel 0's row), instead of the corrected [N, 1].
	LegacyScaleShape bool
}

// ReferenceDQLinearInt4 is torchao.reference_dqlinear_int4 with the
// corrected math (torchao-pt2e.md 6.3): x [..., K] float32 is quantized per
// token as int8 (choose_qparams_affine ASYMMETRIC with eps = float32(xEps),
// quantize_affine), the weight wQ [N, K] (int values, any integer dtype)
// has scales rounded through bfloat16, shape [N, K/gs] (or [N] when gs ==
// K), and for each group g in order
//
//	d = sum_k xq[m,k] * w[n,k]                    (exact, then float32)
//	acc = acc + d * ws[n,g]
//	acc = acc - (float32(sum_k w[n,k]) * float32(xz[m])) * ws[n,g]
//
// each product and sum rounded to float32; then y = acc * xs[m] + bias[n].
// The weight zero point is ignored (symmetric weights), as in the op.
// groupSize is the op's list [1, gs]. The result has shape [..., N].
func ReferenceDQLinearInt4(x *tensor.Tensor, xEps float64, wQ, wScale, wZeroPoint, bias *tensor.Tensor, groupSize []int, opts DQLinearInt4Options) (*tensor.Tensor, error) {
	if x == nil || x.Dim() == 0 {
		return nil, shapeErrf("argument %q: want a float tensor with at least one dimension", "x_fp32")
	}
	if len(groupSize) == 0 {
		return nil, argErrf("argument %q: want [1, group_size], got %v", "group_size", groupSize)
	}
	gs := groupSize[len(groupSize)-1]
	if wQ == nil || wQ.Dim() != 2 {
		return nil, shapeErrf("argument %q: want a 2-D weight [N, K]", "weight_i4")
	}
	n, k := wQ.Size(0), wQ.Size(1)
	if x.Size(-1) != k {
		return nil, shapeErrf("argument %q: last dimension %d does not match the weight's K = %d", "x_fp32", x.Size(-1), k)
	}
	if gs <= 0 || k%gs != 0 {
		return nil, argErrf("argument %q: group size %d must divide K = %d", "group_size", gs, k)
	}
	g := k / gs
	eps := xEps
	block := qBlockLastDim(x.Shape(), k)
	xs, xz, err := ChooseQParamsAffine(x, Asymmetric, block, tensor.Int8, -128, 127,
		AffineQParamsOptions{Eps: &eps, ScaleDType: tensor.Float32, ZeroPointDType: tensor.Int32})
	if err != nil {
		return nil, fmt.Errorf("reference_dqlinear_int4: activation qparams: %w", err)
	}
	xq, err := QuantizeAffine(x, block, xs, xz, tensor.Int8, -128, 127)
	if err != nil {
		return nil, fmt.Errorf("reference_dqlinear_int4: activation quantize: %w", err)
	}
	if wScale == nil {
		return nil, argErrf("argument %q: want a float tensor, got None", "weight_scale")
	}
	sv, _, err := qParamFloats("weight_scale", wScale)
	if err != nil {
		return nil, err
	}
	ws := make([]float32, len(sv))
	for i, v := range sv {
		ws[i] = tensor.RoundBFloat16(float32(v))
	}
	// sg(n, gi) returns the scale of output channel n in group gi.
	var sg func(n, gi int) float32
	switch {
	case wScale.Dim() == 1 && opts.LegacyScaleShape:
		// [1, N]: ws[:, gi] is the single value ws[gi] for every channel.
		if g > len(ws) {
			return nil, shapeErrf("argument %q: legacy [1, N] scale has %d columns, need %d groups", "weight_scale", len(ws), g)
		}
		sg = func(_, gi int) float32 { return ws[gi] }
	case wScale.Dim() == 1:
		if len(ws) != n || g != 1 {
			return nil, shapeErrf("argument %q: a 1-D scale becomes [N, 1]: want %d values and one group, got %d values and %d groups", "weight_scale", n, len(ws), g)
		}
		sg = func(ni, _ int) float32 { return ws[ni] }
	case wScale.Dim() == 2 && wScale.Size(0) == n && wScale.Size(1) == g:
		sg = func(ni, gi int) float32 { return ws[ni*g+gi] }
	default:
		return nil, shapeErrf("argument %q: want shape [%d, %d] (or [%d] for one group), got %v", "weight_scale", n, g, n, wScale.Shape())
	}
	_ = wZeroPoint // ignored by the op
	wv, err := wQ.Int64s()
	if err != nil {
		return nil, dtypeErr("weight_i4", wQ.DType(), "an integer tensor")
	}
	w32 := make([]int32, len(wv))
	for i, v := range wv {
		w32[i] = int32(v)
	}
	xqv, _ := tensor.Data[int8](xq)
	xsv, _ := tensor.Data[float32](xs)
	xzv, _ := xz.Int64s()
	m := len(xsv)
	var bv []float32
	if bias != nil {
		b, err := qFloatInput("bias_fp32", bias, false)
		if err != nil {
			return nil, err
		}
		if len(b.f32) != n {
			return nil, shapeErrf("argument %q: want %d values, got shape %v", "bias_fp32", n, bias.Shape())
		}
		bv = b.f32
	}
	// wsum[n*g+gi] = sum of the weight's group gi in row n.
	wsum := make([]float32, n*g)
	for ni := 0; ni < n; ni++ {
		for gi := 0; gi < g; gi++ {
			var s int64
			for _, v := range w32[ni*k+gi*gs : ni*k+(gi+1)*gs] {
				s += int64(v)
			}
			wsum[ni*g+gi] = float32(s)
		}
	}
	// the scale of every (channel, group), laid out [N, G]
	sgt := make([]float32, n*g)
	for ni := 0; ni < n; ni++ {
		for gi := 0; gi < g; gi++ {
			sgt[ni*g+gi] = sg(ni, gi)
		}
	}
	xi := make([]int32, len(xqv))
	for i, v := range xqv {
		xi[i] = int32(v)
	}
	out := make([]float32, m*n)
	for mi := 0; mi < m; mi++ {
		xrow := xi[mi*k : (mi+1)*k]
		zf := float32(xzv[mi])
		for ni := 0; ni < n; ni++ {
			wrow := w32[ni*k : (ni+1)*k]
			acc := float32(0)
			for gi := 0; gi < g; gi++ {
				xa := xrow[gi*gs : (gi+1)*gs]
				wa := wrow[gi*gs : (gi+1)*gs]
				wa = wa[:len(xa)]
				var d int32
				for j, xv := range xa {
					d += xv * wa[j]
				}
				s := sgt[ni*g+gi]
				acc = acc + float32(float32(d)*s)
				acc = acc - float32(float32(wsum[ni*g+gi]*zf)*s)
			}
			y := float32(acc * xsv[mi])
			if bv != nil {
				y = y + bv[ni]
			}
			out[mi*n+ni] = y
		}
	}
	shape := append(x.Shape()[:x.Dim()-1], n)
	return tensor.FromData(tensor.Float32, shape, out)
}
