package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
)

// quantFlags are run's quantizer and convert options beyond --quantizer:
// --quantizer-config, --per-tensor, --no-fold and --packet-affine-ops.
type quantFlags struct {
	config       string // --quantizer-config FILE
	perTensor    bool   // --per-tensor: XNNPACK weights per tensor
	noFold       bool   // --no-fold: ConvertOptions.NoFoldQuantize
	packetAffine bool   // --packet-affine-ops: ConvertOptions.PacketAffineOps
}

// register adds the flags to fs.
func (f *quantFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "quantizer-config", "", "quantizer config file (JSON): torchao's set_global/set_module_name/set_module_type/set_operator_type, quantizers composed in order")
	fs.BoolVar(&f.perTensor, "per-tensor", false, "xnnpack quantizers: quantize weights per tensor instead of per output channel")
	fs.BoolVar(&f.noFold, "no-fold", false, "keep the weight quantize nodes (fold_quantize=False)")
	fs.BoolVar(&f.packetAffine, "packet-affine-ops", false, "affine observers insert the torchao.*_affine packets, as torchao's pre-change convert did")
}

// convertOptions are the ConvertOptions the flags ask for, on top of base.
func (f *quantFlags) convertOptions(base convert.ConvertOptions) convert.ConvertOptions {
	base.NoFoldQuantize = f.noFold
	base.PacketAffineOps = f.packetAffine
	return base
}

// checkQuantizerFlags validates the quantizer flags while parsing: their
// combinations, and the quantizer a --quantizer name builds. A config file
// is read by the run itself, so that a bad file is an error naming its
// field, not a usage error.
func checkQuantizerFlags(c *runConfig, set map[string]bool) error {
	f := &c.qopts
	if f.config != "" {
		for _, other := range []string{"quantizer", "per-tensor", "annotate-by-target", "own-activation-chains"} {
			if set[other] {
				return usagef("--%s and --quantizer-config are exclusive: say it in the config file", other)
			}
		}
		return nil
	}
	if f.perTensor && !strings.Contains(c.quantizer, "xnnpack") {
		return usagef("--per-tensor applies to the xnnpack quantizers, not %s", c.quantizer)
	}
	if _, err := makeQuantizer(c); err != nil {
		return &usageError{msg: err.Error()}
	}
	return nil
}

// makeListedQuantizer builds the quantizers makeQuantizer does not: the
// config file's, "embedding", and "A+B+..." (a ComposableQuantizer of the
// named quantizers, in order). ok is false for a plain name makeQuantizer
// handles itself.
func makeListedQuantizer(c *runConfig) (q convert.Quantizer, ok bool, err error) {
	switch {
	case c.qopts.config != "":
		q, err := convert.ReadQuantizerConfigFile(c.qopts.config)
		return q, true, err
	case c.quantizer == "embedding":
		return convert.EmbeddingQuantizer{}, true, nil
	case strings.Contains(c.quantizer, "+"):
		var qs convert.ComposableQuantizer
		for _, part := range strings.Split(c.quantizer, "+") {
			one := *c
			one.quantizer = part
			if part == "" {
				return nil, true, fmt.Errorf("--quantizer %q: empty name between +", c.quantizer)
			}
			q, err := makeQuantizer(&one)
			if err != nil {
				return nil, true, err
			}
			qs = append(qs, q)
		}
		return qs, true, nil
	}
	return nil, false, nil
}

// quantizerDesc is the summary's quantizer line.
func (c *runConfig) quantizerDesc() string {
	if c.qopts.config != "" {
		return "config " + c.qopts.config
	}
	if c.qopts.perTensor {
		return c.quantizer + " (per-tensor weights)"
	}
	return c.quantizer
}

// warnUnmatchedModules warns about each set_module_name and
// set_module_type key of q's XNNPACK quantizers that no node of g carries
// in its nn_module_stack: a typo, or a class named by an alias
// ("torch.nn.Linear" for "torch.nn.modules.linear.Linear"). It also
// passes on the X86 Inductor quantizer's warnings: configs torchao skips.
func warnUnmatchedModules(q convert.Quantizer, g *fxgraph.Graph, w io.Writer) {
	paths, types := map[string]bool{}, map[string]bool{}
	for n := range g.All() {
		for _, e := range n.Meta.NNModuleStack {
			paths[strings.TrimPrefix(e.Path, "L['self'].")] = true
			types[e.Type] = true
		}
	}
	var visit func(q convert.Quantizer)
	visit = func(q convert.Quantizer) {
		switch q := q.(type) {
		case convert.ComposableQuantizer:
			for _, s := range q {
				visit(s)
			}
		case *convert.X86InductorQuantizer:
			for _, m := range q.Warnings {
				fmt.Fprintf(w, "fxquant run: warning: x86_inductor: %s\n", m)
			}
		case *convert.XNNPACKQuantizer:
			names, tps := q.ModuleKeys()
			for _, n := range names {
				if !paths[n] {
					fmt.Fprintf(w, "fxquant run: warning: set_module_name %q matches no module of the program\n", n)
				}
			}
			for _, t := range tps {
				if !types[t] {
					var have []string
					for k := range types {
						have = append(have, k)
					}
					slices.Sort(have)
					fmt.Fprintf(w, "fxquant run: warning: set_module_type %q matches no module of the program (its module types: %s)\n", t, strings.Join(have, ", "))
				}
			}
		}
	}
	visit(q)
}
