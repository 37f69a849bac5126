package observers

import (
	"fmt"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// PerChannelMinMaxObserver records a running min and max per slice along
// ChAxis (torch PerChannelMinMaxObserver) and computes per-channel qparams.
// Only per-channel qschemes are allowed, and it cannot be dynamic. When
// Averaging is on (MovingAveragePerChannelMinMaxObserver) later batches
// update an exponential moving average instead.
type PerChannelMinMaxObserver struct {
	uniformBase
	class          string
	chAxis         int
	averaging      bool
	c              float32
	minVal, maxVal []float32 // empty before data
	lo, hi         []float32 // Observe's per-batch scratch
	seen           []bool
}

var _ Observer = (*PerChannelMinMaxObserver)(nil)

// NewPerChannelMinMaxObserver returns the observer for c; the qscheme
// defaults to per_channel_affine.
func NewPerChannelMinMaxObserver(c Config) (*PerChannelMinMaxObserver, error) {
	return newPerChannel("PerChannelMinMaxObserver", c, false)
}

// NewMovingAveragePerChannelMinMaxObserver returns the moving-average
// per-channel observer (class MovingAveragePerChannelMinMaxObserver);
// c.AveragingConstant defaults to 0.01.
func NewMovingAveragePerChannelMinMaxObserver(c Config) (*PerChannelMinMaxObserver, error) {
	return newPerChannel("MovingAveragePerChannelMinMaxObserver", c, true)
}

func newPerChannel(class string, c Config, averaging bool) (*PerChannelMinMaxObserver, error) {
	b, err := newUniformBase(class, c, PerChannelAffine)
	if err != nil {
		return nil, err
	}
	if !b.qscheme.IsPerChannel() {
		return nil, fmt.Errorf("%s: %w: qscheme %s: want a per_channel qscheme", class, ErrConfig, b.qscheme)
	}
	if b.isDynamic {
		return nil, fmt.Errorf("%s: %w: dynamic quantization is not supported", class, ErrConfig)
	}
	o := &PerChannelMinMaxObserver{uniformBase: b, class: class, chAxis: c.ChAxis, averaging: averaging}
	if averaging {
		if o.c, err = averagingConstant(class, c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Class returns "PerChannelMinMaxObserver" or
// "MovingAveragePerChannelMinMaxObserver".
func (o *PerChannelMinMaxObserver) Class() string { return o.class }

// ChAxis returns the channel axis as configured.
func (o *PerChannelMinMaxObserver) ChAxis() int { return o.chAxis }

// Forward records the statistics of its one tensor argument and returns it.
func (o *PerChannelMinMaxObserver) Forward(args []any) (any, error) {
	return forward(o, args)
}

// Observe reduces x to a min and max per channel and merges them into the
// running statistics. The channel count must stay the same between calls.
func (o *PerChannelMinMaxObserver) Observe(x *tensor.Tensor) error {
	if x == nil {
		return fmt.Errorf("%s: %w: nil tensor", o.class, ErrInput)
	}
	if x.Numel() == 0 {
		return nil
	}
	shape := x.Shape()
	ax := o.chAxis
	if ax < 0 {
		ax += len(shape)
	}
	if ax < 0 || ax >= len(shape) {
		return fmt.Errorf("%s: %w: ch_axis %d out of range for input of shape %v", o.class, ErrInput, o.chAxis, shape)
	}
	v, err := floatInput(o.class, x)
	if err != nil {
		return err
	}
	C := shape[ax]
	inner := tensor.Numel(shape[ax+1:])
	if cap(o.lo) < C {
		o.lo, o.hi, o.seen = make([]float32, C), make([]float32, C), make([]bool, C)
	}
	lo, hi, seen := o.lo[:C], o.hi[:C], o.seen[:C]
	clear(seen)
	// Each channel's elements are visited in index order, block by block
	// (outer index, channel, inner run), so the NaN rule (the first NaN
	// sticks) sees them as a flat walk would.
	for base := 0; base < len(v); base += C * inner {
		for ch := range C {
			run := v[base+ch*inner : base+(ch+1)*inner]
			l, h := lo[ch], hi[ch]
			if !seen[ch] {
				l, h, seen[ch] = run[0], run[0], true
			}
			if useAVX2 && len(run) >= minMaxVecLen && l == l {
				// aminmax's first-equal rule is the walk's; a NaN-free run
				// merges into a NaN-free running pair as one more element.
				if rl, rh, ok := aminmaxAVX2(run); ok {
					if rl < l {
						l = rl
					}
					if rh > h {
						h = rh
					}
					lo[ch], hi[ch] = l, h
					continue
				}
			}
			for _, e := range run {
				switch {
				case l != l:
				case e != e:
					l, h = e, e
				default:
					if e < l {
						l = e
					}
					if e > h {
						h = e
					}
				}
			}
			lo[ch], hi[ch] = l, h
		}
	}
	if len(o.minVal) == 0 {
		o.minVal, o.maxVal = slices.Clone(lo), slices.Clone(hi)
		return nil
	}
	if len(o.minVal) != C {
		return fmt.Errorf("%s: %w: input of shape %v has %d channels on axis %d, earlier inputs had %d", o.class, ErrInput, shape, C, ax, len(o.minVal))
	}
	for i := range lo {
		if o.averaging {
			o.minVal[i] = movingAverage(o.minVal[i], lo[i], o.c)
			o.maxVal[i] = movingAverage(o.maxVal[i], hi[i], o.c)
		} else {
			o.minVal[i] = minimum(lo[i], o.minVal[i])
			o.maxVal[i] = maximum(hi[i], o.maxVal[i])
		}
	}
	return nil
}

// MinMax returns copies of the per-channel min_val and max_val (empty
// before any data).
func (o *PerChannelMinMaxObserver) MinMax() (minVal, maxVal []float32) {
	return append([]float32(nil), o.minVal...), append([]float32(nil), o.maxVal...)
}

// CalculateQParams returns scale float32 [C] and zero point int32 [C]
// (per_channel_affine), int64 [C] (per_channel_symmetric) or float32 [C]
// (per_channel_affine_float_qparams).
func (o *PerChannelMinMaxObserver) CalculateQParams() (QParams, error) {
	return o.calcUniformQParams(o.class, o.minVal, o.maxVal, false)
}

// Plan describes the convert replacement (spec section 2.4).
func (o *PerChannelMinMaxObserver) Plan() (ConvertPlan, error) { return uniformPlan(o, &o.uniformBase) }
