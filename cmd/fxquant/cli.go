package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // an error, verifier problems, or a non-empty diff
	exitUsage = 2 // unknown command or flag, missing or extra arguments
)

// env is what a subcommand gets from run: its streams.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// command is one subcommand: its name and its body.
type command struct {
	name string
	run  func(e *env, args []string) error
}

// commands lists the subcommands; "help" is handled by run itself.
var commands = []command{
	{"run", cmdRun},
	{"print", cmdPrint},
	{"verify", cmdVerify},
	{"diff", cmdDiff},
	{"dot", cmdDot},
	{"match", cmdMatch},
	{"report", cmdReport},
	{"prepare-qat", cmdPrepareQAT},
	{"convert-qat", cmdConvertQAT},
}

// synopses holds each subcommand's arguments for its usage line.
var synopses = map[string]string{
	"run":         "[FILE] [--quantizer Q] [--reference] [--calibration N | --calibration-data FILE] [--calibration-budget SIZE] [--eval-data FILE | --hold-back K | --no-compare] [-o OUT.pt2] [--dot OUT.dot] [--force] [--allow-opaque] [--annotate-by-target] [--own-activation-chains] [--quantizer-config FILE] [--per-tensor] [--no-fold] [--packet-affine-ops] [--from-qat]",
	"print":       "[--allow-opaque] FILE",
	"verify":      "[--allow-opaque] FILE",
	"diff":        "[--allow-opaque] A B",
	"dot":         "[--allow-opaque] FILE",
	"match":       "--pattern PATTERN FILE [--match-output] [--match-placeholder] [--keep-overlapping] [--ignore-literals]",
	"report":      "[FILE] [run flags] [-o REPORT.html]",
	"prepare-qat": "FILE -o OUT.pt2 [--per-channel] [--presize=false] [--force] [--allow-opaque]",
	"convert-qat": "FILE [-o OUT.pt2] [--reference] [--force] [--allow-opaque]",
}

const usageText = `fxquant: PT2E quantization graphs without Python

usage:
  fxquant run [FILE] [flags]    import, prepare, calibrate, convert, verify; print a summary
  fxquant print FILE            print the graph in fxquant's golden text format
  fxquant verify FILE           verify the graph; exit 1 listing every problem
  fxquant diff A B              structural diff of two graphs; exit 1 when they differ
  fxquant dot FILE              the graph as deterministic Graphviz DOT
  fxquant match --pattern PATTERN FILE [flags]
                                print each match of PATTERN's graph in FILE, then the count
  fxquant report [FILE] [run flags] [-o REPORT.html]
                                run, then write an HTML page (default report.html): both
                                graphs side by side coloured by per-node SQNR, q/dq qparams,
                                a sortable per-node table, activation histograms
  fxquant prepare-qat FILE -o OUT.pt2 [--quantizer xnnpack|x86-inductor] [--per-channel] [--presize=false]
                                prepare_qat_pt2e (XNNPACK or X86Inductor, is_qat=True) on a program exported
                                in train mode; PyTorch loads OUT.pt2 and trains it. With
                                --per-channel the fake quantizers' buffers are presized to
                                the channel count (--presize=false: torchao's empty buffers,
                                which a loaded program cannot resize, so it cannot train)
  fxquant convert-qat FILE [-o OUT.pt2] [--reference]
                                move_exported_model_to_eval + convert_pt2e on a QAT program
                                PyTorch trained and saved (torch.export.save)
  fxquant help                  this text

FILE is a .pt2 archive, an export JSON program (.json) or a graph in the golden
text format (.txt; a PyTorch fixture listing is read too). Without FILE, run
uses the MLP program embedded in the binary.

run flags:
  --quantizer Q            xnnpack-static (default), xnnpack-dynamic, x86-inductor-static,
                           x86-inductor-dynamic, int4-groupwise:G or embedding; A+B composes
                           quantizers in order (embedding+xnnpack-static)
  --quantizer-config FILE  the quantizers of a JSON config file, which says what torchao's
                           set_global/set_module_name/set_module_type/set_operator_type say
                           (format: cmd/fxquant/testdata/quantizer-config.json)
  --per-tensor             xnnpack quantizers: weights per tensor, not per output channel
  --no-fold                keep the weight quantize nodes (fold_quantize=False)
  --packet-affine-ops      affine observers insert the torchao.*_affine packets, as
                           torchao's pre-change convert did
  --reference              rewrite to the reference representation after convert
  --calibration N          calibrate on N random batches with a fixed seed (default 4)
  --calibration-data FILE  calibrate on the batches in FILE: a .npy array whose first
                           axis is the batch, or a JSON list of tensors
  --calibration-budget SIZE
                           bytes the random calibration batches may take in all,
                           checked before any is drawn (default 1GiB; K, M, G, T
                           suffixes are powers of 1024)
  --seed S                 seed of the random calibration batches (default 1)
  --eval-data FILE         measure the SQNR (outputs and every node) on the batches in
                           FILE, same formats as --calibration-data (an outputs file
                           gives its inputs.eval). Default: 2 more random batches of
                           another seed, or with --calibration-data the calibration
                           batches themselves (optimistic)
  --hold-back K            measure on the last K calibration batches, which then do
                           not calibrate
  --no-compare             skip the float vs quantized comparison (no SQNR): only
                           quantize and write, as torchao's flow does
  -o OUT.pt2               write the quantized program as a PT2 archive
  --dot OUT.dot            write the quantized graph as Graphviz DOT
  --no-progress            never draw the progress bar
  --annotate-by-target     quantize every cat and adaptive_avg_pool2d; torchao, on torch
                           2.14 exports, finds only nn.AdaptiveAvgPool2d module calls
  --own-activation-chains  int4-groupwise: one activation chain per linear (torchao shares
                           one between linears reading the same tensor), so --reference
                           rewrites every linear to reference_dqlinear_int4
  --force                  run an input that fails verification, and write -o even
                           when the quantized graph fails it (both with a warning)
  --from-qat               FILE is a QAT program PyTorch trained (from prepare-qat):
                           convert it as convert-qat does (-o, --reference, --force)

run verifies its input first and refuses a broken one. -o and --dot are
written atomically (a temporary file renamed over the target), never over an
input file, and -o not at all when the quantized graph fails verification.

match flags:
  --pattern PATTERN        the pattern program (.pt2, .json or .txt); required
  --match-output           let the pattern's output node match
  --match-placeholder      let the pattern's placeholders match only placeholders
  --keep-overlapping       keep matches that share nodes
  --ignore-literals        let literal arguments of the pattern match anything

report takes run's flags; its -o names the HTML page.

run, print, verify, diff, dot, match and report accept --allow-opaque: read operators the
registry does not know instead of failing.

exit status: 0 success, 1 failure (or problems found, or graphs differ), 2 bad usage
`

// usageError marks an error in the command line; run exits with exitUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError carries an exit status with a message already printed (or none),
// for results that are not errors of the program: a diff, verifier problems.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// run is the whole command: it dispatches args to a subcommand and returns
// the process exit status. It never panics: a panic in a subcommand is
// reported on stderr as an internal error.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "fxquant: internal error: %v\n", r)
			if os.Getenv("FXQUANT_TRACE") != "" {
				stderr.Write(debug.Stack())
			}
			code = exitFail
		}
	}()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		err := c.run(e, args[1:])
		return report(stderr, name, err)
	}
	fmt.Fprintf(stderr, "fxquant: unknown command %q; run \"fxquant help\" for the list\n", name)
	return exitUsage
}

// report prints err (if any) and maps it to an exit status.
func report(stderr io.Writer, name string, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "fxquant %s: %v\n", name, err)
		fmt.Fprintf(stderr, "usage: fxquant %s %s\n", name, synopsis(name))
		return exitUsage
	}
	fmt.Fprintf(stderr, "fxquant %s: %v\n", name, err)
	return exitFail
}

func synopsis(name string) string { return synopses[name] }

// parseFlags parses args with fs, allowing flags after positional
// arguments ("fxquant match FILE --pattern P"), and returns the positional
// arguments in order. "--" ends flag parsing. Flag errors are usage errors;
// -h prints the subcommand's usage to stdout and returns flag.ErrHelp.
func parseFlags(e *env, fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(e.stdout, "usage: fxquant %s %s\n", fs.Name(), synopsis(fs.Name()))
				fs.SetOutput(e.stdout)
				fs.PrintDefaults()
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at the first non-flag or after "--".
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(pos []string, min, max int, what string) error {
	if len(pos) < min {
		return usagef("missing %s", what)
	}
	if max >= 0 && len(pos) > max {
		return usagef("unexpected argument %q", pos[max])
	}
	return nil
}
