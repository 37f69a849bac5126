package pt2_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// roundTrip writes p and reads it back with the same options.
func roundTrip(t *testing.T, p *pt2.Program, opts *pt2.Options) *pt2.Program {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, p.WriteArchive(&buf, opts.Registry))
	q, err := pt2.Read(buf.Bytes(), opts)
	require.NoError(t, err)
	require.Equal(t, dumpGraph(p.Graph), dumpGraph(q.Graph))
	return q
}

func nodeNamed(t *testing.T, g *fxgraph.Graph, name string) *fxgraph.Node {
	t.Helper()
	n, ok := g.NodeByName(name)
	require.True(t, ok, "no node %q", name)
	return n
}

// Section 7.2 case 1 and 2: unknown ops, targets with and without overloads.
func TestTargets(t *testing.T) {
	mk := func(target string) []byte {
		return marshal(t, program([]any{node(target, "foo", []any{in("self", ten("x"), 1)})}, obj{"foo": tm(7, 2, 3)}, "foo"))
	}
	t.Run("unknown op is an error naming it", func(t *testing.T) {
		_, err := pt2.ReadJSON(mk("torch.ops.myns.foo.default"), nil)
		require.ErrorIs(t, err, pt2.ErrUnknownOp)
		assert.Contains(t, err.Error(), "graph_module.graph.nodes[0].target")
		assert.Contains(t, err.Error(), "myns.foo.default")
	})
	t.Run("unknown op is kept as opaque op on request", func(t *testing.T) {
		p, err := pt2.ReadJSON(mk("torch.ops.myns.foo.default"), opaque)
		require.NoError(t, err)
		n := nodeNamed(t, p.Graph, "foo")
		assert.Equal(t, ops.MustOverload("myns.foo.default"), n.Target())
		names, ok := p.OpaqueArgNames(n)
		require.True(t, ok)
		assert.Equal(t, []string{"self"}, names)
		roundTrip(t, p, opaque)
	})
	t.Run("target without overload", func(t *testing.T) {
		_, err := pt2.ReadJSON(mk("torch.ops.aten.relu"), opaque)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `target "torch.ops.aten.relu" has no overload segment`)
	})
	t.Run("control flow", func(t *testing.T) {
		_, err := pt2.ReadJSON(mk("torch.ops.higher_order.cond"), opaque)
		require.ErrorIs(t, err, pt2.ErrUnsupported)
	})
	t.Run("non-default overloads", func(t *testing.T) {
		doc := program([]any{
			node("torch.ops.aten.add.Tensor", "add", []any{in("self", ten("x"), 1), in("other", ten("x"), 1)}),
			node("torch.ops.quantized_decomposed.quantize_per_tensor.tensor", "q", []any{
				in("input", ten("add"), 1), in("scale", ten("s"), 1), in("zero_point", ten("z"), 1),
				in("quant_min", obj{"as_int": -128}, 1), in("quant_max", obj{"as_int": 127}, 1), in("dtype", obj{"as_scalar_type": 2}, 1)}),
		}, obj{"add": tm(7, 2, 3), "q": tm(2, 2, 3), "s": tm(7, 1), "z": tm(4, 1)}, "q")
		g := graphOf(doc)
		g["inputs"] = []any{ten("s"), ten("z"), ten("x")}
		doc["graph_module"].(obj)["signature"].(obj)["input_specs"] = []any{
			obj{"user_input": obj{"arg": ten("s")}}, obj{"user_input": obj{"arg": ten("z")}}, obj{"user_input": obj{"arg": ten("x")}}}
		p, err := pt2.ReadJSON(marshal(t, doc), nil)
		require.NoError(t, err)
		assert.Equal(t, ops.MustOverload("aten.add.Tensor"), nodeNamed(t, p.Graph, "add").Target())
		q := nodeNamed(t, p.Graph, "q")
		assert.Equal(t, ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor"), q.Target())
		assert.Equal(t, tensor.Int8, q.Arg(5))
		assert.Equal(t, "i8[2, 3]", q.Type().String())
		roundTrip(t, p, &pt2.Options{})
	})
}

// Section 7.2 case 3: dangling and doubly defined names.
func TestNames(t *testing.T) {
	t.Run("reference to an undefined tensor", func(t *testing.T) {
		doc := program([]any{node("torch.ops.aten.relu.default", "relu", []any{in("self", ten("mul_3"), 1)})}, obj{"relu": tm(7, 2, 3)}, "relu")
		_, err := pt2.ReadJSON(marshal(t, doc), opaque)
		require.ErrorIs(t, err, pt2.ErrDangling)
		assert.Contains(t, err.Error(), `graph_module.graph.nodes[0].inputs[0].arg.as_tensor: undefined name: unknown tensor "mul_3"`)
	})
	t.Run("output without tensor_values entry", func(t *testing.T) {
		doc := program([]any{node("torch.ops.aten.relu.default", "relu", []any{in("self", ten("x"), 1)})}, nil, "relu")
		_, err := pt2.ReadJSON(marshal(t, doc), opaque)
		require.ErrorIs(t, err, pt2.ErrDangling)
		assert.Contains(t, err.Error(), `tensor "relu" has no entry in graph.tensor_values`)
	})
	t.Run("name defined twice", func(t *testing.T) {
		doc := program([]any{
			node("torch.ops.aten.relu.default", "relu", []any{in("self", ten("x"), 1)}),
			node("torch.ops.aten.relu.default", "relu", []any{in("self", ten("x"), 1)}),
		}, obj{"relu": tm(7, 2, 3)}, "relu")
		_, err := pt2.ReadJSON(marshal(t, doc), opaque)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `graph_module.graph.nodes[1].outputs[0]: name "relu" is defined twice`)
	})
}

// Section 7.2 case 4: schema versions.
func TestSchemaVersion(t *testing.T) {
	for _, tt := range []struct {
		name         string
		major, minor int
		ok           bool
	}{
		{"7.0 rejected", 7, 0, false},
		{"9.0 rejected", 9, 0, false},
		{"8.99 accepted", 8, 99, true},
		{"8.0 accepted", 8, 0, true},
		{"0.0 accepted as PyTorch does", 0, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := reluProgram()
			doc["schema_version"] = obj{"major": tt.major, "minor": tt.minor}
			_, err := pt2.ReadJSON(marshal(t, doc), opaque)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, pt2.ErrSchemaVersion)
			assert.Contains(t, err.Error(), "schema_version: ")
			assert.Contains(t, err.Error(), "8.x")
			assert.Contains(t, err.Error(), " "+string(rune('0'+tt.major))+".0 ")
			_, err = pt2.ReadJSON(marshal(t, doc), &pt2.Options{AllowOpaque: true, SkipVersionCheck: true})
			require.NoError(t, err)
		})
	}
}

func linearProgram(bias any) obj {
	inputs := []any{in("input", ten("x"), 1), in("weight", ten("w"), 1)}
	if bias != nil {
		inputs = append(inputs, in("bias", bias, 1))
	}
	doc := program([]any{node("torch.ops.aten.linear.default", "linear", inputs)}, obj{"linear": tm(7, 2, 4), "w": tm(7, 4, 3)}, "linear")
	graphOf(doc)["inputs"] = []any{ten("w"), ten("x")}
	doc["graph_module"].(obj)["signature"].(obj)["input_specs"] = []any{
		obj{"user_input": obj{"arg": ten("w")}}, obj{"user_input": obj{"arg": ten("x")}}}
	return doc
}

// Section 7.2 case 5: an explicit None differs from an omitted default,
// and the writer keeps each as it was.
func TestNoneVersusAbsent(t *testing.T) {
	for _, tt := range []struct {
		name  string
		bias  any
		nargs int
	}{
		{"explicit None", obj{"as_none": true}, 3},
		{"absent", nil, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pt2.ReadJSON(marshal(t, linearProgram(tt.bias)), nil)
			require.NoError(t, err)
			n := nodeNamed(t, p.Graph, "linear")
			require.Len(t, n.Args(), tt.nargs)
			assert.Nil(t, n.Arg(2))
			js, err := p.EncodeJSON(nil)
			require.NoError(t, err)
			assert.Equal(t, tt.bias != nil, bytes.Contains(js, []byte(`"name": "bias"`)))
		})
	}
}

func dqProgram(kind any, outDtype bool) obj {
	inputs := []any{
		in("input", ten("x"), kind), in("scale", obj{"as_float": 0.02}, kind), in("zero_point", obj{"as_int": 0}, kind),
		in("quant_min", obj{"as_int": -128}, kind), in("quant_max", obj{"as_int": 127}, kind), in("dtype", obj{"as_scalar_type": 2}, kind),
	}
	if outDtype {
		k := kind
		if kind != nil {
			k = 2
		}
		inputs = append(inputs, in("out_dtype", obj{"as_scalar_type": 7}, k))
	}
	doc := program([]any{node("torch.ops.quantized_decomposed.dequantize_per_tensor.default", "dq", inputs)}, obj{"dq": tm(7, 2, 3)}, "dq")
	graphOf(doc)["tensor_values"].(obj)["x"] = tm(2, 2, 3)
	return doc
}

// Section 7.2 case 6: kwarg-only arguments and the fallback for files
// without argument kinds.
func TestArgumentKinds(t *testing.T) {
	for _, tt := range []struct {
		name string
		kind any
	}{
		{"kinds given", 1},
		{"kind null (old files)", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pt2.ReadJSON(marshal(t, dqProgram(tt.kind, true)), nil)
			require.NoError(t, err)
			n := nodeNamed(t, p.Graph, "dq")
			assert.Equal(t, []ops.Value{n.Arg(0), 0.02, int64(0), int64(-128), int64(127), tensor.Int8}, n.Args())
			assert.Equal(t, []ops.Kwarg{{Name: "out_dtype", Value: tensor.Float32}}, n.Kwargs())
			js, err := p.EncodeJSON(nil)
			require.NoError(t, err)
			assert.Contains(t, string(js), `{"name": "out_dtype", "arg": {"as_scalar_type": 7}, "kind": 2}`)
			assert.Contains(t, string(js), `{"name": "scale", "arg": {"as_float": 0.02}, "kind": 1}`)
		})
	}
	t.Run("opaque op binds by kind", func(t *testing.T) {
		doc := dqProgram(1, true)
		graphOf(doc)["nodes"].([]any)[0].(obj)["target"] = "torch.ops.myns.dq.default"
		p, err := pt2.ReadJSON(marshal(t, doc), opaque)
		require.NoError(t, err)
		n := nodeNamed(t, p.Graph, "dq")
		assert.Len(t, n.Args(), 6)
		assert.Equal(t, []ops.Kwarg{{Name: "out_dtype", Value: tensor.Float32}}, n.Kwargs())
		roundTrip(t, p, opaque)
	})
	t.Run("unknown kind", func(t *testing.T) {
		_, err := pt2.ReadJSON(marshal(t, dqProgram(7, false)), nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "inputs[0].kind: unknown ArgumentKind 7")
	})
}

// Section 7.2 cases 7, 8 and 17: list tags, special floats, int64 range,
// scalar types.
func TestArgumentValues(t *testing.T) {
	args := []any{
		in("a", obj{"as_ints": []any{}}, 1),
		in("b", obj{"as_tensors": []any{}}, 1),
		in("c", obj{"as_sym_ints": []any{obj{"as_int": 2}, obj{"as_int": 3}}}, 1),
		in("d", obj{"as_float": "Infinity"}, 1),
		in("e", obj{"as_float": "-Infinity"}, 1),
		in("f", obj{"as_float": "NaN"}, 1),
		in("g", obj{"as_float": 1e-05}, 1),
		in("h", obj{"as_int": int64(math.MaxInt64)}, 1),
		in("i", obj{"as_scalar_type": 1}, 1),
		in("j", obj{"as_scalar_type": 2}, 1),
		in("k", obj{"as_optional_tensors": []any{ten("x"), obj{"as_none": true}}}, 1),
		in("l", obj{"as_device": obj{"type": "cuda", "index": 1}}, 1),
		in("m", obj{"as_strings": []any{"a", "é"}}, 1),
		in("n", obj{"as_floats": []any{1.0, 0.5}}, 2),
	}
	doc := program([]any{node("torch.ops.myns.op.default", "op", args)}, obj{"op": tm(7, 2, 3)}, "op")
	p, err := pt2.ReadJSON(marshal(t, doc), opaque)
	require.NoError(t, err)
	n := nodeNamed(t, p.Graph, "op")
	x := nodeNamed(t, p.Graph, "x")
	want := []ops.Value{ops.List{}, ops.List{}, ops.List{int64(2), int64(3)}, math.Inf(1), math.Inf(-1), math.NaN(), 1e-05,
		int64(math.MaxInt64), tensor.UInt8, tensor.Int8, ops.List{x, nil}, ops.Device("cuda:1"), ops.List{"a", "é"}}
	require.Len(t, n.Args(), len(want))
	for i, w := range want {
		assert.True(t, ops.LiteralEqual(w, n.Arg(i)) || w == n.Arg(i), "arg %d: got %v, want %v", i, n.Arg(i), w)
	}
	assert.Equal(t, []ops.Kwarg{{Name: "n", Value: ops.List{1.0, 0.5}}}, n.Kwargs())
	js, err := p.EncodeJSON(nil)
	require.NoError(t, err)
	for _, frag := range []string{
		`{"name": "a", "arg": {"as_ints": []}`, `{"name": "b", "arg": {"as_tensors": []}`,
		`{"as_float": "Infinity"}`, `{"as_float": "-Infinity"}`, `{"as_float": "NaN"}`, `{"as_float": 1e-05}`,
		`{"as_int": 9223372036854775807}`, `{"as_scalar_type": 1}`, `{"as_scalar_type": 2}`,
		`{"as_optional_tensors": [{"as_tensor": {"name": "x"}}, {"as_none": true}]}`,
		`{"as_device": {"type": "cuda", "index": 1}}`, `{"as_strings": ["a", "\u00e9"]}`, `{"as_floats": [1.0, 0.5]}`,
	} {
		assert.Contains(t, string(js), frag)
	}
	// as_sym_ints of plain ints is written as as_ints, as PyTorch does
	assert.Contains(t, string(js), `{"name": "c", "arg": {"as_ints": [2, 3]}`)
}

// Section 7.2 case 9: multi-result ops with unused and None results, and
// a Tensor[] return.
func TestMultipleResults(t *testing.T) {
	doc := program([]any{
		node("torch.ops.aten.max_pool2d_with_indices.default", "mp", []any{
			in("self", ten("x"), 1), in("kernel_size", obj{"as_ints": []any{1, 1}}, 1)},
			ten("mp_values"), ten("mp_unused_1")),
		node("torch.ops.myns.three.default", "three", []any{in("self", ten("x"), 1)},
			ten("t0"), obj{"as_none": true}, ten("t2")),
		node("torch.ops.myns.split.default", "split", []any{in("self", ten("x"), 1)},
			obj{"as_tensors": []any{obj{"name": "s0"}, obj{"name": "s1"}}}),
	}, obj{"mp_values": tm(7, 2, 3), "mp_unused_1": tm(5, 2, 3), "t0": tm(7, 2, 3), "t2": tm(7, 2, 3),
		"s0": tm(7, 1, 3), "s1": tm(7, 1, 3)}, "mp_values", "t2", "s1")
	graphOf(doc)["tensor_values"].(obj)["x"] = tm(7, 1, 2, 3)
	p, err := pt2.ReadJSON(marshal(t, doc), opaque)
	require.NoError(t, err)
	mp := nodeNamed(t, p.Graph, "mp")
	assert.Equal(t, "(f32[2, 3], i64[2, 3])", mp.Type().String())
	gi := nodeNamed(t, p.Graph, "mp_values")
	assert.Equal(t, ops.GetItem, gi.Target())
	assert.Equal(t, []ops.Value{mp, int64(0)}, gi.Args())
	three := nodeNamed(t, p.Graph, "three")
	assert.Equal(t, "(f32[2, 3], ?, f32[2, 3])", three.Type().String())
	assert.Equal(t, []ops.Value{three, int64(2)}, nodeNamed(t, p.Graph, "t2").Args())
	split := nodeNamed(t, p.Graph, "split")
	assert.Equal(t, []ops.Value{split, int64(1)}, nodeNamed(t, p.Graph, "s1").Args())

	js, err := p.EncodeJSON(nil)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"outputs": [{"as_tensor": {"name": "mp_values"}}, {"as_tensor": {"name": "mp_unused_1"}}]`)
	assert.Contains(t, string(js), `"outputs": [{"as_tensor": {"name": "t0"}}, {"as_none": true}, {"as_tensor": {"name": "t2"}}]`)
	assert.Contains(t, string(js), `"outputs": [{"as_tensors": [{"name": "s0"}, {"name": "s1"}]}]`)
	roundTrip(t, p, opaque)
}

// Section 7.2 cases 10-13: signature mismatches, malformed unions,
// optional and unknown fields.
func TestMalformed(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(obj)
		want string
	}{
		{"more inputs than specs", func(d obj) { graphOf(d)["inputs"] = []any{ten("x"), ten("x")} },
			"graph_module.graph.inputs: 2 graph inputs but 1 input specs"},
		{"input order differs from specs", func(d obj) {
			d["graph_module"].(obj)["signature"].(obj)["input_specs"] = []any{obj{"user_input": obj{"arg": ten("y")}}}
		}, `graph_module.graph.inputs[0].as_tensor: graph input "x" does not match input spec 0 (user_input "y")`},
		{"union with two keys", func(d obj) {
			graphOf(d)["nodes"].([]any)[0].(obj)["inputs"].([]any)[0].(obj)["arg"] = obj{"as_tensor": obj{"name": "x"}, "as_int": 1}
		}, "graph_module.graph.nodes[0].inputs[0].arg: union object must have exactly one key, got 2"},
		{"unknown tag", func(d obj) {
			graphOf(d)["nodes"].([]any)[0].(obj)["inputs"].([]any)[0].(obj)["arg"] = obj{"as_foo": 1}
		}, `graph_module.graph.nodes[0].inputs[0].arg: unknown argument tag "as_foo"`},
		{"unknown scalar type", func(d obj) {
			graphOf(d)["nodes"].([]any)[0].(obj)["inputs"].([]any)[0].(obj)["arg"] = obj{"as_scalar_type": 14}
		}, "graph_module.graph.nodes[0].inputs[0].arg.as_scalar_type: unknown ScalarType 14"},
		{"unknown layout", func(d obj) { graphOf(d)["tensor_values"].(obj)["x"].(obj)["layout"] = 99 },
			`graph_module.graph.tensor_values["x"].layout: unknown Layout 99`},
		{"sparse layout", func(d obj) { graphOf(d)["tensor_values"].(obj)["x"].(obj)["layout"] = 1 }, "unsupported feature"},
		{"missing required field", func(d obj) { delete(graphOf(d), "nodes") }, `graph_module.graph: missing required field "nodes"`},
		{"wrong JSON type", func(d obj) { graphOf(d)["nodes"] = "nodes" }, "graph_module.graph.nodes: want an array"},
		{"symbolic size", func(d obj) {
			graphOf(d)["tensor_values"].(obj)["x"].(obj)["sizes"] = []any{obj{"as_expr": obj{"expr_str": "Pow(Symbol('s0', integer=True), Integer(2))", "hint": nil}}, obj{"as_int": 3}}
		}, `graph_module.graph.tensor_values["x"].sizes[0].as_expr.expr_str: unsupported feature: symbolic expression`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := reluProgram()
			tt.edit(d)
			_, err := pt2.ReadJSON(marshal(t, d), opaque)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		_, err := pt2.ReadJSON([]byte(`{"graph_module": `), nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "pt2: read json")
	})
	t.Run("optional fields absent or null", func(t *testing.T) {
		d := reluProgram()
		n := graphOf(d)["nodes"].([]any)[0].(obj)
		delete(n, "name")
		delete(n, "is_hop_single_tensor_return")
		n["inputs"].([]any)[0].(obj)["kind"] = nil
		delete(graphOf(d)["tensor_values"].(obj)["x"].(obj)["device"].(obj), "index")
		for _, k := range []string{"is_single_tensor_return", "custom_obj_values", "sym_float_values"} {
			delete(graphOf(d), k)
		}
		delete(d, "verifiers")
		delete(d, "guards_code")
		delete(d, "torch_version")
		p, err := pt2.ReadJSON(marshal(t, d), opaque)
		require.NoError(t, err)
		assert.Equal(t, "<=2.4", p.TorchVersion)
		nodeNamed(t, p.Graph, "relu")
	})
	t.Run("unknown fields are ignored", func(t *testing.T) {
		d := reluProgram()
		d["future_field"] = 1
		graphOf(d)["nodes"].([]any)[0].(obj)["new_node_field"] = obj{"x": 1}
		_, err := pt2.ReadJSON(marshal(t, d), opaque)
		require.NoError(t, err)
	})
}

// Section 7.2 case 16: node metadata.
func TestMetadata(t *testing.T) {
	d := reluProgram()
	md := obj{
		"stack_trace":     "File \"m.py\", line 3, in forward\n    return x.relu()",
		"nn_module_stack": "L__self__,,m.M;L__self___layers_0,layers[0],torch.nn.Sequential[int, str]",
		"source_fn_stack": "relu,torch.nn.modules.activation.ReLU",
		"torch_fn":        "relu_1;function.relu",
		"custom":          `{"quantize": true}`,
		"my_key":          "kept",
	}
	graphOf(d)["nodes"].([]any)[0].(obj)["metadata"] = md
	p, err := pt2.ReadJSON(marshal(t, d), opaque)
	require.NoError(t, err)
	m := nodeNamed(t, p.Graph, "relu").Meta
	assert.Equal(t, md["stack_trace"], m.StackTrace)
	assert.Equal(t, []fxgraph.ModuleStackEntry{{Key: "L__self__", Path: "", Type: "m.M"},
		{Key: "L__self___layers_0", Path: "layers[0]", Type: "torch.nn.Sequential[int, str]"}}, m.NNModuleStack)
	assert.Equal(t, []fxgraph.SourceFn{{Name: "relu", Target: "torch.nn.modules.activation.ReLU"}}, m.SourceFnStack)
	assert.Equal(t, []string{"relu_1", "function.relu"}, m.TorchFn)
	assert.Equal(t, `{"quantize": true}`, m.Custom)
	assert.Equal(t, "kept", m.Extra["pt2.metadata.my_key"])
	js, err := p.EncodeJSON(nil)
	require.NoError(t, err)
	q, err := pt2.ReadJSON(js, opaque)
	require.NoError(t, err)
	assert.Equal(t, m, nodeNamed(t, q.Graph, "relu").Meta)
}

// Section 7.2 cases 14 and 15: containers and raw payloads.
func TestArchives(t *testing.T) {
	js := marshal(t, reluProgram())
	t.Run("other root folder", func(t *testing.T) {
		p, err := pt2.Read(pt2Archive(t, "mymodel", js, `{"config": {}}`, nil, "little"), opaque)
		require.NoError(t, err)
		assert.Equal(t, "mymodel", p.ArchiveRoot)
		assert.Equal(t, pt2.ContainerPT2, p.Container)
	})
	t.Run("deflated entries", func(t *testing.T) {
		z := makeZip(t,
			entry{name: "a/archive_format", data: []byte("pt2"), method: 8},
			entry{name: "a/archive_version", data: []byte("0"), method: 8},
			entry{name: "a/models/model.json", data: js, method: 8})
		_, err := pt2.Read(z, opaque)
		require.NoError(t, err)
	})
	t.Run("legacy flat zip", func(t *testing.T) {
		z := makeZip(t,
			entry{name: "serialized_exported_program.json", data: js},
			entry{name: "serialized_state_dict.pt", data: []byte("PK-pickle")},
			entry{name: "version", data: []byte("8.7")})
		p, err := pt2.Read(z, opaque)
		require.NoError(t, err)
		assert.Equal(t, pt2.ContainerLegacy, p.Container)
		assert.Equal(t, []pt2.Unreadable{{Record: "serialized_state_dict.pt", Reason: "torch.save pickle (legacy torch <= 2.7 archive)"}}, p.Unreadable)
	})
	t.Run("legacy zip of another major", func(t *testing.T) {
		z := makeZip(t, entry{name: "serialized_exported_program.json", data: js}, entry{name: "version", data: []byte("7.1")})
		_, err := pt2.Read(z, opaque)
		require.ErrorIs(t, err, pt2.ErrSchemaVersion)
	})
	t.Run("missing archive_version", func(t *testing.T) {
		z := makeZip(t, entry{name: "a/archive_format", data: []byte("pt2")}, entry{name: "a/models/model.json", data: js})
		_, err := pt2.Read(z, opaque)
		require.ErrorIs(t, err, pt2.ErrArchive)
		assert.Contains(t, err.Error(), "no archive_version record")
	})
	t.Run("wrong archive_format", func(t *testing.T) {
		z := makeZip(t, entry{name: "a/archive_format", data: []byte("pt3")}, entry{name: "a/archive_version", data: []byte("0")})
		_, err := pt2.Read(z, opaque)
		require.ErrorIs(t, err, pt2.ErrArchive)
		assert.Contains(t, err.Error(), `archive_format is "pt3", want "pt2"`)
	})
	t.Run("pickled 2.8 weights are reported", func(t *testing.T) {
		z := makeZip(t,
			entry{name: "m/archive_format", data: []byte("pt2")}, entry{name: "m/archive_version", data: []byte("0")},
			entry{name: "m/models/model.json", data: js}, entry{name: "m/data/weights/model.pt", data: []byte("pickle")})
		p, err := pt2.Read(z, opaque)
		require.NoError(t, err)
		assert.Equal(t, []pt2.Unreadable{{Record: "data/weights/model.pt", Reason: "pickled weights (torch 2.8 archive)"}}, p.Unreadable)
	})
}

// bufferProgram has buffers a and b (f32 views given by their metas).
func bufferProgram(ma, mb obj) []byte {
	d := reluProgram()
	graphOf(d)["inputs"] = []any{ten("b_a"), ten("b_b"), ten("x")}
	graphOf(d)["tensor_values"].(obj)["b_a"] = ma
	graphOf(d)["tensor_values"].(obj)["b_b"] = mb
	d["graph_module"].(obj)["signature"].(obj)["input_specs"] = []any{
		obj{"buffer": obj{"arg": obj{"name": "b_a"}, "buffer_name": "a", "persistent": true}},
		obj{"buffer": obj{"arg": obj{"name": "b_b"}, "buffer_name": "b", "persistent": true}},
		obj{"user_input": obj{"arg": ten("x")}}}
	b, _ := json.Marshal(d)
	return b
}

func f32Bytes(order binary.ByteOrder, vals ...float32) []byte {
	out := make([]byte, 4*len(vals))
	for i, v := range vals {
		order.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

func TestPayloads(t *testing.T) {
	cfg := func(ma, mb obj, pa, pb string) string {
		return string(marshal(t, obj{"config": obj{
			"a": obj{"path_name": pa, "is_param": false, "use_pickle": false, "tensor_meta": ma},
			"b": obj{"path_name": pb, "is_param": false, "use_pickle": false, "tensor_meta": mb}}}))
	}
	storage := []float32{1, 2, 3, 4, 5, 6}
	for _, tt := range []struct {
		name      string
		order     string
		ma, mb    obj
		pb        string
		payloads  map[string][]byte
		wantA     []float32
		wantB     []float32
		wantShape [2][]int
		err       string
	}{
		{name: "shared storage, offset and transposed strides", order: "little",
			ma: viewMeta([]int{2, 2}, []int{2, 1}, 2), mb: viewMeta([]int{3, 2}, []int{1, 3}, 0), pb: "weight_0",
			payloads: map[string][]byte{"weight_0": f32Bytes(binary.LittleEndian, storage...)},
			wantA:    []float32{3, 4, 5, 6}, wantB: []float32{1, 4, 2, 5, 3, 6}, wantShape: [2][]int{{2, 2}, {3, 2}}},
		// PyTorch 2.14 ignores the byteorder record (it reads the machine's
		// order), so "big" is refused at its record
		{name: "big endian", order: "big",
			ma: viewMeta([]int{2, 2}, []int{2, 1}, 2), mb: viewMeta([]int{3, 2}, []int{1, 3}, 0), pb: "weight_0",
			payloads: map[string][]byte{"weight_0": f32Bytes(binary.BigEndian, storage...)},
			err:      `record byteorder is "big"`},
		{name: "negative storage offset", order: "little",
			ma: viewMeta([]int{2}, []int{1}, -1), mb: viewMeta([]int{1}, []int{1}, 0), pb: "weight_0",
			payloads: map[string][]byte{"weight_0": f32Bytes(binary.LittleEndian, storage...)},
			err:      `config["a"]: record "data/weights/weight_0": tensor_meta.storage_offset -1 is negative`},
		{name: "zero fill over MaxTensorBytes", order: "little",
			ma: viewMeta([]int{1 << 20, 1 << 10}, []int{1 << 10, 1}, 0), mb: viewMeta([]int{1}, []int{1}, 0), pb: "weight_1",
			payloads: map[string][]byte{"weight_0": nil, "weight_1": f32Bytes(binary.LittleEndian, 1)},
			err:      `zero-length payload for "a" would be filled with 4294967296 bytes of zeros (float32[1048576 1024]), more than 536870912 (MaxTensorBytes)`},
		{name: "zero fill whose element count wraps", order: "little",
			ma: viewMeta([]int{1 << 30, 1 << 30, 1 << 30, 4}, []int{1, 1, 4, 1}, 0), mb: viewMeta([]int{1}, []int{1}, 0), pb: "weight_1",
			payloads: map[string][]byte{"weight_0": nil, "weight_1": f32Bytes(binary.LittleEndian, 1)},
			err:      `models/model.json: graph_module.graph.tensor_values["b_a"].sizes: tensor: too large: shape [1073741824 1073741824 1073741824 4] has more than`},
		{name: "zero-byte record gives zeros", order: "little",
			ma: viewMeta([]int{2, 2}, []int{2, 1}, 0), mb: viewMeta([]int{1, 2}, []int{2, 1}, 0), pb: "weight_1",
			payloads: map[string][]byte{"weight_0": nil, "weight_1": f32Bytes(binary.LittleEndian, 7, 8)},
			wantA:    []float32{0, 0, 0, 0}, wantB: []float32{7, 8}, wantShape: [2][]int{{2, 2}, {1, 2}}},
		{name: "size not a multiple of the element size", order: "little",
			ma: viewMeta([]int{1}, []int{1}, 0), mb: viewMeta([]int{1}, []int{1}, 0), pb: "weight_0",
			payloads: map[string][]byte{"weight_0": {1, 2, 3}}, err: "not a whole number"},
		{name: "view outside the storage", order: "little",
			ma: viewMeta([]int{4}, []int{1}, 4), mb: viewMeta([]int{1}, []int{1}, 0), pb: "weight_0",
			payloads: map[string][]byte{"weight_0": f32Bytes(binary.LittleEndian, storage...)}, err: "outside storage"},
		{name: "missing payload record", order: "little",
			ma: viewMeta([]int{1}, []int{1}, 0), mb: viewMeta([]int{1}, []int{1}, 0), pb: "weight_9",
			payloads: map[string][]byte{"weight_0": f32Bytes(binary.LittleEndian, 1)}, err: `payload record "data/weights/weight_9" is missing`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ma, mb := tt.ma, tt.mb
			z := pt2Archive(t, "archive", bufferProgram(ma, mb), cfg(ma, mb, "weight_0", tt.pb), tt.payloads, tt.order)
			p, err := pt2.Read(z, opaque)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			for i, fqn := range []string{"a", "b"} {
				v, ok := p.Graph.Attr(fqn)
				require.True(t, ok)
				want := [][]float32{tt.wantA, tt.wantB}[i]
				require.NoError(t, tensor.Diff(v.(*tensor.Tensor), tensor.F32(tt.wantShape[i], want...)), fqn)
			}
			q := roundTrip(t, p, opaque)
			requireSameWeights(t, p, q)
		})
	}
}

func TestWriteLiftsGetAttr(t *testing.T) {
	p, err := pt2.ReadJSON(marshal(t, reluProgram()), opaque)
	require.NoError(t, err)
	g := p.Graph
	relu := nodeNamed(t, g, "relu")
	g.SetAttr("_frozen_param0", tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6))
	restore := g.InsertingBefore(relu)
	w := g.GetAttr("_frozen_param0", ops.Plain(tensor.Float32, 2, 3))
	add := g.CreateNode(fxgraph.CallFunction, ops.MustOverload("aten.add.Tensor"), "", []ops.Value{relu.Arg(0), w}, nil, "add", ops.Plain(tensor.Float32, 2, 3))
	restore()
	g.SetArgs(relu, add)
	var buf bytes.Buffer
	require.NoError(t, p.WriteArchive(&buf, nil))
	q, err := pt2.Read(buf.Bytes(), opaque)
	require.NoError(t, err)
	assert.Equal(t, pt2.InputSpec{Kind: pt2.Buffer, Name: "b__frozen_param0", Target: "_frozen_param0", Persistent: true}, q.Signature.Inputs[0])
	v, ok := q.Graph.Attr("_frozen_param0")
	require.True(t, ok)
	require.NoError(t, tensor.Diff(v.(*tensor.Tensor), tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6)))
	assert.Equal(t, []ops.Value{nodeNamed(t, q.Graph, "x"), nodeNamed(t, q.Graph, "b__frozen_param0")}, nodeNamed(t, q.Graph, "add").Args())
}

func TestWriteErrors(t *testing.T) {
	p, err := pt2.ReadJSON(marshal(t, reluProgram()), opaque)
	require.NoError(t, err)
	g := p.Graph
	relu := nodeNamed(t, g, "relu")
	restore := g.InsertingBefore(relu)
	g.CallModule("observer", relu.Arg(0))
	restore()
	_, err = p.EncodeJSON(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `node "observer": call_module nodes cannot be serialized`)
}

func TestPyFloatRepr(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{1, "1.0"}, {0.02, "0.02"}, {1e-05, "1e-05"}, {0.0001, "0.0001"}, {1.1920928955078125e-07, "1.1920928955078125e-07"},
		{1e16, "1e+16"}, {1234567890123456.0, "1234567890123456.0"}, {-2.5, "-2.5"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"},
		{0.0243646502494812, "0.0243646502494812"}, {123.456, "123.456"}, {1.5e300, "1.5e+300"},
	} {
		t.Run(tt.want, func(t *testing.T) { assert.Equal(t, tt.want, pt2.PyFloatRepr(tt.v)) })
	}
}
