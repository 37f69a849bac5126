package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Edge cases of the aten kernels: NaN and ±inf propagation, empty tensors
// (a zero-size batch or channel dim) and non-contiguous (transposed or
// sliced) inputs. Every expectation is worked out by hand in the comments;
// the small integers used keep the float32 arithmetic exact, so results
// compare bit for bit.

var (
	nan32  = float32(math.NaN())
	inf32  = float32(math.Inf(1))
	ninf32 = float32(math.Inf(-1))
	nzero  = float32(math.Copysign(0, -1))
)

// transposed returns the [.., b, a] transpose of a contiguous [.., a, b]
// float32 tensor holding vals: a non-contiguous view.
func transposed(t *testing.T, shape []int, vals ...float32) *tensor.Tensor {
	t.Helper()
	x, err := tensor.F32(shape, vals...).Transpose(-2, -1)
	require.NoError(t, err)
	require.False(t, x.IsContiguous() && x.Numel() > 1, "want a non-contiguous view")
	return x
}

// slicedLast returns every second element along the last dim of a
// contiguous float32 tensor holding vals: a non-contiguous view.
func slicedLast(t *testing.T, shape []int, vals ...float32) *tensor.Tensor {
	t.Helper()
	x := tensor.F32(shape, vals...)
	v, err := x.Slice(-1, 0, x.Size(-1), 2)
	require.NoError(t, err)
	require.False(t, v.IsContiguous(), "want a non-contiguous view")
	return v
}

func zeros(t *testing.T, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.Zeros(tensor.Float32, shape...)
	require.NoError(t, err)
	return x
}

func TestOutDTypeInvalidDType(t *testing.T) {
	a := kernels.T(tensor.F32([]int{1}, 2))
	b := kernels.T(tensor.F32([]int{1}, 3))
	tests := []struct {
		name    string
		dt      tensor.DType
		wantErr error
		wantMsg string
	}{
		{"unknown", tensor.Unknown, kernels.ErrBadArgument, `argument "out_dtype": want a known dtype, got unknown`},
		{"out of range", tensor.DType(200), kernels.ErrBadArgument, `argument "out_dtype": want a known dtype`},
		// Representable but no kernel arithmetic: an error, never a panic.
		{"float8 has no promotion", tensor.Float8E4M3FN, kernels.ErrUnsupportedDType, "float8_e4m3fn"},
		{"complex32 has no promotion", tensor.Complex32, kernels.ErrUnsupportedDType, "complex32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := kernels.OutDType("aten.mul.Tensor", tc.dt, []kernels.Operand{a, b})
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, tc.wantErr)
			assert.ErrorContains(t, err, tc.wantMsg)
		})
	}
}

func TestConvolutionEdgeCases(t *testing.T) {
	p, err := kernels.NewConvParams(2, []int{1, 1}, []int{0, 0}, []int{1, 1}, 1)
	require.NoError(t, err)
	tests := []struct {
		name      string
		x, w, b   *tensor.Tensor
		wantShape []int
		want      []float32
	}{
		// 1x1 kernel of weight 0: 0·NaN and 0·inf are NaN, 0·1 and 0·2 are 0.
		{"nan and inf times zero", tensor.F32([]int{1, 1, 2, 2}, 1, nan32, 2, inf32), tensor.F32([]int{1, 1, 1, 1}, 0), nil,
			[]int{1, 1, 2, 2}, []float32{0, nan32, 0, nan32}},
		// weight 2, bias 1: 2·1+1 = 3, NaN, 2·-inf+1 = -inf, 2·-0+1 = 1.
		{"nan and inf propagate", tensor.F32([]int{1, 1, 2, 2}, 1, nan32, ninf32, nzero), tensor.F32([]int{1, 1, 1, 1}, 2), tensor.F32([]int{1}, 1),
			[]int{1, 1, 2, 2}, []float32{3, nan32, ninf32, 1}},
		{"empty batch", zeros(t, 0, 1, 3, 3), zeros(t, 2, 1, 2, 2), nil, []int{0, 2, 2, 2}, []float32{}},
		// No input channels: every output is its channel's bias.
		{"no input channels", zeros(t, 1, 0, 3, 3), zeros(t, 2, 0, 2, 2), tensor.F32([]int{2}, 1, 2),
			[]int{1, 2, 2, 2}, []float32{1, 1, 1, 1, 2, 2, 2, 2}},
		{"no output channels", zeros(t, 1, 1, 3, 3), zeros(t, 0, 1, 2, 2), nil, []int{1, 0, 2, 2}, []float32{}},
		// x = [[1,2,3],[4,5,6]] as the transpose of [[1,4],[2,5],[3,6]];
		// w = [1, 10] along the width: out = x[i][j] + 10·x[i][j+1]
		// = [[21, 32], [54, 65]].
		{"transposed input", transposed(t, []int{1, 1, 3, 2}, 1, 4, 2, 5, 3, 6), tensor.F32([]int{1, 1, 1, 2}, 1, 10), nil,
			[]int{1, 1, 2, 2}, []float32{21, 32, 54, 65}},
		// The same weight as elements 0 and 2 of [1, 7, 10, 7].
		{"sliced weight", tensor.F32([]int{1, 1, 2, 3}, 1, 2, 3, 4, 5, 6), slicedLast(t, []int{1, 1, 1, 4}, 1, 7, 10, 7), nil,
			[]int{1, 1, 2, 2}, []float32{21, 32, 54, 65}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, err := kernels.Convolution(tc.x, tc.w, tc.b, p)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			requireBits(t, tc.want, y)
		})
	}
}

func TestMaxPool2dEdgeCases(t *testing.T) {
	two := []int{2, 2}
	tests := []struct {
		name        string
		x           *tensor.Tensor
		kernel      []int
		wantShape   []int
		want        []float32
		wantIndices []int64
	}{
		// PyTorch updates on `val > max || isnan(val)`: NaN wins, and a
		// later NaN replaces an earlier one.
		{"nan wins", tensor.F32([]int{1, 1, 2, 2}, 1, nan32, 2, 3), two, []int{1, 1, 1, 1}, []float32{nan32}, []int64{1}},
		{"last nan wins", tensor.F32([]int{1, 1, 2, 2}, 1, nan32, 2, nan32), two, []int{1, 1, 1, 1}, []float32{nan32}, []int64{3}},
		{"+inf", tensor.F32([]int{1, 1, 2, 2}, 1, inf32, 2, 3), two, []int{1, 1, 1, 1}, []float32{inf32}, []int64{1}},
		// All -inf: the window's start value and index stand.
		{"all -inf", tensor.F32([]int{1, 1, 1, 3}, ninf32, ninf32, ninf32), []int{1, 3}, []int{1, 1, 1, 1}, []float32{ninf32}, []int64{0}},
		// -0 and +0 compare equal: the first one stays.
		{"signed zeros keep the first", tensor.F32([]int{1, 1, 1, 2}, nzero, 0), []int{1, 2}, []int{1, 1, 1, 1}, []float32{nzero}, []int64{0}},
		{"empty batch", zeros(t, 0, 1, 2, 2), two, []int{0, 1, 1, 1}, []float32{}, []int64{}},
		{"no channels", zeros(t, 1, 0, 2, 2), two, []int{1, 0, 1, 1}, []float32{}, []int64{}},
		// x = [[1,3,5,7],[8,2,6,4]] as the transpose of a [4, 2] tensor:
		// window cols 0-1 max 8 at (1,0) = flat 4; cols 2-3 max 7 at (0,3) = 3.
		{"transposed input", transposed(t, []int{1, 1, 4, 2}, 1, 8, 3, 2, 5, 6, 7, 4), two, []int{1, 1, 1, 2}, []float32{8, 7}, []int64{4, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, idx, err := kernels.MaxPool2d(tc.x, tc.kernel, tc.kernel, []int{0, 0}, []int{1, 1}, false)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			require.Equal(t, tc.wantShape, idx.Shape())
			requireBits(t, tc.want, y)
			got, err := idx.Int64s()
			require.NoError(t, err)
			assert.Equal(t, tc.wantIndices, got)
		})
	}
}

func TestAvgPool2dEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		x         *tensor.Tensor
		kernel    []int
		wantShape []int
		want      []float32
	}{
		// Windows of two along the width: inf + -inf = NaN; (1+2)/2 = 1.5;
		// (inf+1)/2 = inf; (NaN+1)/2 = NaN.
		{"nan and inf", tensor.F32([]int{1, 1, 2, 4}, inf32, ninf32, 1, 2, inf32, 1, nan32, 1), []int{1, 2}, []int{1, 1, 2, 2},
			[]float32{nan32, 1.5, inf32, nan32}},
		{"empty batch", zeros(t, 0, 1, 2, 2), []int{2, 2}, []int{0, 1, 1, 1}, []float32{}},
		// Columns 0 and 2 of [[1,2,3,4],[5,6,7,8]]: (1+3+5+7)/4 = 4.
		{"sliced input", sliced(t), []int{2, 2}, []int{1, 1, 1, 1}, []float32{4}},
		// [[1,3],[2,4]] as a transpose, 1x2 windows: (1+3)/2, (2+4)/2.
		{"transposed input", transposed(t, []int{1, 1, 2, 2}, 1, 2, 3, 4), []int{1, 2}, []int{1, 1, 2, 1}, []float32{2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, err := kernels.AvgPool2d(tc.x, tc.kernel, tc.kernel, []int{0, 0}, false, true, 0)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			requireBits(t, tc.want, y)
		})
	}
}

// sliced returns columns 0 and 2 of [1, 1, 2, 4] = [[1,2,3,4],[5,6,7,8]],
// a non-contiguous [1, 1, 2, 2] view holding [[1,3],[5,7]].
func sliced(t *testing.T) *tensor.Tensor {
	t.Helper()
	x, err := tensor.F32([]int{1, 1, 2, 4}, 1, 2, 3, 4, 5, 6, 7, 8).Slice(3, 0, 4, 2)
	require.NoError(t, err)
	require.False(t, x.IsContiguous())
	return x
}

func TestAdaptiveAvgPool2dEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		x         *tensor.Tensor
		out       []int
		wantShape []int
		want      []float32
	}{
		// Output [1, 2] averages each column: (NaN+2)/2 = NaN, (1+3)/2 = 2.
		{"nan in one column", tensor.F32([]int{1, 1, 2, 2}, nan32, 1, 2, 3), []int{1, 2}, []int{1, 1, 1, 2}, []float32{nan32, 2}},
		// Output [1, 1] takes the mean path: inf + 1 + 2 + 3 = inf.
		{"inf in the global mean", tensor.F32([]int{1, 1, 2, 2}, inf32, 1, 2, 3), []int{1, 1}, []int{1, 1, 1, 1}, []float32{inf32}},
		{"inf and -inf in the global mean", tensor.F32([]int{1, 1, 2, 2}, inf32, 1, ninf32, 3), []int{1, 1}, []int{1, 1, 1, 1}, []float32{nan32}},
		{"empty batch", zeros(t, 0, 1, 2, 2), []int{1, 1}, []int{0, 1, 1, 1}, []float32{}},
		// [[1,3],[2,4]] as a transpose, output [2, 1]: row means 2 and 3.
		{"transposed input", transposed(t, []int{1, 1, 2, 2}, 1, 2, 3, 4), []int{2, 1}, []int{1, 1, 2, 1}, []float32{2, 3}},
		// [[1,3],[5,7]] sliced from a wider tensor, global mean 4.
		{"sliced input", sliced(t), []int{1, 1}, []int{1, 1, 1, 1}, []float32{4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, err := kernels.AdaptiveAvgPool2d(tc.x, tc.out)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			requireBits(t, tc.want, y)
		})
	}
	t.Run("empty spatial dim is an error", func(t *testing.T) {
		// PyTorch: "non-empty 3D or 4D input tensor expected".
		_, err := kernels.AdaptiveAvgPool2d(zeros(t, 1, 1, 0, 2), []int{1, 1})
		require.ErrorIs(t, err, tensor.ErrShape)
		assert.ErrorContains(t, err, "adaptive_avg_pool2d")
	})
}

// rstd32 is 1/sqrt(1 + eps) for a row of variance 1, as layer_norm forms
// it: the float32 sum var + eps, its square root rounded to float32, and a
// float32 division.
func rstd32(eps float32) float32 {
	return 1 / float32(math.Sqrt(float64(1+eps)))
}

// invstd64 is 1/sqrt(1 + eps) formed in float64 and rounded once to
// float32, as group_norm's rstd and batch_norm's invstd are.
func invstd64(eps float64) float32 {
	return float32(1 / math.Sqrt(1+eps))
}

func TestLayerNormEdgeCases(t *testing.T) {
	const eps = 1e-5
	r := rstd32(eps)
	tests := []struct {
		name      string
		x         *tensor.Tensor
		wantShape []int
		want      []float32
	}{
		// Row [NaN, 1] is NaN throughout; row [1, 3] (mean 2, variance 1)
		// is independent of it: (x - 2)·rstd = ∓rstd.
		{"nan stays in its row", tensor.F32([]int{2, 2}, nan32, 1, 1, 3), []int{2, 2}, []float32{nan32, nan32, -r, r}},
		// An infinite element makes the mean inf and every x - mean NaN.
		{"inf makes its row nan", tensor.F32([]int{2, 2}, inf32, 1, 1, 3), []int{2, 2}, []float32{nan32, nan32, -r, r}},
		{"empty batch", zeros(t, 0, 2), []int{0, 2}, []float32{}},
		// Rows [5, 5] (variance 0: (x - 5)·rstd = 0) and [1, 3], given as
		// the transpose of [[5, 1], [5, 3]].
		{"transposed input", transposed(t, []int{2, 2}, 5, 1, 5, 3), []int{2, 2}, []float32{0, 0, -r, r}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, mean, rstd, err := kernels.LayerNorm(tc.x, []int{2}, nil, nil, eps)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			requireBits(t, tc.want, y)
			assert.Equal(t, append(tc.wantShape[:1:1], 1), mean.Shape())
			assert.Equal(t, append(tc.wantShape[:1:1], 1), rstd.Shape())
		})
	}
}

func TestGroupNormEdgeCases(t *testing.T) {
	const eps = 1e-5
	r := invstd64(eps)
	tests := []struct {
		name      string
		x         *tensor.Tensor
		wantShape []int
		want      []float32
	}{
		// Two groups of one channel each: [NaN, 1] is NaN, [1, 3] (mean 2,
		// variance 1) is (x - 2)·rstd.
		{"nan stays in its group", tensor.F32([]int{1, 2, 2}, nan32, 1, 1, 3), []int{1, 2, 2}, []float32{nan32, nan32, -r, r}},
		{"-inf makes its group nan", tensor.F32([]int{1, 2, 2}, 1, 3, ninf32, 1), []int{1, 2, 2}, []float32{-r, r, nan32, nan32}},
		{"empty batch", zeros(t, 0, 2, 2), []int{0, 2, 2}, []float32{}},
		{"empty spatial", zeros(t, 1, 2, 0), []int{1, 2, 0}, []float32{}},
		// Channels [1, 3] and [5, 5] as the transpose of [[1, 5], [3, 5]].
		{"transposed input", transposed(t, []int{1, 2, 2}, 1, 5, 3, 5), []int{1, 2, 2}, []float32{-r, r, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, _, _, err := kernels.GroupNorm(tc.x, 2, nil, nil, eps)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			requireBits(t, tc.want, y)
		})
	}
}

func TestBatchNormEdgeCases(t *testing.T) {
	const eps = 1e-5
	r := invstd64(eps)
	one := tensor.F32([]int{1}, 1)
	zero := tensor.F32([]int{1}, 0)
	t.Run("eval passes nan and inf through", func(t *testing.T) {
		// Running mean 0, variance 1, eps 0: alpha = 1, beta = 0 and
		// y = fma(x, 1, 0), so -0 becomes +0 (-0 + +0 = +0).
		y, err := kernels.BatchNorm(tensor.F32([]int{4, 1}, nan32, inf32, ninf32, nzero), nil, nil, zero, one, false, 0)
		require.NoError(t, err)
		requireBits(t, []float32{nan32, inf32, ninf32, 0}, y)
	})
	t.Run("training nan stays in its channel", func(t *testing.T) {
		// [N=2, C=2, 1]: channel 0 = [NaN, 1], channel 1 = [1, 3] (mean 2,
		// biased variance 1): y = fma(x, invstd, -2·invstd) = ∓invstd.
		y, err := kernels.BatchNorm(tensor.F32([]int{2, 2, 1}, nan32, 1, 1, 3), nil, nil, nil, nil, true, eps)
		require.NoError(t, err)
		requireBits(t, []float32{nan32, -r, nan32, r}, y)
	})
	t.Run("training empty batch", func(t *testing.T) {
		y, err := kernels.BatchNorm(zeros(t, 0, 2, 2), nil, nil, nil, nil, true, eps)
		require.NoError(t, err)
		assert.Equal(t, []int{0, 2, 2}, y.Shape())
	})
	t.Run("eval no channels", func(t *testing.T) {
		y, err := kernels.BatchNorm(zeros(t, 1, 0, 2), nil, nil, zeros(t, 0), zeros(t, 0), false, eps)
		require.NoError(t, err)
		assert.Equal(t, []int{1, 0, 2}, y.Shape())
	})
	t.Run("eval transposed input", func(t *testing.T) {
		// [N=2, C=2] = [[1, 2], [3, 4]] as a transpose; mean [1, 2],
		// variance [1, 4], eps 0: invstd [1, 0.5], beta [-1, -1]:
		// y = [[0, 0], [2, 1]].
		x := transposed(t, []int{2, 2}, 1, 3, 2, 4)
		y, err := kernels.BatchNorm(x, nil, nil, tensor.F32([]int{2}, 1, 2), tensor.F32([]int{2}, 1, 4), false, 0)
		require.NoError(t, err)
		requireBits(t, []float32{0, 0, 2, 1}, y)
	})
}

func TestInstanceNormEdgeCases(t *testing.T) {
	const eps = 1e-5
	r := invstd64(eps)
	t.Run("nan stays in its instance", func(t *testing.T) {
		// [N=2, C=1, 2]: instance 0 = [NaN, 1], instance 1 = [1, 3].
		y, err := kernels.InstanceNorm(tensor.F32([]int{2, 1, 2}, nan32, 1, 1, 3), nil, nil, nil, nil, true, eps)
		require.NoError(t, err)
		requireBits(t, []float32{nan32, nan32, -r, r}, y)
	})
	t.Run("empty batch", func(t *testing.T) {
		y, err := kernels.InstanceNorm(zeros(t, 0, 2, 2), nil, nil, nil, nil, true, eps)
		require.NoError(t, err)
		assert.Equal(t, []int{0, 2, 2}, y.Shape())
	})
	t.Run("transposed input", func(t *testing.T) {
		// [1, 2, 2] instances [1, 3] and [3, 1] (mean 2, variance 1), as a
		// transpose: fma(x, invstd, -2·invstd) is exact here, ∓invstd.
		y, err := kernels.InstanceNorm(transposed(t, []int{1, 2, 2}, 1, 3, 3, 1), nil, nil, nil, nil, true, eps)
		require.NoError(t, err)
		requireBits(t, []float32{-r, r, r, -r}, y)
	})
}

func TestCatEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		ts        []*tensor.Tensor
		dim       int
		wantShape []int
		want      []float32
	}{
		// Values are copied bit for bit, NaN, infinities and -0 included.
		{"special values copied", []*tensor.Tensor{tensor.F32([]int{2}, nan32, inf32), tensor.F32([]int{2}, ninf32, nzero)}, 0,
			[]int{4}, []float32{nan32, inf32, ninf32, nzero}},
		{"empty part along dim", []*tensor.Tensor{zeros(t, 0, 2), tensor.F32([]int{1, 2}, 1, 2), zeros(t, 0, 2)}, 0,
			[]int{1, 2}, []float32{1, 2}},
		{"legacy 1-D empty skipped", []*tensor.Tensor{zeros(t, 0), tensor.F32([]int{1, 2}, 1, 2)}, 0,
			[]int{1, 2}, []float32{1, 2}},
		{"all empty", []*tensor.Tensor{zeros(t, 0, 2), zeros(t, 0, 2)}, 0, []int{0, 2}, []float32{}},
		// [[1,3],[2,4]] (a transpose) next to [[5],[6]] along dim 1.
		{"transposed part", []*tensor.Tensor{transposed(t, []int{2, 2}, 1, 2, 3, 4), tensor.F32([]int{2, 1}, 5, 6)}, 1,
			[]int{2, 3}, []float32{1, 3, 5, 2, 4, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, err := kernels.Cat(tc.ts, tc.dim)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			requireBits(t, tc.want, y)
		})
	}
}

func TestEmbeddingEdgeCases(t *testing.T) {
	// weight [3, 2] = [[NaN, inf], [1, 2], [-0, -inf]].
	w := tensor.F32([]int{3, 2}, nan32, inf32, 1, 2, nzero, ninf32)
	idx := func(shape []int, v ...int64) *tensor.Tensor { return tensor.MustFromData(tensor.Int64, shape, v) }
	t.Run("rows copied bit for bit", func(t *testing.T) {
		y, err := kernels.Embedding(w, idx([]int{2, 2}, 2, 0, 1, 2))
		require.NoError(t, err)
		assert.Equal(t, []int{2, 2, 2}, y.Shape())
		requireBits(t, []float32{nzero, ninf32, nan32, inf32, 1, 2, nzero, ninf32}, y)
	})
	t.Run("empty indices", func(t *testing.T) {
		y, err := kernels.Embedding(w, idx([]int{0}))
		require.NoError(t, err)
		assert.Equal(t, []int{0, 2}, y.Shape())
	})
	t.Run("transposed weight and sliced indices", func(t *testing.T) {
		// weight [[1,3],[2,4]] as a transpose; indices [1, 0] are
		// elements 0 and 2 of [1, 9, 0].
		tw := transposed(t, []int{2, 2}, 1, 2, 3, 4)
		si, err := idx([]int{3}, 1, 9, 0).Slice(0, 0, 3, 2)
		require.NoError(t, err)
		y, err := kernels.Embedding(tw, si)
		require.NoError(t, err)
		requireBits(t, []float32{2, 4, 1, 3}, y)
	})
	for _, tc := range []struct {
		name    string
		indices *tensor.Tensor
		wantMsg string
	}{
		{"index equal to rows", idx([]int{2}, 1, 3), `argument "indices": index 3 at position 1 is out of range [0, 3)`},
		{"negative index", idx([]int{1}, -1), `argument "indices": index -1 at position 0 is out of range [0, 3)`},
		{"float indices", tensor.F32([]int{1}, 0), `argument "indices": want int64 or int32, got float32`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kernels.Embedding(w, tc.indices)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.wantMsg)
		})
	}
}

func TestScaledDotProductAttentionEdgeCases(t *testing.T) {
	boolMask := func(shape []int, v ...bool) *tensor.Tensor { return tensor.MustFromData(tensor.Bool, shape, v) }
	tests := []struct {
		name      string
		q, k, v   *tensor.Tensor
		mask      *tensor.Tensor
		causal    bool
		wantShape []int
		want      []float32
	}{
		// E = 1, scale 1: equal keys give weights 1/2 each (exp(0) = 1),
		// so the output is the mean of v: (2 + 6)/2 = 4.
		{"equal scores average v", tensor.F32([]int{1, 1, 1}, 1), tensor.F32([]int{1, 2, 1}, 3, 3), tensor.F32([]int{1, 2, 1}, 2, 6), nil, false,
			[]int{1, 1, 1}, []float32{4}},
		// Keeping only key 0 gives weight [1, 0]: output v[0] = 2.
		{"partial mask", tensor.F32([]int{1, 1, 1}, 1), tensor.F32([]int{1, 2, 1}, 3, 3), tensor.F32([]int{1, 2, 1}, 2, 6),
			boolMask([]int{1, 2}, true, false), false, []int{1, 1, 1}, []float32{2}},
		// Every key masked: _safe_softmax gives weights 0, output 0.
		{"fully masked row is zero", tensor.F32([]int{1, 1, 1}, 1), tensor.F32([]int{1, 2, 1}, 3, 3), tensor.F32([]int{1, 2, 1}, 2, 6),
			boolMask([]int{1, 2}, false, false), false, []int{1, 1, 1}, []float32{0}},
		// A float mask of -inf everywhere masks the row just the same;
		// row 1 (mask 0) averages v.
		{"float -inf mask row is zero", tensor.F32([]int{1, 2, 1}, 1, 1), tensor.F32([]int{1, 2, 1}, 3, 3), tensor.F32([]int{1, 2, 1}, 2, 6),
			tensor.F32([]int{2, 2}, ninf32, ninf32, 0, 0), false, []int{1, 2, 1}, []float32{0, 4}},
		// A NaN key makes every score of each query NaN: output NaN.
		{"nan key", tensor.F32([]int{1, 1, 1}, 1), tensor.F32([]int{1, 2, 1}, nan32, 3), tensor.F32([]int{1, 2, 1}, 2, 6), nil, false,
			[]int{1, 1, 1}, []float32{nan32}},
		// A NaN query touches only its own row.
		{"nan query stays in its row", tensor.F32([]int{1, 2, 1}, nan32, 1), tensor.F32([]int{1, 2, 1}, 3, 3), tensor.F32([]int{1, 2, 1}, 2, 6), nil, false,
			[]int{1, 2, 1}, []float32{nan32, 4}},
		// inf in v: weights 1/2 each, (inf + 6)/2 → inf.
		{"inf value", tensor.F32([]int{1, 1, 1}, 1), tensor.F32([]int{1, 2, 1}, 3, 3), tensor.F32([]int{1, 2, 1}, inf32, 6), nil, false,
			[]int{1, 1, 1}, []float32{inf32}},
		// inf in v under weight 0 (masked key): 0·inf = NaN.
		{"inf value under a zero weight", tensor.F32([]int{1, 1, 1}, 1), tensor.F32([]int{1, 2, 1}, 3, 3), tensor.F32([]int{1, 2, 1}, 2, inf32),
			boolMask([]int{1, 2}, true, false), false, []int{1, 1, 1}, []float32{nan32}},
		{"no keys", zeros(t, 1, 2, 2), zeros(t, 1, 0, 2), zeros(t, 1, 0, 2), nil, false, []int{1, 2, 2}, []float32{0, 0, 0, 0}},
		{"no keys causal", zeros(t, 1, 2, 2), zeros(t, 1, 0, 2), zeros(t, 1, 0, 2), nil, true, []int{1, 2, 2}, []float32{0, 0, 0, 0}},
		{"no queries causal", zeros(t, 1, 0, 2), zeros(t, 1, 3, 2), zeros(t, 1, 3, 2), nil, true, []int{1, 0, 2}, []float32{}},
		{"empty batch causal", zeros(t, 0, 2, 2), zeros(t, 0, 3, 2), zeros(t, 0, 3, 2), nil, true, []int{0, 2, 2}, []float32{}},
		// Causal, E = 1, equal keys: query 0 sees key 0 only (v = 2), query
		// 1 averages both (4). q, k and v are column 0 of [1, 2, 2]
		// tensors (the other column, 9, is never read).
		{"sliced causal", slicedLast(t, []int{1, 2, 2}, 1, 9, 1, 9), slicedLast(t, []int{1, 2, 2}, 3, 9, 3, 9), slicedLast(t, []int{1, 2, 2}, 2, 9, 6, 9), nil, true,
			[]int{1, 2, 1}, []float32{2, 4}},
		// E = 2: keys [[3, 0], [3, 0]] as the transpose of [[3, 3], [0, 0]]
		// score equally against q = [1, 0], so the output averages v.
		{"transposed key", tensor.F32([]int{1, 1, 2}, 1, 0), transposed(t, []int{1, 2, 2}, 3, 3, 0, 0), tensor.F32([]int{1, 2, 1}, 2, 6), nil, false,
			[]int{1, 1, 1}, []float32{4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, err := kernels.ScaledDotProductAttention(tc.q, tc.k, tc.v, tc.mask, 0, tc.causal, 0, false)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			requireBits(t, tc.want, y)
		})
	}
}

func TestLinearEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		x, w, b   *tensor.Tensor
		wantShape []int
		want      []float32
	}{
		// W = [[0, 1], [1, 0]]: y0 = x0·0 + x1, y1 = x0 + x1·0.
		// x = [NaN, 1]: NaN·0 = NaN and NaN·1 = NaN.
		{"nan", tensor.F32([]int{1, 2}, nan32, 1), tensor.F32([]int{2, 2}, 0, 1, 1, 0), nil, []int{1, 2}, []float32{nan32, nan32}},
		// x = [inf, 1]: inf·0 = NaN; inf·1 + 1·0 = inf.
		{"inf times zero", tensor.F32([]int{1, 2}, inf32, 1), tensor.F32([]int{2, 2}, 0, 1, 1, 0), nil, []int{1, 2}, []float32{nan32, inf32}},
		// x = [inf, -inf] with W = [[1, 1], [1, 2]]: inf - inf = NaN twice.
		{"inf minus inf", tensor.F32([]int{1, 2}, inf32, ninf32), tensor.F32([]int{2, 2}, 1, 1, 1, 2), nil, []int{1, 2}, []float32{nan32, nan32}},
		// A contiguous [1, 2] input with a [2, 2] weight takes sgemm's dot
		// form: the sum starts from +0 and the bias is added last, so
		// (+0 + -0 + -0) + -0 = +0 although every term is -0.
		{"negative zero products", tensor.F32([]int{1, 2}, nzero, nzero), tensor.F32([]int{2, 2}, 1, 1, 1, 1), tensor.F32([]int{2}, nzero, nzero),
			[]int{1, 2}, []float32{0, 0}},
		{"empty batch", zeros(t, 0, 3), zeros(t, 2, 3), tensor.F32([]int{2}, 1, 2), []int{0, 2}, []float32{}},
		// K = 0: the empty sum is 0, plus the bias.
		{"no input features", zeros(t, 2, 0), zeros(t, 2, 0), tensor.F32([]int{2}, 1, 2), []int{2, 2}, []float32{1, 2, 1, 2}},
		{"no output features", tensor.F32([]int{1, 2}, 1, 2), zeros(t, 0, 2), nil, []int{1, 0}, []float32{}},
		// x = [[1, 2], [3, 4]] as a transpose, W = [[1, 10], [100, 1000]]
		// also as a transpose, bias [5, 6]:
		// [1+20+5, 100+2000+6, 3+40+5, 300+4000+6].
		{"transposed operands", transposed(t, []int{2, 2}, 1, 3, 2, 4), transposed(t, []int{2, 2}, 1, 100, 10, 1000), tensor.F32([]int{2}, 5, 6),
			[]int{2, 2}, []float32{26, 2106, 48, 4306}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, err := kernels.Linear(tc.x, tc.w, tc.b)
			require.NoError(t, err)
			require.Equal(t, tc.wantShape, y.Shape())
			requireBits(t, tc.want, y)
		})
	}
}

// TestQuantizeSpecialValues checks the NaN, ±inf and -0 behaviour the
// quantize kernels' doc comments state: [NaN, inf, -inf, -0] with scale
// 0.5 and zero point 3 into int8 gives [0, 127, -128, 3].
func TestQuantizeSpecialValues(t *testing.T) {
	want := []int64{0, 127, -128, 3}
	row := []float32{nan32, inf32, ninf32, nzero}
	scale := tensor.MustFromData(tensor.Float32, []int{1, 1}, []float32{0.5})
	tests := []struct {
		name string
		run  func() (*tensor.Tensor, error)
	}{
		{"per tensor", func() (*tensor.Tensor, error) {
			return kernels.QuantizePerTensor(tensor.F32([]int{4}, row...), 0.5, 3, -128, 127, tensor.Int8)
		}},
		{"per token", func() (*tensor.Tensor, error) {
			return kernels.QuantizePerToken(tensor.F32([]int{1, 4}, row...), scale, tensor.MustFromData(tensor.Int64, []int{1, 1}, []int64{3}), -128, 127, tensor.Int8)
		}},
		{"affine", func() (*tensor.Tensor, error) {
			return kernels.QuantizeAffine(tensor.F32([]int{1, 4}, row...), []int{1, 4}, scale, tensor.MustFromData(tensor.Int32, []int{1, 1}, []int32{3}), tensor.Int8, -128, 127)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := tc.run()
			require.NoError(t, err)
			got, err := q.Int64s()
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	t.Run("choose_qparams nan and inf", func(t *testing.T) {
		s, z, err := kernels.ChooseQParams(tensor.F32([]int{2}, nan32, 1), -128, 127, 1e-7, tensor.Int8, false)
		require.NoError(t, err)
		sv, err := s.Float64s()
		require.NoError(t, err)
		zv, err := z.Int64s()
		require.NoError(t, err)
		assert.True(t, math.IsNaN(sv[0]), "scale %v", sv)
		assert.Equal(t, []int64{0}, zv)
		s, _, err = kernels.ChooseQParams(tensor.F32([]int{2}, 1, inf32), -128, 127, 1e-7, tensor.Int8, false)
		require.NoError(t, err)
		sv, err = s.Float64s()
		require.NoError(t, err)
		assert.True(t, math.IsInf(sv[0], 1), "scale %v", sv)
	})
}
