package pt2_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Small programs for the tricky cases, built as JSON values in the test.

type obj = map[string]any

func tm(dtype int, sizes ...int) obj {
	sz := make([]any, len(sizes))
	st := make([]any, len(sizes))
	acc := 1
	for i := len(sizes) - 1; i >= 0; i-- {
		sz[i] = obj{"as_int": sizes[i]}
		st[i] = obj{"as_int": acc}
		acc *= max(sizes[i], 1)
	}
	return obj{"dtype": dtype, "sizes": sz, "requires_grad": false, "device": obj{"type": "cpu", "index": nil},
		"strides": st, "storage_offset": obj{"as_int": 0}, "layout": 7}
}

// viewMeta is the float32 tensor_meta (dtype 7) of a view of a shared
// storage: sizes, strides and storage offset as given.
func viewMeta(sizes, strides []int, offset int) obj {
	m := tm(7, sizes...)
	st := make([]any, len(strides))
	for i, s := range strides {
		st[i] = obj{"as_int": s}
	}
	m["strides"] = st
	m["storage_offset"] = obj{"as_int": offset}
	return m
}

func ten(name string) obj { return obj{"as_tensor": obj{"name": name}} }

func in(name string, arg any, kind any) obj { return obj{"name": name, "arg": arg, "kind": kind} }

func node(target, name string, inputs []any, outputs ...any) obj {
	if outputs == nil {
		outputs = []any{ten(name)}
	}
	return obj{"target": target, "inputs": inputs, "outputs": outputs, "metadata": obj{},
		"is_hop_single_tensor_return": nil, "name": name}
}

// program returns a program with user input x: f32[2, 3], the given nodes
// and extra tensor values, returning the named tensors.
func program(nodes []any, tv obj, outputs ...string) obj {
	tvs := obj{"x": tm(7, 2, 3)}
	for k, v := range tv {
		tvs[k] = v
	}
	outs := make([]any, len(outputs))
	specs := make([]any, len(outputs))
	for i, o := range outputs {
		outs[i] = ten(o)
		specs[i] = obj{"user_output": obj{"arg": ten(o)}}
	}
	return obj{
		"graph_module": obj{
			"graph": obj{"inputs": []any{ten("x")}, "outputs": outs, "nodes": nodes, "tensor_values": tvs,
				"sym_int_values": obj{}, "sym_bool_values": obj{}, "is_single_tensor_return": false,
				"custom_obj_values": obj{}, "sym_float_values": obj{}},
			"signature":         obj{"input_specs": []any{obj{"user_input": obj{"arg": ten("x")}}}, "output_specs": specs},
			"module_call_graph": []any{}, "metadata": obj{}, "treespec_namedtuple_fields": obj{},
		},
		"opset_version": obj{"aten": 10}, "range_constraints": obj{},
		"schema_version": obj{"major": 8, "minor": 20}, "verifiers": []any{"TRAINING"},
		"torch_version": "2.14.1", "guards_code": []any{},
	}
}

// reluProgram is x -> relu -> output.
func reluProgram() obj {
	return program([]any{node("torch.ops.aten.relu.default", "relu", []any{in("self", ten("x"), 1)})},
		obj{"relu": tm(7, 2, 3)}, "relu")
}

func marshal(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// graphOf returns the "graph" object of a program built by program.
func graphOf(p obj) obj { return p["graph_module"].(obj)["graph"].(obj) }

type entry struct {
	name   string
	data   []byte
	method uint16
}

// makeZip builds a zip archive from entries.
func makeZip(t testing.TB, entries ...entry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		require.NoError(t, err)
		_, err = w.Write(e.data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// unzip returns the entries of a zip archive in order, by name and
// content (method left 0, as makeZip's stored entries).
func unzip(t testing.TB, archive []byte) []entry {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	require.NoError(t, err)
	var es []entry
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		es = append(es, entry{name: f.Name, data: b})
	}
	return es
}

// pt2Archive wraps a program JSON and payloads in a PT2 archive under root.
func pt2Archive(t testing.TB, root string, program []byte, weightsCfg string, payloads map[string][]byte, byteorder string) []byte {
	es := []entry{
		{name: root + "/archive_format", data: []byte("pt2")},
		{name: root + "/archive_version", data: []byte("0")},
		{name: root + "/byteorder", data: []byte(byteorder)},
		{name: root + "/models/model.json", data: program},
		{name: root + "/data/weights/model_weights_config.json", data: []byte(weightsCfg)},
		{name: root + "/data/constants/model_constants_config.json", data: []byte(`{"config": {}}`)},
		{name: root + "/data/sample_inputs/model.pt"},
	}
	for _, k := range slices.Sorted(maps.Keys(payloads)) {
		es = append(es, entry{name: root + "/data/weights/" + k, data: payloads[k]})
	}
	return makeZip(t, es...)
}
