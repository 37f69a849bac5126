package observers

import (
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// AffineConfig configures the torchao affine observers
// (AffineQuantizedObserverBase). MappingType, TargetDType and Granularity
// are required; the rest default as in torchao.
type AffineConfig struct {
	// MappingType is how the quant range maps onto the observed range
	// (symmetric, asymmetric, ...).
	MappingType MappingType
	// TargetDType is the quantized dtype: Int8, UInt8, Int16, Int32, Int4
	// (-8..7) or UInt4 (0..15). int4 in PT2E graphs is usually Int8 with
	// quant range -8..7.
	TargetDType tensor.DType
	// Granularity is how many scales the observer computes: per tensor,
	// per axis, per group, per token or per row.
	Granularity Granularity
	// QuantMin and QuantMax are the range; nil (None) takes the target
	// dtype's bound. They are also the convert literals (None stays None).
	QuantMin, QuantMax *int64
	// Eps bounds the scale from below; nil means finfo(min dtype).eps
	// (2**-23 for float32 calibration).
	Eps *float64
	// ScaleDType and ZeroPointDType cast the qparams; tensor.Unknown (None)
	// keeps the statistics' dtype, so a float32 zero point by default.
	ScaleDType, ZeroPointDType tensor.DType
	// NoPreserveZero is preserve_zero=False (torchao's default is True).
	NoPreserveZero bool
	// ZeroPointDomain defaults to INT.
	ZeroPointDomain ZeroPointDomain
	// IsDynamic is honoured by AffineQuantizedPlaceholderObserver only;
	// AffineQuantizedMinMaxObserver has no is_dynamic attribute in torchao
	// and is always static.
	IsDynamic bool
}

// targetBounds is torchao's _get_and_check_qmin_qmax bounds table.
func targetBounds(d tensor.DType) (lo, hi int64, ok bool) {
	switch d {
	case tensor.Int8, tensor.UInt8, tensor.Int16, tensor.Int32, tensor.Int4, tensor.UInt4:
		return d.IntRange()
	}
	return 0, 0, false
}

type affineBase struct {
	class       string
	cfg         AffineConfig
	qmin, qmax  int64
	blockSize   []int        // nil before data
	origDType   tensor.DType // Unknown before data
	minVal      []float32
	maxVal      []float32
	minMaxShape []int
}

func newAffineBase(class string, c AffineConfig) (affineBase, error) {
	b := affineBase{class: class, cfg: c}
	switch c.MappingType {
	case Symmetric, SymmetricNoClippingErr, Asymmetric:
	default:
		return b, fmt.Errorf("%s: %w: mapping_type %s: want SYMMETRIC, SYMMETRIC_NO_CLIPPING_ERR or ASYMMETRIC", class, ErrConfig, c.MappingType)
	}
	if c.Granularity == nil {
		return b, fmt.Errorf("%s: %w: granularity is required", class, ErrConfig)
	}
	lo, hi, ok := targetBounds(c.TargetDType)
	if !ok {
		return b, fmt.Errorf("%s: %w: target_dtype %s: want int8, uint8, int16, int32, int4 or uint4", class, ErrConfig, c.TargetDType)
	}
	b.qmin, b.qmax = lo, hi
	if c.QuantMin != nil {
		if *c.QuantMin < lo {
			return b, fmt.Errorf("%s: %w: quant_min %d is below the %s bound %d", class, ErrConfig, *c.QuantMin, c.TargetDType, lo)
		}
		b.qmin = *c.QuantMin
	}
	if c.QuantMax != nil {
		if *c.QuantMax > hi {
			return b, fmt.Errorf("%s: %w: quant_max %d is above the %s bound %d", class, ErrConfig, *c.QuantMax, c.TargetDType, hi)
		}
		b.qmax = *c.QuantMax
	}
	if c.ZeroPointDomain > ZeroPointDomainNone {
		return b, fmt.Errorf("%s: %w: unknown zero_point_domain %s", class, ErrConfig, c.ZeroPointDomain)
	}
	if c.Eps != nil && !(*c.Eps >= 0) {
		return b, fmt.Errorf("%s: %w: eps %g: want a non-negative number", class, ErrConfig, *c.Eps)
	}
	return b, nil
}

// Class returns PyTorch's class name.
func (b *affineBase) Class() string { return b.class }

// Config returns the observer's configuration.
func (b *affineBase) Config() AffineConfig { return b.cfg }

// BlockSize returns the block size frozen from the first input's shape
// (nil before any data).
func (b *affineBase) BlockSize() []int { return slices.Clone(b.blockSize) }

// OriginalDType returns the dtype of the observed tensors (tensor.Unknown
// before any data).
func (b *affineBase) OriginalDType() tensor.DType { return b.origDType }

func (b *affineBase) record(x *tensor.Tensor) error {
	if x == nil {
		return fmt.Errorf("%s: %w: nil tensor", b.class, ErrInput)
	}
	if x.DType() != tensor.Float32 {
		return fmt.Errorf("%s: %w: input dtype %s: want float32", b.class, ErrInput, x.DType())
	}
	bs, err := BlockSize(x.Shape(), b.cfg.Granularity)
	if err != nil {
		return fmt.Errorf("%s: %w", b.class, err)
	}
	b.blockSize, b.origDType = bs, x.DType()
	return nil
}

func (b *affineBase) plan(dynamic bool) (ConvertPlan, error) {
	if b.blockSize == nil || b.origDType == tensor.Unknown {
		return ConvertPlan{}, fmt.Errorf("%s: convert plan: %w: block_size and original_dtype are set by the first forward", b.class, ErrNoData)
	}
	p := ConvertPlan{
		Dtype:          b.cfg.TargetDType,
		QuantMin:       b.qmin,
		QuantMax:       b.qmax,
		QuantRangeNone: b.cfg.QuantMin == nil || b.cfg.QuantMax == nil,
		MappingType:    b.cfg.MappingType,
		OutputDType:    b.origDType,
	}
	for _, s := range b.blockSize {
		p.BlockSize = append(p.BlockSize, int64(s))
	}
	if dynamic {
		p.Kind = PlanAffineDynamic
		p.EpsNone = b.cfg.Eps == nil
		if b.cfg.Eps != nil {
			p.Eps = *b.cfg.Eps
		}
		p.ScaleDType, p.ZeroPointDType = b.cfg.ScaleDType, b.cfg.ZeroPointDType
		return p, nil
	}
	p.Kind = PlanAffineStatic
	return p, nil
}

// AffineQuantizedMinMaxObserver is torchao's AffineQuantizedMinMaxObserver:
// it freezes block_size from the first input's shape, keeps an
// elementwise running amin/amax per block (float32 input only), and
// computes qparams with the pt2e copy of choose_qparams_affine_with_min_max
// (spec section 2.3). It is always static.
type AffineQuantizedMinMaxObserver struct{ affineBase }

var _ Observer = (*AffineQuantizedMinMaxObserver)(nil)

// NewAffineQuantizedMinMaxObserver checks c and returns the observer.
func NewAffineQuantizedMinMaxObserver(c AffineConfig) (*AffineQuantizedMinMaxObserver, error) {
	b, err := newAffineBase("AffineQuantizedMinMaxObserver", c)
	if err != nil {
		return nil, err
	}
	return &AffineQuantizedMinMaxObserver{b}, nil
}

// Forward records the statistics of its one tensor argument and returns it.
func (o *AffineQuantizedMinMaxObserver) Forward(args []any) (any, error) {
	return forward(o, args)
}

// Observe reduces x per block and merges the result elementwise into the
// running min/max; the reduced shape must match earlier calls.
func (o *AffineQuantizedMinMaxObserver) Observe(x *tensor.Tensor) error {
	if x != nil && x.Numel() == 0 {
		return nil
	}
	saved := o.affineBase
	if err := o.record(x); err != nil {
		o.affineBase = saved
		return err
	}
	v, err := tensor.Data[float32](x)
	if err != nil {
		o.affineBase = saved
		return err
	}
	lo, hi, shape, err := blockMinMax(v, x.Shape(), o.blockSize)
	if err != nil {
		o.affineBase = saved
		return fmt.Errorf("%s: %w", o.class, err)
	}
	if o.minVal == nil {
		o.minVal, o.maxVal, o.minMaxShape = lo, hi, shape
		return nil
	}
	if !slices.Equal(shape, o.minMaxShape) {
		o.affineBase = saved
		return fmt.Errorf("%s: %w: min_val shape %v of input %v differs from the earlier %v", o.class, ErrInput, shape, x.Shape(), o.minMaxShape)
	}
	for i := range lo {
		o.minVal[i] = minimum(o.minVal[i], lo[i])
		o.maxVal[i] = maximum(o.maxVal[i], hi[i])
	}
	return nil
}

// MinMax returns float32 tensors of the running min_val and max_val
// (shape: the input shape with reduced dims removed), or ErrNoData.
func (o *AffineQuantizedMinMaxObserver) MinMax() (minVal, maxVal *tensor.Tensor, err error) {
	if o.minVal == nil {
		return nil, nil, fmt.Errorf("%s: %w", o.class, ErrNoData)
	}
	return tensor.MustFromData(tensor.Float32, o.minMaxShape, slices.Clone(o.minVal)),
		tensor.MustFromData(tensor.Float32, o.minMaxShape, slices.Clone(o.maxVal)), nil
}

// CalculateQParams returns scale and zero point shaped like min_val, in
// ScaleDType and ZeroPointDType (float32 by default, zero point included).
// With ZeroPointDomain NONE (asymmetric) ZeroPoint is nil.
func (o *AffineQuantizedMinMaxObserver) CalculateQParams() (QParams, error) {
	if o.minVal == nil {
		return QParams{}, fmt.Errorf("%s: %w: run the observer on a non-empty tensor before asking for qparams", o.class, ErrNoData)
	}
	return ChooseQParamsAffineWithMinMax(o.minVal, o.maxVal, o.minMaxShape, o.cfg, o.qmin, o.qmax)
}

// Plan returns a PlanAffineStatic with the computed scale and zero point.
func (o *AffineQuantizedMinMaxObserver) Plan() (ConvertPlan, error) {
	p, err := o.plan(false)
	if err != nil {
		return p, err
	}
	qp, err := o.CalculateQParams()
	if err != nil {
		return ConvertPlan{}, fmt.Errorf("convert plan: %w", err)
	}
	p.ScaleTensor, p.ZeroPointTensor = qp.Scale, qp.ZeroPoint
	return p, nil
}

// ChooseQParamsAffineWithMinMax is the pt2e observers' copy of torchao's
// _choose_qparams_affine with input=None (spec section 2.3), on float32
// min/max values of the given shape, with the resolved range qmin..qmax.
// Every step is one float32 op:
//
//	min_neg, max_pos = min(min, 0), max(max, 0)      (raw min/max without preserve_zero)
//	SYMMETRIC:     scale = max(-min_neg, max_pos) / f32((qmax-qmin)/2)
//	NO_CLIPPING:   scale = min_neg/f32(qmin) if that > max_pos/f32(qmax) else max_pos/f32(qmax)
//	               then scale = clamp(scale, min=eps), zp = int((qmax+qmin+1)/2)
//	ASYMMETRIC:    scale = clamp((max_pos-min_neg)/f32(qmax-qmin), min=eps)
//	               zp = clamp(f32(qmin) - round(min_neg/scale), qmin, qmax)   (preserve_zero)
//	               zp = min_neg + scale*f32((qmax+qmin+1)/2)                  (FLOAT domain)
func ChooseQParamsAffineWithMinMax(mins, maxs []float32, shape []int, c AffineConfig, qmin, qmax int64) (QParams, error) {
	const class = "choose_qparams_affine_with_min_max"
	if len(mins) != len(maxs) || len(mins) != tensor.Numel(shape) {
		return QParams{}, fmt.Errorf("%s: %w: %d min and %d max values for shape %v", class, ErrInput, len(mins), len(maxs), shape)
	}
	eps := float32(Float32Eps)
	if c.Eps != nil {
		eps = float32(*c.Eps)
	}
	preserve := !c.NoPreserveZero
	n := len(mins)
	scale := make([]float32, n)
	var zp []float32
	switch c.MappingType {
	case Symmetric, SymmetricNoClippingErr:
		if !preserve {
			return QParams{}, fmt.Errorf("%s: %w: preserve_zero=False is not supported for symmetric quantization", class, ErrConfig)
		}
		if c.ZeroPointDomain != ZeroPointDomainInt && c.ZeroPointDomain != ZeroPointDomainNone {
			return QParams{}, fmt.Errorf("%s: %w: zero_point_domain %s: want NONE or INT for symmetric quantization", class, ErrConfig, c.ZeroPointDomain)
		}
		z := float32(math.Trunc(float64(qmax+qmin+1) / 2))
		zp = make([]float32, n)
		for i := range mins {
			minNeg, maxPos := minimum(mins[i], 0), maximum(maxs[i], 0)
			var s float32
			if c.MappingType == Symmetric {
				s = maximum(-minNeg, maxPos) / float32(float64(qmax-qmin)/2)
			} else {
				smin := minNeg / float32(qmin)
				smax := maxPos / float32(qmax)
				s = smax
				if smin > smax {
					s = smin
				}
			}
			scale[i] = clampMin(s, eps)
			zp[i] = z
		}
	case Asymmetric:
		div := float32(float64(qmax - qmin))
		if c.ZeroPointDomain != ZeroPointDomainNone {
			zp = make([]float32, n)
		}
		if !preserve && c.ZeroPointDomain == ZeroPointDomainInt {
			return QParams{}, fmt.Errorf("%s: %w: preserve_zero=False needs zero_point_domain FLOAT or NONE", class, ErrConfig)
		}
		mid := float32(float64(qmax+qmin+1) / 2)
		for i := range mins {
			minNeg, maxPos := mins[i], maxs[i]
			if preserve {
				minNeg, maxPos = minimum(minNeg, 0), maximum(maxPos, 0)
			}
			s := clampMin((maxPos-minNeg)/div, eps)
			scale[i] = s
			switch {
			case zp == nil:
			case preserve:
				z := float32(qmin) - roundEven32(minNeg/s)
				zp[i] = min(max(z, float32(qmin)), float32(qmax))
			default:
				p := s * mid
				zp[i] = minNeg + p
			}
		}
	default:
		return QParams{}, fmt.Errorf("%s: %w: mapping_type %s", class, ErrConfig, c.MappingType)
	}
	sd, zd := c.ScaleDType, c.ZeroPointDType
	if sd == tensor.Unknown {
		sd = tensor.Float32
	}
	if zd == tensor.Unknown {
		zd = tensor.Float32
	}
	st, err := castFloat32(scale, shape, sd)
	if err != nil {
		return QParams{}, fmt.Errorf("%s: scale_dtype: %w", class, err)
	}
	qp := QParams{Scale: st}
	if zp != nil {
		if qp.ZeroPoint, err = castFloat32(zp, shape, zd); err != nil {
			return QParams{}, fmt.Errorf("%s: zero_point_dtype: %w", class, err)
		}
	}
	return qp, nil
}

// clampMin is torch.clamp(v, min=lo): NaN stays NaN.
func clampMin(v, lo float32) float32 {
	if v < lo {
		return lo
	}
	return v
}

// castFloat32 is Tensor.to(d) of float32 values: rounding for narrower
// floats, truncation toward zero for integers.
func castFloat32(v []float32, shape []int, d tensor.DType) (*tensor.Tensor, error) {
	switch d {
	case tensor.Float32:
		return tensor.FromData(d, shape, v)
	case tensor.Float64:
		return tensor.FromData(d, shape, mapFloat32(v, func(f float32) float64 { return float64(f) }))
	case tensor.BFloat16:
		return tensor.FromData(d, shape, mapFloat32(v, tensor.Float32ToBFloat16))
	case tensor.Float16:
		return tensor.FromData(d, shape, mapFloat32(v, tensor.Float32ToFloat16))
	case tensor.Int32:
		return tensor.FromData(d, shape, mapFloat32(v, func(f float32) int32 { return int32(f) }))
	case tensor.Int64:
		return tensor.FromData(d, shape, mapFloat32(v, func(f float32) int64 { return int64(f) }))
	case tensor.Int8:
		return tensor.FromData(d, shape, mapFloat32(v, func(f float32) int8 { return int8(int64(f)) }))
	case tensor.UInt8:
		return tensor.FromData(d, shape, mapFloat32(v, func(f float32) uint8 { return uint8(int64(f)) }))
	case tensor.Int16:
		return tensor.FromData(d, shape, mapFloat32(v, func(f float32) int16 { return int16(int64(f)) }))
	}
	return nil, fmt.Errorf("%w: cannot cast qparams to %s", ErrConfig, d)
}

// mapFloat32 returns f of each element of v, in a new slice.
func mapFloat32[T any](v []float32, f func(float32) T) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

// AffineQuantizedPlaceholderObserver is torchao's
// AffineQuantizedPlaceholderObserver: it records only block_size and
// original_dtype. With IsDynamic its convert computes qparams at run time
// (PlanAffineDynamic); CalculateQParams always fails, as in torchao.
type AffineQuantizedPlaceholderObserver struct{ affineBase }

var _ Observer = (*AffineQuantizedPlaceholderObserver)(nil)

// NewAffineQuantizedPlaceholderObserver checks c and returns the observer.
func NewAffineQuantizedPlaceholderObserver(c AffineConfig) (*AffineQuantizedPlaceholderObserver, error) {
	b, err := newAffineBase("AffineQuantizedPlaceholderObserver", c)
	if err != nil {
		return nil, err
	}
	return &AffineQuantizedPlaceholderObserver{b}, nil
}

// Forward records block_size and original_dtype and returns its argument.
func (o *AffineQuantizedPlaceholderObserver) Forward(args []any) (any, error) {
	return forward(o, args)
}

// Observe records block_size (from x's shape) and original_dtype.
func (o *AffineQuantizedPlaceholderObserver) Observe(x *tensor.Tensor) error {
	saved := o.affineBase
	if err := o.record(x); err != nil {
		o.affineBase = saved
		return err
	}
	return nil
}

// CalculateQParams always fails with ErrNoQParams.
func (o *AffineQuantizedPlaceholderObserver) CalculateQParams() (QParams, error) {
	return QParams{}, fmt.Errorf("%s: %w: calculate_qparams should not be called for PlaceholderObserver", o.class, ErrNoQParams)
}

// Plan returns PlanAffineDynamic when the observer is dynamic; a static
// placeholder has no qparams, so its plan is an error.
func (o *AffineQuantizedPlaceholderObserver) Plan() (ConvertPlan, error) {
	if !o.cfg.IsDynamic {
		_, err := o.CalculateQParams()
		return ConvertPlan{}, fmt.Errorf("convert plan: %w", err)
	}
	return o.plan(true)
}
