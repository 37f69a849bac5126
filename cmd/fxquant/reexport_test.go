package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pt2eDir = "../../tests/testdata/pt2e"

// archiveJSON returns the decoded JSON records of a written archive:
// models/model.json and the two payload configs, by name without the root.
func archiveJSON(t *testing.T, file string) map[string]map[string]any {
	t.Helper()
	zr, err := zip.OpenReader(file)
	require.NoError(t, err)
	defer zr.Close()
	out := map[string]map[string]any{}
	for _, f := range zr.File {
		_, name, _ := strings.Cut(f.Name, "/")
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m), name)
		out[name] = m
	}
	return out
}

// archiveRecord returns one record of an archive, named without the root.
func archiveRecord(t *testing.T, file, name string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(file)
	require.NoError(t, err)
	defer zr.Close()
	for _, f := range zr.File {
		if _, n, _ := strings.Cut(f.Name, "/"); n == name {
			rc, err := f.Open()
			require.NoError(t, err)
			defer rc.Close()
			b, err := io.ReadAll(rc)
			require.NoError(t, err)
			return b
		}
	}
	t.Fatalf("%s: no record %s", file, name)
	return nil
}

func field(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// specSummary is one input or output spec: its kind, placeholder name,
// FQN and persistence.
func specSummary(spec any) string {
	for kind, body := range spec.(map[string]any) {
		b := body.(map[string]any)
		name := field(b, "arg", "name")
		if name == nil {
			name = field(b, "arg", "as_tensor", "name")
		}
		fqn := ""
		for _, k := range []string{"parameter_name", "buffer_name", "tensor_constant_name"} {
			if s, ok := b[k].(string); ok {
				fqn = s
			}
		}
		return fmt.Sprintf("%s %v %s persistent=%v", kind, name, fqn, b["persistent"])
	}
	return ""
}

// outName returns the name of a node's single tensor output.
func outName(node any) string {
	outs := field(node, "outputs").([]any)
	if len(outs) != 1 {
		return ""
	}
	s, _ := field(outs[0], "as_tensor", "name").(string)
	return s
}

// TestRunOutputMatchesReexport quantizes the fixtures' float programs with
// the command, writes them with -o's writer, and compares the written
// models/model.json and payload configs with what PyTorch wrote for the
// same model converted by torchao and re-exported (torch.export.export of
// the converted module, then torch.export.save): the same node target
// sequence, the same signature (kinds, placeholder names, FQNs,
// persistence), the same tensor metadata for every graph input and every
// node result, position by position, the same payload entries (which
// record, is_param, use_pickle, tensor_meta) for every FQN, and the same
// bytes for every parameter.
//
// Intentionally different, not compared: node names (torch.export renames
// call_function nodes after their op on re-export, quantize_per_tensor_2,
// while the written program keeps convert's names,
// quantize_per_tensor_default_2), argument values that depend on
// calibration (the command calibrates on its own random batches), node
// metadata (from_node provenance and stack traces of the re-export trace),
// the record bytes of the quantized weights, and the module call graph
// entries of submodules, which only unflatten reads (signature null): the
// written program keeps the float program's (fc1, relu, fc2), the
// re-export lists the converted GraphModule's submodules (fc1, fc2,
// _guards_fn); the root entry, with in_spec and out_spec, is compared.
func TestRunOutputMatchesReexport(t *testing.T) {
	for _, tt := range []struct {
		float, quantizer, want string
	}{
		{"mlp.float.pt2", "xnnpack-static", "mlp.static.pt2"},
		{"mlp.float.pt2", "xnnpack-dynamic", "mlp.dynamic.pt2"},
		{"cnn.float.pt2", "xnnpack-static", "cnn.static.pt2"},
		{"groupnorm.float.pt2", "xnnpack-static", "groupnorm.static.pt2"},
		{"int4_linear_g8.float.pt2", "int4-groupwise:8", "int4_linear_g8.converted.pt2"},
		{"int4_linear_g16.float.pt2", "int4-groupwise:16", "int4_linear_g16.converted.pt2"},
		{"int4_linear_g32.float.pt2", "int4-groupwise:32", "int4_linear_g32.converted.pt2"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			c := &runConfig{file: filepath.Join(pt2eDir, tt.float), quantizer: tt.quantizer, calibration: 2, seed: 1}
			res, err := runPipeline(c, nil)
			require.NoError(t, err)
			out := filepath.Join(t.TempDir(), "q.pt2")
			require.NoError(t, writeProgram(res, out))
			got := archiveJSON(t, out)
			want := archiveJSON(t, filepath.Join(pt2eDir, tt.want))
			gm, wm := got["models/model.json"], want["models/model.json"]

			targets := func(m map[string]any) []string {
				var ts []string
				for _, n := range field(m, "graph_module", "graph", "nodes").([]any) {
					ts = append(ts, field(n, "target").(string))
				}
				return ts
			}
			assert.Equal(t, targets(wm), targets(gm), "node targets")

			specs := func(m map[string]any, key string) []string {
				var out []string
				for _, s := range field(m, "graph_module", "signature", key).([]any) {
					out = append(out, specSummary(s))
				}
				return out
			}
			assert.Equal(t, specs(wm, "input_specs"), specs(gm, "input_specs"), "input specs")
			kinds := func(m map[string]any) []string {
				var out []string
				for _, s := range field(m, "graph_module", "signature", "output_specs").([]any) {
					for k := range s.(map[string]any) {
						out = append(out, k)
					}
				}
				return out
			}
			assert.Equal(t, kinds(wm), kinds(gm), "output spec kinds")

			tv := func(m map[string]any, name string) any {
				return field(m, "graph_module", "graph", "tensor_values", name)
			}
			gIn := field(gm, "graph_module", "graph", "inputs").([]any)
			wIn := field(wm, "graph_module", "graph", "inputs").([]any)
			if assert.Len(t, gIn, len(wIn), "graph inputs") {
				for i := range wIn {
					wn, gn := field(wIn[i], "as_tensor", "name").(string), field(gIn[i], "as_tensor", "name").(string)
					assert.Equal(t, tv(wm, wn), tv(gm, gn), "input %d (%s / %s) tensor meta", i, wn, gn)
				}
			}
			gNodes := field(gm, "graph_module", "graph", "nodes").([]any)
			wNodes := field(wm, "graph_module", "graph", "nodes").([]any)
			if len(gNodes) == len(wNodes) {
				for i := range wNodes {
					wn, gn := outName(wNodes[i]), outName(gNodes[i])
					assert.Equal(t, tv(wm, wn), tv(gm, gn), "node %d (%s / %s) tensor meta", i, wn, gn)
				}
			}
			for _, cfg := range []string{"data/weights/model_weights_config.json", "data/constants/model_constants_config.json"} {
				wc := field(want[cfg], "config").(map[string]any)
				gc := field(got[cfg], "config").(map[string]any)
				assert.Equal(t, len(wc), len(gc), "%s entries", cfg)
				for fqn, we := range wc {
					assert.Equal(t, we, gc[fqn], "%s %s", cfg, fqn)
					// parameters do not depend on calibration: their bytes
					// match too (conv weights after the conv-bn fold included)
					if field(we, "is_param") == true {
						dir := strings.TrimSuffix(cfg, filepath.Base(cfg))
						wb := archiveRecord(t, filepath.Join(pt2eDir, tt.want), dir+field(we, "path_name").(string))
						gb := archiveRecord(t, out, dir+field(gc[fqn], "path_name").(string))
						assert.Equal(t, wb, gb, "%s payload bytes", fqn)
					}
				}
			}
			// The root entry carries the calling convention; the entries of
			// submodules (signature null) differ on purpose, see above.
			assert.Equal(t, field(wm, "graph_module", "module_call_graph").([]any)[0], field(gm, "graph_module", "module_call_graph").([]any)[0], "module call graph root")
			for _, k := range []string{"opset_version", "range_constraints", "schema_version", "verifiers", "torch_version", "guards_code"} {
				assert.Equal(t, wm[k], gm[k], k)
			}
		})
	}
}
