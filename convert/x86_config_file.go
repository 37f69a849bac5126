package convert

import "fmt"

// The "x86_inductor" kind of quantizer config files and the x86 config
// functions (see QuantizerConfigFormat).
func init() {
	RegisterQuantizerKind("x86_inductor", x86FromConfig)
	RegisterConfigFunction("get_default_x86_inductor_quantization_config", x86DefaultFromConfig)
	RegisterConfigFunction("get_x86_inductor_linear_dynamic_fp16_config", func(a *ConfigObject) (*QuantizationConfig, error) {
		return X86InductorLinearDynamicFP16Config(), a.Done()
	})
}

// x86Fields are the fields of an "x86_inductor" entry, named as
// X86InductorQuantizer's Python methods.
var x86Fields = []string{"set_global", "set_module_name_qconfig", "set_module_type_qconfig", "set_function_type_qconfig"}

// x86FromConfig builds an X86InductorQuantizer from an "x86_inductor"
// entry. Its fields are applied in the order written, entries of an
// object in their order too, as the Python calls in that order: torchao
// skips a config that mixes static and dynamic (or QAT and non-QAT) with
// the configs set before it, so the order decides which one is kept.
// What torchao only warns about (a skipped config, a module or function
// type it cannot configure) goes to the quantizer's Warnings.
func x86FromConfig(e *ConfigObject) (Quantizer, error) {
	q := NewX86InductorQuantizer()
	setters := map[string]func(string, *QuantizationConfig) *X86InductorQuantizer{
		"set_module_name_qconfig":   q.SetModuleName,
		"set_module_type_qconfig":   q.SetModuleType,
		"set_function_type_qconfig": q.SetFunctionType,
	}
	for _, k := range e.keys {
		if k == "set_global" {
			c, _, err := e.Config(k)
			if err != nil {
				return nil, err
			}
			q.SetGlobal(c)
			continue
		}
		set, ok := setters[k]
		if !ok {
			continue
		}
		entries, err := e.Configs(k)
		if err != nil {
			return nil, err
		}
		for _, kc := range entries {
			set(kc.Key, kc.Config)
		}
	}
	for _, k := range x86Fields {
		e.Has(k) // an unknown field's error lists every known one
	}
	return q, e.Done()
}

// x86DefaultFromConfig is get_default_x86_inductor_quantization_config's
// keyword arguments. is_qat=true is refused naming the field, as for the
// XNNPACK configs: a config file configures post-training quantization
// (the QAT config is X86InductorQuantizationConfig with QAT, for
// PrepareQAT).
func x86DefaultFromConfig(a *ConfigObject) (*QuantizationConfig, error) {
	if err := refuseQAT(a); err != nil {
		return nil, err
	}
	var o X86InductorConfigOptions
	var err error
	if o.Dynamic, err = a.Bool("is_dynamic", false); err != nil {
		return nil, err
	}
	if o.ReduceRange, err = a.Bool("reduce_range", false); err != nil {
		return nil, err
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	c, err := X86InductorQuantizationConfig(o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Path(), err)
	}
	return c, nil
}
