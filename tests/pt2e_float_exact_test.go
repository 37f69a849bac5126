package tests

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// floatInexact lists the float programs whose outputs are not bit-exact
// with PyTorch's, by stem, with the op responsible. Their outputs are held
// to the README's float tolerance instead. Every other *.float.pt2 must
// match PyTorch's recorded float.outputs bit for bit.
var floatInexact = map[string]string{
	// Empty: cnn became exact with batch_norm as ATen's fused float32
	// x·alpha + beta and adaptive_avg_pool2d to [1, 1] as mean()'s cascade
	// sum; groupnorm with group_norm as ATen's RowwiseMoments and fused
	// scale/shift (ops/kernels/aten_norm.go, aten_norm_exact.go).
}

// TestPT2FloatProgramsBitExact runs every tests/testdata/pt2e/*.float.pt2
// program with the interpreter on the recorded eval inputs and requires
// its outputs to equal PyTorch's recorded float.outputs bit for bit: the
// matrix-product and convolution kernels sum in the reference-BLAS order
// of PyTorch 2.14's CPU build (see ops/kernels/aten_gemm_exact.go), and the
// norm and pooling kernels follow ATen's AVX2 kernels.
func TestPT2FloatProgramsBitExact(t *testing.T) {
	for _, stem := range fileStems(t, pt2eDir, ".float.pt2") {
		path := filepath.Join(pt2eDir, stem+".float.pt2")
		t.Run(stem, func(t *testing.T) {
			fx := loadFixtureOutputs(t, stem)
			require.Len(t, fx.Float.Outputs, len(fx.Inputs.Eval), "one recorded output per eval input")
			prog, err := pt2.ReadFile(path, nil)
			require.NoError(t, err)
			for i := range fx.Inputs.Eval {
				what := fmt.Sprintf("eval[%d]", i)
				got, _ := runProgram(t, prog, mustTensor(t, &fx.Inputs.Eval[i]))
				require.Len(t, got, 1, "the fixture models return one tensor")
				want := mustTensor(t, &fx.Float.Outputs[i])
				if reason, ok := floatInexact[stem]; ok {
					t.Logf("%s: not bit-exact (%s): checking the float tolerance", what, reason)
					checkFloatOutput(t, what, want, got[0])
					continue
				}
				requireSameBits(t, what, want, got[0])
			}
		})
	}
}

// requireSameBits requires two float32 tensors of the same shape whose
// elements have identical bit patterns, reporting every differing element
// (up to 10) with its position and both values in %g and hex.
func requireSameBits(t *testing.T, what string, want, got *tensor.Tensor) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), "%s: shape", what)
	require.Equal(t, tensor.Float32, got.DType(), "%s: dtype", what)
	w, err := tensor.Data[float32](want)
	require.NoError(t, err)
	g, err := tensor.Data[float32](got)
	require.NoError(t, err)
	var diffs []string
	for i := range w {
		if math.Float32bits(w[i]) != math.Float32bits(g[i]) {
			if len(diffs) < 10 {
				diffs = append(diffs, fmt.Sprintf("element %d: want %g (%08x), got %g (%08x)",
					i, w[i], math.Float32bits(w[i]), g[i], math.Float32bits(g[i])))
			} else if len(diffs) == 10 {
				diffs = append(diffs, "...")
			}
		}
	}
	if len(diffs) > 0 {
		n := 0
		for i := range w {
			if math.Float32bits(w[i]) != math.Float32bits(g[i]) {
				n++
			}
		}
		t.Fatalf("%s: %d of %d elements differ from PyTorch's bits:\n%s", what, n, len(w), strings.Join(diffs, "\n"))
	}
}
