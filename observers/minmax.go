package observers

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

// MinMaxObserver records the running minimum and maximum of everything it
// sees (torch MinMaxObserver) and computes per-tensor qparams from them.
// Only per-tensor qschemes are allowed. An infinite element becomes the
// min or max, as in PyTorch; CalculateQParams then fails.
type MinMaxObserver struct {
	uniformBase
	minVal, maxVal float32
}

var _ Observer = (*MinMaxObserver)(nil)

// NewMinMaxObserver returns a MinMaxObserver for c; the qscheme defaults to
// per_tensor_affine and the dtype to quint8.
func NewMinMaxObserver(c Config) (*MinMaxObserver, error) {
	b, err := newUniformBase("MinMaxObserver", c, PerTensorAffine)
	if err != nil {
		return nil, err
	}
	if b.qscheme.IsPerChannel() {
		return nil, fmt.Errorf("MinMaxObserver: %w: qscheme %s: want per_tensor_affine or per_tensor_symmetric", ErrConfig, b.qscheme)
	}
	return &MinMaxObserver{uniformBase: b, minVal: posInf32, maxVal: negInf32}, nil
}

// Class returns "MinMaxObserver".
func (o *MinMaxObserver) Class() string { return "MinMaxObserver" }

// Forward records the statistics of its one tensor argument and returns it.
func (o *MinMaxObserver) Forward(args []any) (any, error) { return forward(o, args) }

// Observe updates min_val = min(aminmax(x).min, min_val), likewise max_val.
func (o *MinMaxObserver) Observe(x *tensor.Tensor) error {
	v, err := floatInput(o.Class(), x)
	if err != nil || len(v) == 0 {
		return err
	}
	lo, hi := aminmax(v)
	o.minVal = minimum(lo, o.minVal)
	o.maxVal = maximum(hi, o.maxVal)
	return nil
}

// MinMax returns the recorded min_val and max_val (+Inf and -Inf before
// any data).
func (o *MinMaxObserver) MinMax() (minVal, maxVal float32) { return o.minVal, o.maxVal }

// CalculateQParams returns scale float32 [1] and zero point int32 [1]
// (affine) or int64 [1] (symmetric).
func (o *MinMaxObserver) CalculateQParams() (QParams, error) {
	return o.calcUniformQParams(o.Class(), []float32{o.minVal}, []float32{o.maxVal}, true)
}

// Plan describes the convert replacement (spec section 2.4).
func (o *MinMaxObserver) Plan() (ConvertPlan, error) { return uniformPlan(o, &o.uniformBase) }

// MovingAverageMinMaxObserver keeps an exponential moving average of the
// per-batch min and max: the first batch sets them, later ones do
// min += c*(cur_min - min) in float32 (torch MovingAverageMinMaxObserver).
type MovingAverageMinMaxObserver struct {
	uniformBase
	c              float32
	minVal, maxVal float32
}

var _ Observer = (*MovingAverageMinMaxObserver)(nil)

// NewMovingAverageMinMaxObserver returns the observer for c; c.AveragingConstant
// defaults to 0.01, and a dynamic observer requires it to be 1.
func NewMovingAverageMinMaxObserver(c Config) (*MovingAverageMinMaxObserver, error) {
	const class = "MovingAverageMinMaxObserver"
	b, err := newUniformBase(class, c, PerTensorAffine)
	if err != nil {
		return nil, err
	}
	if b.qscheme.IsPerChannel() {
		return nil, fmt.Errorf("%s: %w: qscheme %s: want per_tensor_affine or per_tensor_symmetric", class, ErrConfig, b.qscheme)
	}
	ac, err := averagingConstant(class, c)
	if err != nil {
		return nil, err
	}
	return &MovingAverageMinMaxObserver{uniformBase: b, c: ac, minVal: posInf32, maxVal: negInf32}, nil
}

func averagingConstant(class string, c Config) (float32, error) {
	ac := c.AveragingConstant
	if ac == 0 {
		ac = 0.01
	}
	if c.IsDynamic && ac != 1 {
		return 0, fmt.Errorf("%s: %w: a dynamic observer needs averaging_constant 1, got %g", class, ErrConfig, ac)
	}
	return float32(ac), nil
}

// Class returns "MovingAverageMinMaxObserver".
func (o *MovingAverageMinMaxObserver) Class() string { return "MovingAverageMinMaxObserver" }

// Forward records the statistics of its one tensor argument and returns it.
func (o *MovingAverageMinMaxObserver) Forward(args []any) (any, error) {
	return forward(o, args)
}

// Observe updates the moving averages with one batch.
func (o *MovingAverageMinMaxObserver) Observe(x *tensor.Tensor) error {
	v, err := floatInput(o.Class(), x)
	if err != nil || len(v) == 0 {
		return err
	}
	lo, hi := aminmax(v)
	if o.minVal == posInf32 && o.maxVal == negInf32 {
		o.minVal, o.maxVal = lo, hi
		return nil
	}
	o.minVal = movingAverage(o.minVal, lo, o.c)
	o.maxVal = movingAverage(o.maxVal, hi, o.c)
	return nil
}

// movingAverage is old + c*(cur - old), each op rounded to float32.
func movingAverage(old, cur, c float32) float32 {
	d := cur - old
	p := float32(c * d)
	return old + p
}

// MinMax returns the averaged min_val and max_val.
func (o *MovingAverageMinMaxObserver) MinMax() (minVal, maxVal float32) { return o.minVal, o.maxVal }

// CalculateQParams returns scale float32 [1] and zero point int32 [1]
// (affine) or int64 [1] (symmetric).
func (o *MovingAverageMinMaxObserver) CalculateQParams() (QParams, error) {
	return o.calcUniformQParams(o.Class(), []float32{o.minVal}, []float32{o.maxVal}, true)
}

// Plan describes the convert replacement (spec section 2.4).
func (o *MovingAverageMinMaxObserver) Plan() (ConvertPlan, error) {
	return uniformPlan(o, &o.uniformBase)
}
