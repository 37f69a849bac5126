package observers

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/ops/tensor"
)

// calcUniformQParams is UniformQuantizationObserverBase._calculate_qparams
// (torch 1.13 and torchao pt2e, identical arithmetic), in float32 with one
// rounding per tensor op:
//
//	min_neg = min(min, 0); max_pos = max(max, 0)
//	symmetric:    scale = max(max(-min_neg, max_pos) / f32((qmax-qmin)/2), eps); zp = 0
//	              (128 for uint8 dtypes, (qmin+qmax)//2 with a custom range; 32768 for uint16)
//	float_qparams: scale = (max-min)/f32(qmax-qmin), 1 where not > eps; zp = -min/scale (float)
//	affine:       scale = max((max_pos-min_neg)/f32(qmax-qmin), eps)
//	              zp = clamp(qmin - int32(round(min_neg/scale)), qmin, qmax)
//
// perTensor selects the [1]-shaped result and the uninitialized check of a
// 0-dim buffer.
func (b *uniformBase) calcUniformQParams(class string, mins, maxs []float32, perTensor bool) (QParams, error) {
	if len(mins) == 0 || len(maxs) == 0 {
		return QParams{}, fmt.Errorf("%s: %w: run the observer on a non-empty tensor before asking for qparams", class, ErrNoData)
	}
	if perTensor && mins[0] == posInf32 && maxs[0] == negInf32 {
		return QParams{}, fmt.Errorf("%s: %w: run the observer on a non-empty tensor before asking for qparams", class, ErrNoData)
	}
	for i := range mins {
		if !(mins[i] <= maxs[i]) {
			return QParams{}, fmt.Errorf("%s: %w: channel %d: min %g should be less than max %g", class, ErrInvalidStats, i, mins[i], maxs[i])
		}
		if math.IsInf(float64(mins[i]), 0) || math.IsInf(float64(maxs[i]), 0) {
			return QParams{}, fmt.Errorf("%s: %w: channel %d: min %g and max %g: want finite values (PyTorch's qparams are undefined here)", class, ErrInvalidStats, i, mins[i], maxs[i])
		}
	}
	n := len(mins)
	scale := make([]float32, n)
	qmin, qmax := b.qmin, b.qmax
	switch {
	case b.qscheme.IsSymmetric():
		div := float32(float64(qmax-qmin) / 2)
		zp := make([]int64, n)
		var z int64
		switch {
		case b.dtype.isUInt8Like():
			z = 128
			if b.customized {
				z = floorDiv2(qmin + qmax)
			}
		case b.dtype == UInt16:
			z = 1 << 15
		}
		for i := range mins {
			minNeg := minimum(mins[i], 0)
			maxPos := maximum(maxs[i], 0)
			s := maximum(-minNeg, maxPos) / div
			scale[i] = maximum(s, b.eps)
			zp[i] = z
		}
		return QParams{Scale: tensor.MustFromData(tensor.Float32, []int{n}, scale), ZeroPoint: tensor.MustFromData(tensor.Int64, []int{n}, zp)}, nil
	case b.qscheme == PerChannelAffineFloatQParams:
		div := float32(float64(qmax - qmin))
		zp := make([]float32, n)
		for i := range mins {
			s := (maxs[i] - mins[i]) / div
			if !(s > b.eps) {
				s = 1
			}
			scale[i] = s
			zp[i] = (-1 * mins[i]) / s
		}
		return QParams{Scale: tensor.MustFromData(tensor.Float32, []int{n}, scale), ZeroPoint: tensor.MustFromData(tensor.Float32, []int{n}, zp)}, nil
	default:
		div := float32(float64(qmax - qmin))
		zp := make([]int32, n)
		for i := range mins {
			minNeg := minimum(mins[i], 0)
			maxPos := maximum(maxs[i], 0)
			s := maximum((maxPos-minNeg)/div, b.eps)
			scale[i] = s
			z := qmin - int64(int32(roundEven32(minNeg/s)))
			zp[i] = int32(max(qmin, min(qmax, z)))
		}
		return QParams{Scale: tensor.MustFromData(tensor.Float32, []int{n}, scale), ZeroPoint: tensor.MustFromData(tensor.Int32, []int{n}, zp)}, nil
	}
}
