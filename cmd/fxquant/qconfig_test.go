package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/pt2"
)

// runWritten runs "fxquant run" with args and -o, and returns the
// converted graph read back from the written program.
func runWritten(t *testing.T, args ...string) (*fxgraph.Graph, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "q.pt2")
	code, stdout, stderr := runCmd(t, append(append([]string{"run", "--no-progress"}, args...), "-o", out)...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	p, err := pt2.ReadFile(out, nil)
	require.NoError(t, err)
	return p.Graph, stdout + stderr
}

// qdqTargets counts q/dq call targets by their name after the namespace.
func qdqTargets(g *fxgraph.Graph) map[string]int {
	m := map[string]int{}
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction && strings.HasPrefix(n.Target().String(), "quantized_decomposed.") {
			m[strings.TrimPrefix(n.Target().String(), "quantized_decomposed.")]++
		}
	}
	return m
}

// The example config quantizes the embedded MLP as its set_* calls say.
// The expected q/dq nodes are torchao's on the same config and model
// (tests/testdata/quantcfg/mlp.example.converted.graph.txt, where
// TestQuantizerConfigsMatchTorchao compares the whole graph): fc1 under
// the per-channel global config, fc2 under its per-tensor module config
// with activations in -100..100, the relu (type set to null) unannotated
// but sharing fc1's output observer through propagation, and a separate
// fc2 input observer, since fc2's input spec differs from relu's output.
func TestRunQuantizerConfigExample(t *testing.T) {
	g, out := runWritten(t, "--quantizer-config", "testdata/quantizer-config.json")
	assert.Contains(t, out, "quantizer:   config testdata/quantizer-config.json\n")
	assert.NotContains(t, out, "warning", "every module name and type of the example is in the MLP")
	assert.Equal(t, map[string]int{
		"quantize_per_tensor.default":    5,
		"dequantize_per_tensor.default":  6, // 5 activations + fc2's weight
		"dequantize_per_channel.default": 1, // fc1's weight
	}, qdqTargets(g))
	var ranges []int64
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction && n.Target().String() == "quantized_decomposed.quantize_per_tensor.default" {
			ranges = append(ranges, n.Arg(3).(int64))
		}
	}
	assert.Equal(t, []int64{-128, -128, -128, -100, -100}, ranges, "quant_min of x, fc1, relu, fc2's input and fc2's output")
}

// --per-tensor, --no-fold and --packet-affine-ops reach the quantizer and
// convert.
func TestRunQuantizerFlags(t *testing.T) {
	g, _ := runWritten(t, "--per-tensor")
	assert.Equal(t, map[string]int{"quantize_per_tensor.default": 3, "dequantize_per_tensor.default": 5}, qdqTargets(g), "per-tensor weights")

	g, _ = runWritten(t, "--no-fold")
	assert.Equal(t, 2, qdqTargets(g)["quantize_per_channel.default"], "--no-fold keeps both weight quantize nodes")
	g, _ = runWritten(t)
	assert.Zero(t, qdqTargets(g)["quantize_per_channel.default"], "folded by default")

	code, out, errs := runCmd(t, "run", "--no-progress", "--quantizer", "int4-groupwise:8", "--packet-affine-ops")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "call_function torchao.quantize_affine ", "packets")
	code, out, errs = runCmd(t, "run", "--no-progress", "--quantizer", "int4-groupwise:8")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "call_function torchao.quantize_affine.default ", "overloads by default")
}

// --quantizer embedding and a composed A+B.
func TestRunEmbeddingAndComposedNames(t *testing.T) {
	// The MLP has no embedding: nothing is quantized.
	code, out, errs := runCmd(t, "run", "--no-progress", "--quantizer", "embedding")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "q/dq:        0 quantize, 0 dequantize, 0 choose_qparams\n")
	// embedding first, then XNNPACK: XNNPACK's graph.
	plain, _ := runWritten(t)
	composed, out := runWritten(t, "--quantizer", "embedding+xnnpack-static")
	assert.Contains(t, out, "quantizer:   embedding+xnnpack-static\n")
	assert.Equal(t, fxgraph.Format(plain), fxgraph.Format(composed))
}

func TestRunQuantizerFlagErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"quantizers": [{"quantizer": "xnnpack", "set_global": {"function": "get_symmetric_quantization_config", "is_per_chanel": true}}]}`), 0o644))
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--quantizer-config", "x.json", "--quantizer", "xnnpack-dynamic"}, exitUsage, "--quantizer and --quantizer-config are exclusive"},
		{[]string{"--quantizer-config", "x.json", "--per-tensor"}, exitUsage, "--per-tensor and --quantizer-config are exclusive"},
		{[]string{"--quantizer", "int4-groupwise:8", "--per-tensor"}, exitUsage, "--per-tensor applies to the xnnpack quantizers"},
		{[]string{"--quantizer", "embedding+"}, exitUsage, "empty name between +"},
		{[]string{"--quantizer", "embedding+nope"}, exitUsage, `--quantizer "nope"`},
		{[]string{"--quantizer-config", bad}, exitFail, bad + `: quantizers[0].set_global.is_per_chanel: unknown field; want one of`},
		{[]string{"--quantizer-config", filepath.Join(t.TempDir(), "missing.json")}, exitFail, "missing.json"},
	} {
		code, _, errs := runCmd(t, append([]string{"run", "--no-progress"}, tt.args...)...)
		assert.Equal(t, tt.code, code, "%v: %s", tt.args, errs)
		assert.Contains(t, errs, tt.want, "%v", tt.args)
	}
}

// quantcfgDir holds torchao's records for quantizer config files
// (tests/testdata/quantcfg/README.md).
const quantcfgDir = "../../tests/testdata/quantcfg"

// qdqRows lists a listing's q/dq calls in order as "target | args", with
// node references written as % (placeholder names differ between a
// converted module and a written program).
func qdqRows(t *testing.T, listing string) []string {
	rows, err := fxgraph.ParseListingString(listing)
	require.NoError(t, err)
	refs := regexp.MustCompile(`%[A-Za-z0-9_]+`)
	var out []string
	for _, r := range rows {
		if r.Op != fxgraph.CallFunction || !strings.HasPrefix(r.Target, "quantized_decomposed.") {
			continue
		}
		s := r.String()
		s = s[strings.Index(s, " | call_function | ")+len(" | call_function | "):]
		out = append(out, refs.ReplaceAllString(s, "%"))
	}
	return out
}

// fxquant run with a config file and the recorded calibration batches
// writes a program whose q/dq calls (targets, order, qparams) are those of
// torchao's converted model for the same config (the convert's folded
// weights become buffers in the written program, so weight quantize nodes
// appear in neither).
func TestRunQuantizerConfigMatchesTorchao(t *testing.T) {
	for _, tt := range []struct{ stem, cas, dir string }{
		{"emb_mlp", "mixed", quantcfgDir},
		{"emb_mlp", "embedding_dynamic_static", quantcfgDir},
		{"gru", "static", quantcfgDir},
		{"cnn", "name_conv2", pt2eDir},
		{"mlp", "example", pt2eDir},
	} {
		t.Run(tt.stem+"."+tt.cas, func(t *testing.T) {
			g, out := runWritten(t, filepath.Join(tt.dir, tt.stem+".float.pt2"),
				"--quantizer-config", filepath.Join(quantcfgDir, tt.stem+"."+tt.cas+".config.json"),
				"--calibration-data", filepath.Join(tt.dir, tt.stem+".outputs.json"))
			assert.NotContains(t, out, "warning")
			want, err := os.ReadFile(filepath.Join(quantcfgDir, tt.stem+"."+tt.cas+".converted.graph.txt"))
			require.NoError(t, err)
			w := qdqRows(t, string(want))
			require.NotEmpty(t, w)
			assert.Equal(t, strings.Join(w, "\n"), strings.Join(qdqRows(t, fxgraph.FormatListing(g)), "\n"))
		})
	}
}

// run passes on what torchao's X86InductorQuantizer warns about: here a
// dynamic module-type config after a static global one, which torchao
// skips with "mixed dynamic and static quantization config is not
// supported".
func TestRunX86ConfigWarnings(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "x86.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"quantizers": [{"quantizer": "x86_inductor",
		"set_global": {"function": "get_default_x86_inductor_quantization_config"},
		"set_module_type_qconfig": {"torch.nn.modules.linear.Linear": {"function": "get_default_x86_inductor_quantization_config", "is_dynamic": true}}}]}`), 0o644))
	code, _, errs := runCmd(t, "run", "--no-progress", "--quantizer-config", cfg)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, errs, "fxquant run: warning: x86_inductor: mixed dynamic and static quantization config is not supported\n")
}
