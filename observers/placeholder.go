package observers

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

// PlaceholderObserver records nothing; it carries the dtype, range,
// qscheme and eps that convert needs for dynamic quantization or a
// float16 cast. CalculateQParams always fails, as in PyTorch.
type PlaceholderObserver struct {
	dtype      DType
	qscheme    QScheme
	qmin, qmax *int64
	eps        float64
	isDynamic  bool
}

var _ Observer = (*PlaceholderObserver)(nil)

// PlaceholderConfig configures a PlaceholderObserver. Zero fields take
// PyTorch's defaults: dtype float32, qscheme per_tensor_affine, eps the
// float32 eps (as a plain float, not a buffer).
type PlaceholderConfig struct {
	DType              DType   // the target dtype; zero means float32
	QScheme            QScheme // zero means per_tensor_affine
	QuantMin, QuantMax *int64  // the quant range; nil is None
	Eps                float64 // zero means the float32 eps
	IsDynamic          bool    // whether the observer stands for dynamic quantization
}

// NewPlaceholderObserver returns a PlaceholderObserver for c.
func NewPlaceholderObserver(c PlaceholderConfig) (*PlaceholderObserver, error) {
	o := &PlaceholderObserver{dtype: c.DType, qscheme: c.QScheme, qmin: c.QuantMin, qmax: c.QuantMax, eps: c.Eps, isDynamic: c.IsDynamic}
	if o.dtype == DTypeUnset {
		o.dtype = Float32
	}
	if o.dtype >= numObserverDTypes {
		return nil, fmt.Errorf("PlaceholderObserver: %w: unknown dtype %s", ErrConfig, o.dtype)
	}
	if o.qscheme == QSchemeUnset {
		o.qscheme = PerTensorAffine
	}
	if o.eps == 0 {
		o.eps = Float32Eps
	}
	return o, nil
}

// Class returns "PlaceholderObserver".
func (o *PlaceholderObserver) Class() string { return "PlaceholderObserver" }

// DType returns the observer's dtype.
func (o *PlaceholderObserver) DType() DType { return o.dtype }

// IsDynamic reports whether the observer stands for dynamic quantization.
func (o *PlaceholderObserver) IsDynamic() bool { return o.isDynamic }

// Forward returns its one tensor argument.
func (o *PlaceholderObserver) Forward(args []any) (any, error) { return forward(o, args) }

// Observe accepts any tensor and records nothing.
func (o *PlaceholderObserver) Observe(x *tensor.Tensor) error {
	if x == nil {
		return fmt.Errorf("%s: %w: nil tensor", o.Class(), ErrInput)
	}
	return nil
}

// CalculateQParams always fails with ErrNoQParams.
func (o *PlaceholderObserver) CalculateQParams() (QParams, error) {
	return QParams{}, fmt.Errorf("%s: %w: calculate_qparams should not be called for PlaceholderObserver", o.Class(), ErrNoQParams)
}

// Plan returns PlanDynamic (int8/uint8, with the observer's eps as the
// literal), PlanFloat16 for dtype float16, and PlanRemove for anything
// else that convert does not quantize statically (float32 for a bias). A
// static placeholder with a quantized dtype has no qparams: an error.
func (o *PlaceholderObserver) Plan() (ConvertPlan, error) {
	switch {
	case o.isDynamic:
		qmin, qmax, _, err := CalculateQMinQMax(o.qmin, o.qmax, o.dtype, false)
		if err != nil {
			return ConvertPlan{}, fmt.Errorf("%s: convert plan: %w", o.Class(), err)
		}
		if o.qmin != nil && o.qmax != nil {
			qmin, qmax = *o.qmin, *o.qmax
		}
		return dynamicPlan(o.Class(), o.dtype, o.qscheme, qmin, qmax, o.eps)
	case o.dtype == Float16:
		return ConvertPlan{Kind: PlanFloat16}, nil
	case !o.dtype.convertSupported():
		return ConvertPlan{Kind: PlanRemove}, nil
	}
	_, err := o.CalculateQParams()
	return ConvertPlan{}, fmt.Errorf("convert plan: %w", err)
}

// FixedQParamsObserver returns fixed qparams regardless of its input
// (torch FixedQParamsObserver): scale float32 [1], zero point int32 [1].
type FixedQParamsObserver struct {
	scale      float32
	zeroPoint  int32
	dtype      DType
	qscheme    QScheme
	qmin, qmax int64
}

var _ Observer = (*FixedQParamsObserver)(nil)

// NewFixedQParamsObserver returns the observer. dtype defaults to quint8,
// qscheme to per_tensor_affine; the range is as given (PyTorch's default
// is 0..255).
func NewFixedQParamsObserver(scale float64, zeroPoint int64, dtype DType, qscheme QScheme, quantMin, quantMax int64) (*FixedQParamsObserver, error) {
	if dtype == DTypeUnset {
		dtype = QUInt8
	}
	if qscheme == QSchemeUnset {
		qscheme = PerTensorAffine
	}
	if qscheme.IsPerChannel() {
		return nil, fmt.Errorf("FixedQParamsObserver: %w: qscheme %s: want a per-tensor qscheme", ErrConfig, qscheme)
	}
	if !(scale > 0) {
		return nil, fmt.Errorf("FixedQParamsObserver: %w: scale %g: want a positive number", ErrConfig, scale)
	}
	if quantMin >= quantMax || zeroPoint < quantMin || zeroPoint > quantMax {
		return nil, fmt.Errorf("FixedQParamsObserver: %w: zero point %d and range [%d, %d]: want quant_min < quant_max and the zero point inside", ErrConfig, zeroPoint, quantMin, quantMax)
	}
	return &FixedQParamsObserver{scale: float32(scale), zeroPoint: int32(zeroPoint), dtype: dtype, qscheme: qscheme, qmin: quantMin, qmax: quantMax}, nil
}

// Class returns "FixedQParamsObserver".
func (o *FixedQParamsObserver) Class() string { return "FixedQParamsObserver" }

// Forward returns its one tensor argument.
func (o *FixedQParamsObserver) Forward(args []any) (any, error) { return forward(o, args) }

// Observe accepts any tensor and records nothing.
func (o *FixedQParamsObserver) Observe(x *tensor.Tensor) error {
	if x == nil {
		return fmt.Errorf("%s: %w: nil tensor", o.Class(), ErrInput)
	}
	return nil
}

// CalculateQParams returns the fixed scale (float32 [1]) and zero point
// (int32 [1]).
func (o *FixedQParamsObserver) CalculateQParams() (QParams, error) {
	return QParams{
		Scale:     tensor.MustFromData(tensor.Float32, []int{1}, []float32{o.scale}),
		ZeroPoint: tensor.MustFromData(tensor.Int32, []int{1}, []int32{o.zeroPoint}),
	}, nil
}

// Plan returns a PlanPerTensor with the fixed qparams.
func (o *FixedQParamsObserver) Plan() (ConvertPlan, error) {
	if !o.dtype.convertSupported() {
		return ConvertPlan{Kind: PlanRemove}, nil
	}
	return ConvertPlan{Kind: PlanPerTensor, Dtype: o.dtype.Underlying(), QuantMin: o.qmin, QuantMax: o.qmax,
		Scale: float64(o.scale), ZeroPoint: int64(o.zeroPoint)}, nil
}
