package convert

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// CalibrateOptions configures [CalibrateWithOptions].
type CalibrateOptions struct {
	// Registry supplies the kernels; nil means ops.Default().
	Registry *ops.Registry
	// Progress, when non-nil, is called after each batch with the batch's
	// 0-based index and the count, in batch order, from one goroutine at a
	// time.
	Progress func(i, n int)
	// Workers is the number of batches run through the interpreter at
	// once: 0 means runtime.GOMAXPROCS(0), 1 runs them one after the
	// other. Each running batch holds its own activations, so peak memory
	// grows with Workers (the batches themselves are the caller's).
	Workers int
}

// CalibrateWithOptions is [Calibrate] with options. With more than one
// worker, batches run through the interpreter concurrently: an observer
// returns its input unchanged ([observers.Observer]), so no batch's values
// depend on another's, and every observer records the batches in batch
// order (batch b updates an observer only after batch b-1 did, through a
// turnstile per observer), so its statistics, and the qparams computed
// from them, are bit for bit those of a run on one core. A graph with a
// call_module node that is not an observer runs one batch at a time.
//
// On failure the error is the one a one-worker run reports (the first
// failing batch, named as Calibrate names it) and the batches before it
// have been recorded; with more than one worker, a later batch may also
// have been recorded by observers that come before the failing node.
func CalibrateWithOptions(g *fxgraph.Graph, batches [][]*tensor.Tensor, o CalibrateOptions) error {
	if err := checkBatches(g, batches); err != nil {
		return err
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(batches))
	var turns *observerTurns
	if workers > 1 {
		turns = newObserverTurns(g)
	}
	if turns == nil {
		for i, b := range batches {
			if _, err := interp.Run(g, b, interp.Options{Registry: o.Registry, Release: true}); err != nil {
				return fmt.Errorf("calibrate: batch %d: %w", i, observedError(g, err))
			}
			if o.Progress != nil {
				o.Progress(i, len(batches))
			}
		}
		return nil
	}
	return turns.run(g, batches, workers, o)
}

// errLaterBatch stops a batch after an earlier one failed.
var errLaterBatch = errors.New("an earlier batch failed")

// turnstile orders the calls of one observer: per calls a batch, call j
// of batch b is the (b*per + j)-th.
type turnstile struct {
	mu   sync.Mutex
	cond sync.Cond
	done int // calls made so far, all batches together
	per  int // call_module nodes calling this observer
}

// turn is a call_module node's place: its observer's turnstile and its
// index among that observer's nodes in program order.
type turn struct {
	ts *turnstile
	j  int
}

// observerTurns is the turnstiles of a graph's observers.
type observerTurns struct {
	node  map[*fxgraph.Node]turn
	all   []*turnstile
	first atomic.Int64 // lowest failed batch; len(batches) while none failed
}

// newObserverTurns gives every observer a turnstile, shared by the nodes
// that call the same observer (a shared quantization spec). It returns nil
// when a call_module node is not an observer, or an observer cannot be
// told apart by identity.
func newObserverTurns(g *fxgraph.Graph) *observerTurns {
	t := &observerTurns{node: map[*fxgraph.Node]turn{}}
	byObs := map[observers.Observer]*turnstile{}
	for n := range g.All() {
		if n.Op() != fxgraph.CallModule {
			continue
		}
		o, ok := isObserverNode(g, n)
		if !ok || !reflect.TypeOf(o).Comparable() {
			return nil
		}
		ts := byObs[o]
		if ts == nil {
			ts = &turnstile{}
			ts.cond.L = &ts.mu
			byObs[o] = ts
			t.all = append(t.all, ts)
		}
		t.node[n] = turn{ts, ts.per}
		ts.per++
	}
	return t
}

// fail records that batch b failed and wakes every waiting batch, so that
// those after it stop.
func (t *observerTurns) fail(b int) {
	for {
		cur := t.first.Load()
		if int64(b) >= cur || t.first.CompareAndSwap(cur, int64(b)) {
			break
		}
	}
	for _, ts := range t.all {
		ts.mu.Lock()
		ts.cond.Broadcast()
		ts.mu.Unlock()
	}
}

// call runs node n's observer m for batch b in its turn.
func (t *observerTurns) call(b int, n *fxgraph.Node, m fxgraph.Module, args []ops.Value) (ops.Value, error) {
	tn, ok := t.node[n]
	if !ok {
		return nil, fmt.Errorf("call_module node %q has no turnstile", n.Name())
	}
	ts := tn.ts
	want := b*ts.per + tn.j
	ts.mu.Lock()
	for ts.done != want {
		if int64(b) > t.first.Load() {
			ts.mu.Unlock()
			return nil, errLaterBatch
		}
		ts.cond.Wait()
	}
	ts.mu.Unlock()
	// Only this call may advance ts.done now: the next one waits for it.
	v, err := m.Forward(args)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	ts.done++
	ts.cond.Broadcast()
	ts.mu.Unlock()
	return v, nil
}

// run calibrates on workers goroutines, each taking the next batch in
// order: batch b starts only after batch b-1 started, so the batch every
// other waits on, directly or not, is always running.
func (t *observerTurns) run(g *fxgraph.Graph, batches [][]*tensor.Tensor, workers int, o CalibrateOptions) error {
	t.first.Store(int64(len(batches)))
	errs := make([]error, len(batches))
	var next atomic.Int64
	var pmu sync.Mutex
	finished := make([]bool, len(batches))
	reported := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				b := int(next.Add(1) - 1)
				if b >= len(batches) || int64(b) > t.first.Load() {
					return
				}
				_, err := interp.Run(g, batches[b], interp.Options{
					Registry: o.Registry,
					Release:  true,
					CallModule: func(n *fxgraph.Node, m fxgraph.Module, args []ops.Value) (ops.Value, error) {
						return t.call(b, n, m, args)
					},
				})
				if err != nil {
					errs[b] = err
					t.fail(b)
					continue
				}
				pmu.Lock()
				finished[b] = true
				for reported < len(batches) && finished[reported] {
					if o.Progress != nil {
						o.Progress(reported, len(batches))
					}
					reported++
				}
				pmu.Unlock()
			}
		})
	}
	wg.Wait()
	if f := int(t.first.Load()); f < len(batches) {
		return fmt.Errorf("calibrate: batch %d: %w", f, observedError(g, errs[f]))
	}
	return nil
}
