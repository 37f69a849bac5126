package convert_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
)

const x86Fn = `"function": "get_default_x86_inductor_quantization_config"`

// x86Entry wraps the fields of one "x86_inductor" entry in a config file.
func x86Entry(fields string) string {
	return `{"quantizers": [{"quantizer": "x86_inductor"` + fields + `}]}`
}

// Bad x86 entries and x86 config functions are refused naming the field.
func TestParseQuantizerConfigX86Errors(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{x86Entry(`, "set_module_name": {"fc": null}`), `quantizers[0].set_module_name: unknown field; want one of quantizer, set_function_type_qconfig, set_global, set_module_name_qconfig, set_module_type_qconfig`},
		{x86Entry(`, "set_global": null, "annotate_by_target": true`), `quantizers[0].annotate_by_target: unknown field`},
		{x86Entry(`, "set_global": "static"`), `quantizers[0].set_global: want an object, got the string "static"`},
		{x86Entry(`, "set_global": {}`), `quantizers[0].set_global.function: missing`},
		{x86Entry(`, "set_module_type_qconfig": ["torch.nn.modules.linear.Linear"]`), `quantizers[0].set_module_type_qconfig: want an object, got a list`},
		{x86Entry(`, "set_function_type_qconfig": {"torch.cat": 1}`), `quantizers[0].set_function_type_qconfig["torch.cat"]: want an object, got the number 1`},
		{x86Entry(`, "set_module_name_qconfig": {"": null}`), `quantizers[0].set_module_name_qconfig: empty name`},
		{x86Entry(`, "set_module_name_qconfig": {"fc": null, "fc": null}`), `quantizers[0].set_module_name_qconfig.fc: duplicate field`},
		{x86Entry(`, "set_global": null, "set_global": null`), `quantizers[0].set_global: duplicate field`},
		{x86Entry(`, "set_global": {` + x86Fn + `, "is_dynamic": "yes"}`), `quantizers[0].set_global.is_dynamic: want true or false, got the string "yes"`},
		{x86Entry(`, "set_module_name_qconfig": {"fc": {` + x86Fn + `, "reduce_range": 1}}`), `quantizers[0].set_module_name_qconfig["fc"].reduce_range: want true or false, got the number 1`},
		{x86Entry(`, "set_global": {` + x86Fn + `, "is_qat": null}`), `quantizers[0].set_global.is_qat: want true or false, got null`},
		{x86Entry(`, "set_global": {` + x86Fn + `, "reduce_rang": true}`), `quantizers[0].set_global.reduce_rang: unknown field; want one of function, is_dynamic, is_qat, reduce_range`},
		{x86Entry(`, "set_global": {` + x86Fn + `, "is_per_channel": true}`), `quantizers[0].set_global.is_per_channel: unknown field`},
		{x86Entry(`, "set_module_type_qconfig": {"torch.nn.modules.linear.Linear": {"function": "get_x86_inductor_linear_dynamic_fp16_config", "is_dynamic": true}}`), `quantizers[0].set_module_type_qconfig["torch.nn.modules.linear.Linear"].is_dynamic: unknown field; want one of function`},
		{x86Entry(`, "set_global": {` + x86Fn + `, "is_qat": true}`), `quantizers[0].set_global.is_qat: QAT configs are not supported here`},
	} {
		_, err := convert.ParseQuantizerConfig([]byte(tt.config))
		if assert.Error(t, err, tt.config) {
			assert.Contains(t, err.Error(), tt.want, tt.config)
		}
	}
}

// An x86_inductor entry makes the calls its fields name, in the order
// written: torchao keeps the first of a static and a dynamic config and
// skips the later one, so the order in the file decides.
func TestParseQuantizerConfigX86Order(t *testing.T) {
	static, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{})
	require.NoError(t, err)
	dynamic, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{Dynamic: true})
	require.NoError(t, err)
	parse := func(fields string) *convert.X86InductorQuantizer {
		q, err := convert.ParseQuantizerConfig([]byte(x86Entry(fields)))
		require.NoError(t, err, fields)
		x, ok := q.(*convert.X86InductorQuantizer)
		require.True(t, ok, "got %T", q)
		return x
	}
	globalFirst := parse(`, "set_global": {` + x86Fn + `}, "set_module_name_qconfig": {"fc": {` + x86Fn + `, "is_dynamic": true}}`)
	require.NotNil(t, globalFirst.Global, "the static global config set first is kept")
	assert.False(t, globalFirst.Global.InputActivation.IsDynamic)
	calls := convert.NewX86InductorQuantizer().SetGlobal(static).SetModuleName("fc", dynamic)
	assert.Equal(t, calls.Warnings, globalFirst.Warnings)
	assert.Len(t, globalFirst.Warnings, 2, "mixed, and the skipped module config")

	moduleFirst := parse(`, "set_module_name_qconfig": {"fc": {` + x86Fn + `, "is_dynamic": true}}, "set_global": {` + x86Fn + `}`)
	assert.Nil(t, moduleFirst.Global, "the static global config after a dynamic module config is skipped")
	calls = convert.NewX86InductorQuantizer().SetModuleName("fc", dynamic).SetGlobal(static)
	assert.Equal(t, calls.Warnings, moduleFirst.Warnings)
	assert.Contains(t, moduleFirst.Warnings, "skip the global quantization config")

	rr := parse(`, "set_global": {` + x86Fn + `, "reduce_range": true, "is_dynamic": true}`)
	require.NotNil(t, rr.Global)
	assert.True(t, rr.Global.InputActivation.IsDynamic)
	assert.Equal(t, int64(127), *rr.Global.InputActivation.QuantMax, "reduce_range: 0..127")
	assert.Equal(t, observers.UInt8, rr.Global.InputActivation.DType)

	fp16 := parse(`, "set_global": {"function": "get_x86_inductor_linear_dynamic_fp16_config"}`)
	require.NotNil(t, fp16.Global)
	assert.Nil(t, fp16.Global.InputActivation)
	assert.Equal(t, observers.Float16, fp16.Global.Weight.DType)

	unknownType := parse(`, "set_module_type_qconfig": {"torch.nn.modules.activation.ReLU": null}`)
	assert.Equal(t, []string{"module: unable to customize quantization config for torch.nn.modules.activation.ReLU by X86InductorQuantizer"},
		unknownType.Warnings, "torchao warns, and so does the file")
}

// Module name, module type and function type entries prepare the cnn
// fixture as the same library calls do.
func TestParseQuantizerConfigX86SameAsCalls(t *testing.T) {
	q, err := convert.ParseQuantizerConfig([]byte(x86Entry(`,
	  "set_global": {` + x86Fn + `, "reduce_range": true},
	  "set_module_type_qconfig": {"torch.nn.modules.linear.Linear": {` + x86Fn + `}},
	  "set_function_type_qconfig": {"torch.nn.functional.conv2d": null},
	  "set_module_name_qconfig": {"conv1": {` + x86Fn + `}}`)))
	require.NoError(t, err)
	static, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{})
	require.NoError(t, err)
	rr, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{ReduceRange: true})
	require.NoError(t, err)
	calls := convert.NewX86InductorQuantizer().SetGlobal(rr).
		SetModuleType("torch.nn.modules.linear.Linear", static).
		SetFunctionType("torch.nn.functional.conv2d", nil).
		SetModuleName("conv1", static)

	g1, g2 := loadFloat(t, "cnn"), loadFloat(t, "cnn")
	require.NoError(t, convert.Prepare(g1, q))
	require.NoError(t, convert.Prepare(g2, calls))
	require.Equal(t, fxgraph.FormatListing(g2), fxgraph.FormatListing(g1))
	assert.Contains(t, fxgraph.FormatListing(g1), "activation_post_process", "something was observed")
	// The listing names the observers; their dtypes and ranges (the
	// reduce_range of the global config) are compared here.
	n := 0
	for _, u := range g1.Nodes() {
		if u.Op() != fxgraph.CallModule {
			continue
		}
		o1, ok1 := g1.Attr(u.TargetName())
		o2, ok2 := g2.Attr(u.TargetName())
		require.True(t, ok1 && ok2, u.TargetName())
		assert.Equal(t, o2, o1, u.TargetName())
		n++
	}
	assert.Positive(t, n)
}
