package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// checkOutputs refuses a run whose -o or --dot names one of its input
// files (the program or the calibration data) under any spelling:
// relative or absolute, through a symbolic link or as another hard link.
// Files are compared with os.SameFile; an output that does not exist yet
// cannot be an input. -o and --dot naming the same file are refused too.
func checkOutputs(c *runConfig) error {
	type named struct{ flag, path string }
	var ins, outs []named
	if c.file != "" {
		ins = append(ins, named{"FILE", c.file})
	}
	if c.calibData != "" {
		ins = append(ins, named{"--calibration-data", c.calibData})
	}
	if c.out != "" {
		outs = append(outs, named{"-o", c.out})
	}
	if c.dot != "" {
		outs = append(outs, named{"--dot", c.dot})
	}
	for i, o := range outs {
		ofi, err := os.Stat(o.path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// Not there yet; two outputs may still name one new file.
				for _, p := range outs[:i] {
					if samePath(p.path, o.path) {
						return usagef("%s %s and %s %s name the same file", p.flag, p.path, o.flag, o.path)
					}
				}
				continue
			}
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		if !ofi.Mode().IsRegular() {
			return usagef("%s %s: not a regular file", o.flag, o.path)
		}
		for _, in := range ins {
			ifi, err := os.Stat(in.path)
			if err == nil && os.SameFile(ifi, ofi) {
				return usagef("%s %s is the input file %s (%s); refusing to overwrite an input", o.flag, o.path, in.path, in.flag)
			}
		}
		for _, p := range outs[:i] {
			if pfi, err := os.Stat(p.path); err == nil && os.SameFile(pfi, ofi) {
				return usagef("%s %s and %s %s name the same file", p.flag, p.path, o.flag, o.path)
			}
		}
	}
	return nil
}

// samePath reports whether two paths of files that do not exist yet name
// the same file: equal once made absolute and cleaned, with their
// directories' symbolic links resolved.
func samePath(a, b string) bool {
	abs := func(p string) string {
		q, err := filepath.Abs(p)
		if err != nil {
			return filepath.Clean(p)
		}
		if d, err := filepath.EvalSymlinks(filepath.Dir(q)); err == nil {
			q = filepath.Join(d, filepath.Base(q))
		}
		return q
	}
	return abs(a) == abs(b)
}

// verifyOptionsFor is how print, verify and run check an input: an
// exported program types every value, and its lifted parameters, buffers
// and constants are passed by value so that their qparams are checked.
func verifyOptionsFor(in *input, allowOpaque bool) fxgraph.VerifyOptions {
	opts := fxgraph.VerifyOptions{AllowOpaque: allowOpaque}
	if in.program != nil {
		opts.RequireTypes = true
		opts.Lifted = in.program.LiftedAttrs()
	}
	return opts
}

// verifyInput checks run's input program before anything is computed
// from it (allowOpaque: unknown operators are not problems). A broken
// input is refused, listing its problems; with force
// the problems are printed as a warning and the run goes on.
func verifyInput(in *input, force, allowOpaque bool, stderr io.Writer) error {
	verr := fxgraph.Verify(in.graph, verifyOptionsFor(in, allowOpaque))
	if verr == nil {
		return nil
	}
	problems := fxgraph.VerifyErrors(verr)
	if !force {
		msg := fmt.Sprintf("%s: the input fails verification (--force runs it anyway):", in.name)
		if len(problems) == 0 {
			return fmt.Errorf("%s\n  %v", msg, verr)
		}
		for _, p := range problems {
			msg += "\n  " + p.Error()
		}
		return errors.New(msg)
	}
	if stderr == nil {
		return nil
	}
	fmt.Fprintf(stderr, "fxquant run: warning: %s fails verification; running it anyway (--force):\n", in.name)
	if len(problems) == 0 {
		fmt.Fprintf(stderr, "  %v\n", verr)
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "  %v\n", p)
	}
	return nil
}

// knownTargets refuses a text graph that calls an operator the registry
// does not know, naming the first such node; --allow-opaque reads it.
func knownTargets(g *fxgraph.Graph) error {
	reg := ops.Default()
	for n := range g.All() {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		known := true
		switch t := n.Target().(type) {
		case ops.Overload:
			_, known = reg.Op(t)
		case ops.Packet:
			known = len(reg.Overloads(t)) > 0
		case ops.Callable:
			known = reg.Known(t)
		}
		if !known {
			return fmt.Errorf("node %q calls %s, which is not in the op registry (--allow-opaque reads it)", n.Name(), n.Target())
		}
	}
	return nil
}
