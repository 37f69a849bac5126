package convert

import (
	"fmt"

	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/tensor"
)

// specConfig applies a spec's fields over base, as with_args(**spec)() does:
// the spec wins even where it is unset.
func specConfig(base observers.Config, s *QuantizationSpec, perChannel bool) observers.Config {
	c := base
	c.DType = s.DType
	c.QuantMin, c.QuantMax = s.QuantMin, s.QuantMax
	c.QScheme = s.QScheme
	c.IsDynamic = s.IsDynamic
	if perChannel && s.ChAxis != nil {
		c.ChAxis = *s.ChAxis
	}
	return c
}

// MinMaxObserverCtor returns a constructor of MinMaxObserver with base as
// the with_args defaults (eps, reduce_range, ...).
func MinMaxObserverCtor(base observers.Config) ObserverCtor {
	return func(s *QuantizationSpec) (observers.Observer, error) {
		return observers.NewMinMaxObserver(specConfig(base, s, false))
	}
}

// MovingAverageMinMaxObserverCtor returns a constructor of
// MovingAverageMinMaxObserver.
func MovingAverageMinMaxObserverCtor(base observers.Config) ObserverCtor {
	return func(s *QuantizationSpec) (observers.Observer, error) {
		return observers.NewMovingAverageMinMaxObserver(specConfig(base, s, false))
	}
}

// PerChannelMinMaxObserverCtor returns a constructor of
// PerChannelMinMaxObserver; the spec's ch_axis is passed through.
func PerChannelMinMaxObserverCtor(base observers.Config) ObserverCtor {
	return func(s *QuantizationSpec) (observers.Observer, error) {
		return observers.NewPerChannelMinMaxObserver(specConfig(base, s, true))
	}
}

// HistogramObserverCtor returns a constructor of HistogramObserver.
func HistogramObserverCtor(base observers.Config) ObserverCtor {
	return func(s *QuantizationSpec) (observers.Observer, error) {
		return observers.NewHistogramObserver(specConfig(base, s, false))
	}
}

// PlaceholderObserverCtor returns a constructor of PlaceholderObserver with
// base's eps (dtype, range, qscheme and is_dynamic come from the spec).
func PlaceholderObserverCtor(base observers.PlaceholderConfig) ObserverCtor {
	return func(s *QuantizationSpec) (observers.Observer, error) {
		c := base
		c.DType = s.DType
		c.QuantMin, c.QuantMax = s.QuantMin, s.QuantMax
		c.QScheme = s.QScheme
		c.IsDynamic = s.IsDynamic
		return observers.NewPlaceholderObserver(c)
	}
}

// affineConfig applies the spec over base: quant_min and quant_max are
// constructor arguments of the affine observers; dtype, qscheme and
// is_dynamic go to their ignored kwargs, except that the placeholder
// observer honours is_dynamic.
func affineConfig(base observers.AffineConfig, s *QuantizationSpec) observers.AffineConfig {
	c := base
	c.QuantMin, c.QuantMax = s.QuantMin, s.QuantMax
	c.IsDynamic = s.IsDynamic
	return c
}

// AffineQuantizedMinMaxObserverCtor returns a constructor of
// AffineQuantizedMinMaxObserver (always static).
func AffineQuantizedMinMaxObserverCtor(base observers.AffineConfig) ObserverCtor {
	return func(s *QuantizationSpec) (observers.Observer, error) {
		return observers.NewAffineQuantizedMinMaxObserver(affineConfig(base, s))
	}
}

// AffineQuantizedPlaceholderObserverCtor returns a constructor of
// AffineQuantizedPlaceholderObserver.
func AffineQuantizedPlaceholderObserverCtor(base observers.AffineConfig) ObserverCtor {
	return func(s *QuantizationSpec) (observers.Observer, error) {
		return observers.NewAffineQuantizedPlaceholderObserver(affineConfig(base, s))
	}
}

// derivedObserver is torchao's DerivedObserverOrFakeQuantize: an identity
// module whose qparams come from other observers.
type derivedObserver struct {
	spec *DerivedQuantizationSpec
	from []observers.Observer
}

var _ observers.Observer = (*derivedObserver)(nil)

func (d *derivedObserver) Forward(args []any) (any, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("DerivedObserverOrFakeQuantize: want 1 argument, got %d", len(args))
	}
	return args[0], nil
}

func (d *derivedObserver) Observe(*tensor.Tensor) error { return nil }

func (d *derivedObserver) CalculateQParams() (observers.QParams, error) {
	if d.spec.DeriveQParams == nil {
		return observers.QParams{}, fmt.Errorf("DerivedObserverOrFakeQuantize: %w: no derive_qparams_fn", observers.ErrConfig)
	}
	s, zp, err := d.spec.DeriveQParams(d.from)
	if err != nil {
		return observers.QParams{}, err
	}
	return observers.QParams{Scale: s, ZeroPoint: zp}, nil
}

func (d *derivedObserver) Class() string { return "DerivedObserverOrFakeQuantize" }

func (d *derivedObserver) Plan() (observers.ConvertPlan, error) {
	qmin, qmax, _, err := observers.CalculateQMinQMax(d.spec.QuantMin, d.spec.QuantMax, d.spec.DType, false)
	if err != nil {
		return observers.ConvertPlan{}, err
	}
	qp, err := d.CalculateQParams()
	if err != nil {
		return observers.ConvertPlan{}, err
	}
	p := observers.ConvertPlan{Dtype: d.spec.DType.Underlying(), QuantMin: qmin, QuantMax: qmax}
	if d.spec.QScheme.IsPerChannel() {
		if d.spec.ChAxis == nil {
			return observers.ConvertPlan{}, fmt.Errorf("DerivedObserverOrFakeQuantize: %w: ch_axis must be set for per-channel qscheme %s", observers.ErrConfig, d.spec.QScheme)
		}
		p.Kind = observers.PlanPerChannel
		p.Axis = *d.spec.ChAxis
		p.ScaleTensor, p.ZeroPointTensor = qp.Scale, qp.ZeroPoint
		return p, nil
	}
	s, err := qp.Scale.Float64s()
	if err != nil || len(s) == 0 {
		return observers.ConvertPlan{}, fmt.Errorf("DerivedObserverOrFakeQuantize: derived scale: want one value, got %v (%v)", s, err)
	}
	z, err := qp.ZeroPoint.Float64s()
	if err != nil || len(z) == 0 {
		return observers.ConvertPlan{}, fmt.Errorf("DerivedObserverOrFakeQuantize: derived zero point: want one value, got %v (%v)", z, err)
	}
	p.Kind = observers.PlanPerTensor
	p.Scale = float64(float32(s[0]))
	p.ZeroPoint = int64(z[0])
	return p, nil
}
