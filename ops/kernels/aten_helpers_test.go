package kernels_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/tensor"
)

// f32s returns a float32 tensor's values in row-major order.
func f32s(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	require.Equal(t, tensor.Float32, x.DType())
	d, err := tensor.Data[float32](x)
	require.NoError(t, err)
	return d
}

// requireBits compares float32 values bit for bit (NaN payloads aside) and
// reports the position and both values in %g and hex.
func requireBits(t *testing.T, want []float32, x *tensor.Tensor) {
	t.Helper()
	got := f32s(t, x)
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		if w != w && g != g {
			continue
		}
		if math.Float32bits(w) != math.Float32bits(g) {
			t.Fatalf("element %d: got %g (%#08x), want %g (%#08x)", i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
}

// requireClose compares float32 values within an absolute-or-relative
// tolerance, for kernels whose reduction order differs from the
// reference's.
func requireClose(t *testing.T, want []float64, got []float32, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		d := math.Abs(float64(got[i]) - want[i])
		if !(d <= tol || d <= tol*math.Abs(want[i])) {
			t.Fatalf("element %d: got %g, want %g (tol %g)", i, got[i], want[i], tol)
		}
	}
}

func seq(n int, start, step float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = start + float32(i)*step
	}
	return out
}

// lcg returns n deterministic pseudo-random float32 values in [-1, 1).
func lcg(n int, seed uint64) []float32 {
	out := make([]float32, n)
	s := seed
	for i := range out {
		s = s*6364136223846793005 + 1442695040888963407
		out[i] = float32(int64(s>>40)%2000)/1000 - 1
	}
	return out
}

func name(format string, args ...any) string { return fmt.Sprintf(format, args...) }
