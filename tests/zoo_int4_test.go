package tests

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops/tensor"
)

// zooInt4Record is expected.json's llama_tiny "int4" record: torchao's
// target counts per stage.
type zooInt4Record struct {
	Graphs map[string]struct {
		QDQCounts map[string]int `json:"qdq_counts"`
	} `json:"graphs"`
	Linears int `json:"linears"`
}

// torchaoCounts counts the torchao call targets of g.
func torchaoCounts(g *fxgraph.Graph) map[string]int { return targetCounts(g, "torchao.") }

// TestZooInt4Decoder runs the int4 groupwise flow (group size 32) on the
// Llama-style decoder as torchao's records did: prepare, the 4 recorded
// calibration batches, convert with fold_quantize.
//   - The converted graph has torchao's chains (9 choose_qparams, 9
//     quantize, 24 dequantize: wq/wk/wv and w1/w3 share theirs), with the
//     .default overloads where torchao's convert writes packets.
//   - Its outputs on the eval inputs match torchao's converted outputs under
//     the fixtures' rule.
//   - The reference rewrite then replaces the linears whose dequantize has
//     one user: torchao's count after re-export (5 of 15, with 4/4/14 q/dq
//     ops left).
//   - With OwnActivationChains every linear gets its own chain and all 15
//     become reference_dqlinear_int4 (beyond torchao; expected.json's
//     diagnostic_unshared_chains is torchao's rewrite after the same graph
//     surgery).
func TestZooInt4Decoder(t *testing.T) {
	var rec zooInt4Record
	if raw := zooRecords(t)["llama_tiny"]; raw != nil && raw.Raw["int4"] != nil {
		require.NoError(t, json.Unmarshal(raw.Raw["int4"], &rec))
	}
	require.Equal(t, 15, rec.Linears)
	outs := zooOutputs(t, "llama_tiny")
	flow := func(own, ref bool) *fxgraph.Graph {
		_, g := zooQuantize(t, "llama_tiny", convert.Int4GroupwiseQuantizer{GroupSize: 32, OwnActivationChains: own}, convert.ConvertOptions{ReferenceRepresentation: ref}, outs)
		return g
	}

	g := flow(false, false)
	want := map[string]int{}
	for k, v := range rec.Graphs["converted"].QDQCounts {
		want[k+".default"] = v // torchao writes packets; fxquant's convert the overloads
	}
	assert.Equal(t, want, torchaoCounts(g), "converted graph")
	qdq := outs.modeTensors(t, "int4", "converted_outputs")
	for i := range outs.Inputs.Eval {
		got, scales := runGraph(t, g, []*tensor.Tensor{mustTensor(t, &outs.Inputs.Eval[i])})
		// The activation quantize's per-token scales are computed in the
		// run: the rule's s is the largest scale a quantize op used.
		checkQuantizedOutput(t, "llama_tiny int4", mustTensor(t, &qdq[i]), got[0], slices.Max(scales))
	}

	assert.Equal(t, rec.Graphs["converted.export.refrep"].QDQCounts, torchaoCounts(flow(false, true)), "reference rewrite, torchao's shared chains")

	own := torchaoCounts(flow(true, true))
	assert.Equal(t, map[string]int{"torchao.reference_dqlinear_int4.default": 15}, own, "every linear rewritten")
}

// TestZooDecoderStaticRuns quantizes the decoder with the static XNNPACK
// quantizer, which torchao's records do not cover, and runs it: the q/dq
// pairs on the rotary products before attention must keep the transposed
// layout PyTorch gives them, or the view after attention fails ("size and
// stride are not compatible").
func TestZooDecoderStaticRuns(t *testing.T) {
	outs := zooOutputs(t, "llama_tiny")
	_, g := zooQuantize(t, "llama_tiny", zooQuantizer("static"), convert.ConvertOptions{}, outs)
	for i := range outs.Inputs.Eval {
		got, err := interp.Run(g, []*tensor.Tensor{mustTensor(t, &outs.Inputs.Eval[i])}, interp.Options{})
		require.NoError(t, err)
		assert.Equal(t, []int{1, 16, 128}, got[0].(*tensor.Tensor).Shape())
	}
}
