package convert_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/constfold"
	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/metadata"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
	"github.com/fxquant/fxquant/reftransform"
)

const nzFixtures = "../tests/testdata/pt2e"

type nzTensor struct {
	Target string    `json:"target"`
	Shape  []int     `json:"shape"`
	DType  string    `json:"dtype"`
	Values []float64 `json:"values"`
}

func (j nzTensor) tensor(t *testing.T) *tensor.Tensor {
	t.Helper()
	switch j.DType {
	case "float32":
		v := make([]float32, len(j.Values))
		for i, x := range j.Values {
			v[i] = float32(x)
		}
		return tensor.MustFromData(tensor.Float32, j.Shape, v)
	case "int8":
		v := make([]int8, len(j.Values))
		for i, x := range j.Values {
			v[i] = int8(x)
		}
		return tensor.MustFromData(tensor.Int8, j.Shape, v)
	}
	t.Fatalf("dtype %q not handled", j.DType)
	return nil
}

type nzOutputs struct {
	Inputs struct {
		Eval []nzTensor `json:"eval"`
	} `json:"inputs"`
	Int4 struct {
		GetAttrs                map[string]nzTensor `json:"get_attrs"`
		SimDefaultRefrepOutputs []nzTensor          `json:"sim_default_refrep_outputs"`
	} `json:"int4"`
}

// packetInt4Graph builds torchao's convert output with fold_quantize=False
// (the converted_nofold listing: torchao ops as packets) with its real
// attributes: the float weight and bias from the float program, the
// weight's scale and zero point from the recorded get_attrs. The
// _guards_fn torch artefact is dropped.
func packetInt4Graph(t *testing.T, stem string) (*fxgraph.Graph, nzOutputs) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(nzFixtures, stem+".converted_nofold.graph.txt"))
	require.NoError(t, err)
	rows, err := fxgraph.ParseListingString(string(b))
	require.NoError(t, err)
	g, err := fxgraph.GraphFromListing(rows)
	require.NoError(t, err)
	if gf, ok := g.NodeByName("_guards_fn"); ok {
		require.NoError(t, g.Erase(gf))
	}
	fp, err := pt2.ReadFile(filepath.Join(nzFixtures, stem+".float.pt2"), nil)
	require.NoError(t, err)
	for _, name := range []string{"linear.weight", "linear.bias"} {
		a, ok := fp.Graph.Attr(name)
		require.True(t, ok, name)
		g.SetAttr(name, a)
	}
	ob, err := os.ReadFile(filepath.Join(nzFixtures, stem+".outputs.json"))
	require.NoError(t, err)
	var outs nzOutputs
	require.NoError(t, json.Unmarshal(ob, &outs))
	for _, name := range []string{"_scale0", "_zero_point0"} {
		g.SetAttr(name, outs.Int4.GetAttrs[name].tensor(t))
	}
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	return g, outs
}

func nzNode(t *testing.T, g *fxgraph.Graph, name string) *fxgraph.Node {
	t.Helper()
	n, ok := g.NodeByName(name)
	require.True(t, ok, "node %s", name)
	return n
}

// TestPacketInt4Flow runs convert's passes on a graph whose torchao ops
// are packets, as torchao's convert wrote them: metadata is ported, the
// weight quantize is folded into the recorded int8 constant, the weight
// dequantize stays, and the int4 rewrite fires only after overload
// normalisation.
func TestPacketInt4Flow(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(nzFixtures, "int4_linear_g*.converted_nofold.graph.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".converted_nofold.graph.txt")
		t.Run(stem, func(t *testing.T) {
			g, outs := packetInt4Graph(t, stem)
			x, w, lin := nzNode(t, g, "x"), nzNode(t, g, "linear_weight"), nzNode(t, g, "linear")
			lin.Meta.StackTrace = "linear trace"
			lin.Meta.Set(metadata.KeyQuantizationTag, "BackendA_linear_0")
			w.Meta.StackTrace = "weight trace"
			w.Meta.Set(metadata.KeyQuantizationTag, "BackendA_weight_0")
			convert.AnnotateInput(lin, x, &convert.QuantizationSpec{IsDynamic: true})
			convert.AnnotateInput(lin, w, &convert.QuantizationSpec{})

			res, err := metadata.PortNodeMetaForQDQ(g, metadata.Options{Annotation: convert.PortMetadataAnnotation})
			require.NoError(t, err)
			assert.True(t, res.Changed)
			for _, name := range []string{"choose_qparams_affine", "quantize_affine_1", "dequantize_affine_1", "dequantize_affine"} {
				tag, _ := nzNode(t, g, name).Meta.Get(metadata.KeyQuantizationTag)
				assert.Equal(t, "BackendA_linear_0", tag, name)
			}
			tag, _ := nzNode(t, g, "quantize_affine").Meta.Get(metadata.KeyQuantizationTag)
			assert.Equal(t, "BackendA_weight_0", tag, "the weight quantize takes the weight get_attr's tag")

			res, err = constfold.ConstantFold(g, constfold.Options{Constraint: constfold.QuantNodeConstraint})
			require.NoError(t, err)
			assert.Equal(t, 1, res.Stats["folded"])
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			folded := nzNode(t, g, "quantize_affine")
			assert.Equal(t, fxgraph.GetAttr, folded.Op())
			assert.Equal(t, "_frozen_param0", folded.TargetName())
			tag, _ = folded.Meta.Get(metadata.KeyQuantizationTag)
			assert.Equal(t, "BackendA_weight_0", tag)
			data, _ := g.Attr("_frozen_param0")
			want := outs.Int4.GetAttrs["quantize_affine"].tensor(t)
			assert.NoError(t, tensor.Diff(data.(*tensor.Tensor), want), "folded weight equals torchao's int8 _frozen_param0")
			dq := nzNode(t, g, "dequantize_affine")
			assert.Equal(t, ops.MustPacket("torchao.dequantize_affine"), dq.Target(), "the weight dequantize is kept")
			_, hasW := g.NodeByName("linear_weight")
			assert.False(t, hasW, "the float weight get_attr is gone")

			before := fxgraph.Format(g)
			res, err = reftransform.Run(g)
			require.NoError(t, err)
			assert.False(t, res.Changed, "matching is exact: packets do not match the .default pattern")
			assert.Equal(t, before, fxgraph.Format(g))

			res, err = convert.NormalizeOverloads(g, nil)
			require.NoError(t, err)
			assert.Equal(t, 4, res.Stats["normalized"], "weight dequantize, choose_qparams, activation quantize and dequantize")
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			res, err = reftransform.Run(g)
			require.NoError(t, err)
			assert.Equal(t, 1, res.Stats["int4_dynamic_linear_2d"])
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))

			// The graph is torchao's simulated post-change rewrite, without
			// the _guards_fn artefact.
			sim, err := os.ReadFile(filepath.Join(nzFixtures, stem+".sim_default.refrep.graph.txt"))
			require.NoError(t, err)
			var want2 []string
			for _, l := range strings.SplitAfter(string(sim), "\n") {
				if l != "" && !strings.HasPrefix(l, "_guards_fn |") {
					want2 = append(want2, l)
				}
			}
			assert.Equal(t, strings.Join(want2, ""), fxgraph.FormatListing(g))

			ref := nzNode(t, g, "reference_dqlinear_int4")
			assert.Equal(t, "linear trace", ref.Meta.StackTrace)
			for i, in := range outs.Inputs.Eval {
				got, err := interp.Run(g, []*tensor.Tensor{in.tensor(t)}, interp.Options{})
				require.NoError(t, err)
				gv, _ := tensor.Data[float32](got[0].(*tensor.Tensor).Contiguous())
				wv, _ := tensor.Data[float32](outs.Int4.SimDefaultRefrepOutputs[i].tensor(t))
				if stem == "int4_linear_g32" {
					continue // torchao's op has the [1, N] scale bug there
				}
				for k := range gv {
					if d := math.Abs(float64(gv[k] - wv[k])); d > 1e-5+1e-5*math.Abs(float64(wv[k])) {
						t.Errorf("eval %d element %d: got %g, want %g", i, k, gv[k], wv[k])
					}
				}
			}
		})
	}
}

// TestNormalizeOverloadsLeavesAmbiguousPackets checks that a packet with
// several overloads stays a packet and is reported, and that a graph with
// nothing to do is left byte-identical.
func TestNormalizeOverloadsLeavesAmbiguousPackets(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		changed   bool
		wantNotes int
		want      string
	}{
		{
			name: "several overloads",
			src: `graph():
    %x : f32[4] [num_users=1] = placeholder[target=x]
    %q : [num_users=1] = call_function[target=torch.ops.quantized_decomposed.quantize_per_tensor](args = (%x, 0.5, 0, -128, 127, torch.int8), kwargs = {})
    return (q,)
`,
			wantNotes: 1,
		},
		{
			name: "nothing to do",
			src: `graph():
    %x : f32[4] [num_users=1] = placeholder[target=x]
    %r : f32[4] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})
    return (r,)
`,
		},
		{
			name: "single overload",
			src: `graph():
    %x : f32[4] [num_users=1] = placeholder[target=x]
    %r : [num_users=1] = call_function[target=torch.ops.aten.relu](args = (%x,), kwargs = {})
    return (r,)
`,
			changed: true,
			want:    "torch.ops.aten.relu.default",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := fxgraph.ParseString(tt.src)
			require.NoError(t, err)
			before := fxgraph.Format(g)
			res, err := convert.NormalizeOverloads(g, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.changed, res.Changed)
			assert.Len(t, res.Notes, tt.wantNotes)
			if !tt.changed {
				assert.Equal(t, before, fxgraph.Format(g))
			} else {
				assert.Contains(t, fxgraph.Format(g), tt.want)
			}
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
		})
	}
}
