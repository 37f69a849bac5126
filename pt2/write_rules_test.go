package pt2_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// archiveRecords returns the records of an archive by name, root folder
// stripped.
func archiveRecords(t *testing.T, data []byte) (map[string][]byte, []string) {
	t.Helper()
	out := map[string][]byte{}
	var order []string
	for _, e := range unzip(t, data) {
		name := e.name[len("archive/"):]
		out[name] = e.data
		order = append(order, name)
	}
	return out, order
}

// payloadConfig decodes a payload config into fqn -> PayloadMeta.
func payloadConfig(t *testing.T, b []byte) map[string]map[string]any {
	t.Helper()
	var cfg struct {
		Config map[string]map[string]any `json:"config"`
	}
	require.NoError(t, json.Unmarshal(b, &cfg))
	return cfg.Config
}

func symInts(v ...int) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = map[string]any{"as_int": float64(x)}
	}
	return out
}

// Tensors that share a storage when read share one weight record when
// written, each FQN with its own sizes, strides and storage offset, as
// _save_raw_tensors groups them (tied weights).
func TestWriteSharedStorage(t *testing.T) {
	storage := f32Bytes(binary.LittleEndian, 1, 2, 3, 4, 5, 6)
	for _, tt := range []struct {
		name             string
		ma, mb           obj
		stridesA, stride []int
		offA, offB       int
	}{
		{name: "tied: same view twice", ma: viewMeta([]int{2, 3}, []int{3, 1}, 0), mb: viewMeta([]int{2, 3}, []int{3, 1}, 0),
			stridesA: []int{3, 1}, stride: []int{3, 1}},
		{name: "offset and transposed views", ma: viewMeta([]int{2, 2}, []int{2, 1}, 2), mb: viewMeta([]int{3, 2}, []int{1, 3}, 0),
			stridesA: []int{2, 1}, stride: []int{1, 3}, offA: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := string(marshal(t, obj{"config": obj{
				"a": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tt.ma},
				"b": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tt.mb}}}))
			z := pt2Archive(t, "archive", bufferProgram(tt.ma, tt.mb), cfg, map[string][]byte{"weight_0": storage}, "little")
			p, err := pt2.Read(z, opaque)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, p.WriteArchive(&buf, nil))
			recs, order := archiveRecords(t, buf.Bytes())
			assert.Equal(t, []string{"data/weights/weight_0", "data/weights/model_weights_config.json",
				"data/constants/model_constants_config.json", "models/model.json", "data/sample_inputs/model.pt",
				"archive_format", "archive_version", ".data/version", "byteorder", ".data/serialization_id"}, order,
				"one weight record for the shared storage")
			assert.Equal(t, storage, recs["data/weights/weight_0"], "the whole storage is written")
			c := payloadConfig(t, recs["data/weights/model_weights_config.json"])
			for _, x := range []struct {
				fqn     string
				strides []int
				off     int
			}{{"a", tt.stridesA, tt.offA}, {"b", tt.stride, tt.offB}} {
				assert.Equal(t, "weight_0", c[x.fqn]["path_name"], x.fqn)
				m := c[x.fqn]["tensor_meta"].(map[string]any)
				assert.Equal(t, symInts(x.strides...), m["strides"], x.fqn)
				assert.Equal(t, map[string]any{"as_int": float64(x.off)}, m["storage_offset"], x.fqn)
			}
			q, err := pt2.Read(buf.Bytes(), opaque)
			require.NoError(t, err)
			requireSameWeights(t, p, q)
		})
	}
	t.Run("separate storages stay separate", func(t *testing.T) {
		p, err := pt2.ReadJSON(marshal(t, reluProgram()), opaque)
		require.NoError(t, err)
		g := p.Graph
		relu := nodeNamed(t, g, "relu")
		g.SetAttr("w0", tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6))
		g.SetAttr("w1", tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6))
		restore := g.InsertingBefore(relu)
		a := g.GetAttr("w0", ops.Plain(tensor.Float32, 2, 3))
		b := g.GetAttr("w1", ops.Plain(tensor.Float32, 2, 3))
		add := g.CreateNode(fxgraph.CallFunction, ops.MustOverload("aten.add.Tensor"), "", []ops.Value{a, b}, nil, "add", ops.Plain(tensor.Float32, 2, 3))
		restore()
		g.SetArgs(relu, add)
		var buf bytes.Buffer
		require.NoError(t, p.WriteArchive(&buf, nil))
		recs, _ := archiveRecords(t, buf.Bytes())
		c := payloadConfig(t, recs["data/weights/model_weights_config.json"])
		assert.Equal(t, "weight_0", c["w0"]["path_name"])
		assert.Equal(t, "weight_1", c["w1"]["path_name"])
	})
}

// A value whose name fxgraph's namespace must change (the Python builtin
// "input" becomes node "input_1", "sum" becomes "sum_1") is written under
// its own name: the JSON written is the JSON read.
func TestWriteKeepsSerializedNames(t *testing.T) {
	doc := program([]any{node("torch.ops.aten.relu.default", "sum", []any{in("self", ten("input"), 1)})},
		obj{"sum": tm(7, 2, 3), "input": tm(7, 2, 3)}, "sum")
	graphOf(doc)["inputs"] = []any{ten("input")}
	delete(graphOf(doc)["tensor_values"].(obj), "x")
	doc["graph_module"].(obj)["signature"].(obj)["input_specs"] = []any{obj{"user_input": obj{"arg": ten("input")}}}
	raw := marshal(t, doc)
	p, err := pt2.ReadJSON(raw, opaque)
	require.NoError(t, err)
	in := nodeNamed(t, p.Graph, "input_1")
	out := nodeNamed(t, p.Graph, "sum_1")
	assert.Equal(t, "input", p.SerializedName(in))
	assert.Equal(t, "sum", p.SerializedName(out))
	assert.Equal(t, "input_1", p.Signature.Inputs[0].Name, "the signature names graph nodes")

	js, err := p.EncodeJSON(nil)
	require.NoError(t, err)
	var want, got any
	require.NoError(t, json.Unmarshal(raw, &want))
	require.NoError(t, json.Unmarshal(js, &got))
	assert.Equal(t, want, got)
	assert.NotContains(t, string(js), "input_1")
	assert.NotContains(t, string(js), "sum_1")

	// names survive a graph clone (the command converts a clone)
	c, _ := p.Graph.Clone()
	p2 := *p
	p2.Graph = c
	js2, err := p2.EncodeJSON(nil)
	require.NoError(t, err)
	assert.Equal(t, string(js), string(js2))
}

// LiftSpecs: get_attr tensors of attributes that were parameters are
// lifted as parameters (is_param, requires_grad), listed attributes no node
// reads are kept, attributes convert created become persistent buffers,
// and the order is parameters, buffers, user inputs, each kind in
// attribute registration order.
func TestWriteLiftSpecs(t *testing.T) {
	p, err := pt2.ReadJSON(marshal(t, reluProgram()), opaque)
	require.NoError(t, err)
	g := p.Graph
	relu := nodeNamed(t, g, "relu")
	g.SetAttr("fc.weight", tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6))
	g.SetAttr("fc.bias", tensor.F32([]int{2, 3}, 6, 5, 4, 3, 2, 1))
	g.SetAttr("_frozen_param0", tensor.MustFromData(tensor.Int8, []int{2, 3}, []int8{1, 2, 3, 4, 5, 6}))
	restore := g.InsertingBefore(relu)
	fz := g.GetAttr("_frozen_param0", ops.Plain(tensor.Int8, 2, 3))
	b := g.GetAttr("fc.bias", ops.Plain(tensor.Float32, 2, 3))
	conv := g.CreateNode(fxgraph.CallFunction, ops.MustOverload("aten.to.dtype"), "", []ops.Value{fz, tensor.Float32}, nil, "to", ops.Plain(tensor.Float32, 2, 3))
	add := g.CreateNode(fxgraph.CallFunction, ops.MustOverload("aten.add.Tensor"), "", []ops.Value{conv, b}, nil, "add", ops.Plain(tensor.Float32, 2, 3))
	restore()
	g.SetArgs(relu, add)
	p.LiftSpecs = map[string]pt2.InputSpec{
		"fc.weight": {Kind: pt2.Parameter, Name: "p_fc_weight"},
		"fc.bias":   {Kind: pt2.Parameter, Name: "p_fc_bias"},
	}
	var buf bytes.Buffer
	require.NoError(t, p.WriteArchive(&buf, nil))
	q, err := pt2.Read(buf.Bytes(), opaque)
	require.NoError(t, err)
	assert.Equal(t, []pt2.InputSpec{
		{Kind: pt2.Parameter, Name: "p_fc_weight", Target: "fc.weight"},
		{Kind: pt2.Parameter, Name: "p_fc_bias", Target: "fc.bias"},
		{Kind: pt2.Buffer, Name: "b__frozen_param0", Target: "_frozen_param0", Persistent: true},
		{Kind: pt2.UserInput, Name: "x"},
	}, q.Signature.Inputs)
	assert.Equal(t, pt2.TensorInfo{IsParam: true, RequiresGrad: true, Device: "cpu"}, q.Tensors["fc.weight"])
	assert.Equal(t, pt2.TensorInfo{IsParam: true, RequiresGrad: true, Device: "cpu"}, q.Tensors["fc.bias"])
	assert.Equal(t, pt2.TensorInfo{Device: "cpu"}, q.Tensors["_frozen_param0"])
	assert.Empty(t, nodeNamed(t, q.Graph, "p_fc_weight").Users(), "unused parameter kept")
	recs, _ := archiveRecords(t, buf.Bytes())
	c := payloadConfig(t, recs["data/weights/model_weights_config.json"])
	assert.Equal(t, true, c["fc.bias"]["is_param"])
	assert.Equal(t, true, c["fc.bias"]["tensor_meta"].(map[string]any)["requires_grad"])
	assert.Equal(t, false, c["_frozen_param0"]["is_param"])
}
