package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func view(t *testing.T, shape, strides []int) *tensor.Tensor {
	t.Helper()
	base := tensor.MustZeros(tensor.Float32, tensor.Numel(shape))
	v, err := base.NewView(shape, strides, 0)
	require.NoError(t, err)
	return v
}

// Cases from the comments of ATen's is_channels_last_strides_2d_s4; each
// answer was checked against PyTorch 2.14: conv2d with a 1x1 weight on
// such an input gives a channels-last result exactly where want is true.
func TestSuggestsChannelsLast(t *testing.T) {
	for _, c := range []struct {
		shape, strides []int
		want           bool
	}{
		{[]int{2, 3, 4, 5}, []int{60, 20, 5, 1}, false}, // contiguous
		{[]int{2, 3, 4, 5}, []int{60, 1, 15, 3}, true},  // channels last
		{[]int{4, 1, 1, 1}, []int{1, 1, 1, 1}, false},   // N111, ambiguous: NCHW
		{[]int{2, 1, 4, 5}, []int{20, 20, 5, 1}, false}, // C = 1, contiguous
		{[]int{2, 1, 4, 5}, []int{20, 1, 5, 1}, true},   // C = 1 with NHWC strides
		{[]int{3, 1, 1, 1}, []int{1, 1, 1, 1}, false},   // N111 again
		{[]int{1, 6, 5, 8}, []int{240, 1, 48, 6}, true}, // ConvNeXt's permute back
		{[]int{2, 3, 4, 5}, []int{60, 1, 3, 12}, false}, // W outer to H: not NHWC
	} {
		got := kernels.SuggestsChannelsLast(view(t, c.shape, c.strides))
		require.Equal(t, c.want, got, "%v @ %v", c.shape, c.strides)
	}
}

// Hand-computed splits: PyTorch's chunk gives ceil(size/chunks)-sized
// pieces, so 6 rows in 4 chunks are 3 pieces of 2.
func TestChunkSplitViews(t *testing.T) {
	x := tensor.F32([]int{6, 2}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	ps, err := kernels.Chunk(x, 4, 0)
	require.NoError(t, err)
	require.Len(t, ps, 3)
	for i, p := range ps {
		require.Equal(t, []int{2, 2}, p.Shape())
		require.Equal(t, []int{2, 1}, p.Strides())
		require.Equal(t, 4*i, p.Offset())
	}
	ps, err = kernels.Split(x, 4, 0)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, []int{2, 2}, ps[1].Shape())
	ps, err = kernels.SplitWithSizes(x, []int{1, 1}, 1)
	require.NoError(t, err)
	require.Equal(t, []int{6, 1}, ps[1].Shape())
	require.Equal(t, 1, ps[1].Offset())
	_, err = kernels.SplitWithSizes(x, []int{1, 2}, 1)
	require.ErrorIs(t, err, tensor.ErrShape)
	_, err = kernels.Chunk(x, 0, 0)
	require.ErrorIs(t, err, kernels.ErrBadArgument)
	_, err = kernels.Split(x, 0, 0)
	require.ErrorIs(t, err, kernels.ErrBadArgument)
	us, err := kernels.Unbind(x, 1)
	require.NoError(t, err)
	require.Len(t, us, 2)
	require.Equal(t, []int{6}, us[1].Shape())
	require.Equal(t, []int{2}, us[1].Strides())
	u, err := kernels.Unflatten(x, 0, []int{3, -1})
	require.NoError(t, err)
	require.Equal(t, []int{3, 2, 2}, u.Shape())
	_, err = kernels.Unflatten(x, 0, []int{4, -1})
	require.ErrorIs(t, err, tensor.ErrShape)
	s, err := kernels.Stack([]*tensor.Tensor{x, x}, -1)
	require.NoError(t, err)
	require.Equal(t, []int{6, 2, 2}, s.Shape())
	_, err = kernels.Stack([]*tensor.Tensor{x, us[0]}, 0)
	require.ErrorIs(t, err, tensor.ErrShape)
}
