package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// x86Configs is testdata/x86/configs.json (made by gen_configs.py).
type x86Configs struct {
	Format  string          `json:"format"`
	Batches []fixtureTensor `json:"batches"`
	Targets []string        `json:"targets"`
	Cases   map[string]struct {
		x86Record
		Warnings []string `json:"warnings"`
	} `json:"cases"`
}

// TestX86InductorConfigs runs the X86InductorQuantizer's configuration API
// on a small model with every pattern of the recipe (conv+relu,
// conv+add+relu, conv+add, max_pool2d, cat, avg_pool2d,
// adaptive_avg_pool2d, flatten, linear+relu, linear+add, mul) and compares
// with torchao under the same configuration, node for node (see
// x86Check): the global static, dynamic and reduce_range configs, a module
// set to None under a global config, a module or module type configured
// without a global config, operator configs reached through functions and
// module types, a dynamic config skipped under a static global one and a
// module type torchao cannot configure (the last two with torchao's
// number of warnings).
func TestX86InductorConfigs(t *testing.T) {
	e, batches := loadX86Configs(t)
	cfg := func(o convert.X86InductorConfigOptions) *convert.QuantizationConfig {
		c, err := convert.X86InductorQuantizationConfig(o)
		require.NoError(t, err)
		return c
	}
	static := cfg(convert.X86InductorConfigOptions{})
	dynamic := cfg(convert.X86InductorConfigOptions{Dynamic: true})
	cases := map[string]func(q *convert.X86InductorQuantizer){
		"static":  func(q *convert.X86InductorQuantizer) { q.SetGlobal(static) },
		"dynamic": func(q *convert.X86InductorQuantizer) { q.SetGlobal(dynamic) },
		"reduce_range": func(q *convert.X86InductorQuantizer) {
			q.SetGlobal(cfg(convert.X86InductorConfigOptions{ReduceRange: true}))
		},
		"global_module_conv2_none": func(q *convert.X86InductorQuantizer) { q.SetGlobal(static).SetModuleName("conv2", nil) },
		"module_fc1_only":          func(q *convert.X86InductorQuantizer) { q.SetModuleName("fc1", static) },
		"module_type_linear_only": func(q *convert.X86InductorQuantizer) {
			q.SetModuleType("torch.nn.modules.linear.Linear", static)
		},
		"global_conv2d_fn_none": func(q *convert.X86InductorQuantizer) {
			q.SetGlobal(static).SetFunctionType("torch.nn.functional.conv2d", nil)
		},
		"global_maxpool_type_none": func(q *convert.X86InductorQuantizer) {
			q.SetGlobal(static).SetModuleType("torch.nn.modules.pooling.MaxPool2d", nil)
		},
		"global_static_module_dynamic_skipped": func(q *convert.X86InductorQuantizer) { q.SetGlobal(static).SetModuleName("fc1", dynamic) },
		"module_type_relu_warns": func(q *convert.X86InductorQuantizer) {
			q.SetGlobal(static).SetModuleType("torch.nn.modules.activation.ReLU", nil)
		},
	}
	require.Len(t, e.Cases, len(cases))
	reg := x86Registry(t)
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			q := convert.NewX86InductorQuantizer()
			setup(q)
			checkX86ConfigCase(t, e, batches, reg, name, q)
		})
	}
}

// loadX86Configs reads testdata/x86/configs.json and its calibration
// batches.
func loadX86Configs(t *testing.T) (x86Configs, [][]*tensor.Tensor) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(x86Dir, "configs.json"))
	require.NoError(t, err)
	var e x86Configs
	require.NoError(t, json.Unmarshal(data, &e))
	require.Equal(t, "fxquant-x86-configs/2", e.Format)
	var batches [][]*tensor.Tensor
	for i := range e.Batches {
		batches = append(batches, []*tensor.Tensor{mustTensor(t, &e.Batches[i])})
	}
	require.Len(t, batches, 4)
	return e, batches
}

// checkX86ConfigCase compares q, configured as case name of
// configs.json, with torchao's record of that case: the number of
// warnings, then x86Check on x86_mix.float.pt2.
func checkX86ConfigCase(t *testing.T, e x86Configs, batches [][]*tensor.Tensor, reg *ops.Registry, name string, q *convert.X86InductorQuantizer) {
	t.Helper()
	rec, ok := e.Cases[name]
	require.True(t, ok, "no record for %s", name)
	assert.Len(t, q.Warnings, len(rec.Warnings), "warnings: torchao %q, fxquant %q", rec.Warnings, q.Warnings)
	x86Check(t, filepath.Join(x86Dir, "x86_mix.float.pt2"), q, rec.x86Record, e.Targets, batches, reg)
}
