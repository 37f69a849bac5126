package observers

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Observer is what prepare inserts on a graph edge. Forward (the
// [fxgraph.Module] contract) takes exactly one *tensor.Tensor argument,
// records its statistics and returns it unchanged.
//
// Every Observer satisfies fxgraph.Module; Forward's []any and any are
// the same types as []ops.Value and ops.Value.
type Observer interface {
	// Forward records the statistics of its one *tensor.Tensor argument
	// and returns that argument unchanged.
	Forward(args []any) (any, error)
	// Observe records the statistics of x. An empty tensor changes
	// nothing. On error the observer's state is unchanged.
	Observe(x *tensor.Tensor) error
	// CalculateQParams returns scale and zero point as PyTorch's
	// calculate_qparams does (dtypes and shapes included).
	CalculateQParams() (QParams, error)
	// Plan describes what convert inserts in place of the observer.
	Plan() (ConvertPlan, error)
	// Class returns PyTorch's class name, e.g. "MinMaxObserver".
	Class() string
}

// QParams holds the result of CalculateQParams. Scale is float32;
// ZeroPoint is int32 (affine qschemes), int64 (symmetric), or float32
// (per_channel_affine_float_qparams and the affine observers' default).
// Per-tensor results have shape [1], per-channel results [C].
type QParams struct {
	Scale     *tensor.Tensor // float32 scales
	ZeroPoint *tensor.Tensor // zero points, one per scale
}

// Config configures the uniform-quantization observers (MinMax,
// PerChannelMinMax, the moving-average variants and Histogram), with the
// constructor arguments of torchao's UniformQuantizationObserverBase. A
// zero field takes PyTorch's default, as noted per field.
type Config struct {
	// DType is the quantized dtype; unset means torch.quint8.
	DType DType
	// QScheme is the scheme; unset means per_tensor_affine for per-tensor
	// observers and per_channel_affine for per-channel ones.
	QScheme QScheme
	// ReduceRange halves the quant range (deprecated in PyTorch).
	ReduceRange bool
	// QuantMin and QuantMax are the custom range; nil is None. The range
	// counts as customized only when both are set.
	QuantMin, QuantMax *int64
	// Eps is the lower bound of the scale; 0 means float32 eps (2**-23).
	// It is stored as a float32 buffer, as PyTorch does.
	Eps float64
	// ChAxis is the channel axis of the per-channel observers; negative
	// counts from the end.
	ChAxis int
	// AveragingConstant is the moving-average weight; 0 means 0.01.
	AveragingConstant float64
	// IsDynamic marks the observer as standing for dynamic quantization.
	IsDynamic bool
	// Bins is the HistogramObserver bin count; 0 means 2048.
	Bins int
}

// Int returns a pointer to v, for Config.QuantMin and QuantMax.
func Int(v int64) *int64 { return &v }

// uniformBase holds the resolved fields of UniformQuantizationObserverBase.
type uniformBase struct {
	dtype       DType
	qscheme     QScheme
	reduceRange bool
	qmin, qmax  int64
	customized  bool
	eps         float32 // the eps buffer
	epsArg      float64 // eps as passed
	isDynamic   bool
}

func newUniformBase(class string, c Config, defQScheme QScheme) (uniformBase, error) {
	b := uniformBase{dtype: c.DType, qscheme: c.QScheme, reduceRange: c.ReduceRange, epsArg: c.Eps, isDynamic: c.IsDynamic}
	if b.dtype == DTypeUnset {
		b.dtype = QUInt8
	}
	if b.qscheme == QSchemeUnset {
		b.qscheme = defQScheme
	}
	if b.epsArg == 0 {
		b.epsArg = Float32Eps
	}
	if !(b.epsArg > 0) || math.IsInf(b.epsArg, 0) {
		return b, fmt.Errorf("%s: %w: eps %g: want a positive finite number", class, ErrConfig, c.Eps)
	}
	b.eps = float32(b.epsArg)
	if !b.dtype.uniformSupported() {
		return b, fmt.Errorf("%s: %w: dtype %s: want one of qint8, quint8, quint4x2, qint32, int8, uint8, int16, int32, float8_e5m2, float8_e4m3fn, uint16", class, ErrConfig, b.dtype)
	}
	if b.qscheme == QSchemeUnset || b.qscheme >= numQSchemes {
		return b, fmt.Errorf("%s: %w: unknown qscheme %s", class, ErrConfig, b.qscheme)
	}
	if b.qscheme.IsSymmetric() && b.reduceRange && b.dtype == QUInt8 {
		return b, fmt.Errorf("%s: %w: cannot reduce range for symmetric quantization for quint8", class, ErrConfig)
	}
	var err error
	b.qmin, b.qmax, b.customized, err = CalculateQMinQMax(c.QuantMin, c.QuantMax, b.dtype, b.reduceRange)
	if err != nil {
		return b, fmt.Errorf("%s: %w", class, err)
	}
	return b, nil
}

// DType returns the observer's dtype.
func (b *uniformBase) DType() DType { return b.dtype }

// QScheme returns the observer's qscheme.
func (b *uniformBase) QScheme() QScheme { return b.qscheme }

// QuantRange returns the resolved quant_min and quant_max.
func (b *uniformBase) QuantRange() (qmin, qmax int64) { return b.qmin, b.qmax }

// Eps returns the eps buffer value.
func (b *uniformBase) Eps() float32 { return b.eps }

// IsDynamic reports whether the observer stands for dynamic quantization.
func (b *uniformBase) IsDynamic() bool { return b.isDynamic }

// forward implements fxgraph.Module for every observer.
func forward(o Observer, args []any) (any, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%s: %w: want 1 argument, got %d", o.Class(), ErrInput, len(args))
	}
	x, ok := args[0].(*tensor.Tensor)
	if !ok || x == nil {
		return nil, fmt.Errorf("%s: %w: argument 0: want a tensor, got %T", o.Class(), ErrInput, args[0])
	}
	if err := o.Observe(x); err != nil {
		return nil, err
	}
	return x, nil
}

// floatInput returns x's elements as float32 in row-major order, as
// x.to(torch.float32) gives them. Real float and integer dtypes are
// accepted; bool, complex, float8 and unknown dtypes are an error.
func floatInput(class string, x *tensor.Tensor) ([]float32, error) {
	if x == nil {
		return nil, fmt.Errorf("%s: %w: nil tensor", class, ErrInput)
	}
	d := x.DType()
	switch {
	case d == tensor.Float32:
		return tensor.Data[float32](x)
	case d == tensor.Float64 || d == tensor.Float16 || d == tensor.BFloat16 || d.IsInteger():
		v, err := x.Float64s()
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %v", class, ErrInput, err)
		}
		out := make([]float32, len(v))
		for i, f := range v {
			out[i] = float32(f)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: %w: input dtype %s: want a real floating-point or integer tensor", class, ErrInput, d)
}

// minimum is torch.minimum on float32: NaN if either is NaN, else the
// smaller, a on a tie (std::min(a, b)).
func minimum(a, b float32) float32 {
	if a != a || b != b {
		return float32(math.NaN())
	}
	if b < a {
		return b
	}
	return a
}

// maximum is torch.maximum on float32: NaN if either is NaN, else the
// larger, a on a tie.
func maximum(a, b float32) float32 {
	if a != a || b != b {
		return float32(math.NaN())
	}
	if b > a {
		return b
	}
	return a
}

// aminmax returns the min and max of a non-empty slice, NaN if any element
// is NaN. On ties the first element wins. Long slices run on the AVX2
// kernel where the CPU has it.
func aminmax(v []float32) (lo, hi float32) {
	if useAVX2 && len(v) >= minMaxVecLen {
		if lo, hi, ok := aminmaxAVX2(v); ok {
			return lo, hi
		}
	}
	return aminmaxGo(v)
}

// minMaxVecLen is the shortest slice aminmax gives to the AVX2 kernel.
const minMaxVecLen = 64

// aminmaxAVX2 is aminmax for a slice of at least 8 elements without NaN;
// ok is false if v holds a NaN. The scalar loop keeps the first element
// equal to the minimum (the maximum); equal numbers have equal bits except
// zeros, so a zero result is replaced by v's first zero.
func aminmaxAVX2(v []float32) (lo, hi float32, ok bool) {
	nv := len(v) / 8
	var l, h [8]float32
	if minMaxAVX2(&v[0], nv, &l, &h) {
		return 0, 0, false
	}
	lo, hi = l[0], h[0]
	for i := 1; i < 8; i++ {
		if l[i] < lo {
			lo = l[i]
		}
		if h[i] > hi {
			hi = h[i]
		}
	}
	for _, e := range v[8*nv:] {
		if e != e {
			return 0, 0, false
		}
		if e < lo {
			lo = e
		}
		if e > hi {
			hi = e
		}
	}
	if lo == 0 {
		lo = firstZero(v)
	}
	if hi == 0 {
		hi = firstZero(v)
	}
	return lo, hi, true
}

// firstZero returns v's first element equal to zero (of either sign).
func firstZero(v []float32) float32 {
	for _, e := range v {
		if e == 0 {
			return e
		}
	}
	return 0
}

// aminmaxGo is aminmax element by element.
func aminmaxGo(v []float32) (lo, hi float32) {
	lo, hi = v[0], v[0]
	for _, e := range v[1:] {
		if e != e {
			nan := float32(math.NaN())
			return nan, nan
		}
		if e < lo {
			lo = e
		}
		if e > hi {
			hi = e
		}
	}
	if lo != lo {
		return lo, lo
	}
	return lo, hi
}

// roundEven32 is torch.round on float32: half to even.
func roundEven32(v float32) float32 { return float32(math.RoundToEven(float64(v))) }

var posInf32 = float32(math.Inf(1))
var negInf32 = float32(math.Inf(-1))
