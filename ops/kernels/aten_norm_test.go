package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// groupNormRef is an independent float64 GroupNorm (spec typed-rewrites.md
// 2.3): groups of K = C/G contiguous channels, population variance, eps
// inside the square root, per-channel gamma and beta.
func groupNormRef(x []float32, N, C, S, G int, gamma, beta []float32, eps float64) []float64 {
	K := C / G
	out := make([]float64, len(x))
	for n := 0; n < N; n++ {
		for g := 0; g < G; g++ {
			var sum float64
			for c := g * K; c < (g+1)*K; c++ {
				for i := 0; i < S; i++ {
					sum += float64(x[(n*C+c)*S+i])
				}
			}
			mu := sum / float64(K*S)
			var sq float64
			for c := g * K; c < (g+1)*K; c++ {
				for i := 0; i < S; i++ {
					d := float64(x[(n*C+c)*S+i]) - mu
					sq += d * d
				}
			}
			sd := math.Sqrt(sq/float64(K*S) + eps)
			for c := g * K; c < (g+1)*K; c++ {
				for i := 0; i < S; i++ {
					y := (float64(x[(n*C+c)*S+i]) - mu) / sd
					if gamma != nil {
						y = y*float64(gamma[c]) + float64(beta[c])
					}
					out[(n*C+c)*S+i] = y
				}
			}
		}
	}
	return out
}

func TestLayerNormHandComputed(t *testing.T) {
	// [1,2,3,4]: RowwiseMoments' scalar Welford tail (fewer than 8 values)
	// gives mean 2.5 and m2 = 5 exactly (every step is exact), so the
	// population variance is 1.25. ATen computes rstd in float32:
	// 1/sqrtf(1.25f), then (x - 2.5)·rstd with x - 2.5 exact.
	rstd32 := 1 / float32(math.Sqrt(1.25)) // sqrtf is correctly rounded
	x := tensor.F32([]int{1, 4}, 1, 2, 3, 4)
	out, mean, rstd, err := kernels.LayerNorm(x, []int{4}, nil, nil, 0)
	require.NoError(t, err)
	z := []float32{-1.5 * rstd32, -0.5 * rstd32, 0.5 * rstd32, 1.5 * rstd32}
	requireBits(t, z, out)
	requireBits(t, []float32{2.5}, mean)
	assert.Equal(t, []int{1, 1}, mean.Shape())
	requireBits(t, []float32{rstd32}, rstd)
	// Within 1 ULP of the exact (x-2.5)/sqrt(1.25) = -1.3416407864998738:
	// float32 rstd is not the correctly rounded 1/sqrt(1.25).
	assert.InDelta(t, -1.3416407864998738, float64(z[0]), 2.4e-7)

	// weight 2, bias 1: fma(z, 2, 1); 2·z + 1 is exact in float64, so
	// one rounding of it is the fused result.
	out, _, _, err = kernels.LayerNorm(x, []int{4}, tensor.F32([]int{4}, 2, 2, 2, 2), tensor.F32([]int{4}, 1, 1, 1, 1), 0)
	require.NoError(t, err)
	want := make([]float32, 4)
	for i, v := range z {
		want[i] = float32(2*float64(v) + 1)
	}
	requireBits(t, want, out)

	// A constant row has variance 0, so the output is 0 (eps keeps it finite).
	out, _, _, err = kernels.LayerNorm(tensor.F32([]int{3}, 7, 7, 7), []int{3}, nil, nil, 1e-5)
	require.NoError(t, err)
	requireBits(t, []float32{0, 0, 0}, out)

	_, _, _, err = kernels.LayerNorm(x, []int{3}, nil, nil, 0)
	require.ErrorIs(t, err, tensor.ErrShape)
	assert.Contains(t, err.Error(), "normalized_shape")
}

func TestGroupNormSpecVectors(t *testing.T) {
	// typed-rewrites.md 2.6: N=2, C=12, G=3 (K=4), H=5, W=7; a 3-D case;
	// the edge cases G=C and G=1; eps 1e-5 and 1e-3.
	tests := []struct {
		name    string
		shape   []int
		G       int
		eps     float64
		perChan bool
	}{
		{"N2 C12 G3 H5 W7", []int{2, 12, 5, 7}, 3, 1e-5, true},
		{"3-D N2 C12 D5", []int{2, 12, 5}, 3, 1e-3, true},
		{"G=C", []int{2, 6, 4}, 6, 1e-5, false},
		{"G=1", []int{2, 6, 4}, 1, 1e-5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			N, C := tt.shape[0], tt.shape[1]
			S := tensor.Numel(tt.shape[2:])
			xv := lcg(tensor.Numel(tt.shape), 21)
			x := tensor.F32(tt.shape, xv...)
			var gamma, beta []float32
			var gt, bt *tensor.Tensor
			if tt.perChan {
				// Per-group values [0.5, 1.5, -2.0] and [0.1, -0.2, 0.3]
				// repeated per channel (spec 2.6), cycled for other G.
				gs, bs := []float32{0.5, 1.5, -2.0}, []float32{0.1, -0.2, 0.3}
				for c := 0; c < C; c++ {
					g := c / (C / tt.G)
					gamma = append(gamma, gs[g%3])
					beta = append(beta, bs[g%3])
				}
				gt, bt = tensor.F32([]int{C}, gamma...), tensor.F32([]int{C}, beta...)
			}
			out, mean, _, err := kernels.GroupNorm(x, tt.G, gt, bt, tt.eps)
			require.NoError(t, err)
			assert.Equal(t, []int{N, tt.G}, mean.Shape())
			// Both sides are float64 up to the final rounding; only the
			// summation order of the mean differs.
			const tol = 2e-6
			requireClose(t, groupNormRef(xv, N, C, S, tt.G, gamma, beta, tt.eps), f32s(t, out), tol)
			if !tt.perChan {
				// instance_norm runs batch_norm's training statistics on
				// [1, N·C, S] (float64 sums), not group_norm's Welford
				// moments, so it agrees with the reference, not bit for
				// bit with GroupNorm.
				inst, err := kernels.InstanceNorm(x, nil, nil, nil, nil, true, tt.eps)
				require.NoError(t, err)
				requireClose(t, groupNormRef(xv, N, C, S, tt.G, nil, nil, tt.eps), f32s(t, inst), tol)
			}
		})
	}
	t.Run("constant group: eps dominates", func(t *testing.T) {
		x := tensor.F32([]int{1, 2, 2}, 3, 3, 3, 3)
		out, _, rstd, err := kernels.GroupNorm(x, 1, tensor.F32([]int{2}, 2, 2), tensor.F32([]int{2}, 0.25, -1), 1e-3)
		require.NoError(t, err)
		// mean 3 and variance 0 exactly; rstd = float32(1/sqrt(0 + 1e-3))
		// in float64. Per channel scale = rstd·2 (exact), bias =
		// fma(-scale, 3, beta) rounds -3·scale + beta once, and y =
		// fma(scale, 3, bias) rounds 3·scale + bias once; both sums are
		// exact in float64, so each is one float32 conversion. The bias
		// rounding (ulp 2^-17 near 190) survives: y is not exactly beta,
		// as in PyTorch.
		rs := float32(1 / math.Sqrt(1e-3))
		scale := rs * 2
		var want []float32
		for _, beta := range []float64{0.25, -1} {
			bias := float32(beta - 3*float64(scale))
			y := float32(3*float64(scale) + float64(bias))
			want = append(want, y, y)
		}
		assert.NotEqual(t, float32(0.25), want[0], "the fused bias rounding shows")
		requireBits(t, want, out)
		requireBits(t, []float32{rs}, rstd)
	})
	t.Run("C not divisible by G", func(t *testing.T) {
		_, _, _, err := kernels.GroupNorm(tensor.F32([]int{1, 3, 1}, 1, 2, 3), 2, nil, nil, 1e-5)
		require.ErrorIs(t, err, kernels.ErrBadArgument)
		assert.Contains(t, err.Error(), "num_groups")
	})
}

func TestBatchNorm(t *testing.T) {
	// Channel 0: mean 1, var 4, weight 2, bias 0: (x-1)/2·2.
	// Channel 1: mean 2, var 1, weight 1, bias 1: (x-2) + 1.
	x := tensor.F32([]int{1, 2, 1, 2}, 3, 5, 2, 4)
	mean, variance := tensor.F32([]int{2}, 1, 2), tensor.F32([]int{2}, 4, 1)
	w, b := tensor.F32([]int{2}, 2, 1), tensor.F32([]int{2}, 0, 1)
	out, err := kernels.BatchNorm(x, w, b, mean, variance, false, 0)
	require.NoError(t, err)
	requireBits(t, []float32{2, 4, 1, 3}, out)

	// Training statistics: channel 0 holds {3, 5}: mean 4, var 1.
	out, err = kernels.BatchNorm(x, nil, nil, nil, nil, true, 0)
	require.NoError(t, err)
	requireBits(t, []float32{-1, 1, -1, 1}, out)

	// instance_norm with input statistics: each (n, c) alone, weight 2 and
	// bias 1 repeated for both batch items. {1, 3}: mean 2, var 1, alpha 2,
	// beta = 1 - 2·2 = -3: -1, 3. {0, 4}: mean 2, var 4, alpha 1, beta -1:
	// -1, 3.
	inst, err := kernels.InstanceNorm(tensor.F32([]int{2, 1, 2}, 1, 3, 0, 4), tensor.F32([]int{1}, 2), tensor.F32([]int{1}, 1), nil, nil, true, 0)
	require.NoError(t, err)
	requireBits(t, []float32{-1, 3, -1, 3}, inst)

	_, err = kernels.BatchNorm(x, nil, nil, tensor.F32([]int{3}, 0, 0, 0), variance, false, 0)
	require.ErrorIs(t, err, tensor.ErrShape)
	assert.Contains(t, err.Error(), "running_mean")
}
