package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ints returns an integer tensor's values as int64.
func ints(t *testing.T, x *tensor.Tensor) []int64 {
	t.Helper()
	v, err := x.Int64s()
	require.NoError(t, err)
	return v
}

func TestConvolutionInteger(t *testing.T) {
	i32 := func(shape []int, v ...int32) *tensor.Tensor { return tensor.MustFromData(tensor.Int32, shape, v) }
	tests := []struct {
		name    string
		nd      int
		x, w, b *tensor.Tensor
		stride  []int
		pad     []int
		groups  int
		dtype   tensor.DType
		shape   []int
		want    []int64
	}{
		// 1..9 under [[1,-1],[2,0]]: 1-2+8=7, 2-3+10=9, 4-5+14=13,
		// 5-6+16=15, plus bias 100.
		{"int32 with bias", 2, i32([]int{1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9), i32([]int{1, 1, 2, 2}, 1, -1, 2, 0), i32([]int{1}, 100),
			[]int{1}, []int{0}, 1, tensor.Int32, []int{1, 1, 2, 2}, []int64{107, 109, 113, 115}},
		// Padding 1, stride 2, 2x2 ones: windows {1}, {2,3}, {4,7},
		// {5,6,8,9}; zero padding adds nothing.
		{"int16 padding and stride", 2, tensor.MustFromData(tensor.Int16, []int{1, 1, 3, 3}, []int16{1, 2, 3, 4, 5, 6, 7, 8, 9}), tensor.MustFromData(tensor.Int16, []int{1, 1, 2, 2}, []int16{1, 1, 1, 1}), nil,
			[]int{2}, []int{1}, 1, tensor.Int16, []int{1, 1, 2, 2}, []int64{1, 5, 11, 28}},
		// 2^24+1 survives exactly (a float32 sum would give 2^24).
		{"int32 beyond float32 precision", 2, i32([]int{1, 2, 1, 1}, 1<<24, 1), i32([]int{1, 2, 1, 1}, 1, 1), nil,
			[]int{1}, []int{0}, 1, tensor.Int32, []int{1, 1, 1, 1}, []int64{1<<24 + 1}},
		// 2^30·2 = 2^31 wraps to -2^31 in int32, as C arithmetic does.
		{"int32 wraps", 2, i32([]int{1, 1, 1, 2}, 1<<30, 7), i32([]int{1, 1, 1, 2}, 2, 0), nil,
			[]int{1}, []int{0}, 1, tensor.Int32, []int{1, 1, 1, 1}, []int64{math.MinInt32}},
		// 100 + 100 = 200 wraps to -56 in int8.
		{"int8 wraps", 2, tensor.MustFromData(tensor.Int8, []int{1, 1, 1, 2}, []int8{100, 100}), tensor.MustFromData(tensor.Int8, []int{1, 1, 1, 2}, []int8{1, 1}), nil,
			[]int{1}, []int{0}, 1, tensor.Int8, []int{1, 1, 1, 1}, []int64{-56}},
		// Depthwise: channel 0 times 2, channel 1 times -3, bias 1 and 0.
		{"int32 groups", 2, i32([]int{1, 2, 1, 2}, 1, 2, 3, 4), i32([]int{2, 1, 1, 1}, 2, -3), i32([]int{2}, 1, 0),
			[]int{1}, []int{0}, 2, tensor.Int32, []int{1, 2, 1, 2}, []int64{3, 5, -9, -12}},
		// conv1d: [1,2,3,4] under [1,1] gives 3, 5, 7.
		{"int64 conv1d", 1, tensor.MustFromData(tensor.Int64, []int{1, 1, 4}, []int64{1, 2, 3, 4}), tensor.MustFromData(tensor.Int64, []int{1, 1, 2}, []int64{1, 1}), nil,
			[]int{1}, []int{0}, 1, tensor.Int64, []int{1, 1, 3}, []int64{3, 5, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := kernels.NewConvParams(tt.nd, tt.stride, tt.pad, []int{1}, tt.groups)
			require.NoError(t, err)
			y, err := kernels.Convolution(tt.x, tt.w, tt.b, p)
			require.NoError(t, err)
			assert.Equal(t, tt.dtype, y.DType())
			assert.Equal(t, tt.shape, y.Shape())
			assert.Equal(t, tt.want, ints(t, y))
		})
	}
}

func TestConvolutionIntegerErrors(t *testing.T) {
	x := tensor.MustFromData(tensor.Int8, []int{1, 1, 2, 2}, []int8{1, 2, 3, 4})
	p, err := kernels.NewConvParams(2, []int{1}, []int{0}, []int{1}, 1)
	require.NoError(t, err)
	tests := []struct {
		name    string
		w, b    *tensor.Tensor
		wantArg string
	}{
		{"float weight", tensor.F32([]int{1, 1, 1, 1}, 1), nil, `"weight"`},
		{"other integer weight", tensor.MustFromData(tensor.Int32, []int{1, 1, 1, 1}, []int32{1}), nil, `"weight"`},
		{"float bias", tensor.MustFromData(tensor.Int8, []int{1, 1, 1, 1}, []int8{1}), tensor.F32([]int{1}, 0), `"bias"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kernels.Convolution(x, tt.w, tt.b, p)
			require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
			assert.Contains(t, err.Error(), tt.wantArg)
		})
	}
}

func TestMaxPool2dInteger(t *testing.T) {
	tests := []struct {
		name                    string
		x                       *tensor.Tensor
		kernel, stride, padding []int
		shape                   []int
		want, wantIdx           []int64
	}{
		// 2x2 windows of 1..9 at stride 1: 5 6 8 9 at flat 4 5 7 8.
		{"int32", tensor.MustFromData(tensor.Int32, []int{1, 1, 3, 3}, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}), []int{2}, []int{1}, []int{0},
			[]int{1, 1, 2, 2}, []int64{5, 6, 8, 9}, []int64{4, 5, 7, 8}},
		// Padding 1, stride 2: each window holds one element; padding is
		// below every int8, so negatives win.
		{"int8 negatives with padding", tensor.MustFromData(tensor.Int8, []int{1, 1, 2, 2}, []int8{-5, -3, -7, -1}), []int{2}, []int{2}, []int{1},
			[]int{1, 1, 2, 2}, []int64{-5, -3, -7, -1}, []int64{0, 1, 2, 3}},
		// The lowest value and ties keep the first element.
		{"int8 lowest and ties", tensor.MustFromData(tensor.Int8, []int{1, 2, 1, 2}, []int8{-128, -128, 3, 3}), []int{1, 2}, []int{1}, []int{0},
			[]int{1, 2, 1, 1}, []int64{-128, 3}, []int64{0, 0}},
		{"uint8 unbatched", tensor.MustFromData(tensor.UInt8, []int{1, 1, 2}, []uint8{200, 255}), []int{1, 2}, []int{1}, []int{0},
			[]int{1, 1, 1}, []int64{255}, []int64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y, idx, err := kernels.MaxPool2d(tt.x, tt.kernel, tt.stride, tt.padding, []int{1}, false)
			require.NoError(t, err)
			assert.Equal(t, tt.x.DType(), y.DType())
			assert.Equal(t, tt.shape, y.Shape())
			assert.Equal(t, tt.want, ints(t, y))
			assert.Equal(t, tensor.Int64, idx.DType())
			assert.Equal(t, tt.wantIdx, ints(t, idx))
		})
	}
	t.Run("bool is rejected", func(t *testing.T) {
		b := tensor.MustFromData(tensor.Bool, []int{1, 1, 1, 2}, []bool{true, false})
		_, _, err := kernels.MaxPool2d(b, []int{1}, nil, []int{0}, []int{1}, false)
		require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
		assert.Contains(t, err.Error(), `"self"`)
	})
}
