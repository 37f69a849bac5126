package observers_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Every observer is an fxgraph.Module.
var (
	_ fxgraph.Module = (*observers.MinMaxObserver)(nil)
	_ fxgraph.Module = (*observers.MovingAverageMinMaxObserver)(nil)
	_ fxgraph.Module = (*observers.PerChannelMinMaxObserver)(nil)
	_ fxgraph.Module = (*observers.HistogramObserver)(nil)
	_ fxgraph.Module = (*observers.PlaceholderObserver)(nil)
	_ fxgraph.Module = (*observers.FixedQParamsObserver)(nil)
	_ fxgraph.Module = (*observers.AffineQuantizedMinMaxObserver)(nil)
	_ fxgraph.Module = (*observers.AffineQuantizedPlaceholderObserver)(nil)
)

func f32(shape []int, v ...float32) *tensor.Tensor { return tensor.F32(shape, v...) }

func scaleOf(t *testing.T, qp observers.QParams) []float32 {
	t.Helper()
	v, err := tensor.Data[float32](qp.Scale)
	require.NoError(t, err)
	return v
}

func zpOf(t *testing.T, qp observers.QParams) []float64 {
	t.Helper()
	v, err := qp.ZeroPoint.Float64s()
	require.NoError(t, err)
	return v
}

func assertBits(t *testing.T, want, got float32, what string) {
	t.Helper()
	assert.Equal(t, math.Float32bits(want), math.Float32bits(got), "%s: want %g (%08x), got %g (%08x)",
		what, want, math.Float32bits(want), got, math.Float32bits(got))
}

func TestMinMaxQParams(t *testing.T) {
	eps := float32(math.Ldexp(1, -23))
	tests := []struct {
		name      string
		cfg       observers.Config
		in        []float32
		wantScale float32
		wantZP    float64
		wantZPDT  tensor.DType
	}{
		// min_neg = -2.5, max_pos = 252.5: scale = 255/255 = 1; zp = 0 -
		// round(-2.5) = 0 - (-2) = 2 (half to even).
		{"quint8 affine zp tie", observers.Config{}, []float32{-2.5, 252.5, 10}, 1, 2, tensor.Int32},
		// all zeros: scale clamps to eps = 2**-23, zp = 0.
		{"zeros eps clamp", observers.Config{}, []float32{0, 0, 0}, eps, 0, tensor.Int32},
		// custom eps 2**-12 (the XNNPACK configs).
		{"custom eps", observers.Config{Eps: math.Ldexp(1, -12)}, []float32{0, 0}, float32(math.Ldexp(1, -12)), 0, tensor.Int32},
		// constant 3: min_neg = 0, max_pos = 3: scale = 3/255, zp = 0.
		{"constant", observers.Config{}, []float32{3, 3, 3}, float32(3) / 255, 0, tensor.Int32},
		// qint8 affine, constant 3: zp = -128 - round(0) = -128.
		{"qint8 constant", observers.Config{DType: observers.QInt8}, []float32{3, 3}, float32(3) / 255, -128, tensor.Int32},
		// reduce_range quint8: range 0..127, scale = 254/127 = 2, zp = 0 - round(-127/2 = -63.5) = 64.
		{"reduce_range", observers.Config{ReduceRange: true}, []float32{-127, 127}, 2, 64, tensor.Int32},
		// quint8 symmetric: scale = max(1, 2)/127.5, zp = 128.
		{"quint8 symmetric zp 128", observers.Config{QScheme: observers.PerTensorSymmetric}, []float32{-1, 2}, float32(2) / 127.5, 128, tensor.Int64},
		// quint8 symmetric with custom 0..15: zp = (0+15)//2 = 7, scale = 2/7.5.
		{"quint8 symmetric custom range", observers.Config{QScheme: observers.PerTensorSymmetric, QuantMin: observers.Int(0), QuantMax: observers.Int(15)}, []float32{-1, 2}, float32(2) / 7.5, 7, tensor.Int64},
		// qint8 symmetric reduce_range: -64..63, scale = 4/63.5, zp = 0.
		{"qint8 symmetric reduce_range", observers.Config{DType: observers.QInt8, QScheme: observers.PerTensorSymmetric, ReduceRange: true}, []float32{-4, 1}, float32(4) / 63.5, 0, tensor.Int64},
		// -0.0 and 0.0 only: scale eps, zp 0.
		{"negative zero", observers.Config{DType: observers.QInt8, QScheme: observers.PerTensorSymmetric}, []float32{float32(math.Copysign(0, -1)), 0}, eps, 0, tensor.Int64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := observers.NewMinMaxObserver(tt.cfg)
			require.NoError(t, err)
			out, err := o.Forward([]any{f32([]int{len(tt.in)}, tt.in...)})
			require.NoError(t, err)
			require.IsType(t, &tensor.Tensor{}, out)
			qp, err := o.CalculateQParams()
			require.NoError(t, err)
			assert.Equal(t, []int{1}, qp.Scale.Shape())
			assertBits(t, tt.wantScale, scaleOf(t, qp)[0], "scale")
			assert.Equal(t, []float64{tt.wantZP}, zpOf(t, qp))
			assert.Equal(t, tt.wantZPDT, qp.ZeroPoint.DType())
		})
	}
}

func TestQuantRange(t *testing.T) {
	tests := []struct {
		name         string
		cfg          observers.Config
		lo, hi       int64
		wantErrorCfg bool
	}{
		{"quint8 default", observers.Config{}, 0, 255, false},
		{"quint8 reduce", observers.Config{ReduceRange: true}, 0, 127, false},
		{"qint8 reduce", observers.Config{DType: observers.QInt8, ReduceRange: true}, -64, 63, false},
		{"int4 custom reduce", observers.Config{DType: observers.QInt8, QuantMin: observers.Int(-8), QuantMax: observers.Int(7), ReduceRange: true}, -4, 3, false},
		{"qint32", observers.Config{DType: observers.QInt32}, math.MinInt32, math.MaxInt32, false},
		{"int16", observers.Config{DType: observers.Int16}, -32768, 32767, false},
		{"quint4x2 falls back to 0..15", observers.Config{DType: observers.QUInt4x2}, 0, 15, false},
		{"only quant_min given is not custom", observers.Config{DType: observers.QInt8, QuantMin: observers.Int(-8)}, -128, 127, false},
		{"quant_min above zero", observers.Config{QuantMin: observers.Int(1), QuantMax: observers.Int(10)}, 0, 0, true},
		{"qint8 range too wide", observers.Config{DType: observers.QInt8, QuantMin: observers.Int(-200), QuantMax: observers.Int(200)}, 0, 0, true},
		{"symmetric reduce quint8", observers.Config{QScheme: observers.PerTensorSymmetric, ReduceRange: true}, 0, 0, true},
		{"per-channel qscheme", observers.Config{QScheme: observers.PerChannelAffine}, 0, 0, true},
		{"float32 dtype", observers.Config{DType: observers.Float32}, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := observers.NewMinMaxObserver(tt.cfg)
			if tt.wantErrorCfg {
				require.ErrorIs(t, err, observers.ErrConfig)
				return
			}
			require.NoError(t, err)
			lo, hi := o.QuantRange()
			assert.Equal(t, [2]int64{tt.lo, tt.hi}, [2]int64{lo, hi})
		})
	}
}

func TestMinMaxBadInput(t *testing.T) {
	t.Run("no data", func(t *testing.T) {
		o, err := observers.NewMinMaxObserver(observers.Config{})
		require.NoError(t, err)
		require.NoError(t, o.Observe(tensor.MustZeros(tensor.Float32, 0, 3)), "empty tensor is skipped")
		_, err = o.CalculateQParams()
		require.ErrorIs(t, err, observers.ErrNoData)
		_, err = o.Plan()
		require.ErrorIs(t, err, observers.ErrNoData)
	})
	t.Run("NaN propagates and fails qparams", func(t *testing.T) {
		o, err := observers.NewMinMaxObserver(observers.Config{})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{3}, 1, float32(math.NaN()), 2)))
		lo, hi := o.MinMax()
		assert.True(t, lo != lo && hi != hi, "min/max are NaN")
		require.NoError(t, o.Observe(f32([]int{1}, 5)))
		lo, _ = o.MinMax()
		assert.True(t, lo != lo, "NaN stays")
		_, err = o.CalculateQParams()
		require.ErrorIs(t, err, observers.ErrInvalidStats)
	})
	t.Run("inf becomes max and fails qparams", func(t *testing.T) {
		o, err := observers.NewMinMaxObserver(observers.Config{})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{2}, 1, float32(math.Inf(1)))))
		_, hi := o.MinMax()
		assert.True(t, math.IsInf(float64(hi), 1))
		_, err = o.CalculateQParams()
		require.ErrorIs(t, err, observers.ErrInvalidStats)
	})
	t.Run("wrong dtype", func(t *testing.T) {
		o, err := observers.NewMinMaxObserver(observers.Config{})
		require.NoError(t, err)
		err = o.Observe(tensor.MustZeros(tensor.Complex64, 2))
		require.ErrorIs(t, err, observers.ErrInput)
		assert.ErrorContains(t, err, "complex64")
	})
	t.Run("forward arguments", func(t *testing.T) {
		o, err := observers.NewMinMaxObserver(observers.Config{})
		require.NoError(t, err)
		_, err = o.Forward(nil)
		require.ErrorIs(t, err, observers.ErrInput)
		_, err = o.Forward([]any{int64(3)})
		require.ErrorIs(t, err, observers.ErrInput)
		x := f32([]int{1}, 1)
		out, err := o.Forward([]any{x})
		require.NoError(t, err)
		assert.Same(t, x, out)
	})
	t.Run("integer input is cast", func(t *testing.T) {
		o, err := observers.NewMinMaxObserver(observers.Config{})
		require.NoError(t, err)
		require.NoError(t, o.Observe(tensor.MustFromData(tensor.Int8, []int{2}, []int8{-3, 5})))
		lo, hi := o.MinMax()
		assert.Equal(t, [2]float32{-3, 5}, [2]float32{lo, hi})
	})
}

func TestMovingAverage(t *testing.T) {
	o, err := observers.NewMovingAverageMinMaxObserver(observers.Config{AveragingConstant: 0.5})
	require.NoError(t, err)
	require.NoError(t, o.Observe(f32([]int{2}, -2, 2)))
	require.NoError(t, o.Observe(tensor.MustZeros(tensor.Float32, 0)))
	require.NoError(t, o.Observe(f32([]int{2}, 0, 6)))
	lo, hi := o.MinMax()
	// -2 + 0.5*(0 - -2) = -1; 2 + 0.5*(6 - 2) = 4.
	assert.Equal(t, [2]float32{-1, 4}, [2]float32{lo, hi})
	_, err = observers.NewMovingAverageMinMaxObserver(observers.Config{IsDynamic: true})
	require.ErrorIs(t, err, observers.ErrConfig, "dynamic needs averaging_constant 1")
}

func TestPerChannel(t *testing.T) {
	t.Run("affine int32 zp, axis 1", func(t *testing.T) {
		o, err := observers.NewPerChannelMinMaxObserver(observers.Config{ChAxis: 1})
		require.NoError(t, err)
		// columns: [-2.5, 0, 252.5] and [0, 0, 0]
		require.NoError(t, o.Observe(f32([]int{3, 2}, -2.5, 0, 0, 0, 252.5, 0)))
		qp, err := o.CalculateQParams()
		require.NoError(t, err)
		assert.Equal(t, tensor.Int32, qp.ZeroPoint.DType())
		assertBits(t, 1, scaleOf(t, qp)[0], "scale 0")
		assertBits(t, float32(math.Ldexp(1, -23)), scaleOf(t, qp)[1], "scale 1")
		assert.Equal(t, []float64{2, 0}, zpOf(t, qp))
	})
	t.Run("middle axis, NaN", func(t *testing.T) {
		o, err := observers.NewPerChannelMinMaxObserver(observers.Config{ChAxis: 1})
		require.NoError(t, err)
		// [2, 2, 2], axis 1: channel 0 holds 1, NaN, 5, -7 (NaN wins, as
		// torch.aminmax propagates it); channel 1 holds 3, 4, -2, 9.
		nan := float32(math.NaN())
		require.NoError(t, o.Observe(f32([]int{2, 2, 2}, 1, nan, 3, 4, 5, -7, -2, 9)))
		lo, hi := o.MinMax()
		assert.True(t, lo[0] != lo[0] && hi[0] != hi[0], "channel 0: %v %v", lo[0], hi[0])
		assert.Equal(t, []float32{-2, 9}, []float32{lo[1], hi[1]})
	})
	t.Run("channel count changes", func(t *testing.T) {
		o, err := observers.NewPerChannelMinMaxObserver(observers.Config{})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{2, 1}, 1, 2)))
		require.ErrorIs(t, o.Observe(f32([]int{3, 1}, 1, 2, 3)), observers.ErrInput)
	})
	t.Run("axis out of range", func(t *testing.T) {
		o, err := observers.NewPerChannelMinMaxObserver(observers.Config{ChAxis: 2})
		require.NoError(t, err)
		require.ErrorIs(t, o.Observe(f32([]int{2, 1}, 1, 2)), observers.ErrInput)
	})
	t.Run("float qparams", func(t *testing.T) {
		o, err := observers.NewPerChannelMinMaxObserver(observers.Config{QScheme: observers.PerChannelAffineFloatQParams})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{1, 2}, 1, 256)))
		qp, err := o.CalculateQParams()
		require.NoError(t, err)
		// scale = (256-1)/255 = 1; zp = -1/1 = -1 (float).
		assertBits(t, 1, scaleOf(t, qp)[0], "scale")
		assert.Equal(t, tensor.Float32, qp.ZeroPoint.DType())
		assert.Equal(t, []float64{-1}, zpOf(t, qp))
	})
	t.Run("dynamic rejected", func(t *testing.T) {
		_, err := observers.NewPerChannelMinMaxObserver(observers.Config{IsDynamic: true})
		require.ErrorIs(t, err, observers.ErrConfig)
	})
}

func TestHistogramConstantInput(t *testing.T) {
	tests := []struct {
		name   string
		dtype  observers.DType
		wantZP float64
	}{
		// new_min = new_max = 2: min_neg = 0, max_pos = 2: scale = 2/255;
		// zp = qmin - round(0) = qmin.
		{"quint8", observers.QUInt8, 0},
		{"qint8", observers.QInt8, -128},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := observers.NewHistogramObserver(observers.Config{DType: tt.dtype})
			require.NoError(t, err)
			require.NoError(t, o.Observe(f32([]int{4}, 2, 2, 2, 2)))
			hist, lo, hi := o.State()
			assert.Equal(t, [2]float32{2, 2}, [2]float32{lo, hi})
			// histc widens [2, 2] to [1, 3]: bin = trunc((2-1)*2048/2) = 1024.
			assert.Equal(t, float32(4), hist[1024])
			nmin, nmax, err := o.SearchRange()
			require.NoError(t, err)
			assert.Equal(t, [2]float32{2, 2}, [2]float32{nmin, nmax})
			qp, err := o.CalculateQParams()
			require.NoError(t, err)
			assertBits(t, float32(2)/255, scaleOf(t, qp)[0], "scale")
			assert.Equal(t, []float64{tt.wantZP}, zpOf(t, qp))
		})
	}
}

func TestHistogramSpecialValues(t *testing.T) {
	t.Run("inf dropped", func(t *testing.T) {
		o, err := observers.NewHistogramObserver(observers.Config{Bins: 4})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{4}, 0, float32(math.Inf(1)), 4, float32(math.Inf(-1)))))
		hist, lo, hi := o.State()
		assert.Equal(t, [2]float32{0, 4}, [2]float32{lo, hi})
		// bins over [0, 4]: 0 -> 0, 4 -> bin 4 clamped to 3.
		assert.Equal(t, []float32{1, 0, 0, 1}, hist)
		require.NoError(t, o.Observe(f32([]int{1}, float32(math.Inf(1)))), "all-inf batch is skipped")
	})
	t.Run("NaN is an error, state unchanged", func(t *testing.T) {
		o, err := observers.NewHistogramObserver(observers.Config{Bins: 4})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{2}, 0, 4)))
		require.ErrorIs(t, o.Observe(f32([]int{2}, 1, float32(math.NaN()))), observers.ErrInput)
		hist, lo, hi := o.State()
		assert.Equal(t, []float32{1, 0, 0, 1}, hist)
		assert.Equal(t, [2]float32{0, 4}, [2]float32{lo, hi})
	})
	t.Run("same range adds", func(t *testing.T) {
		o, err := observers.NewHistogramObserver(observers.Config{Bins: 4})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{2}, 0, 4)))
		require.NoError(t, o.Observe(f32([]int{2}, 1, 2)))
		hist, _, _ := o.State()
		// 1 -> trunc(1*4/4) = 1, 2 -> 2.
		assert.Equal(t, []float32{1, 1, 1, 1}, hist)
	})
	t.Run("collapsed old range moves to its bin", func(t *testing.T) {
		o, err := observers.NewHistogramObserver(observers.Config{Bins: 4})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{3}, 1, 1, 1)))
		require.NoError(t, o.Observe(f32([]int{2}, 0, 4)))
		hist, lo, hi := o.State()
		assert.Equal(t, [2]float32{0, 4}, [2]float32{lo, hi})
		// old mass 3 at value 1 -> bin 1; new 0 -> bin 0, 4 -> bin 3.
		assert.Equal(t, []float32{1, 3, 0, 1}, hist)
	})
	t.Run("rebin keeps the total", func(t *testing.T) {
		o, err := observers.NewHistogramObserver(observers.Config{Bins: 4})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{4}, 0, 1, 2, 4)))
		require.NoError(t, o.Observe(f32([]int{1}, 8)))
		hist, lo, hi := o.State()
		assert.Equal(t, [2]float32{0, 8}, [2]float32{lo, hi})
		// old bins of width 1 over [0, 4] hold 1,1,1,1; the new bins have
		// width 2: sub-bin centres of old bins 0,1 fall in new bin 0 and
		// of old bins 2,3 in new bin 1; 8 lands in bin 3.
		assert.Equal(t, []float32{2, 2, 0, 1}, hist)
	})
	t.Run("no data", func(t *testing.T) {
		o, err := observers.NewHistogramObserver(observers.Config{})
		require.NoError(t, err)
		_, err = o.CalculateQParams()
		require.ErrorIs(t, err, observers.ErrNoData)
	})
	t.Run("config", func(t *testing.T) {
		_, err := observers.NewHistogramObserver(observers.Config{QScheme: observers.PerChannelAffine})
		require.ErrorIs(t, err, observers.ErrConfig)
		_, err = observers.NewHistogramObserver(observers.Config{IsDynamic: true})
		require.ErrorIs(t, err, observers.ErrConfig)
	})
}

func TestBlockSize(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
		g     observers.Granularity
		want  []int
		err   bool
	}{
		{"per tensor", []int{2, 6}, observers.PerTensor{}, []int{2, 6}, false},
		{"per axis 0", []int{2, 6}, observers.PerAxis{Axis: 0}, []int{1, 6}, false},
		{"per axis -1", []int{2, 6}, observers.PerAxis{Axis: -1}, []int{2, 1}, false},
		{"per group", []int{2, 6}, observers.PerGroup{GroupSize: 3}, []int{1, 3}, false},
		{"per group not dividing", []int{2, 6}, observers.PerGroup{GroupSize: 4}, nil, true},
		{"per token 3d", []int{2, 3, 6}, observers.PerToken{}, []int{1, 1, 6}, false},
		{"per row", []int{2, 6}, observers.NewPerRow(), []int{1, 6}, false},
		{"nil", []int{2, 6}, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := observers.BlockSize(tt.shape, tt.g)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestAffineMinMax(t *testing.T) {
	t.Run("per group symmetric int4", func(t *testing.T) {
		o, err := observers.NewAffineQuantizedMinMaxObserver(observers.AffineConfig{
			MappingType: observers.Symmetric, TargetDType: tensor.Int8, Granularity: observers.PerGroup{GroupSize: 2},
			QuantMin: observers.Int(-8), QuantMax: observers.Int(7)})
		require.NoError(t, err)
		_, err = o.Plan()
		require.ErrorIs(t, err, observers.ErrNoData)
		x := f32([]int{2, 4}, 1, -3, 0, 0.75, 7.5, 0, 0, 0)
		require.NoError(t, o.Observe(x))
		require.NoError(t, o.Observe(f32([]int{2, 4}, 0, 0, 1.5, 0, 0, 0, 0, 0)))
		qp, err := o.CalculateQParams()
		require.NoError(t, err)
		assert.Equal(t, []int{2, 2}, qp.Scale.Shape())
		// groups: amax 3, 1.5, 7.5, 0 -> /7.5 -> 0.4, 0.2, 1, eps.
		s := scaleOf(t, qp)
		assertBits(t, float32(3)/7.5, s[0], "scale 0")
		assertBits(t, float32(1.5)/7.5, s[1], "scale 1")
		assertBits(t, 1, s[2], "scale 2")
		assertBits(t, float32(math.Ldexp(1, -23)), s[3], "scale 3")
		assert.Equal(t, tensor.Float32, qp.ZeroPoint.DType(), "default zero point dtype is the min dtype")
		assert.Equal(t, []float64{0, 0, 0, 0}, zpOf(t, qp))
		p, err := o.Plan()
		require.NoError(t, err)
		assert.Equal(t, observers.PlanAffineStatic, p.Kind)
		assert.Equal(t, []int64{1, 2}, p.BlockSize)
		assert.Equal(t, tensor.Float32, p.OutputDType)
		assert.Equal(t, [2]int64{-8, 7}, [2]int64{p.QuantMin, p.QuantMax})
		assert.False(t, p.QuantRangeNone)
		require.ErrorIs(t, o.Observe(f32([]int{1, 4}, 1, 2, 3, 4)), observers.ErrInput, "shape change")
	})
	t.Run("per token asymmetric int32 zp", func(t *testing.T) {
		o, err := observers.NewAffineQuantizedMinMaxObserver(observers.AffineConfig{
			MappingType: observers.Asymmetric, TargetDType: tensor.Int8, Granularity: observers.PerToken{},
			ZeroPointDType: tensor.Int32})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{1, 2}, -1, 3)))
		qp, err := o.CalculateQParams()
		require.NoError(t, err)
		// scale = 4/255; zp = -128 - round(-1/(4/255) = -63.75) = -64.
		assertBits(t, float32(4)/255, scaleOf(t, qp)[0], "scale")
		assert.Equal(t, tensor.Int32, qp.ZeroPoint.DType())
		assert.Equal(t, []float64{-64}, zpOf(t, qp))
		p, err := o.Plan()
		require.NoError(t, err)
		assert.True(t, p.QuantRangeNone, "quant_min/max literals stay None")
	})
	t.Run("no clipping error", func(t *testing.T) {
		c := observers.AffineConfig{MappingType: observers.SymmetricNoClippingErr, TargetDType: tensor.Int4, Granularity: observers.PerTensor{}}
		// smin = -8/-8 = 1 > smax = 3.5/7 = 0.5 -> scale 1; zp = int((7-8+1)/2) = 0.
		qp, err := observers.ChooseQParamsAffineWithMinMax([]float32{-8}, []float32{3.5}, []int{}, c, -8, 7)
		require.NoError(t, err)
		assert.Zero(t, qp.Scale.Dim(), "0-dim scale")
		assertBits(t, 1, scaleOf(t, qp)[0], "scale")
		assert.Equal(t, []float64{0}, zpOf(t, qp))
	})
	t.Run("uint8 symmetric zp 128", func(t *testing.T) {
		c := observers.AffineConfig{MappingType: observers.Symmetric, TargetDType: tensor.UInt8, Granularity: observers.PerTensor{}}
		qp, err := observers.ChooseQParamsAffineWithMinMax([]float32{-1}, []float32{2}, []int{}, c, 0, 255)
		require.NoError(t, err)
		assertBits(t, float32(2)/127.5, scaleOf(t, qp)[0], "scale")
		assert.Equal(t, []float64{128}, zpOf(t, qp))
	})
	t.Run("bad config and input", func(t *testing.T) {
		_, err := observers.NewAffineQuantizedMinMaxObserver(observers.AffineConfig{TargetDType: tensor.Int8, Granularity: observers.PerTensor{}})
		require.ErrorIs(t, err, observers.ErrConfig, "missing mapping type")
		_, err = observers.NewAffineQuantizedMinMaxObserver(observers.AffineConfig{MappingType: observers.Symmetric, TargetDType: tensor.Int8, Granularity: observers.PerTensor{}, QuantMin: observers.Int(-200)})
		require.ErrorIs(t, err, observers.ErrConfig, "quant_min below the dtype bound")
		o, err := observers.NewAffineQuantizedMinMaxObserver(observers.AffineConfig{MappingType: observers.Symmetric, TargetDType: tensor.Int8, Granularity: observers.PerTensor{}})
		require.NoError(t, err)
		require.ErrorIs(t, o.Observe(tensor.MustZeros(tensor.Float64, 2)), observers.ErrInput)
		_, err = o.CalculateQParams()
		require.ErrorIs(t, err, observers.ErrNoData)
	})
}

func TestPlans(t *testing.T) {
	t.Run("minmax per tensor", func(t *testing.T) {
		o, err := observers.NewMinMaxObserver(observers.Config{DType: observers.QInt8})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{2}, -2.5, 252.5)))
		p, err := o.Plan()
		require.NoError(t, err)
		// scale 255/255 = 1; zp = -128 - round(-2.5) = -126.
		assert.Equal(t, observers.ConvertPlan{Kind: observers.PlanPerTensor, Dtype: tensor.Int8, QuantMin: -128, QuantMax: 127, Scale: 1, ZeroPoint: -126}, p)
	})
	t.Run("minmax dynamic", func(t *testing.T) {
		o, err := observers.NewMinMaxObserver(observers.Config{DType: observers.QUInt8, IsDynamic: true})
		require.NoError(t, err)
		p, err := o.Plan()
		require.NoError(t, err)
		assert.Equal(t, observers.ConvertPlan{Kind: observers.PlanDynamic, Dtype: tensor.UInt8, QuantMin: 0, QuantMax: 255, Eps: float64(float32(observers.Float32Eps))}, p)
	})
	t.Run("per channel", func(t *testing.T) {
		o, err := observers.NewPerChannelMinMaxObserver(observers.Config{DType: observers.QInt8, QScheme: observers.PerChannelSymmetric, ChAxis: 1})
		require.NoError(t, err)
		require.NoError(t, o.Observe(f32([]int{1, 2}, 1, -2)))
		p, err := o.Plan()
		require.NoError(t, err)
		assert.Equal(t, observers.PlanPerChannel, p.Kind)
		assert.Equal(t, 1, p.Axis)
		assert.Equal(t, tensor.Int8, p.Dtype)
		assert.Equal(t, []int{2}, p.ScaleTensor.Shape())
		assert.Equal(t, tensor.Int64, p.ZeroPointTensor.DType())
	})
	t.Run("placeholder dynamic int8", func(t *testing.T) {
		o, err := observers.NewPlaceholderObserver(observers.PlaceholderConfig{DType: observers.Int8, QuantMin: observers.Int(-128), QuantMax: observers.Int(127), Eps: math.Ldexp(1, -12), IsDynamic: true})
		require.NoError(t, err)
		_, err = o.CalculateQParams()
		require.ErrorIs(t, err, observers.ErrNoQParams)
		p, err := o.Plan()
		require.NoError(t, err)
		assert.Equal(t, observers.ConvertPlan{Kind: observers.PlanDynamic, Dtype: tensor.Int8, QuantMin: -128, QuantMax: 127, Eps: 0.000244140625}, p)
	})
	t.Run("placeholder float32 removed", func(t *testing.T) {
		o, err := observers.NewPlaceholderObserver(observers.PlaceholderConfig{})
		require.NoError(t, err)
		p, err := o.Plan()
		require.NoError(t, err)
		assert.Equal(t, observers.PlanRemove, p.Kind)
	})
	t.Run("placeholder float16", func(t *testing.T) {
		o, err := observers.NewPlaceholderObserver(observers.PlaceholderConfig{DType: observers.Float16})
		require.NoError(t, err)
		p, err := o.Plan()
		require.NoError(t, err)
		assert.Equal(t, observers.PlanFloat16, p.Kind)
	})
	t.Run("fixed qparams", func(t *testing.T) {
		o, err := observers.NewFixedQParamsObserver(2.0/256, 128, observers.QUInt8, observers.PerTensorAffine, 0, 255)
		require.NoError(t, err)
		qp, err := o.CalculateQParams()
		require.NoError(t, err)
		assert.Equal(t, tensor.Int32, qp.ZeroPoint.DType())
		p, err := o.Plan()
		require.NoError(t, err)
		assert.Equal(t, observers.ConvertPlan{Kind: observers.PlanPerTensor, Dtype: tensor.UInt8, QuantMin: 0, QuantMax: 255, Scale: 0.0078125, ZeroPoint: 128}, p)
	})
	t.Run("affine placeholder dynamic per token", func(t *testing.T) {
		eps := observers.Float32Eps
		o, err := observers.NewAffineQuantizedPlaceholderObserver(observers.AffineConfig{
			MappingType: observers.Asymmetric, TargetDType: tensor.Int8, Granularity: observers.PerToken{},
			QuantMin: observers.Int(-128), QuantMax: observers.Int(127), Eps: &eps,
			ScaleDType: tensor.Float32, ZeroPointDType: tensor.Int32, IsDynamic: true})
		require.NoError(t, err)
		_, err = o.Plan()
		require.ErrorIs(t, err, observers.ErrNoData)
		require.NoError(t, o.Observe(tensor.MustZeros(tensor.Float32, 4, 32)))
		p, err := o.Plan()
		require.NoError(t, err)
		// As in int4_linear_g*.converted.graph.txt: choose_qparams_affine(x,
		// 'ASYMMETRIC', (1, 32), torch.int8, -128, 127, 1.1920928955078125e-07,
		// torch.float32, torch.int32).
		assert.Equal(t, observers.ConvertPlan{Kind: observers.PlanAffineDynamic, Dtype: tensor.Int8, QuantMin: -128, QuantMax: 127,
			Eps: 1.1920928955078125e-07, BlockSize: []int64{1, 32}, MappingType: observers.Asymmetric,
			ScaleDType: tensor.Float32, ZeroPointDType: tensor.Int32, OutputDType: tensor.Float32}, p)
		assert.Equal(t, "ASYMMETRIC", p.MappingType.String())
	})
}

func TestParse(t *testing.T) {
	d, err := observers.ParseDType("torch.quint8")
	require.NoError(t, err)
	assert.Equal(t, observers.QUInt8, d)
	assert.Equal(t, "torch.quint8", d.String())
	assert.Equal(t, tensor.UInt8, d.Underlying())
	_, err = observers.ParseDType("torch.qfoo")
	require.ErrorIs(t, err, observers.ErrConfig)
	q, err := observers.ParseQScheme("torch.per_channel_affine_float_qparams")
	require.NoError(t, err)
	assert.Equal(t, observers.PerChannelAffineFloatQParams, q)
	_, err = observers.ParseQScheme("per_tensor")
	require.ErrorIs(t, err, observers.ErrConfig)
	m, err := observers.ParseMappingType("MappingType.SYMMETRIC_NO_CLIPPING_ERR")
	require.NoError(t, err)
	assert.Equal(t, observers.SymmetricNoClippingErr, m)
}
