package kernels

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/tensor"
)

var negZero = float32(math.Copysign(0, -1))

func qtInts(t *testing.T, x *tensor.Tensor) []int64 {
	t.Helper()
	v, err := x.Int64s()
	require.NoError(t, err)
	return v
}

func qtBits(t *testing.T, x *tensor.Tensor) []uint32 {
	t.Helper()
	v, err := tensor.Data[float32](x)
	require.NoError(t, err)
	out := make([]uint32, len(v))
	for i, f := range v {
		out[i] = math.Float32bits(f)
	}
	return out
}

func bitsOf(v ...float32) []uint32 {
	out := make([]uint32, len(v))
	for i, f := range v {
		out[i] = math.Float32bits(f)
	}
	return out
}

func TestQuantizePerTensor(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	tests := []struct {
		name      string
		x         []float32
		scale     float64
		zp        int64
		qmin, max int64
		dtype     tensor.DType
		want      []int64
	}{
		// scale 1: x*1 is exact, ties round to even
		{"ties half to even", []float32{0.5, 1.5, 2.5, -0.5, -1.5, -2.5}, 1, 0, -128, 127, tensor.Int8, []int64{0, 2, 2, 0, -2, -2}},
		// 0.25 = 1/4 exactly: x*4 lands on .5 ties
		{"ties with scale 0.25", []float32{0.125, 0.375, -0.125}, 0.25, 0, -128, 127, tensor.Int8, []int64{0, 2, 0}},
		// the zero point is added after rounding: round(0.5) + 1 = 1
		{"zero point after rounding", []float32{0.5}, 1, 1, -128, 127, tensor.Int8, []int64{1}},
		{"clamp far out of range", []float32{1e30, -1e30, 3e38, inf, -inf}, 0.5, 0, -128, 127, tensor.Int8, []int64{127, -128, 127, 127, -128}},
		{"uint8 clamp", []float32{-1e12, 1e12}, 1, 128, 0, 255, tensor.UInt8, []int64{0, 255}},
		{"negative zero gives the zero point", []float32{negZero, 0}, 0.1, 3, -128, 127, tensor.Int8, []int64{3, 3}},
		{"NaN becomes 0", []float32{nan}, 0.1, 5, -128, 127, tensor.Int8, []int64{0}},
		{"int4 range in int8 storage", []float32{-100, 100, 1.5}, 1, 0, -8, 7, tensor.Int8, []int64{-8, 7, 2}},
		{"int32 keeps quant_max exact", []float32{1e12, -1e12}, 1, 0, math.MinInt32, math.MaxInt32, tensor.Int32, []int64{math.MaxInt32, math.MinInt32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := tensor.F32([]int{len(tt.x)}, tt.x...)
			q, err := QuantizePerTensor(x, tt.scale, tt.zp, tt.qmin, tt.max, tt.dtype)
			require.NoError(t, err)
			assert.Equal(t, tt.dtype, q.DType())
			assert.Equal(t, tt.want, qtInts(t, q))
		})
	}
}

func TestQuantizeReciprocalNotDivision(t *testing.T) {
	// scale 0.1: float32(1/0.1) = 10 exactly, so 0.35f * 10 = 3.5 (tie to 4),
	// while 0.35f / 0.1f = 3.4999998 (rounds to 3): the op multiplies.
	x := tensor.F32([]int{1}, 0.35)
	require.Equal(t, float32(10), float32(1/0.1))
	require.Equal(t, float32(3.5), float32(0.35)*10)
	q, err := QuantizePerTensor(x, 0.1, 0, -128, 127, tensor.Int8)
	require.NoError(t, err)
	assert.Equal(t, []int64{4}, qtInts(t, q))
}

func TestQuantizeEmptyAndStrided(t *testing.T) {
	empty := tensor.MustZeros(tensor.Float32, 0, 3)
	q, err := QuantizePerTensor(empty, 1, 0, -128, 127, tensor.Int8)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 3}, q.Shape())

	base := tensor.F32([]int{2, 3}, 0, 1, 2, 3, 4, 5)
	tr, err := base.Transpose(0, 1) // [[0,3],[1,4],[2,5]]
	require.NoError(t, err)
	q, err = QuantizePerTensor(tr, 0.5, 0, -128, 127, tensor.Int8)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, q.Shape())
	assert.Equal(t, []int64{0, 6, 2, 8, 4, 10}, qtInts(t, q))

	// per channel on the transposed view: axis 1 has scales [1, 0.5]
	s := tensor.F32([]int{2}, 1, 0.5)
	zp := tensor.MustFromData(tensor.Int64, []int{2}, []int64{0, 1})
	q, err = QuantizePerChannel(tr, s, zp, 1, -128, 127, tensor.Int8)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 7, 1, 9, 2, 11}, qtInts(t, q))
}

func TestDequantizePerTensor(t *testing.T) {
	q := tensor.MustFromData(tensor.Int8, []int{3}, []int8{-128, 0, 127})
	d, err := DequantizePerTensor(q, 0.5, 1, -128, 127, tensor.Int8, tensor.Unknown)
	require.NoError(t, err)
	assert.Equal(t, bitsOf(-64.5, -0.5, 63), qtBits(t, d))

	sc := 0.1
	d64, err := DequantizePerTensor(q, sc, 0, -128, 127, tensor.Int8, tensor.Float64)
	require.NoError(t, err)
	v, _ := d64.Float64s()
	assert.Equal(t, []float64{-128 * sc, 0, 127 * sc}, v, "float64 out_dtype computes in float64")

	_, err = DequantizePerTensor(q, 0.5, 0, -128, 127, tensor.UInt8, tensor.Float32)
	assert.ErrorIs(t, err, ErrUnsupportedDType, "input dtype must equal dtype")
	_, err = DequantizePerTensor(q, 0.5, 0, -300, 127, tensor.Int8, tensor.Float32)
	assert.ErrorIs(t, err, ErrBadArgument, "bounds outside int8")
}

func TestChooseQParams(t *testing.T) {
	eps := float64(math.Nextafter32(1, 2) - 1)
	x := tensor.F32([]int{3}, -1, 0, 3)
	s, zp, err := ChooseQParams(x, -128, 127, eps, tensor.Int8, false)
	require.NoError(t, err)
	// scale = (3 - -1) / 255 in float32; zp = -128 - round(-1 / scale)
	wantScale := float32(4) / float32(255)
	wantZP := -128 - int64(math.RoundToEven(float64(float32(-1)/wantScale)))
	assert.Equal(t, int64(-64), wantZP)
	sv, _ := s.Float64s()
	assert.Equal(t, []float64{float64(wantScale)}, sv)
	assert.Equal(t, []int64{-64}, qtInts(t, zp))
	assert.Equal(t, tensor.Float64, s.DType())
	assert.Equal(t, tensor.Int64, zp.DType())

	s, zp, err = ChooseQParams(x, -128, 127, eps, tensor.Int8, true)
	require.NoError(t, err)
	sv, _ = s.Float64s()
	assert.Equal(t, []float64{float64(float32(3) / 127.5)}, sv)
	assert.Equal(t, []int64{0}, qtInts(t, zp))

	s, zp, err = ChooseQParams(x, 0, 255, eps, tensor.UInt8, true)
	require.NoError(t, err)
	assert.Equal(t, []int64{128}, qtInts(t, zp), "symmetric uint8 zero point")

	zeros := tensor.MustZeros(tensor.Float32, 4)
	s, zp, err = ChooseQParams(zeros, -128, 127, eps, tensor.Int8, false)
	require.NoError(t, err)
	sv, _ = s.Float64s()
	assert.Equal(t, []float64{eps}, sv, "all zeros: scale clamps to eps")
	assert.Equal(t, []int64{-128}, qtInts(t, zp))

	_, _, err = ChooseQParams(x, 1, 127, eps, tensor.Int8, false)
	assert.Error(t, err, "quant_min must be <= 0")
}

func TestPerTokenZeroPointBeforeRounding(t *testing.T) {
	x := tensor.F32([]int{1, 1}, 0.5)
	s := tensor.MustFromData(tensor.Float64, []int{1, 1}, []float64{1})
	zp := tensor.MustFromData(tensor.Int64, []int{1, 1}, []int64{1})
	q, err := QuantizePerToken(x, s, zp, -128, 127, tensor.Int8)
	require.NoError(t, err)
	assert.Equal(t, []int64{2}, qtInts(t, q), "round(0.5 + 1) = 2")

	s32 := tensor.F32([]int{1}, 1)
	zp32 := tensor.MustFromData(tensor.Int32, []int{1}, []int32{1})
	qa, err := QuantizeAffine(x, []int{1, 1}, s32, zp32, tensor.Int8, -128, 127)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, qtInts(t, qa), "round(0.5) + 1 = 1")
}

func TestChooseQParamsPerTokenAsymmetric(t *testing.T) {
	// row 0 all zeros: scale eps, dmin = dmax = 0, (-128 + 0) + (127 + 0) < 0
	// so zp = 127 - 0 = 127 (XNNPACK); row 1 = [0, 255]: scale 1, dmin 0,
	// dmax 255, -128 + 382 > 0 so zp = -128 - 0 = -128.
	x := tensor.F32([]int{2, 2}, 0, 0, 0, 255)
	s, zp, err := ChooseQParamsPerTokenAsymmetric(x, tensor.Int8)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1}, s.Shape())
	sv, _ := s.Float64s()
	assert.Equal(t, []float64{float64(math.Nextafter32(1, 2) - 1), 1}, sv)
	assert.Equal(t, []int64{127, -128}, qtInts(t, zp))
}

func TestChooseQParamsAffineShapes(t *testing.T) {
	x := tensor.F32([]int{2, 4}, -1, 0, 1, 2, 3, 4, 5, 6)
	tests := []struct {
		name    string
		block   []int
		keepdim bool
		shape   []int
	}{
		{"per token", []int{1, 4}, false, []int{2}},
		{"per token keepdim", []int{1, 4}, true, []int{2, 1}},
		{"per tensor", []int{2, 4}, false, nil}, // 0-dim
		{"groups", []int{1, 2}, false, []int{2, 2}},
		{"per column", []int{2, 1}, false, []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, zp, err := ChooseQParamsAffine(x, Asymmetric, tt.block, tensor.Int8, -128, 127, AffineQParamsOptions{KeepDim: tt.keepdim})
			require.NoError(t, err)
			assert.Equal(t, tt.shape, s.Shape())
			assert.Equal(t, tt.shape, zp.Shape())
			assert.Equal(t, tensor.Int32, zp.DType())
		})
	}
	// symmetric int4: max(|-1|, |2|) / 7.5 for row 0, zero point 0 as float
	s, zp, err := ChooseQParamsAffine(x, Symmetric, []int{1, 4}, tensor.Int8, -8, 7, AffineQParamsOptions{})
	require.NoError(t, err)
	assert.Equal(t, bitsOf(float32(2)/7.5, float32(6)/7.5), qtBits(t, s))
	assert.Equal(t, tensor.Float32, zp.DType())

	_, _, err = ChooseQParamsAffine(x, Asymmetric, []int{1, 3}, tensor.Int8, -128, 127, AffineQParamsOptions{})
	assert.ErrorIs(t, err, ErrBadArgument, "3 does not divide 4")
	_, _, err = ChooseQParamsAffine(x, "ROUND", []int{1, 4}, tensor.Int8, -128, 127, AffineQParamsOptions{})
	assert.ErrorIs(t, err, ErrBadArgument)
}

func TestDequantizeAffineGroups(t *testing.T) {
	q := tensor.MustFromData(tensor.Int8, []int{1, 4}, []int8{-8, 7, 1, -1})
	s := tensor.F32([]int{1, 2}, 0.5, 0.25)
	zp := tensor.MustFromData(tensor.Int32, []int{1, 2}, []int32{0, 1})
	d, err := DequantizeAffine(q, []int{1, 2}, s, zp, tensor.Int8, -8, 7, tensor.Float32)
	require.NoError(t, err)
	assert.Equal(t, bitsOf(-4, 3.5, 0, -0.5), qtBits(t, d))
	_, err = DequantizeAffine(q, []int{1, 2}, tensor.F32([]int{3}, 1, 1, 1), zp, tensor.Int8, -8, 7, tensor.Float32)
	assert.ErrorIs(t, err, tensor.ErrShape, "3 scales for 2 blocks")
}

func TestFakeQuantPerChannel(t *testing.T) {
	x := tensor.F32([]int{2, 2}, 0.3, 100, float32(math.NaN()), -0.3)
	s := tensor.F32([]int{2}, 0.25, 0.5)
	zp := tensor.MustFromData(tensor.Int32, []int{2}, []int32{0, 1})
	out, err := FakeQuantPerChannel(x, s, zp, 0, -8, 7)
	require.NoError(t, err)
	v, _ := tensor.Data[float32](out)
	// row 0: round(1.2) = 1 -> 0.25; round(400) clamps to 7 -> 1.75
	assert.Equal(t, float32(0.25), v[0])
	assert.Equal(t, float32(1.75), v[1])
	assert.True(t, math.IsNaN(float64(v[2])), "NaN stays NaN")
	// row 1: round(-0.6) + 1 = 0 -> (0 - 1) * 0.5
	assert.Equal(t, float32(-0.5), v[3])
}

func TestReferenceDQLinearInt4(t *testing.T) {
	// x = [255, 0]: scale (255 - 0) / 255 = 1, zp = -128, xq = [127, -128].
	// w = [[1, 2], [3, -1]], scales [0.5, 0.25] (exact in bfloat16), G = 1.
	// channel 0: d = 127 - 256 = -129; acc = -64.5 - (3 * -128) * 0.5 = 127.5
	// channel 1: d = 381 + 128 = 509; acc = 127.25 - (2 * -128) * 0.25 = 191.25
	x := tensor.F32([]int{1, 2}, 255, 0)
	w := tensor.MustFromData(tensor.Int8, []int{2, 2}, []int8{1, 2, 3, -1})
	ws := tensor.F32([]int{2}, 0.5, 0.25)
	zp := tensor.MustZeros(tensor.Int32, 2)
	bias := tensor.F32([]int{2}, 1, -1)
	eps := float64(math.Nextafter32(1, 2) - 1)
	y, err := ReferenceDQLinearInt4(x, eps, w, ws, zp, bias, []int{1, 2}, DQLinearInt4Options{})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, y.Shape())
	assert.Equal(t, bitsOf(128.5, 190.25), qtBits(t, y))

	// the snapshot's [1, N] reshape scales channel 1 with 0.5:
	// 509 * 0.5 - (2 * -128) * 0.5 = 382.5
	y, err = ReferenceDQLinearInt4(x, eps, w, ws, zp, nil, []int{1, 2}, DQLinearInt4Options{LegacyScaleShape: true})
	require.NoError(t, err)
	assert.Equal(t, bitsOf(127.5, 382.5), qtBits(t, y))

	// all-zero input: scale eps, zp -128, everything cancels: y = bias
	y, err = ReferenceDQLinearInt4(tensor.MustZeros(tensor.Float32, 1, 2), eps, w, ws, zp, bias, []int{1, 2}, DQLinearInt4Options{})
	require.NoError(t, err)
	assert.Equal(t, bitsOf(1, -1), qtBits(t, y))

	_, err = ReferenceDQLinearInt4(x, eps, w, ws, zp, nil, []int{1, 3}, DQLinearInt4Options{})
	assert.ErrorIs(t, err, ErrBadArgument, "group 3 does not divide K = 2")
	_, err = ReferenceDQLinearInt4(x, eps, w, tensor.F32([]int{3}, 1, 1, 1), zp, nil, []int{1, 2}, DQLinearInt4Options{})
	assert.ErrorIs(t, err, tensor.ErrShape)
}

func TestToDTypeRoundClamp(t *testing.T) {
	x := tensor.F32([]int{5}, -1.7, 1.7, 300, float32(math.NaN()), negZero)
	i8, err := ToDType(x, tensor.Int8)
	require.NoError(t, err)
	assert.Equal(t, []int64{-1, 1, 44, 0, 0}, qtInts(t, i8), "truncation; 300 wraps to 44; NaN -> 0")

	w, err := ToDType(tensor.MustFromData(tensor.Int32, []int{2}, []int32{200, -129}), tensor.Int8)
	require.NoError(t, err)
	assert.Equal(t, []int64{-56, 127}, qtInts(t, w))

	// 1 + 2**-8 is halfway between bfloat16 1 and 1 + 2**-7: even is 1
	bf, err := ToDType(tensor.F32([]int{1}, 1+1.0/256), tensor.BFloat16)
	require.NoError(t, err)
	back, _ := bf.Float64s()
	assert.Equal(t, []float64{1}, back)

	r, err := Round(tensor.F32([]int{6}, 0.5, 1.5, 2.5, -0.5, -2.5, -0.4))
	require.NoError(t, err)
	assert.Equal(t, bitsOf(0, 2, 2, negZero, -2, negZero), qtBits(t, r))

	ints := tensor.MustFromData(tensor.Int32, []int{3}, []int32{-5, 0, 5})
	c, err := Clamp(ints, int64(-1), int64(2))
	require.NoError(t, err)
	assert.Equal(t, tensor.Int32, c.DType())
	assert.Equal(t, []int64{-1, 0, 2}, qtInts(t, c))
	c, err = Clamp(ints, 0.5, nil)
	require.NoError(t, err)
	assert.Equal(t, tensor.Float32, c.DType(), "a float bound promotes to float32")
	c, err = Clamp(tensor.F32([]int{2}, float32(math.NaN()), 9), nil, 3.0)
	require.NoError(t, err)
	v, _ := tensor.Data[float32](c)
	assert.True(t, math.IsNaN(float64(v[0])))
	assert.Equal(t, float32(3), v[1])
	_, err = Clamp(ints, nil, nil)
	assert.Error(t, err)

	lo := tensor.MustFromData(tensor.Int64, nil, []int64{-2})
	hi := tensor.MustFromData(tensor.Int64, []int{3}, []int64{0, 1, 2})
	c, err = ClampTensor(ints, lo, hi)
	require.NoError(t, err)
	assert.Equal(t, []int64{-2, 0, 2}, qtInts(t, c))
}

func TestOutDTypeTruncates(t *testing.T) {
	acc := tensor.MustFromData(tensor.Int32, []int{2}, []int32{7, -7})
	half := tensor.F32([]int{1}, 0.5)
	r, err := OutDType("aten.mul.Tensor", tensor.Int32, []Operand{T(acc), T(half)})
	require.NoError(t, err)
	assert.Equal(t, tensor.Int32, r.DType())
	assert.Equal(t, []int64{3, -3}, qtInts(t, r), "3.5 and -3.5 truncate toward zero")

	x := tensor.MustFromData(tensor.Int16, []int{1, 2}, []int16{100, -100})
	w := tensor.MustFromData(tensor.Int16, []int{1, 2}, []int16{300, 300})
	r, err = OutDType("aten.linear.default", tensor.Int32, []Operand{T(x), T(w)})
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, qtInts(t, r))
	_, err = OutDType("aten.conv2d.default", tensor.Int32, []Operand{T(x), T(w)})
	assert.Error(t, err)
}

func TestQuantKernelsRejectBadInput(t *testing.T) {
	x := tensor.F32([]int{2}, 1, 2)
	s := tensor.F32([]int{2}, 1, 1)
	zp := tensor.MustZeros(tensor.Int32, 2)
	tests := []struct {
		name string
		run  func() error
		is   error
	}{
		{"nil input", func() error { _, err := QuantizePerTensor(nil, 1, 0, -128, 127, tensor.Int8); return err }, ErrBadArgument},
		{"int input", func() error {
			_, err := QuantizePerTensor(tensor.MustZeros(tensor.Int8, 2), 1, 0, -128, 127, tensor.Int8)
			return err
		}, ErrUnsupportedDType},
		{"float dtype", func() error { _, err := QuantizePerTensor(x, 1, 0, 0, 1, tensor.Float32); return err }, ErrUnsupportedDType},
		{"axis out of range", func() error { _, err := QuantizePerChannel(x, s, zp, 1, -128, 127, tensor.Int8); return err }, ErrBadArgument},
		{"scale count", func() error {
			_, err := QuantizePerChannel(x, tensor.F32([]int{1}, 1), zp, 0, -128, 127, tensor.Int8)
			return err
		}, tensor.ErrShape},
		{"block rank", func() error { _, err := QuantizeAffine(x, []int{1, 2}, s, zp, tensor.Int8, -128, 127); return err }, ErrBadArgument},
		{"affine needs zero point", func() error { _, err := QuantizeAffine(x, []int{1}, s, nil, tensor.Int8, -128, 127); return err }, ErrBadArgument},
		{"group of 1", func() error {
			_, err := QuantizePerChannelGroup(tensor.F32([]int{1, 2}, 1, 2), s, zp, -8, 7, tensor.Int8, 1)
			return err
		}, ErrBadArgument},
		{"per-token scalar", func() error {
			_, _, err := ChooseQParamsPerTokenAsymmetric(tensor.F32(nil, 1), tensor.Int8)
			return err
		}, tensor.ErrShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.is), "error %v should wrap %v", err, tt.is)
		})
	}
}
