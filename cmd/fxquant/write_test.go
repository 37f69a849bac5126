package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWrittenProgramKeepsSignature writes the quantized embedded MLP, reads
// it back, and checks that it has the float program's user inputs and
// outputs and module call graph, and that it computes, bit for bit, what
// the in-memory quantized graph computes on the same batch.
func TestWrittenProgramKeepsSignature(t *testing.T) {
	for _, q := range []string{"xnnpack-static", "xnnpack-dynamic"} {
		t.Run(q, func(t *testing.T) {
			c := &runConfig{quantizer: q, calibration: 2, seed: 1}
			res, err := runPipeline(c, nil)
			require.NoError(t, err)
			require.NoError(t, res.verifyErr)
			out := filepath.Join(t.TempDir(), "q.pt2")
			require.NoError(t, writeProgram(res, out))

			back, err := pt2.ReadFile(out, nil)
			require.NoError(t, err)
			var users []string
			for _, s := range back.Signature.Inputs {
				if s.Kind == pt2.UserInput {
					users = append(users, s.Name)
				}
			}
			assert.Equal(t, []string{"x"}, users, "the float MLP's only user input")
			require.Len(t, back.Signature.Outputs, 1)
			assert.Equal(t, pt2.UserOutput, back.Signature.Outputs[0].Kind)
			assert.JSONEq(t, string(res.program.ModuleCallGraph), string(back.ModuleCallGraph))

			g, err := back.Unlifted()
			require.NoError(t, err)
			batch, err := randomBatches(res.inputSpecs, 1, 99)
			require.NoError(t, err)
			want, err := interp.Run(res.quant, batch[0], interp.Options{})
			require.NoError(t, err)
			got, err := interp.Run(g, batch[0], interp.Options{})
			require.NoError(t, err)
			require.Len(t, got, len(want))
			wt, gt := want[0].(*tensor.Tensor), got[0].(*tensor.Tensor)
			assert.Equal(t, []int{4, 16}, gt.Shape())
			wv, err := tensor.Data[float32](wt.Contiguous())
			require.NoError(t, err)
			gv, err := tensor.Data[float32](gt.Contiguous())
			require.NoError(t, err)
			for i := range wv {
				if math.Float32bits(wv[i]) != math.Float32bits(gv[i]) {
					t.Fatalf("element %d: got %g (%#08x), want %g (%#08x)", i, gv[i], math.Float32bits(gv[i]), wv[i], math.Float32bits(wv[i]))
				}
			}
		})
	}
}

// TestWrittenProgramReadsBack is the round trip run no longer does on
// every -o: for each quantizer and with the reference representation,
// the archive writeProgram writes reads back with pt2.Read, and writing
// what was read gives the same bytes again.
func TestWrittenProgramReadsBack(t *testing.T) {
	cases := []struct {
		file      string
		quantizer string
		reference bool
	}{
		{"", "xnnpack-static", false},
		{"", "xnnpack-static", true},
		{"", "xnnpack-dynamic", false},
		{"", "int4-groupwise:16", false},
		{"../../tests/testdata/zoo/mlp_dynamic_batch.float.pt2", "xnnpack-static", false},
		{"../../tests/testdata/zoo/mlp_dynamic_batch.float.pt2", "xnnpack-dynamic", true},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s/%s/reference=%v", filepath.Base(tc.file), tc.quantizer, tc.reference)
		t.Run(name, func(t *testing.T) {
			c := &runConfig{file: tc.file, quantizer: tc.quantizer, reference: tc.reference, calibration: 2, seed: 1, calibBudget: defaultCalibrationBudget}
			res, err := runPipeline(c, nil)
			require.NoError(t, err)
			require.NoError(t, res.verifyErr)
			out := filepath.Join(t.TempDir(), "q.pt2")
			require.NoError(t, writeProgram(res, out))
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			back, err := pt2.Read(data, nil)
			require.NoError(t, err, "the written archive reads back")
			require.NoError(t, fxgraph.Verify(back.Graph, fxgraph.VerifyOptions{Lifted: back.LiftedAttrs()}))
			var again bytes.Buffer
			require.NoError(t, back.WriteArchive(&again, nil))
			assert.True(t, bytes.Equal(data, again.Bytes()), "writing the read-back program gives other bytes (%d vs %d)", len(data), again.Len())
		})
	}
}
