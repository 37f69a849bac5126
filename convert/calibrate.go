package convert

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Calibrate runs the prepared graph g on each batch in order (one tensor per
// placeholder, in placeholder order) through the interpreter, so that its
// observers record statistics in their Forward. progress, when non-nil, is
// called after each batch with the batch's 0-based index and the count.
// Batches run on runtime.GOMAXPROCS(0) goroutines while every observer
// records them in batch order, so the result is bit for bit a one-core
// run's (see [CalibrateWithOptions]).
//
// Every batch is checked against the placeholders' types before any is
// run: a batch with the wrong number of tensors, or a tensor whose dtype or
// shape differs from its placeholder's static type, is an error wrapping
// ErrBatch that names the batch and the placeholder, and no observer has
// seen anything. A placeholder of symbolic type (f32[s77, 16], from a
// program exported with torch.export.Dim) takes batches of any size within
// its symbols' ranges, and batches may differ in size; a size outside the
// range is an ErrBatch naming the placeholder, the dimension and the range
// (see interp.CheckSymbols). So is a floating-point input holding NaN or
// ±Inf, named down to the element: observers make no sense of them
// (PyTorch's MinMaxObserver turns them into NaN or infinite scales, and its
// HistogramObserver fails on NaN). Infinities the graph computes itself,
// such as a -inf attention mask, still reach the observers, which treat
// them as PyTorch's do. A failure while running names the node (an
// *interp.NodeError); when that node is an observer, the error also names
// the node it observes. The batches before it have been recorded.
func Calibrate(g *fxgraph.Graph, batches [][]*tensor.Tensor, progress func(i, n int)) error {
	return CalibrateWithRegistry(g, batches, progress, nil)
}

// CalibrateWithRegistry is Calibrate with the kernels of reg (nil means
// ops.Default()).
func CalibrateWithRegistry(g *fxgraph.Graph, batches [][]*tensor.Tensor, progress func(i, n int), reg *ops.Registry) error {
	return CalibrateWithOptions(g, batches, CalibrateOptions{Registry: reg, Progress: progress})
}

// checkBatches checks every batch against g's placeholders before any is
// run (see Calibrate).
func checkBatches(g *fxgraph.Graph, batches [][]*tensor.Tensor) error {
	phs := g.Placeholders()
	for i, b := range batches {
		if err := checkBatch(phs, b); err != nil {
			return fmt.Errorf("calibrate: batch %d: %w", i, err)
		}
		if _, err := interp.CheckSymbols(g, b); err != nil {
			return fmt.Errorf("calibrate: batch %d: %w: %w", i, ErrBatch, err)
		}
		if err := checkFinite(phs, b); err != nil {
			return fmt.Errorf("calibrate: batch %d: %w", i, err)
		}
	}
	return nil
}

func checkBatch(phs []*fxgraph.Node, b []*tensor.Tensor) error {
	if len(b) != len(phs) {
		return fmt.Errorf("%w: want %d input tensors (one per placeholder), got %d", ErrBatch, len(phs), len(b))
	}
	for j, ph := range phs {
		x := b[j]
		if x == nil {
			return fmt.Errorf("%w: placeholder %q: nil tensor", ErrBatch, ph.Name())
		}
		tt, ok := ph.Type().(ops.TensorType)
		if !ok {
			continue
		}
		if tt.DType() != x.DType() {
			return fmt.Errorf("%w: placeholder %q: want dtype %s, got %s", ErrBatch, ph.Name(), tt.DType(), x.DType())
		}
		if !tt.Static() {
			continue
		}
		want := make([]int, len(tt.Shape))
		for k, d := range tt.Shape {
			want[k] = int(d)
		}
		if !slices.Equal(want, x.Shape()) {
			return fmt.Errorf("%w: placeholder %q: want shape %v, got %v", ErrBatch, ph.Name(), want, x.Shape())
		}
	}
	return nil
}

// checkFinite refuses a floating-point input holding NaN or ±Inf, naming
// the placeholder and the first such element (flat index and position).
func checkFinite(phs []*fxgraph.Node, b []*tensor.Tensor) error {
	for j, ph := range phs {
		x := b[j]
		if !x.DType().IsFloat() {
			continue
		}
		vals, err := x.Float64s()
		if err != nil {
			return fmt.Errorf("%w: placeholder %q: %w", ErrBatch, ph.Name(), err)
		}
		for k, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: placeholder %q: element %d (index %v) is %v; calibration data must be finite",
					ErrBatch, ph.Name(), k, tensor.Unravel(k, x.Shape()), v)
			}
		}
	}
	return nil
}

// observedError adds to a run's failure at an observer node the node the
// observer watches, so that the message points at the value, not only at
// the observer that choked on it.
func observedError(g *fxgraph.Graph, err error) error {
	var ne *interp.NodeError
	if !errors.As(err, &ne) {
		return err
	}
	n, ok := g.NodeByName(ne.Node)
	if !ok {
		return err
	}
	if _, isObs := isObserverNode(g, n); !isObs {
		return err
	}
	in, ok := n.Arg(0).(*fxgraph.Node)
	if !ok || in == nil {
		return err
	}
	return fmt.Errorf("observer %q of node %q: %w", n.Name(), in.Name(), err)
}
