package main

import "github.com/fxquant/fxquant/convert"

// x86InductorQuantizer is --quantizer x86-inductor-static|dynamic:
// torchao's X86InductorQuantizer with
// get_default_x86_inductor_quantization_config(is_dynamic=dynamic) as its
// global config.
func x86InductorQuantizer(dynamic bool) (convert.Quantizer, error) {
	c, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{Dynamic: dynamic})
	if err != nil {
		return nil, err
	}
	return convert.NewX86InductorQuantizer().SetGlobal(c), nil
}
