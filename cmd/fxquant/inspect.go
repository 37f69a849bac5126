package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/fxquant/fxquant/fxgraph"
)

// readOne parses the flags of a one-file subcommand (print, verify, dot)
// and reads the file.
func readOne(e *env, name string, args []string) (*input, bool, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	allowOpaque := fs.Bool("allow-opaque", false, "read operators the registry does not know")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return nil, false, err
	}
	if err := wantArgs(pos, 1, 1, "FILE"); err != nil {
		return nil, false, err
	}
	in, err := loadFile(pos[0], *allowOpaque)
	return in, *allowOpaque, err
}

// cmdPrint prints a graph in the golden text format.
func cmdPrint(e *env, args []string) error {
	in, _, err := readOne(e, "print", args)
	if err != nil {
		return err
	}
	_, err = io.WriteString(e.stdout, fxgraph.Format(in.graph))
	return err
}

// cmdDot prints a graph as Graphviz DOT.
func cmdDot(e *env, args []string) error {
	in, _, err := readOne(e, "dot", args)
	if err != nil {
		return err
	}
	_, err = io.WriteString(e.stdout, fxgraph.DOT(in.graph))
	return err
}

// cmdVerify verifies a graph and lists every problem on stderr; it exits 1
// when there is one.
func cmdVerify(e *env, args []string) error {
	in, allowOpaque, err := readOne(e, "verify", args)
	if err != nil {
		return err
	}
	verr := fxgraph.Verify(in.graph, verifyOptionsFor(in, allowOpaque))
	if verr == nil {
		fmt.Fprintf(e.stdout, "%s: ok (%d nodes)\n", in.name, in.graph.Len())
		return nil
	}
	problems := fxgraph.VerifyErrors(verr)
	if len(problems) == 0 {
		fmt.Fprintf(e.stderr, "%s: %v\n", in.name, verr)
		return &exitError{code: exitFail}
	}
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "%s: %v\n", in.name, p)
	}
	fmt.Fprintf(e.stderr, "%s: %d problem%s\n", in.name, len(problems), plural(len(problems)))
	return &exitError{code: exitFail}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
