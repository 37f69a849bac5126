package tests

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numdebugDir holds torchao's numeric debugger results on the fixtures
// (testdata/numdebug/gen.py says how they were made).
const numdebugDir = "testdata/numdebug"

// debugExpected is one NAME.expected.json.
type debugExpected struct {
	Model   string `json:"model"`
	Source  string `json:"source"`
	Results []struct {
		FloatNode string `json:"float_node"`
		QuantNode string `json:"quant_node"`
		Handle    int    `json:"handle"`
		SQNR      []any  `json:"sqnr"`
		SQNRTotal any    `json:"sqnr_total"`
	} `json:"results"`
}

func jsonFloat(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x
	case string:
		switch x {
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		case "nan":
			return math.NaN()
		}
	}
	t.Fatalf("not a number: %v", v)
	return 0
}

func readDebugExpected(t *testing.T, stem string) *debugExpected {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(numdebugDir, stem+".expected.json"))
	require.NoError(t, err)
	var e debugExpected
	require.NoError(t, json.Unmarshal(data, &e))
	return &e
}

// evalBatches is the recorded eval inputs, one batch each, in order.
func evalBatches(t *testing.T, outs *fixtureOutputs) [][]*tensor.Tensor {
	t.Helper()
	return oneEach(t, outs.Inputs.Eval)
}

// checkAgainstTorchao compares c with torchao's compare_results: the same
// float nodes, handles and quantized nodes, and per eval input SQNRs
// within tol dB (relative to the SQNR's size for large ones).
//
// aliased names the quantized nodes whose value a later in-place op
// overwrites: torchao's OutputLogger keeps x.detach(), which shares
// storage, so torchao reports the overwritten value (mnasnet's conv2d,
// whose folded-BN output feeds relu_, is compared after the relu), while
// numdebug copies the value the node computed. Those SQNRs are not
// compared; the test requires that only such nodes differ.
func checkAgainstTorchao(t *testing.T, e *debugExpected, c *numdebug.Comparison, tol float64, aliased map[string]bool) {
	t.Helper()
	got := map[string]numdebug.Result{}
	var gotNames, wantNames []string
	for _, r := range c.Results {
		got[r.FloatNode] = r
		gotNames = append(gotNames, r.FloatNode)
	}
	for _, w := range e.Results {
		wantNames = append(wantNames, w.FloatNode)
	}
	assert.ElementsMatch(t, wantNames, gotNames, "compared float nodes")
	compared := 0
	defer func() {
		assert.Greater(t, compared, len(e.Results)/2, "SQNRs compared with torchao's")
	}()
	for _, w := range e.Results {
		r, ok := got[w.FloatNode]
		if !ok {
			continue
		}
		assert.Equal(t, w.Handle, r.Handle, "%s: handle", w.FloatNode)
		if aliased[r.QuantNode] {
			continue
		}
		compared++
		require.Len(t, r.BatchSQNR, len(w.SQNR), "%s", w.FloatNode)
		for i, s := range w.SQNR {
			want := jsonFloat(t, s)
			if math.IsInf(want, 1) {
				assert.True(t, math.IsInf(r.BatchSQNR[i], 1), "%s: eval %d: SQNR %v, torchao inf", w.FloatNode, i, r.BatchSQNR[i])
				continue
			}
			assert.InDelta(t, want, r.BatchSQNR[i], tol*max(1, math.Abs(want)/10), "%s: eval %d: SQNR (torchao %.6f, fxquant %.6f)", w.FloatNode, i, want, r.BatchSQNR[i])
		}
		wantTotal := jsonFloat(t, w.SQNRTotal)
		if !math.IsInf(wantTotal, 1) {
			assert.InDelta(t, wantTotal, r.SQNR, tol*max(1, math.Abs(wantTotal)/10), "%s: SQNR over both inputs", w.FloatNode)
		}
	}
}

// TestNumdebugMatchesTorchao runs fxquant's flow on the fixtures torchao's
// numeric debugger ran on (same float program, quantizer, calibration and
// eval inputs) and compares numdebug.Compare with torchao's
// compare_results, node by node: the handles GenerateHandles gives are
// torchao's, the same float nodes are compared, and the SQNRs agree.
// fxquant's quantized values are torchao's up to the odd rounding step
// (the fixtures' outputs rule), so the SQNRs agree to 0.05 dB.
func TestNumdebugMatchesTorchao(t *testing.T) {
	for _, stem := range []string{"mlp", "cnn", "groupnorm", "bert_encoder", "mnasnet0_5"} {
		t.Run(stem, func(t *testing.T) {
			e := readDebugExpected(t, stem)
			dir, _ := filepath.Split(e.Source)
			var outs *fixtureOutputs
			if strings.HasPrefix(dir, "zoo") {
				outs = zooOutputs(t, stem)
			} else {
				outs = loadFixtureOutputs(t, stem)
			}
			g := readUnlifted(t, filepath.Join("testdata", e.Source))
			numdebug.GenerateHandles(g)
			float, _ := g.Clone()
			require.NoError(t, convert.Prepare(g, zooQuantizer("static")))
			require.NoError(t, convert.Calibrate(g, zooBatches(t, outs), nil))
			require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
			c, err := numdebug.Compare(float, g, evalBatches(t, outs))
			require.NoError(t, err)
			aliased := overwrittenInPlace(g)
			checkAgainstTorchao(t, e, c, 0.05, aliased)
			checkAliasedAsTorchao(t, e, float, g, aliased, evalBatches(t, outs))
			if stem == "cnn" {
				// prepare folded bn into conv2d: torchao compares the
				// folded conv with the float conv (5 dB); the result says so.
				for _, r := range c.Results {
					if r.FloatNode == "conv2d" {
						assert.Contains(t, r.Note, "also computes batch_norm (handle 2)")
					} else {
						assert.Empty(t, r.Note, r.FloatNode)
					}
				}
			}
		})
	}
}

// TestNumdebugTorchaoPrograms reads the programs torchao wrote: the float
// program with torchao's handles in node.meta["custom"], and torchao's
// converted model, re-exported. The quantize and dequantize nodes of the
// latter carry only from_node, so AdoptHandles matches them to the float
// nodes as torchao's debugger does. fxquant runs torchao's own quantized
// program, so the SQNRs are torchao's to float32 rounding (1e-5 dB here;
// torch sums the norms in float32, numdebug in float64).
func TestNumdebugTorchaoPrograms(t *testing.T) {
	for _, stem := range []string{"mlp", "cnn"} {
		t.Run(stem, func(t *testing.T) {
			e := readDebugExpected(t, stem)
			outs := loadFixtureOutputs(t, stem)
			float := readUnlifted(t, filepath.Join(numdebugDir, stem+".handles.pt2"))
			handles := map[string]int{}
			for n := range float.All() {
				if h := n.Meta.NumericDebugHandle; h != 0 {
					handles[n.Name()] = h
				}
			}
			for _, w := range e.Results {
				assert.Equal(t, w.Handle, handles[w.FloatNode], "%s: torchao's handle read from meta custom", w.FloatNode)
			}
			// GenerateHandles numbers a fresh copy of the same program as
			// torchao did.
			fg := readUnlifted(t, filepath.Join("testdata", e.Source))
			numdebug.GenerateHandles(fg)
			for n := range fg.All() {
				assert.Equal(t, handles[n.Name()], n.Meta.NumericDebugHandle, "%s: GenerateHandles vs torchao", n.Name())
			}

			quant := readUnlifted(t, filepath.Join(numdebugDir, stem+".torchao.pt2"))
			assert.NotZero(t, numdebug.AdoptHandles(float, quant))
			c, err := numdebug.Compare(float, quant, evalBatches(t, outs))
			require.NoError(t, err)
			checkAgainstTorchao(t, e, c, 1e-5, overwrittenInPlace(quant))
		})
	}
}

// overwrittenInPlace names the nodes of g that an in-place op (a target
// whose name ends in "_", such as aten.relu_) takes as its first argument.
func overwrittenInPlace(g *fxgraph.Graph) map[string]bool {
	out := map[string]bool{}
	for n := range g.All() {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(n.Target().String(), "aten."), ".")
		if strings.HasSuffix(name, "_") && !strings.HasPrefix(name, "_") {
			if a, ok := n.Arg(0).(*fxgraph.Node); ok {
				out[a.Name()] = true
			}
		}
	}
	return out
}

// TestNumdebugFxquantProgramsInTorchao is the other way round: the
// programs `fxquant run -o` wrote for mlp and cnn carry the handles in
// meta["custom"], and torchao's debugger, keyed by those handles as it was
// before from_node (testdata/numdebug/check_fxquant.py), compared them in
// PyTorch with the float program. numdebug.Compare on the same files and
// inputs, with no AdoptHandles, gives torchao's numbers (to 1e-5 dB).
func TestNumdebugFxquantProgramsInTorchao(t *testing.T) {
	for _, stem := range []string{"mlp", "cnn"} {
		t.Run(stem, func(t *testing.T) {
			e := readDebugExpected(t, stem+".fxquant")
			for i := range e.Results {
				e.Results[i].SQNRTotal = "inf" // not recorded: checked per input only
			}
			outs := loadFixtureOutputs(t, stem)
			float := readUnlifted(t, filepath.Join(pt2eDir, stem+".float.pt2"))
			numdebug.GenerateHandles(float)
			quant := readUnlifted(t, filepath.Join(numdebugDir, stem+".fxquant.pt2"))
			c, err := numdebug.Compare(float, quant, evalBatches(t, outs))
			require.NoError(t, err)
			checkAgainstTorchao(t, e, c, 1e-5, nil)
			// torchao compared the same quantized nodes (the last holder
			// of each handle).
			for _, w := range e.Results {
				for _, r := range c.Results {
					if r.Handle == w.Handle {
						assert.Equal(t, w.QuantNode, r.QuantNode, "handle %d", w.Handle)
					}
				}
			}
		})
	}
}

// checkAliasedAsTorchao confirms the explanation of the SQNRs
// checkAgainstTorchao leaves out: for a quantized node that an in-place
// op overwrites, torchao's number is the SQNR of the in-place op's result
// (what the shared storage holds at the end) against the float node.
func checkAliasedAsTorchao(t *testing.T, e *debugExpected, float, quant *fxgraph.Graph, aliased map[string]bool, batches [][]*tensor.Tensor) {
	t.Helper()
	// The in-place op that overwrites each aliased quantized node.
	over := map[*fxgraph.Node]string{} // in-place node -> the node it overwrites
	for n := range quant.All() {
		if a, ok := n.Arg(0).(*fxgraph.Node); ok && n.Op() == fxgraph.CallFunction && aliased[a.Name()] && strings.Contains(n.Target().String(), "_.") {
			over[n] = a.Name()
		}
	}
	want := map[string][]any{} // float node -> torchao's SQNRs
	for _, w := range e.Results {
		want[w.FloatNode] = w.SQNR
	}
	checked := 0
	for b, batch := range batches {
		f, q := map[string][]float64{}, map[string][]float64{}
		_, err := interp.Run(float, batch, interp.Options{Hook: func(n *fxgraph.Node, v ops.Value) error {
			if aliased[n.Name()] {
				f[n.Name()], _ = v.(*tensor.Tensor).Float64s()
			}
			return nil
		}})
		require.NoError(t, err)
		_, err = interp.Run(quant, batch, interp.Options{Hook: func(n *fxgraph.Node, v ops.Value) error {
			if name, ok := over[n]; ok {
				q[name], _ = v.(*tensor.Tensor).Float64s()
			}
			return nil
		}})
		require.NoError(t, err)
		for name, qv := range q {
			fv, ok := f[name]
			if !ok || want[name] == nil {
				continue
			}
			var sig, noise float64
			for i := range qv {
				sig += qv[i] * qv[i]
				noise += (qv[i] - fv[i]) * (qv[i] - fv[i])
			}
			assert.InDelta(t, jsonFloat(t, want[name][b]), 10*math.Log10(sig/noise), 0.05, "%s, eval %d: torchao's SQNR is that of the overwritten value", name, b)
			checked++
		}
	}
	if len(aliased) > 0 {
		assert.NotZero(t, checked, "no overwritten value checked")
	}
}
