package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// x33 is one 3x3 plane holding 1..9:
//
//	1 2 3
//	4 5 6
//	7 8 9
func x33() *tensor.Tensor { return tensor.F32([]int{1, 1, 3, 3}, seq(9, 1, 1)...) }

func conv2d(t *testing.T, x, w, b *tensor.Tensor, stride, pad, dil []int, groups int) *tensor.Tensor {
	t.Helper()
	p, err := kernels.NewConvParams(2, stride, pad, dil, groups)
	require.NoError(t, err)
	y, err := kernels.ConvNd(2, x, w, b, p)
	require.NoError(t, err)
	return y
}

func TestConv2dHandComputed(t *testing.T) {
	ones := tensor.F32([]int{1, 1, 2, 2}, 1, 1, 1, 1)
	tests := []struct {
		name  string
		got   func(t *testing.T) *tensor.Tensor
		shape []int
		want  []float32
	}{
		// 2x2 window sums: 1+2+4+5=12, 2+3+5+6=16, 24, 28; plus bias 0.5.
		{"valid", func(t *testing.T) *tensor.Tensor {
			return conv2d(t, x33(), ones, tensor.F32([]int{1}, 0.5), []int{1}, []int{0}, []int{1}, 1)
		}, []int{1, 1, 2, 2}, []float32{12.5, 16.5, 24.5, 28.5}},
		// Padding 1, stride 2: windows start at -1 and 1 on both axes:
		// {1}, {2,3}, {4,7}, {5,6,8,9}.
		{"padding and stride", func(t *testing.T) *tensor.Tensor {
			return conv2d(t, x33(), ones, nil, []int{2}, []int{1}, []int{1}, 1)
		}, []int{1, 1, 2, 2}, []float32{1, 5, 11, 28}},
		// Dilation 2: the corners 1+3+7+9.
		{"dilation", func(t *testing.T) *tensor.Tensor {
			return conv2d(t, x33(), ones, nil, []int{1}, []int{0}, []int{2}, 1)
		}, []int{1, 1, 1, 1}, []float32{20}},
		// Depthwise, groups = 2: channel 0 ×2, channel 1 ×(-1), bias 1 and 0.
		{"groups", func(t *testing.T) *tensor.Tensor {
			x := tensor.F32([]int{1, 2, 1, 2}, 1, 2, 3, 4)
			w := tensor.F32([]int{2, 1, 1, 1}, 2, -1)
			return conv2d(t, x, w, tensor.F32([]int{2}, 1, 0), []int{1}, []int{0}, []int{1}, 2)
		}, []int{1, 2, 1, 2}, []float32{3, 5, -3, -4}},
		// Unbatched input [C, H, W] keeps no batch dim.
		{"unbatched", func(t *testing.T) *tensor.Tensor {
			x, _ := x33().Reshape(1, 3, 3)
			return conv2d(t, x, ones, nil, []int{2}, []int{0}, []int{1}, 1)
		}, []int{1, 1, 1}, []float32{12}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.got(t)
			assert.Equal(t, tt.shape, got.Shape())
			requireBits(t, tt.want, got)
		})
	}
}

func TestConv1dAndSamePadding(t *testing.T) {
	x := tensor.F32([]int{1, 1, 5}, 1, 2, 3, 4, 5)
	w := tensor.F32([]int{1, 1, 3}, 1, 0, -1)
	p, err := kernels.NewConvParams(1, []int{1}, []int{0}, []int{1}, 1)
	require.NoError(t, err)
	y, err := kernels.ConvNd(1, x, w, nil, p)
	require.NoError(t, err)
	requireBits(t, []float32{-2, -2, -2}, y) // x[i] - x[i+2]

	// padding="same" with kernel 2: total 1, the extra element after.
	w2 := tensor.F32([]int{1, 1, 2}, 1, 10)
	p, err = kernels.NewConvParams(1, []int{1}, []int{0}, []int{1}, 1)
	require.NoError(t, err)
	require.NoError(t, p.PaddingMode("same", []int{2}))
	y, err = kernels.ConvNd(1, x, w2, nil, p)
	require.NoError(t, err)
	requireBits(t, []float32{21, 32, 43, 54, 5}, y) // x[i] + 10·x[i+1], x[5] = 0
}

// TestConv2dAgainstLoops compares a strided, padded, grouped, dilated
// convolution with a direct float64 loop.
func TestConv2dAgainstLoops(t *testing.T) {
	const N, C, H, W, O, G, K = 2, 4, 7, 6, 6, 2, 3
	const stride, pad, dil = 2, 2, 2
	xv, wv, bv := lcg(N*C*H*W, 11), lcg(O*(C/G)*K*K, 12), lcg(O, 13)
	x := tensor.F32([]int{N, C, H, W}, xv...)
	w := tensor.F32([]int{O, C / G, K, K}, wv...)
	b := tensor.F32([]int{O}, bv...)
	got := conv2d(t, x, w, b, []int{stride}, []int{pad}, []int{dil}, G)
	Ho := (H+2*pad-dil*(K-1)-1)/stride + 1
	Wo := (W+2*pad-dil*(K-1)-1)/stride + 1
	require.Equal(t, []int{N, O, Ho, Wo}, got.Shape())
	var want []float64
	for n := 0; n < N; n++ {
		for o := 0; o < O; o++ {
			g := o / (O / G)
			for oy := 0; oy < Ho; oy++ {
				for ox := 0; ox < Wo; ox++ {
					s := float64(bv[o])
					for c := 0; c < C/G; c++ {
						for i := 0; i < K; i++ {
							for j := 0; j < K; j++ {
								y, xx := oy*stride-pad+i*dil, ox*stride-pad+j*dil
								if y < 0 || y >= H || xx < 0 || xx >= W {
									continue
								}
								s += float64(xv[((n*C+g*(C/G)+c)*H+y)*W+xx]) * float64(wv[((o*(C/G)+c)*K+i)*K+j])
							}
						}
					}
					want = append(want, s)
				}
			}
		}
	}
	// The kernel sums the 18 products in float32 (TestConvMatchesNaive
	// checks its exact order); float32 rounding of each partial sum bounds
	// the difference from float64 well below 1e-5 here.
	const tol = 1e-5
	requireClose(t, want, f32s(t, got), tol)
}

func TestConvErrors(t *testing.T) {
	p, _ := kernels.NewConvParams(2, []int{1}, []int{0}, []int{1}, 1)
	_, err := kernels.Convolution(x33(), tensor.F32([]int{1, 2, 2, 2}, make([]float32, 8)...), nil, p)
	require.ErrorIs(t, err, tensor.ErrShape)
	assert.Contains(t, err.Error(), `"weight"`)
	_, err = kernels.Convolution(x33(), tensor.F32([]int{1, 1, 5, 5}, make([]float32, 25)...), nil, p)
	require.ErrorIs(t, err, tensor.ErrShape)
	_, err = kernels.NewConvParams(2, []int{0}, []int{0}, []int{1}, 1)
	require.ErrorIs(t, err, kernels.ErrBadArgument)
}

func TestMaxPool2d(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name       string
		x          *tensor.Tensor
		k, s, p, d []int
		ceil       bool
		shape      []int
		want       []float32
		wantIdx    []int64
	}{
		// Padding 1, stride 2: windows {1}, {2,3}, {4,7}, {5,6,8,9}.
		{"padding", x33(), []int{2}, []int{2}, []int{1}, []int{1}, false, []int{1, 1, 2, 2}, []float32{1, 3, 7, 9}, []int64{0, 2, 6, 8}},
		{"floor mode", x33(), []int{2}, nil, []int{0}, []int{1}, false, []int{1, 1, 1, 1}, []float32{5}, []int64{4}},
		// Ceil mode adds the partial windows {3,6}, {7,8}, {9}.
		{"ceil mode", x33(), []int{2}, nil, []int{0}, []int{1}, true, []int{1, 1, 2, 2}, []float32{5, 6, 8, 9}, []int64{4, 5, 7, 8}},
		{"dilation", x33(), []int{2}, []int{1}, []int{0}, []int{2}, false, []int{1, 1, 1, 1}, []float32{9}, []int64{8}},
		{"NaN wins", tensor.F32([]int{1, 2, 2}, 1, nan, 3, 2), []int{2}, nil, []int{0}, []int{1}, false, []int{1, 1, 1}, []float32{nan}, []int64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, idx, err := kernels.MaxPool2d(tt.x, tt.k, tt.s, tt.p, tt.d, tt.ceil)
			require.NoError(t, err)
			assert.Equal(t, tt.shape, out.Shape())
			requireBits(t, tt.want, out)
			iv, err := tensor.Data[int64](idx)
			require.NoError(t, err)
			assert.Equal(t, tt.wantIdx, iv)
		})
	}
	_, _, err := kernels.MaxPool2d(x33(), []int{2}, nil, []int{2}, []int{1}, false)
	require.ErrorIs(t, err, kernels.ErrBadArgument) // padding above half the kernel
}

func TestAvgPool2d(t *testing.T) {
	tests := []struct {
		name       string
		includePad bool
		divisor    int
		want       []float32
	}{
		// Windows {1}, {2,3}, {4,7}, {5,6,8,9} over the padded 2x2 area.
		{"count_include_pad", true, 0, []float32{1.0 / 4, 5.0 / 4, 11.0 / 4, 28.0 / 4}},
		{"exclude pad", false, 0, []float32{1, 5.0 / 2, 11.0 / 2, 28.0 / 4}},
		{"divisor_override", true, 3, []float32{float32(1) / 3, float32(5) / 3, float32(11) / 3, float32(28) / 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := kernels.AvgPool2d(x33(), []int{2}, []int{2}, []int{1}, false, tt.includePad, tt.divisor)
			require.NoError(t, err)
			assert.Equal(t, []int{1, 1, 2, 2}, out.Shape())
			requireBits(t, tt.want, out)
		})
	}
}

func TestAdaptiveAvgPool2d(t *testing.T) {
	// 3 -> 2 windows: rows [0,2) and [1,3); (1+2+4+5)/4 = 3, ...
	out, err := kernels.AdaptiveAvgPool2d(x33(), []int{2, 2})
	require.NoError(t, err)
	requireBits(t, []float32{3, 4, 6, 7}, out)
	out, err = kernels.AdaptiveAvgPool2d(x33(), []int{1})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 1, 1, 1}, out.Shape())
	requireBits(t, []float32{45.0 / 3 / 3}, out)
}
