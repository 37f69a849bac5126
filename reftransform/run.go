package reftransform

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
)

// PassName is the name of [Pass].
const PassName = "reference_representation_rewrite"

// Pass returns [Run] as a pipeline pass.
func Pass() fxgraph.Pass {
	return fxgraph.Pass{Name: PassName, Run: func(ctx context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		if err := ctx.Err(); err != nil {
			return fxgraph.Result{}, err
		}
		return Run(g)
	}}
}

// Run is torchao's reference_representation_rewrite (torchao-pt2e.md 6.1):
// it runs [RemoveTensorOverloadForQDQOps], then each entry of [Entries] in
// order with match.ReplacePatternWithFilters, then each applied
// replacement's Post hook. Result.Stats counts the retargeted nodes
// ("retargeted") and the matches replaced per entry (by entry name);
// Result.Changed is false, and g is untouched, when nothing matched and no
// target needed retargeting.
//
// Run is all or nothing: its edits run in a transaction on g (see
// [fxgraph.Graph.Begin]), so a replacement or hook that fails returns an
// error naming the entry and leaves g exactly as it was, retargeting and
// earlier entries undone and the namespace restored.
func Run(g *fxgraph.Graph) (res fxgraph.Result, err error) {
	steps.Store(0)
	err = g.Atomic(func() error {
		res, err = run(g)
		return err
	})
	return res, err
}

// run is Run, inside its transaction.
func run(g *fxgraph.Graph) (fxgraph.Result, error) {
	res, err := RemoveTensorOverloadForQDQOps(g)
	if err != nil {
		return res, err
	}
	es, err := Entries()
	if err != nil {
		return res, err
	}
	for _, e := range es {
		n, err := apply(g, e)
		if err != nil {
			return res, err
		}
		if n > 0 {
			res.Stats[e.Name] = n
			res.Changed = true
		}
	}
	return res, nil
}

// apply runs one entry on g and returns the number of replacements.
func apply(g *fxgraph.Graph, e Entry) (int, error) {
	if err := step(); err != nil {
		return 0, fmt.Errorf("reftransform: entry %s: %w", e.Name, err)
	}
	done, err := match.ReplacePatternWithFilters(g, e.Pattern, e.Replace, e.Filters, e.IgnoreLiterals)
	if err != nil {
		return 0, fmt.Errorf("reftransform: entry %s: %w", e.Name, err)
	}
	if e.Post != nil {
		for _, r := range done {
			err := step()
			if err == nil {
				err = e.Post(g, r)
			}
			if err != nil {
				return len(done), fmt.Errorf("reftransform: entry %s: %w", e.Name, err)
			}
		}
	}
	return len(done), nil
}

// steps counts the steps of a run (an entry applied, a hook called, a
// node retargeted); a test sets failAt to inject a failure at one
// (export_test.go). Tests that do so do not run in parallel.
var (
	steps  atomic.Int64 // atomic: calls on different graphs may run at once
	failAt int
)

// errInjected is the failure a test injects.
var errInjected = errors.New("injected failure")

// step counts one step and returns the injected failure at failAt.
func step() error {
	k := steps.Add(1)
	if failAt > 0 && k == int64(failAt) {
		return fmt.Errorf("%w at step %d", errInjected, k)
	}
	return nil
}

// RunEntry applies the entry called name alone (no retargeting first) and
// returns the number of replacements; it is for tests and tools that want
// one rewrite. An unknown name is an error.
func RunEntry(g *fxgraph.Graph, name string) (int, error) {
	es, err := Entries()
	if err != nil {
		return 0, err
	}
	for _, e := range es {
		if e.Name == name {
			steps.Store(0)
			var n int
			err := g.Atomic(func() error {
				n, err = apply(g, e)
				return err
			})
			return n, err
		}
	}
	return 0, fmt.Errorf("reftransform: no entry %q", name)
}
