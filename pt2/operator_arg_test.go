package pt2_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// outDTypeNode is out_dtype(aten.linear.default, torch.int32, a, w, None)
// as torch.export serializes it (pt2-json.md 3.5, 4.1): the
// HigherOrderOperator's target torch.ops.higher_order.out_dtype (no
// overload), serialize_hoo_inputs' unnamed positional inputs, the op as
// as_operator in serialize_operator's spelling, and a single tensor
// result (is_hop_single_tensor_return true).
func outDTypeNode(op any) obj {
	n := node("torch.ops.higher_order.out_dtype", "out_dtype", []any{
		in("", obj{"as_operator": op}, 1),
		in("", obj{"as_scalar_type": 4}, 1), // ScalarType 4 (INT) = torch.int32
		in("", ten("a"), 1),
		in("", ten("w"), 1),
		in("", obj{"as_none": true}, 1),
	})
	n["is_hop_single_tensor_return"] = true
	return n
}

// outDTypeProgram: user inputs a: i16[2, 4] and w: i16[3, 4] (ScalarType
// 3, SHORT), out_dtype's result i32[2, 3] (4, INT), per pt2-json.md 3.7.
func outDTypeProgram(op any) obj {
	doc := program([]any{outDTypeNode(op)}, obj{"a": tm(3, 2, 4), "w": tm(3, 3, 4), "out_dtype": tm(4, 2, 3)}, "out_dtype")
	g := graphOf(doc)
	delete(g["tensor_values"].(obj), "x")
	g["inputs"] = []any{ten("a"), ten("w")}
	doc["graph_module"].(obj)["signature"].(obj)["input_specs"] = []any{
		obj{"user_input": obj{"arg": ten("a")}}, obj{"user_input": obj{"arg": ten("w")}}}
	return doc
}

func TestOperatorArgumentRoundTrip(t *testing.T) {
	// The ScalarType codes above, checked against the dtype table.
	require.Equal(t, 3, tensor.Int16.SerdeCode())
	require.Equal(t, 4, tensor.Int32.SerdeCode())

	doc := outDTypeProgram("torch.ops.aten.linear.default")
	p, err := pt2.ReadJSON(marshal(t, doc), nil)
	require.NoError(t, err)
	n := nodeNamed(t, p.Graph, "out_dtype")
	assert.Equal(t, ops.MustOverload("higher_order.out_dtype.default"), n.Target())
	require.Len(t, n.Args(), 5)
	assert.Equal(t, ops.MustOverload("aten.linear.default"), n.Arg(0))
	assert.Equal(t, tensor.Int32, n.Arg(1))
	assert.Nil(t, n.Arg(4))
	assert.Equal(t, "i32[2, 3]", n.Type().String())
	require.NoError(t, fxgraph.Verify(p.Graph, fxgraph.VerifyOptions{RequireTypes: true}))

	// Writing gives back the node exactly as PyTorch wrote it.
	out, err := p.EncodeJSON(nil)
	require.NoError(t, err)
	var written map[string]any
	require.NoError(t, json.Unmarshal(out, &written))
	var wantDoc map[string]any
	require.NoError(t, json.Unmarshal(marshal(t, doc), &wantDoc))
	nodesOf := func(d map[string]any) any {
		return d["graph_module"].(map[string]any)["graph"].(map[string]any)["nodes"]
	}
	assert.Equal(t, nodesOf(wantDoc), nodesOf(written))

	roundTrip(t, p, &pt2.Options{})
}

func TestOperatorArgumentErrors(t *testing.T) {
	tests := []struct {
		name string
		op   any
		want string
	}{
		{"packet", "torch.ops.aten.linear",
			`graph_module.graph.nodes[0].inputs[0].arg.as_operator: operator "torch.ops.aten.linear" has no overload segment (want e.g. "torch.ops.aten.linear.default")`},
		{"without torch.ops", "aten.linear.default",
			`graph_module.graph.nodes[0].inputs[0].arg.as_operator: operator "aten.linear.default": want torch.ops.<ns>.<op>.<overload>`},
		{"unknown higher-order operator", "torch.ops.higher_order.cond",
			`graph_module.graph.nodes[0].inputs[0].arg.as_operator: operator "torch.ops.higher_order.cond": want torch.ops.<ns>.<op>.<overload>`},
		{"not a string", 3, `graph_module.graph.nodes[0].inputs[0].arg.as_operator: want a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pt2.ReadJSON(marshal(t, outDTypeProgram(tt.op)), nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestWriteOperatorArgumentErrors: PyTorch serializes only OpOverloads as
// operator arguments (pt2-json.md 4.2), so a packet or a plain function
// is an error naming the node and argument.
func TestWriteOperatorArgumentErrors(t *testing.T) {
	tests := []struct {
		name string
		op   ops.Value
		want string
	}{
		{"packet", ops.MustPacket("aten.linear"), `node "out_dtype" (higher_order.out_dtype.default): positional argument 0: operator aten.linear is a packet`},
		{"function", ops.GetItem, `node "out_dtype" (higher_order.out_dtype.default): positional argument 0: function operator.getitem cannot be serialized`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pt2.ReadJSON(marshal(t, outDTypeProgram("torch.ops.aten.linear.default")), nil)
			require.NoError(t, err)
			n := nodeNamed(t, p.Graph, "out_dtype")
			require.NoError(t, p.Graph.SetArg(n, 0, tt.op))
			_, err = p.EncodeJSON(nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
