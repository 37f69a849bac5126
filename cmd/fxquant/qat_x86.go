package main

import (
	"github.com/fxquant/fxquant/convert"
)

// qatQuantizer is prepare-qat's --quantizer: the quantizer with its QAT
// config and the description the summary line prints.
func qatQuantizer(c *qatConfig) (convert.Quantizer, string, error) {
	switch c.quantizer {
	case "xnnpack", "":
		o := convert.DefaultSymmetricConfigOptions()
		o.PerChannel = c.perChannel
		cfg, err := convert.SymmetricQATConfig(o)
		if err != nil {
			return nil, "", err
		}
		mode := "XNNPACK, is_qat=True"
		if c.perChannel {
			mode += ", is_per_channel=True"
			if c.presize {
				mode += ", presized"
			}
		}
		return convert.NewXNNPACKQuantizer(cfg), mode, nil
	case "x86-inductor":
		// The x86 weights are always per channel (--per-channel is implied).
		cfg, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{QAT: true})
		if err != nil {
			return nil, "", err
		}
		mode := "x86 inductor, is_qat=True"
		if c.presize {
			mode += ", presized"
		}
		return convert.NewX86InductorQuantizer().SetGlobal(cfg), mode, nil
	}
	return nil, "", usagef("prepare-qat: --quantizer %q: want xnnpack or x86-inductor", c.quantizer)
}
