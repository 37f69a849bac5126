package fxgraph

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// Pass is one named graph transformation. Run edits g in place through
// Graph methods and returns what it did; an error means the pass failed,
// and a [Pipeline] then leaves the graph as it was before the pass.
type Pass struct {
	// Name identifies the pass in ordering constraints, records and
	// errors; it must be non-empty and unique in a pipeline.
	Name string
	// Run performs the pass on g (in a Pipeline, a clone of the graph).
	Run func(ctx context.Context, g *Graph) (Result, error)
}

// Result is what a pass reports: whether it changed the graph, counters
// such as "observers_inserted", and free-form notes for logs.
type Result struct {
	Changed bool           // whether the pass changed the graph
	Stats   map[string]int // counters by name, e.g. "observers_inserted"
	Notes   []string       // free-form notes for logs
}

// PassRun is a [Pipeline]'s record of one pass that ran.
type PassRun struct {
	Pass     string        // the pass's name
	Result   Result        // what the pass reported
	Duration time.Duration // wall time of the pass, verification excluded
}

// Pipeline runs passes in order, transactionally: each pass runs on a
// clone of the graph, the clone is verified, and only then does it replace
// the graph's contents. A pass that fails, panics or produces a graph the
// verifier rejects leaves the graph unchanged.
//
// Node pointers taken from the graph before [Pipeline.Run] refer to the
// replaced contents afterwards (they are marked erased); look nodes up
// again after running a pipeline.
type Pipeline struct {
	passes []Pass

	// NoVerify turns off the verifier between passes (it is on by default).
	NoVerify bool
	// Verify is passed to [Verify] before the first pass and after every
	// pass.
	Verify VerifyOptions
}

// NewPipeline checks passes and the ordering constraints and returns the
// pipeline. Each constraint {a, b} says that pass a must run before pass b
// when both are in the list (as the Go compiler's passOrder does). Pass
// names must be non-empty and unique and every pass needs a Run function.
func NewPipeline(passes []Pass, order [][2]string) (*Pipeline, error) {
	index := make(map[string]int, len(passes))
	var problems []string
	for i, p := range passes {
		switch {
		case p.Name == "":
			problems = append(problems, fmt.Sprintf("pass %d: want a name, got none", i))
		case p.Run == nil:
			problems = append(problems, fmt.Sprintf("pass %q: want a Run function, got nil", p.Name))
		}
		if j, dup := index[p.Name]; dup && p.Name != "" {
			problems = append(problems, fmt.Sprintf("pass %q: want unique names, got it at %d and %d", p.Name, j, i))
			continue
		}
		index[p.Name] = i
	}
	for _, c := range order {
		a, okA := index[c[0]]
		b, okB := index[c[1]]
		if okA && okB && a >= b {
			problems = append(problems, fmt.Sprintf("order: want pass %q before %q, got it at %d and %q at %d", c[0], c[1], a, c[1], b))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("fxgraph: new pipeline: %s", strings.Join(problems, "; "))
	}
	return &Pipeline{passes: append([]Pass(nil), passes...)}, nil
}

// Passes returns the pass names in run order.
func (p *Pipeline) Passes() []string {
	out := make([]string, len(p.passes))
	for i, ps := range p.passes {
		out[i] = ps.Name
	}
	return out
}

// Run runs the passes on g in order and returns a record per pass that
// completed. Unless NoVerify is set, g is verified first (a failure is a
// *[PassError] with an empty Pass) and after every pass. On the first
// failure Run stops and returns a *[PassError] or *[PassPanicError]
// naming the pass; g then holds the result of the passes before it. A
// cancelled ctx stops Run between passes with ctx.Err().
func (p *Pipeline) Run(ctx context.Context, g *Graph) ([]PassRun, error) {
	if !p.NoVerify {
		if err := Verify(g, p.Verify); err != nil {
			return nil, &PassError{Verify: true, Err: err}
		}
	}
	var runs []PassRun
	for _, ps := range p.passes {
		if err := ctx.Err(); err != nil {
			return runs, err
		}
		work, _ := g.Clone()
		start := time.Now()
		res, err := runPass(ctx, ps, work)
		d := time.Since(start)
		if err != nil {
			return runs, err
		}
		if !p.NoVerify {
			if err := Verify(work, p.Verify); err != nil {
				return runs, &PassError{Pass: ps.Name, Verify: true, Err: err}
			}
		}
		g.ReplaceWith(work)
		runs = append(runs, PassRun{Pass: ps.Name, Result: res, Duration: d})
	}
	return runs, nil
}

// runPass calls the pass, turning a panic into a *PassPanicError and an
// error into a *PassError.
func runPass(ctx context.Context, ps Pass, g *Graph) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PassPanicError{Pass: ps.Name, Value: r, Stack: debug.Stack()}
		}
	}()
	res, err = ps.Run(ctx, g)
	if err != nil {
		return res, &PassError{Pass: ps.Name, Err: err}
	}
	return res, nil
}
