package tests

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
)

// x86ConfigFiles are the configurations of gen_configs.py's CASES written
// as quantizer config files, call for call (the Python each one stands
// for is beside it; cfg is get_default_x86_inductor_quantization_config).
var x86ConfigFiles = map[string]string{
	// q.set_global(cfg())
	"static": `{"set_global": {"function": "get_default_x86_inductor_quantization_config"}}`,
	// q.set_global(cfg(is_dynamic=True))
	"dynamic": `{"set_global": {"function": "get_default_x86_inductor_quantization_config", "is_dynamic": true}}`,
	// q.set_global(cfg(reduce_range=True))
	"reduce_range": `{"set_global": {"function": "get_default_x86_inductor_quantization_config", "reduce_range": true}}`,
	// q.set_global(cfg()).set_module_name_qconfig("conv2", None)
	"global_module_conv2_none": `{
	  "set_global": {"function": "get_default_x86_inductor_quantization_config"},
	  "set_module_name_qconfig": {"conv2": null}}`,
	// q.set_module_name_qconfig("fc1", cfg())
	"module_fc1_only": `{"set_module_name_qconfig": {"fc1": {"function": "get_default_x86_inductor_quantization_config"}}}`,
	// q.set_module_type_qconfig(nn.Linear, cfg())
	"module_type_linear_only": `{"set_module_type_qconfig": {
	  "torch.nn.modules.linear.Linear": {"function": "get_default_x86_inductor_quantization_config"}}}`,
	// q.set_global(cfg()).set_function_type_qconfig(F.conv2d, None)
	"global_conv2d_fn_none": `{
	  "set_global": {"function": "get_default_x86_inductor_quantization_config"},
	  "set_function_type_qconfig": {"torch.nn.functional.conv2d": null}}`,
	// q.set_global(cfg()).set_module_type_qconfig(nn.MaxPool2d, None)
	"global_maxpool_type_none": `{
	  "set_global": {"function": "get_default_x86_inductor_quantization_config"},
	  "set_module_type_qconfig": {"torch.nn.modules.pooling.MaxPool2d": null}}`,
	// q.set_global(cfg()).set_module_name_qconfig("fc1", cfg(is_dynamic=True))
	"global_static_module_dynamic_skipped": `{
	  "set_global": {"function": "get_default_x86_inductor_quantization_config"},
	  "set_module_name_qconfig": {"fc1": {"function": "get_default_x86_inductor_quantization_config", "is_dynamic": true}}}`,
	// q.set_global(cfg()).set_module_type_qconfig(nn.ReLU, None)
	"module_type_relu_warns": `{
	  "set_global": {"function": "get_default_x86_inductor_quantization_config"},
	  "set_module_type_qconfig": {"torch.nn.modules.activation.ReLU": null}}`,
}

// x86ConfigFile makes a quantizer config file of one "x86_inductor" entry
// with the given fields (a JSON object) and parses it.
func x86ConfigFile(t *testing.T, fields string) *convert.X86InductorQuantizer {
	t.Helper()
	require.Equal(t, byte('{'), fields[0])
	file := `{"format": "` + convert.QuantizerConfigFormat + `", "quantizers": [{"quantizer": "x86_inductor", ` + fields[1:] + `]}`
	q, err := convert.ParseQuantizerConfig([]byte(file))
	require.NoError(t, err, file)
	x, ok := q.(*convert.X86InductorQuantizer)
	require.True(t, ok, "got %T", q)
	return x
}

// TestX86InductorConfigFiles: every configuration TestX86InductorConfigs
// makes through the Go API, written as a quantizer config file, gives
// torchao's result for that configuration (configs.json, compared as
// there: warnings, annotations, observers, converted graph, outputs).
func TestX86InductorConfigFiles(t *testing.T) {
	e, batches := loadX86Configs(t)
	require.Len(t, x86ConfigFiles, len(e.Cases), "a config file for every recorded case")
	reg := x86Registry(t)
	for name, fields := range x86ConfigFiles {
		t.Run(name, func(t *testing.T) {
			checkX86ConfigCase(t, e, batches, reg, name, x86ConfigFile(t, fields))
		})
	}
}

// TestX86InductorLinearFP16ConfigFile: torchao's
// set_module_type_qconfig(nn.Linear, get_x86_inductor_linear_dynamic_fp16_config())
// as a config file gives torchao's result (fp16.json, as
// TestX86InductorLinearFP16).
func TestX86InductorLinearFP16ConfigFile(t *testing.T) {
	checkX86FP16(t, func(t *testing.T) *convert.X86InductorQuantizer {
		return x86ConfigFile(t, `{"set_module_type_qconfig": {
		  "torch.nn.modules.linear.Linear": {"function": "get_x86_inductor_linear_dynamic_fp16_config"}}}`)
	})
}
