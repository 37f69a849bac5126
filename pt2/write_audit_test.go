package pt2_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/pt2"
)

// Writer audit: each writer rule of ../shared/spec/pt2-json.md (section
// 7.1's writer notes, and sections 2 to 4), where the code meets it, and
// the test that checks it.
//
// Container (§2.1, §2.2, §7.1)
//   - stored entries, flags 0x0808, 64-byte aligned data, one root folder
//     ("archive", p.ArchiveRoot kept): writeContainer in zipwrite.go;
//     TestFixturesWriteByteIdentical, TestWriterAudit/container.
//   - records and their order (weights, weights config, constants,
//     constants config, models/<name>.json, sample inputs, extra files,
//     archive_format, archive_version, .data/version, byteorder,
//     .data/serialization_id): WriteArchive; TestFixturesEntriesMatchMeta.
//   - archive_format "pt2", archive_version "0", .data/version "6\n",
//     byteorder "little": WriteArchive; TestWriterAudit/container.
//   - .data/serialization_id as PyTorchStreamWriter computes it: serialid.go;
//     TestFixturesWriteByteIdentical (13 fixtures, 13 ids).
//   - records load_pt2 reads unconditionally (archive_format,
//     archive_version, sample inputs, both payload configs, "{"config": {}}"
//     when empty): WriteArchive; TestWriterAudit/required records.
//   - a zero-length sample inputs record means "no example inputs"; a read
//     archive's pickle is written back verbatim (Program.SampleInputs).
//
// Payloads (§2.3, §7.1)
//   - PayloadMeta fields path_name, is_param, use_pickle, tensor_meta in
//     that order, raw little-endian bytes, use_pickle false: payloads() in
//     archive.go; TestWriterAudit/payload configs.
//   - shared storages written once (whole storage), each FQN with its own
//     sizes, strides, storage_offset: payloads(); TestWriteSharedStorage.
//   - parameters have is_param true (load_pt2 rebuilds nn.Parameter, which
//     the verifier requires for every parameter input); buffers and convert's
//     tensors false; non-persistent buffers and tensor constants go to the
//     constants config with path names tensor_<i> (load_constants rejects
//     other prefixes): encoder.prepare, payloads(); TestWriteLiftSpecs,
//     TestWriterAudit/payload configs.
//
// Program JSON (§3, §4, §7.1)
//   - every field PyTorch writes, null for None, and no other: pyWriter
//     and encoder; TestWriterAudit/keys, which compares the key set of every
//     object kind with PyTorch's JSON for the same kind.
//   - enums (dtype, layout, kind, as_scalar_type, ...) as integers:
//     TestWriterAudit/enums.
//   - schema_version 8.20 (WriteVersion), verifiers as read or [],
//     torch_version as read: encoder.program; TestWriterAudit/header.
//   - targets always torch.ops.<ns>.<op>.<overload>, packets written as
//     .default (§4.2): encoder.node; TestWriterAudit/targets, TestTargets.
//   - NamedArgument kind 1 or 2, never null; arguments left at their
//     default omitted (§4.4): inputsOf; TestWriterAudit/targets,
//     TestNoneVersusAbsent.
//   - names unique, every referenced tensor has a TensorMeta, graph inputs
//     and outputs match the signature: encoder; TestWriterAudit/names.
//   - names as in the file read ("input" is not renamed "input_1"):
//     Program.serialNames; TestWriteKeepsSerializedNames.
//   - field order: the dataclass order. PyTorch does not need it (the
//     Python reader looks fields up by name in _dict_to_dataclass, the C++
//     reader by key), but it makes the written JSON byte-identical to
//     PyTorch's (TestFixturesWriteByteIdentical).
//   - custom op namespaces (quantized_decomposed, torchao) must be
//     imported on the PyTorch side before torch.export.load; nothing to
//     write.
//
// Round trips: fixture read -> write is byte-identical, so the list of
// fields written differently from PyTorch's models/model.json is empty.

// auditProgram is a program the writer builds from fxquant's own state:
// the mlp.static fixture with every pass-through field and the sample
// inputs dropped, so each default of the writer is exercised.
func auditProgram(t *testing.T) (*pt2.Program, map[string]any) {
	file := filepath.Join(fixtureDir, "mlp.static.pt2")
	p, err := pt2.ReadFile(file, opaque)
	require.NoError(t, err)
	p.SampleInputs = nil
	p.ModuleCallGraph = nil
	p.GraphModuleMetadata = nil
	p.TreespecNamedtupleFields = nil
	p.OpsetVersion = nil
	p.RangeConstraints = nil
	return p, modelJSON(t, file)
}

// keySets records, for every object kind (its path with list indices
// and union tags collapsed), the set of keys it has.
func keySets(v any, path string, out map[string]map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if out[path] == nil {
			out[path] = map[string]bool{}
		}
		for k, e := range x {
			// maps keyed by data (tensor_values, configs) collapse to "*"
			if strings.HasSuffix(path, "tensor_values") || strings.HasSuffix(path, "config") || strings.HasSuffix(path, "metadata") {
				keySets(e, path+".*", out)
				continue
			}
			out[path][k] = true
			keySets(e, path+"."+k, out)
		}
	case []any:
		for _, e := range x {
			keySets(e, path+"[]", out)
		}
	}
}

// walk calls f for every (key, value) pair of every object in v.
func walk(v any, f func(key string, val any)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			f(k, x[k])
			walk(x[k], f)
		}
	case []any:
		for _, e := range x {
			walk(e, f)
		}
	}
}

func TestWriterAudit(t *testing.T) {
	p, pytorch := auditProgram(t)
	var buf bytes.Buffer
	require.NoError(t, p.WriteArchive(&buf, nil))
	recs, order := archiveRecords(t, buf.Bytes())
	var model map[string]any
	require.NoError(t, json.Unmarshal(recs["models/model.json"], &model))

	t.Run("container", func(t *testing.T) {
		assert.Equal(t, "pt2", string(recs["archive_format"]))
		assert.Equal(t, "0", string(recs["archive_version"]))
		assert.Equal(t, "6\n", string(recs[".data/version"]))
		assert.Equal(t, "little", string(recs["byteorder"]))
		assert.Regexp(t, `^[0-9]{40}$`, string(recs[".data/serialization_id"]))
		assert.Equal(t, ".data/serialization_id", order[len(order)-1])
	})
	t.Run("required records", func(t *testing.T) {
		for _, name := range []string{"archive_format", "archive_version", "data/sample_inputs/model.pt",
			"data/weights/model_weights_config.json", "data/constants/model_constants_config.json", "models/model.json"} {
			assert.Contains(t, recs, name)
		}
		assert.Empty(t, recs["data/sample_inputs/model.pt"], "zero-length: no example inputs")
		assert.Equal(t, `{"config": {}}`, string(recs["data/constants/model_constants_config.json"]))
	})
	t.Run("payload configs", func(t *testing.T) {
		c := payloadConfig(t, recs["data/weights/model_weights_config.json"])
		kinds := map[string]pt2.InputKind{}
		for _, s := range p.Signature.Inputs {
			kinds[s.Target] = s.Kind
		}
		require.Len(t, c, 10)
		for fqn, m := range c {
			assert.Equal(t, kinds[fqn] == pt2.Parameter, m["is_param"], fqn)
			assert.Equal(t, false, m["use_pickle"], fqn)
			assert.Regexp(t, `^weight_[0-9]+$`, m["path_name"], fqn)
			assert.Contains(t, recs, "data/weights/"+m["path_name"].(string), fqn)
		}
	})
	t.Run("keys", func(t *testing.T) {
		want, got := map[string]map[string]bool{}, map[string]map[string]bool{}
		keySets(pytorch, "", want)
		keySets(model, "", got)
		for path, wk := range want {
			gk, ok := got[path]
			if !ok {
				continue // an object kind this program does not have
			}
			assert.Equal(t, slices.Sorted(maps.Keys(wk)), slices.Sorted(maps.Keys(gk)), "keys of %s", path)
		}
		for path := range got {
			_, ok := want[path]
			assert.True(t, ok, "object kind %s is not in PyTorch's JSON", path)
		}
	})
	t.Run("enums", func(t *testing.T) {
		walk(model, func(k string, v any) {
			switch k {
			case "dtype", "layout", "kind", "as_scalar_type", "as_memory_format", "as_layout":
				if v == nil && k == "kind" {
					t.Errorf("kind is null")
					return
				}
				f, ok := v.(float64)
				assert.True(t, ok && f == float64(int64(f)), "%s = %v, want an integer", k, v)
			}
		})
	})
	t.Run("header", func(t *testing.T) {
		assert.Equal(t, map[string]any{"major": 8.0, "minor": 20.0}, model["schema_version"])
		assert.Equal(t, []any{"TRAINING"}, model["verifiers"])
		assert.Equal(t, pytorch["torch_version"], model["torch_version"])
		assert.Equal(t, map[string]any{"aten": 10.0}, model["opset_version"])
	})
	t.Run("targets", func(t *testing.T) {
		for _, n := range model["graph_module"].(map[string]any)["graph"].(map[string]any)["nodes"].([]any) {
			target := n.(map[string]any)["target"].(string)
			assert.Len(t, strings.Split(target, "."), 5, "target %s: torch.ops.<ns>.<op>.<overload>", target)
			for _, in := range n.(map[string]any)["inputs"].([]any) {
				k := in.(map[string]any)["kind"]
				assert.Contains(t, []any{1.0, 2.0}, k, "%s input %v", target, in)
			}
		}
	})
	t.Run("names", func(t *testing.T) {
		g := model["graph_module"].(map[string]any)["graph"].(map[string]any)
		tv := g["tensor_values"].(map[string]any)
		defined := map[string]int{}
		for _, in := range g["inputs"].([]any) {
			defined[in.(map[string]any)["as_tensor"].(map[string]any)["name"].(string)]++
		}
		for _, n := range g["nodes"].([]any) {
			for _, o := range n.(map[string]any)["outputs"].([]any) {
				defined[o.(map[string]any)["as_tensor"].(map[string]any)["name"].(string)]++
			}
		}
		for name, c := range defined {
			assert.Equal(t, 1, c, "%s defined once", name)
			assert.Contains(t, tv, name, "%s has a TensorMeta", name)
		}
		walk(g, func(k string, v any) {
			if k == "as_tensor" {
				name := v.(map[string]any)["name"].(string)
				assert.Contains(t, defined, name, fmt.Sprintf("reference to %s", name))
			}
		})
		specs := model["graph_module"].(map[string]any)["signature"].(map[string]any)["input_specs"].([]any)
		require.Len(t, specs, len(g["inputs"].([]any)))
	})
}
