package pt2_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/pt2"
)

// TestTensorMetaStrides: strides is a required TensorMeta field with one
// entry per size (pt2-json.md 3.7). torch's deserializer builds
// TensorMeta(**data), which raises on a missing field, so the reader
// rejects a missing, null or short strides list and names the field.
// FuzzReadJSON found the missing case: it used to be read, written back as
// "strides": [] and then refused on the second read.
func TestTensorMetaStrides(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(m obj)
		want string
	}{
		{"missing", func(m obj) { delete(m, "strides") },
			`graph_module.graph.tensor_values["x"]: missing required field "strides"`},
		{"null", func(m obj) { m["strides"] = nil },
			`graph_module.graph.tensor_values["x"]: missing required field "strides"`},
		{"empty for two sizes", func(m obj) { m["strides"] = []any{} },
			`graph_module.graph.tensor_values["x"].strides: want one stride per size (2), got 0`},
		{"one too many", func(m obj) { m["strides"] = []any{obj{"as_int": 3}, obj{"as_int": 1}, obj{"as_int": 1}} },
			`graph_module.graph.tensor_values["x"].strides: want one stride per size (2), got 3`},
		{"not a list", func(m obj) { m["strides"] = 1 },
			`graph_module.graph.tensor_values["x"].strides: want an array`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := reluProgram()
			tt.edit(graphOf(d)["tensor_values"].(obj)["x"].(obj))
			_, err := pt2.ReadJSON(marshal(t, d), opaque)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("scalar with no strides", func(t *testing.T) {
		// A 0-d tensor has sizes [] and strides []: present and matching.
		d := reluProgram()
		graphOf(d)["tensor_values"].(obj)["x"] = tm(7)
		graphOf(d)["tensor_values"].(obj)["relu"] = tm(7)
		p, err := pt2.ReadJSON(marshal(t, d), opaque)
		require.NoError(t, err)
		js, err := p.EncodeJSON(nil)
		require.NoError(t, err)
		_, err = pt2.ReadJSON(js, opaque)
		require.NoError(t, err)
	})
	t.Run("payload config tensor_meta without strides", func(t *testing.T) {
		ma := tm(7, 2)
		delete(ma, "strides")
		cfg := marshal(t, obj{"config": obj{
			"a": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": ma},
			"b": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tm(7, 2)}}})
		_, err := pt2.Read(pt2Archive(t, "a", bufferProgram(tm(7, 2), tm(7, 2)), string(cfg),
			map[string][]byte{"weight_0": make([]byte, 8)}, "little"), nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `missing required field "strides"`)
	})
}
