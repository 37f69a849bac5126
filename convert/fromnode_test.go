package convert_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

var reluT = ops.MustOverload("aten.relu.default")

// Records as cnn.static.pt2 stores them (PyTorch 2.14 + torchao): the
// relu's own record, and the q/dq records of an input observer (on a
// placeholder, no provenance) and of the relu's output observer.
const (
	fixtureGraphID    = 140313728875376
	fixtureReluSource = `[{"name": "relu", "target": "aten.relu.default", "graph_id": 140313728765808, "pass_name": "ExportedProgram.module()", "action": "create", "from_node": []}]`
	wantInputObs      = `[{"name": "activation_post_process_0", "target": "activation_post_process_0", "graph_id": 140313728875376, "pass_name": "replace_observer_with_quantize_dequantize_node", "action": "create", "from_node": []}]`
	wantOutputObs     = `[{"name": "activation_post_process_1", "target": "activation_post_process_1", "graph_id": 140313728875376, "pass_name": "replace_observer_with_quantize_dequantize_node", "action": "create", "from_node": [{"name": "relu", "target": "aten.relu.default", "graph_id": 140313728765808, "pass_name": "ExportedProgram.module()", "action": "create", "from_node": []}]}]`
)

// TestConvertFromNode: the q and dq of each observer carry
// [NodeSource(observer, "replace_observer_with_quantize_dequantize_node",
// [CREATE])] in the JSON form of the fixture archives; the output observer
// copied the relu's record in prepare, so it is nested.
func TestConvertFromNode(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(2))
	r := g.Call(reluT, x)
	r.SetType(f32(2))
	r.Meta.FromNode = fixtureReluSource
	g.SetOutput(ops.Tuple{r})
	require.NoError(t, convert.Prepare(g, funcQuantizer(func(g *fxgraph.Graph) error {
		n := node(t, g, "relu_default")
		convert.AnnotateInput(n, node(t, g, "x"), minmaxSpec())
		convert.AnnotateOutput(n, minmaxSpec())
		convert.Annotation(n).NoImplicitSharing = true
		return nil
	})))
	require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{{tensor.MustFromData(tensor.Float32, []int{2}, []float32{-1, 2})}}, nil))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{FromNodeGraphID: fixtureGraphID}))
	q := g.FindNodes(fxgraph.CallFunction, ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"))
	dq := g.FindNodes(fxgraph.CallFunction, ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default"))
	require.Len(t, q, 2)
	require.Len(t, dq, 2)
	for i, want := range []string{wantInputObs, wantOutputObs} {
		assert.Equal(t, want, q[i].Meta.FromNode, "q %d", i)
		assert.Equal(t, want, dq[i].Meta.FromNode, "dq %d", i)
	}
	src, err := convert.ParseFromNode(q[1].Meta.FromNode)
	require.NoError(t, err)
	require.Len(t, src, 1)
	assert.Equal(t, "relu", src[0].FromNode[0].Name)
	assert.Equal(t, fxgraph.Format(g), fxgraph.Format(g)) // deterministic printing
}

// TestConvertFromNodeAffine: AffineQuantizedObserverBase.convert sets no
// from_node on its nodes.
func TestConvertFromNodeAffine(t *testing.T) {
	g := addGraph()
	require.NoError(t, convert.Prepare(g, funcQuantizer(func(g *fxgraph.Graph) error {
		convert.AnnotateOutput(node(t, g, "add_tensor"), &convert.QuantizationSpec{DType: observers.Int8,
			Observer: convert.AffineQuantizedMinMaxObserverCtor(observers.AffineConfig{
				MappingType: observers.Symmetric, TargetDType: tensor.Int8, Granularity: observers.PerTensor{}})})
		return nil
	})))
	one := tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, -2})
	require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{{one, one}}, nil))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
	n := 0
	for v := range g.All() {
		if v.Op() == fxgraph.CallFunction && v.Target().String() != "aten.add.Tensor" {
			n++
			assert.Empty(t, v.Meta.FromNode, "%s", v.Name())
		}
	}
	assert.Equal(t, 2, n, "%s", fxgraph.Format(g)) // quantize_affine and dequantize_affine of the output
}

// TestFormatFromNode: Python json.dumps escaping and action strings.
func TestFormatFromNode(t *testing.T) {
	got := convert.FormatFromNode([]convert.NodeSource{{Name: "a\"b", Target: "é\n", GraphID: -1, PassName: "p", Action: "create+replace"}})
	assert.Equal(t, `[{"name": "a\"b", "target": "\u00e9\n", "graph_id": -1, "pass_name": "p", "action": "create+replace", "from_node": []}]`, got)
	back, err := convert.ParseFromNode(got)
	require.NoError(t, err)
	assert.Equal(t, "é\n", back[0].Target)
	_, err = convert.ParseFromNode("{")
	require.Error(t, err)
}
