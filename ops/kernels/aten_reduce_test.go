package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func TestSoftmax(t *testing.T) {
	inf := float32(math.Inf(1))
	tests := []struct {
		name string
		x    *tensor.Tensor
		dim  int
		log  bool
		want []float64
		tol  float64
	}{
		// e^k / (e^1+e^2+e^3): 0.09003057317038046, 0.24472847105479764, 0.6652409557748219.
		{"small", tensor.F32([]int{3}, 1, 2, 3), 0, false, []float64{0.09003057317038046, 0.24472847105479764, 0.6652409557748219}, 1e-7},
		// Large values do not overflow: the max is subtracted first.
		{"large equal", tensor.F32([]int{2}, 1000, 1000), 0, false, []float64{0.5, 0.5}, 0},
		{"large apart", tensor.F32([]int{2}, 1000, 0), 0, false, []float64{1, 0}, 0},
		{"minus inf", tensor.F32([]int{2}, -inf, 0), 0, false, []float64{0, 1}, 0},
		// Along dim 0 of [[0, 0], [ln 3, 0]]: column 0 gives 1/4 and 3/4.
		{"dim 0", tensor.F32([]int{2, 2}, 0, 0, float32(math.Log(3)), 0), 0, false, []float64{0.25, 0.5, 0.75, 0.5}, 1e-7},
		// log_softmax([0, 0]) = -ln 2 each.
		{"log", tensor.F32([]int{2}, 0, 0), -1, true, []float64{-math.Ln2, -math.Ln2}, 1e-7},
		{"log large", tensor.F32([]int{2}, 1000, 0), 0, true, []float64{0, -1000}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *tensor.Tensor
			var err error
			if tt.log {
				got, err = kernels.LogSoftmax(tt.x, tt.dim)
			} else {
				got, err = kernels.Softmax(tt.x, tt.dim)
			}
			require.NoError(t, err)
			requireClose(t, tt.want, f32s(t, got), tt.tol)
		})
	}
	t.Run("NaN row", func(t *testing.T) {
		got, err := kernels.Softmax(tensor.F32([]int{2}, float32(math.NaN()), 1), 0)
		require.NoError(t, err)
		for _, v := range f32s(t, got) {
			assert.True(t, v != v)
		}
	})
	t.Run("bad dim", func(t *testing.T) {
		_, err := kernels.Softmax(tensor.F32([]int{2}, 1, 2), 1)
		require.ErrorIs(t, err, tensor.ErrShape)
		assert.Contains(t, err.Error(), `"dim"`)
	})
}

func TestSumMean(t *testing.T) {
	x := tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	tests := []struct {
		name  string
		f     func() (*tensor.Tensor, error)
		shape []int
		want  []float64
		dtype tensor.DType
	}{
		{"sum dim 0", func() (*tensor.Tensor, error) { return kernels.Sum(x, []int{0}, false, 0) }, []int{3}, []float64{5, 7, 9}, tensor.Float32},
		{"sum dim -1 keepdim", func() (*tensor.Tensor, error) { return kernels.Sum(x, []int{-1}, true, 0) }, []int{2, 1}, []float64{6, 15}, tensor.Float32},
		{"mean all", func() (*tensor.Tensor, error) { return kernels.Mean(x, nil, false, 0) }, nil, []float64{3.5}, tensor.Float32},
		{"mean dims keepdim", func() (*tensor.Tensor, error) { return kernels.Mean(x, []int{0, 1}, true, 0) }, []int{1, 1}, []float64{3.5}, tensor.Float32},
		{"sum of a transposed view", func() (*tensor.Tensor, error) {
			xt, _ := x.Transpose(0, 1)
			return kernels.Sum(xt, []int{1}, false, 0)
		}, []int{3}, []float64{5, 7, 9}, tensor.Float32},
		{"int sum is int64", func() (*tensor.Tensor, error) {
			return kernels.Sum(tensor.MustFromData(tensor.Int8, []int{3}, []int8{100, 100, 100}), nil, false, 0)
		}, nil, []float64{300}, tensor.Int64},
		{"sum to float64", func() (*tensor.Tensor, error) { return kernels.Sum(x, []int{0}, false, tensor.Float64) }, []int{3}, []float64{5, 7, 9}, tensor.Float64},
		{"empty sum is 0", func() (*tensor.Tensor, error) { return kernels.Sum(tensor.F32([]int{0, 2}), []int{0}, false, 0) }, []int{2}, []float64{0, 0}, tensor.Float32},
		{"amax", func() (*tensor.Tensor, error) { return kernels.Amax(x, []int{1}, false) }, []int{2}, []float64{3, 6}, tensor.Float32},
		{"amin keepdim", func() (*tensor.Tensor, error) { return kernels.Amin(x, []int{0}, true) }, []int{1, 3}, []float64{1, 2, 3}, tensor.Float32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f()
			require.NoError(t, err)
			assert.Equal(t, tt.shape, got.Shape())
			assert.Equal(t, tt.dtype, got.DType())
			v, err := got.Float64s()
			require.NoError(t, err)
			assert.Equal(t, tt.want, v)
		})
	}
	t.Run("int mean needs a dtype", func(t *testing.T) {
		_, err := kernels.Mean(tensor.MustFromData(tensor.Int64, []int{1}, []int64{1}), nil, false, 0)
		require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
	})
	t.Run("repeated dim", func(t *testing.T) {
		_, err := kernels.Sum(x, []int{0, -2}, false, 0)
		require.ErrorIs(t, err, kernels.ErrBadArgument)
	})
}
