package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGeluErfAVX512 checks the emulation of oneDNN's avx512_core gelu_erf
// (its bit-exactness is shown end to end by the zoo's bert_encoder, whose
// recorded outputs and torchao qparams come from an AVX-512 machine) by
// hand-worked values and by accuracy against x·Φ(x) in float64: a wrong
// coefficient, piece index or sign gives errors far above the bound.
func TestGeluErfAVX512(t *testing.T) {
	// x = 6 > 0x40b15cee (≈5.5419): piece 23, whose polynomial is the
	// constant 1, so gelu(6) = (6·(1+1))·0.5 = 6 exactly, and gelu(-6) =
	// (-6·(1-1))·0.5 = -0.
	assert.Equal(t, math.Float32bits(6), math.Float32bits(geluErfAVX512(6)))
	assert.Equal(t, uint32(0x80000000), math.Float32bits(geluErfAVX512(-6)))
	// x = ±0: piece 1 (the index 0xc21fffff>>21 is negative, clamped up),
	// p(0) = its degree-0 coefficient 0x32827792 ≈ 1.5e-8, 1+p rounds to 1.
	assert.Equal(t, uint32(0), math.Float32bits(geluErfAVX512(0)))
	assert.Equal(t, uint32(0x80000000), math.Float32bits(geluErfAVX512(float32(math.Copysign(0, -1)))))
	// Every piece, both signs: within 5e-7·max(|x|, 1) of the true value
	// (a few float32 ulps of x: the table is a minimax fit of erf(x/√2),
	// and 1 + p loses the low bits of p near -1).
	worst := 0.0
	for i := -80000; i <= 80000; i++ {
		x := float32(i) / 10000
		want := float64(x) * 0.5 * (1 + math.Erf(float64(x)/math.Sqrt2))
		got := float64(geluErfAVX512(x))
		worst = max(worst, math.Abs(got-want)/max(math.Abs(float64(x)), 1))
	}
	require.Less(t, worst, 5e-7, "worst scaled error")
	t.Logf("worst error / max(|x|, 1) on [-8, 8]: %.3g", worst)
}
