package main

import (
	"bufio"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/internal/atomicfile"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// embeddedModel is the default input of "fxquant run": the float MLP of
// the pt2e fixtures, exported and saved by PyTorch 2.14
// (Linear(32,64) -> ReLU -> Linear(64,16), input f32[4, 32]).
//
//go:embed model/mlp.float.pt2
var embeddedModel []byte

// embeddedName names the embedded model in messages.
const embeddedName = "<embedded mlp.float.pt2>"

// runConfig is the parsed command line of "fxquant run".
type runConfig struct {
	file        string // "" for the embedded model
	quantizer   string
	reference   bool
	calibration int
	calibData   string
	evalData    string // --eval-data: the batches the SQNR is measured on
	holdBack    int    // --hold-back: calibration batches kept out to measure on
	calibBudget int64
	seed        uint64
	out         string
	dot         string
	progress    bool
	allowOpaque bool // read operators the registry does not know
	byTarget    bool // XNNPACKQuantizer.AnnotateByTarget
	ownChains   bool // Int4GroupwiseQuantizer.OwnActivationChains
	force       bool // run a broken input, write -o from a graph that fails verification
	noCompare   bool // --no-compare: skip the float vs quantized comparison

	// qopts: --quantizer-config, --per-tensor, --no-fold, --packet-affine-ops (qconfig.go)
	qopts quantFlags
	// onCalibrated, when set, sees the calibrated graph (observers still
	// in place) before convert ("fxquant report").
	onCalibrated func(prepared *fxgraph.Graph)
	fromQAT      bool // FILE is a trained QAT program: convert-qat instead of the PTQ pipeline (qat.go)
}

func parseRunFlags(e *env, args []string) (*runConfig, error) {
	return parseRunFlagsFor(e, "run", args)
}

// parseRunFlagsFor parses run's flags for the subcommand name (run,
// report), which names the flag set in messages.
func parseRunFlagsFor(e *env, name string, args []string) (*runConfig, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c := &runConfig{}
	fs.StringVar(&c.quantizer, "quantizer", "xnnpack-static", "xnnpack-static, xnnpack-dynamic, x86-inductor-static, x86-inductor-dynamic or int4-groupwise:G")
	fs.BoolVar(&c.reference, "reference", false, "rewrite to the reference representation after convert")
	fs.IntVar(&c.calibration, "calibration", 4, "number of random calibration batches")
	fs.StringVar(&c.calibData, "calibration-data", "", "calibration batches: a .npy array or a JSON list of tensors")
	fs.StringVar(&c.evalData, "eval-data", "", "batches to measure the SQNR on, as --calibration-data (default: 2 more random batches, or the calibration data itself)")
	fs.IntVar(&c.holdBack, "hold-back", 0, "measure the SQNR on the last K calibration batches, which then do not calibrate")
	if name == "run" {
		fs.BoolVar(&c.noCompare, "no-compare", false, "skip the float vs quantized comparison (no SQNR): only quantize, as torchao's flow does")
	}
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the random calibration batches")
	budget := byteSize(defaultCalibrationBudget)
	fs.Var(&budget, "calibration-budget", "bytes the random calibration batches may take in all (K, M, G suffixes; 0 means the default)")
	fs.StringVar(&c.out, "o", "", "write the quantized program to this .pt2 file")
	fs.StringVar(&c.dot, "dot", "", "write the quantized graph as Graphviz DOT to this file")
	noProgress := fs.Bool("no-progress", false, "never draw the progress bar")
	fs.BoolVar(&c.allowOpaque, "allow-opaque", false, "read operators the registry does not know")
	fs.BoolVar(&c.byTarget, "annotate-by-target", false, "quantize every cat and adaptive_avg_pool2d (torchao finds them through source partitions)")
	fs.BoolVar(&c.ownChains, "own-activation-chains", false, "int4-groupwise: give each linear its own activation chain, so every linear is rewritten")
	c.qopts.register(fs)
	fs.BoolVar(&c.force, "force", false, "run an input that fails verification, and write -o even when the result fails it (with a warning)")
	if name == "report" {
		fs.Lookup("o").Usage = "write the HTML report to this file (default " + defaultReportFile + ")"
	}
	fs.BoolVar(&c.fromQAT, "from-qat", false, "FILE is a QAT program PyTorch trained: convert it as convert-qat does")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return nil, err
	}
	if err := wantArgs(pos, 0, 1, "FILE"); err != nil {
		return nil, err
	}
	if err := checkFromQAT(c, fs, pos); err != nil {
		return nil, err
	}
	if len(pos) == 1 {
		c.file = pos[0]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["calibration"] && set["calibration-data"] {
		return nil, usagef("--calibration and --calibration-data are exclusive")
	}
	if c.evalData != "" && c.holdBack != 0 {
		return nil, usagef("--eval-data and --hold-back are exclusive")
	}
	if c.noCompare && (c.evalData != "" || c.holdBack != 0) {
		return nil, usagef("--no-compare measures nothing: it takes neither --eval-data nor --hold-back")
	}
	if c.holdBack < 0 {
		return nil, usagef("--hold-back %d: want 0 or more batches", c.holdBack)
	}
	if c.calibration < 1 {
		return nil, usagef("--calibration %d: want at least 1 batch", c.calibration)
	}
	if err := checkQuantizerFlags(c, set); err != nil {
		return nil, err
	}
	c.progress = !*noProgress
	c.calibBudget = int64(budget)
	return c, nil
}

// makeQuantizer returns the quantizer named by the --quantizer flag.
// The XNNPACK quantizer takes --annotate-by-target, the int4 one
// --own-activation-chains.
func makeQuantizer(c *runConfig) (convert.Quantizer, error) {
	if q, ok, err := makeListedQuantizer(c); ok {
		return q, err
	}
	name := c.quantizer
	switch {
	case name == "xnnpack-static", name == "xnnpack-dynamic":
		o := convert.DefaultSymmetricConfigOptions()
		o.PerChannel = !c.qopts.perTensor
		o.Dynamic = name == "xnnpack-dynamic"
		q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(o))
		q.AnnotateByTarget = c.byTarget
		return q, nil
	case strings.HasPrefix(name, "int4-groupwise:"):
		gs := strings.TrimPrefix(name, "int4-groupwise:")
		g, err := strconv.Atoi(gs)
		if err != nil || g <= 0 {
			return nil, fmt.Errorf("--quantizer %s: group size %q, want a positive integer", name, gs)
		}
		return convert.Int4GroupwiseQuantizer{GroupSize: g, OwnActivationChains: c.ownChains}, nil
	case name == "x86-inductor-static", name == "x86-inductor-dynamic":
		return x86InductorQuantizer(name == "x86-inductor-dynamic")
	}
	return nil, fmt.Errorf("--quantizer %q: want xnnpack-static, xnnpack-dynamic or int4-groupwise:G (or x86-inductor-static, x86-inductor-dynamic, embedding, or names joined by +: embedding+xnnpack-static)", name)
}

// cmdRun is "fxquant run": import, prepare, calibrate, convert, optional
// reference representation, verify, summary, and the files asked for.
func cmdRun(e *env, args []string) error {
	c, err := parseRunFlags(e, args)
	if err != nil {
		return err
	}
	if c.fromQAT {
		return runFromQAT(e, c)
	}
	if err := checkOutputs(c); err != nil {
		return err
	}
	res, err := runPipeline(c, e.stderr)
	if err != nil {
		return err
	}
	res.writeSummary(e.stdout)
	if err := writeDot(e, c.dot, res.quant); err != nil {
		return err
	}
	if c.out != "" {
		switch {
		case res.verifyErr != nil && !c.force:
			fmt.Fprintf(e.stderr, "fxquant run: not writing %s: the quantized graph fails verification (--force writes it anyway)\n", c.out)
		case res.verifyErr != nil:
			fmt.Fprintf(e.stderr, "fxquant run: warning: writing %s although the quantized graph fails verification (--force)\n", c.out)
			fallthrough
		default:
			if err := writeProgram(res, c.out); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "wrote %s\n", c.out)
		}
	}
	if res.verifyErr != nil {
		return &exitError{code: exitFail}
	}
	return nil
}

// runResult is what the pipeline produced.
type runResult struct {
	cfg        *runConfig
	inputName  string
	program    *pt2.Program   // the float program as read
	float      *fxgraph.Graph // the float program, unlifted
	quant      *fxgraph.Graph // the converted graph
	calibDesc  string
	batches    int
	verifyErr  error
	sqnrErr    error
	inputSpecs []inputSpec
	// The per-node comparison (eval.go).
	cmp              *numdebug.Comparison
	evalDesc         string
	nothingQuantized bool
}

// runPipeline runs the whole flow; progress goes to stderr on a terminal.
func runPipeline(c *runConfig, stderr io.Writer) (*runResult, error) {
	defer startHeapAt(startingHeap)()
	in, err := loadProgram(c.file, c.allowOpaque)
	if err != nil {
		return nil, err
	}
	q, err := makeQuantizer(c)
	if err != nil {
		return nil, err
	}
	res := &runResult{cfg: c, inputName: in.name, program: in.program}
	p := in.program
	defer lowGCFor(p)()
	if err := verifyInput(in, c.force, c.allowOpaque, stderr); err != nil {
		return nil, err
	}

	// Unlift: parameters, buffers and constants become get_attr nodes, as
	// ExportedProgram.module() gives them to prepare_pt2e. run quantizes a
	// forward program with numeric user inputs and writes it back with the
	// float signature, so constant inputs, parameter mutations and loss
	// outputs are refused first.
	var buffers []string
	for _, s := range p.Signature.Inputs {
		switch s.Kind {
		case pt2.Buffer:
			buffers = append(buffers, s.Target)
		case pt2.ConstantInput:
			return nil, fmt.Errorf("%s: input %q is a constant input, which run does not support", in.name, s.Name)
		}
	}
	for _, s := range p.Signature.Outputs {
		switch s.Kind {
		case pt2.ParameterMutation, pt2.LossOutput:
			return nil, fmt.Errorf("%s: output %q is a %s, which run does not support", in.name, s.Name, s.Kind)
		}
	}
	fg, err := p.Unlifted()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	res.float = fg
	specs, err := userInputs(fg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	res.inputSpecs = specs
	if c.qopts.config != "" {
		warnUnmatchedModules(q, fg, stderr)
	}

	// Calibration batches.
	var batches [][]*tensor.Tensor
	if c.calibData != "" {
		if batches, err = loadBatches(c.calibData, specs); err != nil {
			return nil, err
		}
		if err := checkFinite(c.calibData, batches, specs); err != nil {
			return nil, err
		}
		res.calibDesc = fmt.Sprintf("%d batches from %s", len(batches), c.calibData)
	} else {
		if batches, err = randomBatchesWithin(specs, c.calibration, c.seed, c.calibBudget); err != nil {
			return nil, fmt.Errorf("%s: random calibration: %w", in.name, err)
		}
		res.calibDesc = fmt.Sprintf("%d random batch%s (seed %d)", len(batches), pluralES(len(batches)), c.seed)
	}
	batches, eval, calDesc, evalDesc, err := splitEval(c, specs, batches)
	if err != nil {
		return nil, err
	}
	if calDesc != "" {
		res.calibDesc = calDesc
	}
	res.evalDesc = evalDesc
	res.batches = len(batches)

	// Prepare, calibrate, convert, with numeric debug handles on the
	// float graph's nodes so that every node can be compared.
	numdebug.GenerateHandles(fg)
	qg, _ := fg.Clone()
	if err := convert.PrepareWithOptions(qg, q, convert.PrepareOptions{Buffers: buffers}); err != nil {
		return nil, stageError(in.name, "prepare", err)
	}
	bar := newProgressBar(stderr, "calibrating", c.progress)
	if err := convert.Calibrate(qg, batches, bar.update); err != nil {
		return nil, stageError(in.name, "calibrate", err)
	}
	if c.onCalibrated != nil {
		c.onCalibrated(qg)
	}
	if err := convert.Convert(qg, c.qopts.convertOptions(convert.ConvertOptions{ReferenceRepresentation: c.reference, Buffers: buffers})); err != nil {
		return nil, stageError(in.name, "convert", err)
	}
	res.quant = qg
	// Convert types the nodes it creates; this catches any it could not,
	// since the written program needs a type on every value. A node left
	// untyped is reported by -o (pt2.WithGraph names it).
	fxgraph.InferMissingTypes(qg, nil)
	res.verifyErr = verifyConverted(qg)

	// Float vs quantized, node by node, on the eval batches.
	res.measure(eval, stderr)
	return res, nil
}

// verifyConverted verifies run's converted graph; tests replace it to
// make a run's result fail verification.
var verifyConverted = func(g *fxgraph.Graph) error {
	return fxgraph.Verify(g, fxgraph.VerifyOptions{})
}

// stageError names the input and the pipeline stage of err, unless the
// stage's package already names it ("calibrate: batch 0: ...").
func stageError(file, stage string, err error) error {
	if strings.HasPrefix(err.Error(), stage+":") {
		return fmt.Errorf("%s: %w", file, err)
	}
	return fmt.Errorf("%s: %s: %w", file, stage, err)
}

// loadProgram reads the program for run: the file, or the embedded model.
// allowOpaque reads operators the registry does not know.
func loadProgram(file string, allowOpaque bool) (*input, error) {
	var in *input
	var err error
	if file == "" {
		in, err = loadBytes(embeddedName+".pt2", embeddedModel, false)
		if in != nil {
			in.name = embeddedName
		}
	} else {
		in, err = loadFile(file, allowOpaque)
	}
	if err != nil {
		return nil, err
	}
	if in.program == nil {
		return nil, fmt.Errorf("%s: run needs a program with weights (.pt2), not a bare graph", in.name)
	}
	return in, nil
}

// opCount is one row of the node table.
type opCount struct {
	key           string
	before, after int
}

// countOps counts nodes by opcode, and call_function nodes by target.
func countOps(g *fxgraph.Graph) map[string]int {
	m := map[string]int{}
	for n := range g.All() {
		k := n.Op().String()
		if n.Op() == fxgraph.CallFunction || n.Op() == fxgraph.CallModule {
			k += " " + targetString(n)
		}
		m[k]++
	}
	return m
}

// opRank orders the table: placeholders, attributes, calls, output.
func opRank(key string) int {
	op, _, _ := strings.Cut(key, " ")
	switch op {
	case "placeholder":
		return 0
	case "get_attr":
		return 1
	case "output":
		return 9
	}
	return 5
}

// qdqCounts counts quantize, dequantize and choose_qparams calls.
func qdqCounts(g *fxgraph.Graph) (q, dq, choose int) {
	for n := range g.All() {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		p, ok := ops.PacketOf(n.Target())
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(p.Name, "quantize_"):
			q++
		case strings.HasPrefix(p.Name, "dequantize_"):
			dq++
		case strings.HasPrefix(p.Name, "choose_qparams"):
			choose++
		}
	}
	return q, dq, choose
}

// inputsDesc lists the user inputs with their types, comma-separated.
func (r *runResult) inputsDesc() string {
	ins := make([]string, len(r.inputSpecs))
	for i, s := range r.inputSpecs {
		ins[i] = s.String()
	}
	return strings.Join(ins, ", ")
}

// writeSummary prints the report of a run: its settings, a blank line,
// its results. Everything but the SQNR value is deterministic for a given
// input and flags.
func (r *runResult) writeSummary(w io.Writer) {
	r.writeSettings(w)
	fmt.Fprintln(w)
	r.writeResults(w)
}

// writeSettings prints the summary's first part: the input and the flags.
func (r *runResult) writeSettings(w io.Writer) {
	fmt.Fprintf(w, "input:       %s\n", r.inputName)
	fmt.Fprintf(w, "user inputs: %s\n", r.inputsDesc())
	fmt.Fprintf(w, "quantizer:   %s\n", r.cfg.quantizerDesc())
	fmt.Fprintf(w, "calibration: %s\n", r.calibDesc)
	rep := "no"
	if r.cfg.reference {
		rep = "yes"
	}
	fmt.Fprintf(w, "reference:   %s\n", rep)
}

// writeResults prints the summary's second part: node counts, the
// verifier's verdict and the SQNR lines.
func (r *runResult) writeResults(w io.Writer) {
	before, after := countOps(r.float), countOps(r.quant)
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	var rows []opCount
	for k := range keys {
		rows = append(rows, opCount{k, before[k], after[k]})
	}
	slices.SortFunc(rows, func(a, b opCount) int {
		if d := opRank(a.key) - opRank(b.key); d != 0 {
			return d
		}
		return strings.Compare(a.key, b.key)
	})
	width := len("nodes by op")
	for _, row := range rows {
		width = max(width, len(row.key))
	}
	fmt.Fprintf(w, "%-*s  %6s  %6s\n", width, "nodes by op", "before", "after")
	for _, row := range rows {
		fmt.Fprintf(w, "%-*s  %6d  %6d\n", width, row.key, row.before, row.after)
	}
	fmt.Fprintf(w, "%-*s  %6d  %6d\n", width, "total", r.float.Len(), r.quant.Len())

	q, dq, ch := qdqCounts(r.quant)
	fmt.Fprintf(w, "\nq/dq:        %d quantize, %d dequantize, %d choose_qparams\n", q, dq, ch)
	if r.verifyErr == nil {
		fmt.Fprintf(w, "verifier:    ok\n")
	} else {
		problems := fxgraph.VerifyErrors(r.verifyErr)
		fmt.Fprintf(w, "verifier:    %d problem%s\n", max(len(problems), 1), plural(max(len(problems), 1)))
		if len(problems) == 0 {
			fmt.Fprintf(w, "  %v\n", r.verifyErr)
		}
		for _, p := range problems {
			fmt.Fprintf(w, "  %v\n", p)
		}
	}
	r.writeMeasure(w)
}

// writeDot writes --dot's file, the quantized graph as Graphviz DOT, when
// path is set.
func writeDot(e *env, path string, g *fxgraph.Graph) error {
	if path == "" {
		return nil
	}
	if err := atomicfile.WriteFile(path, []byte(fxgraph.DOT(g)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", path)
	return nil
}

// writeProgram writes the converted graph as a PT2 archive that keeps the
// float program's signature, as torch.export.export of the converted
// module followed by torch.export.save does (compare the fixtures'
// <m>.static.pt2): the same user inputs and as many user outputs, the
// float program's module call graph (so in_spec and out_spec are
// unchanged) and its example inputs; the float program's parameters,
// buffers and constants keep their kind and placeholder name (unused ones
// included, as torch.export keeps p_fc1_weight when convert folded it);
// the tensors convert registered (_frozen_param*, _scale_*, _zero_point_*)
// become persistent buffers b_<name>. The archive streams into the file
// (internal/atomicfile: a failure leaves an existing file as it was),
// without a copy of the whole archive in memory; it is not read back
// here: the round trip is the tests' job (TestWrittenProgramReadsBack).
func writeProgram(r *runResult, out string) error {
	p, err := r.program.WithGraph(r.quant)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	return atomicfile.Write(out, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := p.WriteArchive(bw, nil); err != nil {
			return err
		}
		return bw.Flush()
	})
}
