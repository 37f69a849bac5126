package pt2_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/pt2"
)

// rows lists g's nodes as "name op target args", one per node.
func rows(g *fxgraph.Graph) []string {
	var out []string
	for n := range g.All() {
		out = append(out, fmt.Sprintf("%s %s %s %s", n.Name(), n.Op(), n.TargetName(), dumpValue(n.Args())))
	}
	return out
}

// TestUnliftedFixtures: the node order torchao-pt2e.md 3.8 gives for the
// fixtures' .module(): get_attr nodes named from their FQN in input-spec
// order (parameters, then buffers), then the user input.
func TestUnliftedFixtures(t *testing.T) {
	for _, tt := range []struct {
		stem string
		want []string // the leading nodes, "name op target"
	}{
		{"mlp", []string{
			"fc1_weight get_attr fc1.weight", "fc1_bias get_attr fc1.bias",
			"fc2_weight get_attr fc2.weight", "fc2_bias get_attr fc2.bias",
			"x placeholder x"}},
		{"cnn", []string{
			"conv1_weight get_attr conv1.weight", "conv1_bias get_attr conv1.bias",
			"bn1_weight get_attr bn1.weight", "bn1_bias get_attr bn1.bias",
			"conv2_weight get_attr conv2.weight", "conv2_bias get_attr conv2.bias",
			"fc_weight get_attr fc.weight", "fc_bias get_attr fc.bias",
			"bn1_running_mean get_attr bn1.running_mean", "bn1_running_var get_attr bn1.running_var",
			"bn1_num_batches_tracked get_attr bn1.num_batches_tracked",
			"x placeholder x"}},
	} {
		t.Run(tt.stem, func(t *testing.T) {
			p, err := pt2.ReadFile(filepath.Join(fixtureDir, tt.stem+".float.pt2"), opaque)
			require.NoError(t, err)
			before := dumpGraph(p.Graph)
			g, err := p.Unlifted()
			require.NoError(t, err)
			assert.Equal(t, before, dumpGraph(p.Graph), "Unlifted modified the program's graph")
			got := rows(g)
			require.GreaterOrEqual(t, len(got), len(tt.want))
			for i, w := range tt.want {
				assert.True(t, strings.HasPrefix(got[i], w+" "), "node %d: want %q, got %q", i, w, got[i])
			}
			assert.Empty(t, g.FindNodes(fxgraph.Placeholder, nil)[1:], "only x stays a placeholder")
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
		})
	}
}

// mutationProgram has buffer "count" (placeholder b_count) and user input
// "input" (node input_1, FX renames the builtin); it returns
// [count + x, input * 2 (written back into input), relu(x)] with output
// specs buffer_mutation, user_input_mutation, user_output.
func mutationProgram(t *testing.T) []byte {
	d := program([]any{
		node("torch.ops.aten.add.Tensor", "add", []any{in("self", ten("b_count"), 1), in("other", ten("x"), 1)}),
		node("torch.ops.aten.mul.Tensor", "mul", []any{in("self", ten("input"), 1), in("other", obj{"as_float": 2.0}, 1)}),
		node("torch.ops.aten.relu.default", "relu", []any{in("self", ten("x"), 1)}),
	}, obj{"b_count": tm(7, 2, 3), "input": tm(7, 2, 3), "add": tm(7, 2, 3), "mul": tm(7, 2, 3), "relu": tm(7, 2, 3)},
		"add", "mul", "relu")
	graphOf(d)["inputs"] = []any{ten("b_count"), ten("x"), ten("input")}
	sig := d["graph_module"].(obj)["signature"].(obj)
	sig["input_specs"] = []any{
		obj{"buffer": obj{"arg": obj{"name": "b_count"}, "buffer_name": "count", "persistent": true}},
		obj{"user_input": obj{"arg": ten("x")}},
		obj{"user_input": obj{"arg": ten("input")}}}
	sig["output_specs"] = []any{
		obj{"buffer_mutation": obj{"arg": obj{"name": "add"}, "buffer_name": "count"}},
		obj{"user_input_mutation": obj{"arg": obj{"name": "mul"}, "user_input_name": "input"}},
		obj{"user_output": obj{"arg": ten("relu")}}}
	return marshal(t, d)
}

// TestUnliftedMutations: mutations become aten.copy_.default into the
// buffer's get_attr or the input's placeholder, before the output, which
// then returns only the user output (torchao-pt2e.md 3.8 step 4).
func TestUnliftedMutations(t *testing.T) {
	js := mutationProgram(t)
	cfg := marshal(t, obj{"config": obj{
		"count": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tm(7, 2, 3)}}})
	p, err := pt2.Read(pt2Archive(t, "a", js, string(cfg), map[string][]byte{"weight_0": make([]byte, 24)}, "little"), nil)
	require.NoError(t, err)
	g, err := p.Unlifted()
	require.NoError(t, err)
	assert.Equal(t, []string{
		"count get_attr count ()",
		"x placeholder x ()",
		"input_1 placeholder input ()", // the target keeps the argument name
		"add call_function aten.add.Tensor (%count, %x)",
		"mul call_function aten.mul.Tensor (%input_1, float(2.0))",
		"relu call_function aten.relu.default (%x)",
		// FX names a call of an OpOverload from its __name__ "copy_.default"
		"copy__default call_function aten.copy_.default (%count, %add)",
		"copy__default_1 call_function aten.copy_.default (%input_1, %mul)",
		"output output output ((%relu))",
	}, rows(g))

	t.Run("bare JSON has no weights", func(t *testing.T) {
		p, err := pt2.ReadJSON(js, nil)
		require.NoError(t, err)
		_, err = p.Unlifted()
		require.Error(t, err)
		assert.Contains(t, err.Error(), `pt2: unlift: buffer "count" (input "b_count") has no stored value`)
	})
}

// TestUnliftedSharedStorage: buffers that view one payload both unlift.
func TestUnliftedSharedStorage(t *testing.T) {
	cfg := marshal(t, obj{"config": obj{
		"a": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tm(7, 2)},
		"b": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tm(7, 2)}}})
	w := make([]byte, 8)
	binary.LittleEndian.PutUint32(w, 0x3f800000)
	p, err := pt2.Read(pt2Archive(t, "a", bufferProgram(tm(7, 2), tm(7, 2)), string(cfg), map[string][]byte{"weight_0": w}, "little"), nil)
	require.NoError(t, err)
	g, err := p.Unlifted()
	require.NoError(t, err)
	assert.Equal(t, []string{"a get_attr a ()", "b get_attr b ()", "x placeholder x ()",
		"relu call_function aten.relu.default (%x)", "output output output ((%relu))"}, rows(g))
}
