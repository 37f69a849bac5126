package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/pt2"
)

// TestRunX86Inductor runs --quantizer x86-inductor-static|dynamic on the
// zoo MLP with torchao's calibration batches. torchao's converted graphs
// (tests/testdata/x86/expected.json) have a uint8 (0..255) q/dq pair on the
// input of each of the 3 linears and the 3 int8 per-channel weights
// dequantized: 3 quantize and 6 dequantize ops, plus 3 choose_qparams
// when dynamic. The written program reads back.
func TestRunX86Inductor(t *testing.T) {
	for _, tc := range []struct{ q, qdq string }{
		{"x86-inductor-static", "q/dq:        3 quantize, 6 dequantize, 0 choose_qparams\n"},
		{"x86-inductor-dynamic", "q/dq:        3 quantize, 6 dequantize, 3 choose_qparams\n"},
	} {
		t.Run(tc.q, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "mlp.pt2")
			code, stdout, errs := runCmd(t, "run", zooMLP+".float.pt2", "--quantizer", tc.q,
				"--calibration-data", zooMLP+".outputs.json", "-o", out)
			require.Equal(t, exitOK, code, "stderr: %s", errs)
			assert.Contains(t, stdout, "quantizer:   "+tc.q+"\n")
			assert.Contains(t, stdout, tc.qdq)
			assert.Contains(t, stdout, "verifier:    ok\n")
			p, err := pt2.ReadFile(out, nil)
			require.NoError(t, err)
			n := 0
			for node := range p.Graph.All() {
				tg := node.Target()
				if tg != nil && (tg.String() == "quantized_decomposed.quantize_per_tensor.default" || tg.String() == "quantized_decomposed.quantize_per_tensor.tensor") {
					n++
					assert.Equal(t, []any{int64(0), int64(255)}, []any{node.Arg(3), node.Arg(4)}, "%s: uint8 range", node.Name())
				}
			}
			assert.Equal(t, 3, n)
		})
	}
	code, _, errs := runCmd(t, "run", "--quantizer", "x86-inductor")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "x86-inductor-static, x86-inductor-dynamic")
}
