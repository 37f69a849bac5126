package kernels_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// p2 returns 2^e as float32.
func p2(e int) float32 { return float32(math.Ldexp(1, e)) }

func TestFMA32HandComputed(t *testing.T) {
	one := float32(1)
	up, down := one+p2(-23), one-p2(-23) // 1 ± 2^-23, both float32
	tests := []struct {
		name    string
		x, y, z float32
		want    float32
	}{
		// (1+2^-23)(1-2^-23) = 1 - 2^-46 exactly; minus 1 leaves -2^-46,
		// where float32(x*y) - 1 would give 0.
		{"cancellation keeps the low product bits", up, down, -1, -p2(-46)},
		// 2^24+2 + 1 - 2^-46: float64 rounds the sum to 2^24+3, a float32
		// tie that rounds to even 2^24+4; the exact value lies below the
		// tie, so the fused result is 2^24+2.
		{"no double rounding at a float32 tie", up, down, p2(24) + 2, p2(24) + 2},
		{"exact", 3, 5, 7, 22},
		// -0·1 + 0 = +0 and -0·1 + -0 = -0 under round to nearest.
		{"signed zero sum", float32(math.Copysign(0, -1)), 1, 0, 0},
		{"negative zero", float32(math.Copysign(0, -1)), 1, float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1))},
		// 3e38·10 overflows float32.
		{"overflow", 3e38, 10, 0, float32(math.Inf(1))},
		{"infinite addend", 1, 1, float32(math.Inf(-1)), float32(math.Inf(-1))},
		// 2^-149·0.5 is a tie between 0 and the smallest subnormal: even
		// is 0; 2^-149·(0.5+2^-24) is above it.
		{"subnormal tie to even", p2(-149), 0.5, 0, 0},
		{"subnormal above the tie", p2(-149), 0.5 + p2(-24), 0, p2(-149)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kernels.FMA32(tt.x, tt.y, tt.z)
			assert.Equal(t, math.Float32bits(tt.want), math.Float32bits(got), "got %g (%08x), want %g (%08x)", got, math.Float32bits(got), tt.want, math.Float32bits(tt.want))
		})
	}
	// The tie case is not vacuous: rounding the float64 FMA to float32
	// gives the double-rounded 2^24+4.
	assert.Equal(t, p2(24)+4, float32(math.FMA(float64(up), float64(down), float64(p2(24)+2))))
	assert.True(t, math.IsNaN(float64(kernels.FMA32(float32(math.Inf(1)), 0, 1))), "inf·0 is NaN")
	assert.True(t, math.IsNaN(float64(kernels.FMA32(float32(math.Inf(1)), 1, float32(math.Inf(-1))))), "inf - inf is NaN")
	assert.True(t, math.IsNaN(float64(kernels.FMA32(float32(math.NaN()), 1, 1))), "NaN propagates")
}

// TestFMA32AgainstBigFloat compares FMA32 with x·y + z computed exactly by
// math/big and rounded once to float32 (big.Float.Float32 rounds to
// nearest even), on seeded random operands chosen to cancel often.
func TestFMA32AgainstBigFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	rnd := func() float32 {
		m := float32(r.Float64()*2 - 1)
		return float32(math.Ldexp(float64(m), r.IntN(40)-20))
	}
	for i := range 200000 {
		x, y := rnd(), rnd()
		var z float32
		if i%2 == 0 {
			// -x·y rounded, plus a few ulps: heavy cancellation.
			z = -x*y + float32(r.IntN(5)-2)*float32(math.Nextafter32(x*y, float32(math.Inf(1)))-x*y)
		} else {
			z = rnd()
		}
		var p, s big.Float
		p.SetPrec(200).Mul(new(big.Float).SetFloat64(float64(x)), new(big.Float).SetFloat64(float64(y)))
		s.SetPrec(200).Add(&p, new(big.Float).SetFloat64(float64(z)))
		want, _ := s.Float32()
		got := kernels.FMA32(x, y, z)
		if want == 0 && got == 0 {
			continue // the sign of an exact zero sum is not big.Float's
		}
		require.Equal(t, math.Float32bits(want), math.Float32bits(got), "fma(%g, %g, %g): got %g, want %g", x, y, z, got, want)
	}
}

// TestBatchNormFusedMultiplyAdd checks the inference arithmetic of ATen's
// CPU batch_norm on values where fusing changes the result.
func TestBatchNormFusedMultiplyAdd(t *testing.T) {
	up, down := 1+p2(-23), 1-p2(-23)
	// Channel 0: var 1, eps 0, so invstd = 1 and alpha = weight = 1-2^-23;
	// mean 0 gives beta = bias = -1; y = fma(1+2^-23, 1-2^-23, -1) =
	// -2^-46 (unfused: float32(x·alpha) = 1, y = 0).
	// Channel 1: mean 1+2^-23, bias 1: beta = fma(-mean, alpha, 1) = 2^-46
	// (unfused: 1 - float32(mean·alpha) = 0); x = 0 gives y = beta.
	x := tensor.F32([]int{1, 2, 1, 1}, up, 0)
	w := tensor.F32([]int{2}, down, down)
	b := tensor.F32([]int{2}, -1, 1)
	mean := tensor.F32([]int{2}, 0, up)
	variance := tensor.F32([]int{2}, 1, 1)
	out, err := kernels.BatchNorm(x, w, b, mean, variance, false, 0)
	require.NoError(t, err)
	requireBits(t, []float32{-p2(-46), p2(-46)}, out)
	assert.NotEqual(t, float32(0), -p2(-46), "the unfused results would be 0")

	// invstd is computed in float32: 1 / sqrtf(var + float32(eps)).
	// var 3, eps 1e-5 (as float32): y = fma(1, alpha, 0) = alpha.
	e := float32(1e-5)
	want := 1 / float32(math.Sqrt(float64(3+e)))
	out, err = kernels.BatchNorm(tensor.F32([]int{1, 1, 1, 1}, 1), nil, nil, tensor.F32([]int{1}, 0), tensor.F32([]int{1}, 3), false, 1e-5)
	require.NoError(t, err)
	requireBits(t, []float32{want}, out)
}

func TestAdaptiveAvgPool2dMeanCascade(t *testing.T) {
	big2 := p2(24)
	tests := []struct {
		name  string
		shape []int
		x     []float32
		want  float32
	}{
		// 64 values as 8 vectors of 8 lanes: lane 0 holds 2^24 alone, lane
		// 1 sums x[1] + x[9] = 2; the lanes are then added in order:
		// 2^24 + 2, divided by 64 = 262144.03125. A sequential sum
		// loses both ones (2^24 + 1 rounds to even 2^24).
		{"vector lanes", []int{1, 1, 8, 8}, func() []float32 {
			v := make([]float32, 64)
			v[0], v[1], v[9] = big2, 1, 1
			return v
		}(), 262144.03125},
		// 6 values, fewer than a vector: row_sum with 4 accumulators
		// gives ((x0 + x4) + x5) + x1 + x2 + x3 = (1 + 1 + 0) + 2^24 =
		// 2^24 + 2, then / 6 in float32.
		{"scalar row_sum", []int{1, 1, 2, 3}, []float32{1, big2, 0, 0, 1, 0}, (big2 + 2) / 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y, err := kernels.AdaptiveAvgPool2d(tensor.F32(tt.shape, tt.x...), []int{1, 1})
			require.NoError(t, err)
			assert.Equal(t, append(tt.shape[:2:2], 1, 1), y.Shape())
			requireBits(t, []float32{tt.want}, y)
		})
	}
	// Every element is summed once: small integers sum exactly in any
	// order, so the result is the exact sum / (H·W) in float32.
	for _, hw := range [][2]int{{1, 1}, {1, 7}, {3, 3}, {5, 13}, {16, 16}, {33, 31}, {64, 64}, {128, 96}} {
		t.Run(name("coverage %dx%d", hw[0], hw[1]), func(t *testing.T) {
			n := hw[0] * hw[1]
			x := make([]float32, 2*n)
			var sums [2]int
			for i := range x {
				x[i] = float32((i*7 + 3) % 100)
				sums[i/n] += (i*7 + 3) % 100
			}
			y, err := kernels.AdaptiveAvgPool2d(tensor.F32([]int{2, hw[0], hw[1]}, x...), []int{1, 1})
			require.NoError(t, err)
			requireBits(t, []float32{float32(sums[0]) / float32(n), float32(sums[1]) / float32(n)}, y)
		})
	}
}

// TestRowwiseMomentsHandComputed follows ATen's RowwiseMoments on 0..15 in
// one group: two vectors of 8 lanes give lane l the mean l+4 and m2 32;
// merging the lanes in order with c = 2/n, m1 = fma(c, δ, m1):
// 4, 4.5, 5 (4.5 + 1.5·float32(1/3) rounds to 5), 5.5, 6, 6.5, 7, 7.5.
// The mean is exactly 7.5; the variance is 21.25 up to rounding.
func TestRowwiseMomentsHandComputed(t *testing.T) {
	x := tensor.F32([]int{1, 16}, seq(16, 0, 1)...)
	_, mean, rstd, err := kernels.LayerNorm(x, []int{16}, nil, nil, 0)
	require.NoError(t, err)
	requireBits(t, []float32{7.5}, mean)
	r := f32s(t, rstd)[0]
	assert.InEpsilon(t, 1/math.Sqrt(21.25), float64(r), 1e-6)

	// A constant row of any length has mean c and variance 0: the chunk
	// stack (16 vectors per chunk, merged like a binary counter) and the
	// scalar tail must agree.
	for _, n := range []int{1, 7, 8, 9, 127, 128, 129, 300, 1000, 4100} {
		v := make([]float32, n)
		for i := range v {
			v[i] = 5
		}
		_, m, s, err := kernels.LayerNorm(tensor.F32([]int{n}, v...), []int{n}, nil, nil, 0.25)
		require.NoError(t, err)
		requireBits(t, []float32{5}, m)
		requireBits(t, []float32{2}, s) // 1/sqrt(0 + 0.25)
	}
}
