package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/internal/atomicfile"
	"github.com/fxquant/fxquant/pt2"
)

// qatConfig is the parsed command line of "fxquant prepare-qat" and
// "fxquant convert-qat".
type qatConfig struct {
	file        string
	out         string
	reference   bool   // convert-qat only
	perChannel  bool   // prepare-qat only: per-channel weights
	presize     bool   // prepare-qat only: QATOptions.PresizePerChannel
	quantizer   string // prepare-qat only: xnnpack or x86-inductor (qat_x86.go)
	force       bool
	allowOpaque bool
}

func parseQATFlags(e *env, name string, args []string) (*qatConfig, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c := &qatConfig{}
	fs.StringVar(&c.out, "o", "", "write the program to this .pt2 file")
	if name == "convert-qat" {
		fs.BoolVar(&c.reference, "reference", false, "rewrite to the reference representation after convert")
	} else {
		fs.BoolVar(&c.perChannel, "per-channel", false, "per-channel weights (is_per_channel=True); implies --presize")
		fs.StringVar(&c.quantizer, "quantizer", "xnnpack", "xnnpack (get_symmetric_quantization_config(is_qat=True)) or x86-inductor (get_default_x86_inductor_quantization_config(is_qat=True): uint8 activations, per-channel int8 weights)")
		fs.BoolVar(&c.presize, "presize", true, "give per-channel fake quantizers their channel count, so the program trains after torch.export.load (torchao's graph has empty min/max buffers)")
	}
	fs.BoolVar(&c.force, "force", false, "take an input that fails verification, and write -o even when the result fails it (with a warning)")
	fs.BoolVar(&c.allowOpaque, "allow-opaque", false, "read operators the registry does not know")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return nil, err
	}
	if err := wantArgs(pos, 1, 1, "FILE"); err != nil {
		return nil, err
	}
	c.file = pos[0]
	if name == "prepare-qat" && c.out == "" {
		return nil, usagef("prepare-qat needs -o OUT.pt2: the prepared program is for PyTorch to train")
	}
	// The output must not be the input (checkOutputs' rules).
	if err := checkOutputs(&runConfig{file: c.file, out: c.out}); err != nil {
		return nil, err
	}
	return c, nil
}

// loadQATInput reads and verifies FILE and returns it unlifted.
func loadQATInput(c *qatConfig, stderr io.Writer) (*input, *fxgraph.Graph, error) {
	in, err := loadProgram(c.file, c.allowOpaque)
	if err != nil {
		return nil, nil, err
	}
	if err := verifyInput(in, c.force, c.allowOpaque, stderr); err != nil {
		return nil, nil, err
	}
	g, err := in.program.Unlifted()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", in.name, err)
	}
	return in, g, nil
}

// cmdPrepareQAT is "fxquant prepare-qat FILE -o OUT.pt2": prepare_qat_pt2e
// with the XNNPACK quantizer's QAT config (per-tensor int8 weights, int8
// activations, fused moving-average fake quantizers) on a program exported
// in train mode; OUT.pt2 is a program PyTorch loads
// (torch.export.load(...).module()) and trains.
func cmdPrepareQAT(e *env, args []string) error {
	c, err := parseQATFlags(e, "prepare-qat", args)
	if err != nil {
		return err
	}
	in, g, err := loadQATInput(c, e.stderr)
	if err != nil {
		return err
	}
	q, desc, err := qatQuantizer(c)
	if err != nil {
		return err
	}
	var buffers []string
	for _, s := range in.program.Signature.Inputs {
		if s.Kind == pt2.Buffer {
			buffers = append(buffers, s.Target)
		}
	}
	floatNodes := g.Len()
	if err := convert.PrepareQAT(g, q,
		convert.QATOptions{PrepareOptions: convert.PrepareOptions{Buffers: buffers}, PresizePerChannel: c.presize}); err != nil {
		return stageError(in.name, "prepare qat", err)
	}
	fq := len(g.FindNodes(fxgraph.CallFunction, convert.FusedFakeQuantize))
	fmt.Fprintf(e.stdout, "%s: prepared for QAT (%s): %d nodes (float: %d), %d fake quantizers\n",
		in.name, desc, g.Len(), floatNodes, fq)
	writeOpCounts(e.stdout, countOps(g))
	return writeQAT(e, in, g, c)
}

// cmdConvertQAT is "fxquant convert-qat FILE -o OUT.pt2": FILE is a QAT
// program trained by PyTorch and saved with torch.export.save (the output
// of prepare-qat, or torchao's prepared model exported); it gets
// move_exported_model_to_eval and convert_pt2e (MoveToEval, ConvertQAT).
func cmdConvertQAT(e *env, args []string) error {
	c, err := parseQATFlags(e, "convert-qat", args)
	if err != nil {
		return err
	}
	return convertQAT(e, c)
}

// convertQAT is convert-qat on the parsed command line c.
func convertQAT(e *env, c *qatConfig) error {
	in, g, err := loadQATInput(c, e.stderr)
	if err != nil {
		return err
	}
	switched := convert.MoveToEval(g)
	if err := convert.ConvertQAT(g, convert.ConvertOptions{ReferenceRepresentation: c.reference}); err != nil {
		return stageError(in.name, "convert qat", err)
	}
	fxgraph.InferMissingTypes(g, nil)
	q, dq, _ := qdqCounts(g)
	fmt.Fprintf(e.stdout, "%s: converted after QAT: %d nodes, %d quantize / %d dequantize, %d dropout/batch-norm nodes moved to eval\n",
		in.name, g.Len(), q, dq, switched)
	writeOpCounts(e.stdout, countOps(g))
	return writeQAT(e, in, g, c)
}

// writeQAT verifies g and writes it to c.out with the input's signature.
func writeQAT(e *env, in *input, g *fxgraph.Graph, c *qatConfig) error {
	verr := fxgraph.Verify(g, fxgraph.VerifyOptions{})
	if verr != nil {
		fmt.Fprintf(e.stderr, "%s: the result fails verification: %v\n", in.name, verr)
		if !c.force {
			return &exitError{code: exitFail}
		}
		fmt.Fprintf(e.stderr, "warning: writing it anyway (--force)\n")
	}
	if c.out == "" {
		return nil
	}
	p, err := in.program.WithGraph(g)
	if err != nil {
		return fmt.Errorf("%s: %w", c.out, err)
	}
	var buf bytes.Buffer
	if err := p.WriteArchive(&buf, nil); err != nil {
		return fmt.Errorf("%s: %w", c.out, err)
	}
	if _, err := pt2.Read(buf.Bytes(), nil); err != nil {
		return fmt.Errorf("%s: the written archive does not read back: %w", c.out, err)
	}
	if err := atomicfile.WriteFile(c.out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", c.out)
	return nil
}

// writeOpCounts prints "  op: count" lines, most frequent first.
func writeOpCounts(w io.Writer, m map[string]int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-55s %d\n", k, m[k])
	}
	io.WriteString(w, b.String())
}

// checkFromQAT checks "run --from-qat": it needs FILE, and the PTQ flags
// (quantizer, calibration, dot, annotation options) do not apply.
func checkFromQAT(c *runConfig, fs *flag.FlagSet, pos []string) error {
	if !c.fromQAT {
		return nil
	}
	if len(pos) == 0 {
		return usagef("--from-qat needs FILE, the trained QAT program")
	}
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "from-qat", "o", "reference", "force", "allow-opaque", "no-progress":
		default:
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usagef("--from-qat converts a trained QAT program; %s do%s not apply", strings.Join(bad, ", "), map[bool]string{true: "es", false: ""}[len(bad) == 1])
	}
	return nil
}

// runFromQAT is "run --from-qat FILE": convert-qat on FILE. checkFromQAT
// left c only the flags convert-qat takes.
func runFromQAT(e *env, c *runConfig) error {
	if err := checkOutputs(c); err != nil {
		return err
	}
	return convertQAT(e, &qatConfig{file: c.file, out: c.out, reference: c.reference, force: c.force, allowOpaque: c.allowOpaque})
}
