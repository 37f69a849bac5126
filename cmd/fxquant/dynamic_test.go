package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/pt2"
)

// zooMLP is the zoo's mlp_dynamic_batch: x: f32[s77, 16], s77 in [1, 64],
// with torchao's calibration batches of sizes 8, 1, 5 and 32.
const zooMLP = "../../tests/testdata/zoo/mlp_dynamic_batch"

// TestRunDynamicBatch quantizes the dynamic-batch MLP with both XNNPACK
// modes on the four calibration batches of different sizes and writes the
// program: it keeps x: f32[s77, 16] and the range constraint, and reads
// back. PyTorch loads the written files and gives torchao's outputs at
// batches 3 and 17 (tests/testdata/dynamic/oracle/check_written.txt).
func TestRunDynamicBatch(t *testing.T) {
	for _, q := range []string{"xnnpack-static", "xnnpack-dynamic"} {
		t.Run(q, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "mlp."+q+".pt2")
			code, stdout, errs := runCmd(t, "run", zooMLP+".float.pt2", "--quantizer", q,
				"--calibration-data", zooMLP+".outputs.json", "-o", out)
			require.Equal(t, exitOK, code, "stderr: %s", errs)
			assert.Contains(t, stdout, "user inputs: x: f32[s77, 16]\n")
			assert.Contains(t, stdout, "calibration: 4 batches from ")
			assert.Contains(t, stdout, "verifier:    ok\n")
			p, err := pt2.ReadFile(out, nil)
			require.NoError(t, err)
			x, ok := p.Graph.NodeByName("x")
			require.True(t, ok)
			assert.Equal(t, "f32[s77, 16]", x.Type().String())
			var rc map[string]map[string]*int64
			require.NoError(t, json.Unmarshal(p.RangeConstraints, &rc))
			require.Len(t, rc, 1)
			assert.Equal(t, int64(1), *rc["s77"]["min_val"])
			assert.Equal(t, int64(64), *rc["s77"]["max_val"])
			syms := p.Graph.Symbols()
			require.Len(t, syms, 1)
			assert.Equal(t, "[1, 64]", syms[0].RangeString())
		})
	}
}

// TestRunDynamicBatchOutOfRange: calibration data with a batch outside
// the range is refused, naming the batch, the placeholder, the dimension
// and the range; a batch whose static size is wrong is refused on load.
func TestRunDynamicBatchOutOfRange(t *testing.T) {
	dir := t.TempDir()
	batch := func(rows, cols int) string {
		vals := make([]string, rows*cols)
		for i := range vals {
			vals[i] = "0.5"
		}
		return `{"shape": [` + strconv.Itoa(rows) + `, ` + strconv.Itoa(cols) + `], "dtype": "float32", "values": [` + strings.Join(vals, ", ") + `]}`
	}
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte("["+batch(8, 16)+", "+batch(65, 16)+"]"), 0o644))
	code, _, errs := runCmd(t, "run", zooMLP+".float.pt2", "--calibration-data", big)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, `calibrate: batch 1: `)
	assert.Contains(t, errs, `placeholder "x": dim 0: size 65 is outside the range [1, 64] of symbol s77`)

	narrow := filepath.Join(dir, "narrow.json")
	require.NoError(t, os.WriteFile(narrow, []byte("["+batch(8, 15)+"]"), 0o644))
	code, _, errs = runCmd(t, "run", zooMLP+".float.pt2", "--calibration-data", narrow)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, `batch 0, input "x": shape [8 15], want [s77, 16]`)
}
