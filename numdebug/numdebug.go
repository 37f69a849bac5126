package numdebug

import (
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Result is the comparison of one numeric debug handle: the float node
// that holds it and the quantized graph's node that holds it last (the
// value a user of the handle sees), over every input batch.
type Result struct {
	// Handle is the numeric debug handle (node meta numeric_debug_handle).
	Handle int
	// FloatNode and QuantNode name the compared nodes in each graph.
	FloatNode, QuantNode string
	// Target is the float node's target ("aten.conv2d.default").
	Target string
	// SQNR is torchao's compute_sqnr of the quantized value against the
	// float one, in dB (+Inf when they are equal): 20 log10(‖q‖ / ‖q − f‖)
	// with the quantized value q as the signal, as torchao's
	// compare_results calls compute_sqnr(actual, ref). Over several batches
	// the norms run over every batch's elements together.
	SQNR float64
	// MaxAbsErr is the largest |float - quantized| over all elements.
	MaxAbsErr float64
	// Min and Max are the float value's range.
	Min, Max float64
	// Growth is how much SQNR the node loses over its worst input (dB;
	// positive means the node adds error). The inputs are the float
	// node's argument nodes that have a Result; inputs without error (or
	// none) count as +Inf dB, so a node that is the first to lose
	// precision has Growth +Inf, and a node without error has Growth 0.
	Growth float64
	// BatchSQNR is SQNR for each batch alone: torchao's per-call numbers
	// (NodeAccuracySummary.results[i].sqnr).
	BatchSQNR []float64
	// Numel is the number of elements compared per batch (the elements of
	// every tensor of a tuple value together).
	Numel int
	// Note explains a comparison that is not like for like, or is "":
	// when the float node's only user holds a handle that no quantized
	// node holds (prepare folded a batch norm into a convolution), the
	// quantized node computes that user's value too, and its SQNR
	// (torchao's number) measures the fold as well as quantization.
	Note string
}

// Comparison is the result of Compare: one Result per handle present in
// both graphs, in the float graph's node order.
type Comparison struct {
	Results []Result
	// WorstGrowth indexes Results: the node whose error grows most over
	// its inputs (-1 when there is none). A finite positive Growth wins
	// over +Inf (every first quantized node has +Inf); among +Inf ones,
	// the lowest SQNR; among equals, the first in graph order.
	WorstGrowth int
	// Batches is the number of input batches compared.
	Batches int
	// Output compares the values the two graphs return: every floating
	// point output together, by the same measures (Handle 0, FloatNode
	// and QuantNode "output"). It is nil when the graphs return no
	// floating point tensor.
	Output *Result
}

// Worst returns the indexes of Results of the k lowest SQNRs, lowest
// first (graph order among equal SQNRs); NaN sorts first, +Inf last.
func (c *Comparison) Worst(k int) []int {
	idx := make([]int, len(c.Results))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := c.Results[a].SQNR, c.Results[b].SQNR
		switch {
		case math.IsNaN(x) && math.IsNaN(y):
			return 0
		case math.IsNaN(x):
			return -1
		case math.IsNaN(y):
			return 1
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return idx[:min(k, len(idx))]
}

// accum gathers one handle's statistics over the batches.
type accum struct {
	sig, noise float64 // Σq², Σ(q-f)² over every batch
	maxAbs     float64
	min, max   float64
	batch      []float64
	numel      int
	nan        bool
}

// captured is a float value kept until the quantized graph reaches the
// node with the same handle: the tensors' elements as float32 (torchao
// compares .to(torch.float32) values) and their shapes.
type captured struct {
	data   [][]float32
	shapes [][]int
	ok     bool
}

// Compare runs float and quant on every batch and compares the values of
// the nodes that share a numeric debug handle, as torchao's
// prepare_for_propagation_comparison, extract_results_from_loggers and
// compare_results do: in each graph the value of a handle is that of the
// last node holding it in graph order (torchao's loggers are keyed by the
// handle, so the last one wins: the dequantize that follows a quantized
// node). Handles whose values are not tensors (or tuples and lists of
// tensors) are left out, as torchao's loss returns None for them.
//
// Each graph runs once per batch; the float graph's handled values of one
// batch are kept until the quantized graph has used them, and the
// statistics accumulate, so time is linear in the nodes and memory holds
// one batch's handled float values. Values whose shapes differ fail with
// an error naming the handle and both nodes.
func Compare(float, quant *fxgraph.Graph, batches [][]*tensor.Tensor) (*Comparison, error) {
	if float == nil || quant == nil {
		return nil, fmt.Errorf("numdebug: compare: nil graph")
	}
	// The node holding each handle last, in each graph.
	lastF, lastQ := lastHolders(float), lastHolders(quant)
	// The compared handles, in float graph order.
	var order []int
	fNode := map[*fxgraph.Node]int{}
	qNode := map[*fxgraph.Node]int{}
	for n := range float.All() {
		h := n.Meta.NumericDebugHandle
		if h == 0 || lastF[h] != n || lastQ[h] == nil {
			continue
		}
		fNode[n] = len(order)
		qNode[lastQ[h]] = len(order)
		order = append(order, h)
	}
	acc := make([]accum, len(order))
	for i := range acc {
		acc[i].min, acc[i].max = math.Inf(1), math.Inf(-1)
	}
	skip := make([]bool, len(order)) // not a tensor value
	seen := make([]bool, len(order)) // compared at least once
	vals := make([]captured, len(order))
	out := accum{min: math.Inf(1), max: math.Inf(-1)}
	outSeen := false
	for b, batch := range batches {
		for i := range vals {
			vals[i] = captured{}
		}
		fo, err := interp.Run(float, batch, interp.Options{Release: true, HookAnyOrder: true, Hook: func(n *fxgraph.Node, v ops.Value) error {
			i, ok := fNode[n]
			if !ok || skip[i] {
				return nil
			}
			vals[i] = capture(v, true)
			if !vals[i].ok {
				skip[i] = true
			}
			return nil
		}})
		if err != nil {
			return nil, fmt.Errorf("numdebug: float graph, batch %d: %w", b, err)
		}
		qo, err := interp.Run(quant, batch, interp.Options{Release: true, HookAnyOrder: true, Hook: func(n *fxgraph.Node, v ops.Value) error {
			i, ok := qNode[n]
			if !ok || skip[i] {
				return nil
			}
			fv := vals[i]
			vals[i] = captured{}
			qv := capture(v, false) // compared right here: no copy
			if !qv.ok {
				skip[i] = true
				return nil
			}
			fn := lastF[order[i]]
			if len(fv.shapes) != len(qv.shapes) {
				return fmt.Errorf("handle %d: float node %q gives %d tensors, quantized node %q %d", order[i], fn.Name(), len(fv.shapes), n.Name(), len(qv.shapes))
			}
			for k := range fv.shapes {
				if !slices.Equal(fv.shapes[k], qv.shapes[k]) {
					return fmt.Errorf("handle %d: cannot compare float node %q of shape %v with quantized node %q of shape %v", order[i], fn.Name(), fv.shapes[k], n.Name(), qv.shapes[k])
				}
			}
			acc[i].add(fv, qv)
			seen[i] = true
			return nil
		}})
		if err != nil {
			return nil, fmt.Errorf("numdebug: quantized graph, batch %d: %w", b, err)
		}
		ok, err := compareOutputs(&out, fo, qo)
		if err != nil {
			return nil, fmt.Errorf("numdebug: batch %d: %w", b, err)
		}
		outSeen = outSeen || ok
	}
	c := &Comparison{WorstGrowth: -1, Batches: len(batches)}
	resIdx := map[int]int{} // handle -> index in c.Results
	for i, h := range order {
		if skip[i] || !seen[i] {
			continue
		}
		fn := lastF[h]
		r := acc[i].result(h, fn.Name(), lastQ[h].Name(), fn.TargetName())
		if us := fn.Users(); len(us) == 1 {
			if hu := us[0].Meta.NumericDebugHandle; hu != 0 && lastQ[hu] == nil {
				r.Note = fmt.Sprintf("the quantized node also computes %s (handle %d), which is not in the quantized graph (folded into it): the SQNR measures the fold too", us[0].Name(), hu)
			}
		}
		resIdx[h] = len(c.Results)
		c.Results = append(c.Results, r)
	}
	for i := range c.Results {
		r := &c.Results[i]
		in := math.Inf(1)
		for _, a := range lastF[r.Handle].InputNodes() {
			if j, ok := resIdx[a.Meta.NumericDebugHandle]; ok && lastF[a.Meta.NumericDebugHandle] == a {
				in = min(in, c.Results[j].SQNR)
			}
		}
		switch {
		case math.IsNaN(r.SQNR) || math.IsNaN(in):
			r.Growth = math.NaN()
		case math.IsInf(r.SQNR, 1):
			r.Growth = 0
		case math.IsInf(in, 1):
			r.Growth = math.Inf(1)
		default:
			r.Growth = in - r.SQNR
		}
	}
	c.WorstGrowth = worstGrowth(c.Results)
	if outSeen {
		r := out.result(0, "output", "output", "output")
		c.Output = &r
	}
	return c, nil
}

// lastHolders maps each numeric debug handle of g to the last node, in
// graph order, that holds it.
func lastHolders(g *fxgraph.Graph) map[int]*fxgraph.Node {
	last := map[int]*fxgraph.Node{}
	for n := range g.All() {
		if h := n.Meta.NumericDebugHandle; h != 0 {
			last[h] = n
		}
	}
	return last
}

// compareOutputs accumulates one batch's floating point outputs of both
// graphs into a (false when there is none).
func compareOutputs(a *accum, fo, qo []ops.Value) (bool, error) {
	if len(fo) != len(qo) {
		return false, fmt.Errorf("the float graph returns %d values, the quantized one %d", len(fo), len(qo))
	}
	var f, q captured
	for i := range fo {
		ft, ok1 := fo[i].(*tensor.Tensor)
		qt, ok2 := qo[i].(*tensor.Tensor)
		if !ok1 || !ok2 || !ft.DType().IsFloat() {
			continue
		}
		if !slices.Equal(ft.Shape(), qt.Shape()) {
			return false, fmt.Errorf("output %d: float shape %v, quantized %v", i, ft.Shape(), qt.Shape())
		}
		fd, ok1 := float32s(ft, false)
		qd, ok2 := float32s(qt, false)
		if !ok1 || !ok2 {
			continue
		}
		f.data, q.data = append(f.data, fd), append(q.data, qd)
	}
	if len(f.data) == 0 {
		return false, nil
	}
	a.add(f, q)
	return true, nil
}

// worstGrowth picks Comparison.WorstGrowth.
func worstGrowth(rs []Result) int {
	best := -1
	for i, r := range rs {
		if math.IsNaN(r.Growth) || r.Growth <= 0 {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := rs[best]
		switch {
		case math.IsInf(b.Growth, 1) && !math.IsInf(r.Growth, 1):
			best = i
		case math.IsInf(b.Growth, 1) && math.IsInf(r.Growth, 1):
			if r.SQNR < b.SQNR {
				best = i
			}
		case !math.IsInf(r.Growth, 1) && r.Growth > b.Growth:
			best = i
		}
	}
	return best
}

// sqnr is 10 log10(sig / noise) in dB: +Inf without noise.
func sqnr(sig, noise float64) float64 {
	if noise == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(sig/noise)
}

// result is the Result of the accumulated statistics: SQNR and MaxAbsErr
// are NaN when a difference was.
func (a *accum) result(handle int, floatNode, quantNode, target string) Result {
	r := Result{
		Handle: handle, FloatNode: floatNode, QuantNode: quantNode, Target: target,
		SQNR: sqnr(a.sig, a.noise), MaxAbsErr: a.maxAbs, Min: a.min, Max: a.max,
		BatchSQNR: a.batch, Numel: a.numel,
	}
	if a.nan {
		r.SQNR, r.MaxAbsErr = math.NaN(), math.NaN()
	}
	return r
}

// add accumulates one batch's values of a handle.
func (a *accum) add(f, q captured) {
	var sig, noise float64
	n := 0
	for k := range f.data {
		fd, qd := f.data[k], q.data[k]
		n += len(fd)
		for j, fx := range fd {
			qx := float64(qd[j])
			d := qx - float64(fx)
			sig += qx * qx
			noise += d * d
			if math.IsNaN(d) {
				a.nan = true
				continue
			}
			a.maxAbs = max(a.maxAbs, math.Abs(d))
			a.min = min(a.min, float64(fx))
			a.max = max(a.max, float64(fx))
		}
	}
	a.sig += sig
	a.noise += noise
	a.numel = n
	a.batch = append(a.batch, sqnr(sig, noise))
}

// capture gives a node's value as float32 elements in row-major order: a
// tensor, or a tuple or list of tensors; ok is false for anything else.
// keep copies float32 storage, for a value kept after the hook returns;
// otherwise the elements may be the tensor's own (read them at once).
func capture(v ops.Value, keep bool) captured {
	var c captured
	var add func(v ops.Value) bool
	add = func(v ops.Value) bool {
		if x, ok := v.(*tensor.Tensor); ok {
			d, ok := float32s(x, keep)
			if !ok {
				return false
			}
			c.data = append(c.data, d)
			c.shapes = append(c.shapes, x.Shape())
			return true
		}
		elems, ok := ops.Sequence(v)
		if !ok {
			return false
		}
		for _, e := range elems {
			if !add(e) {
				return false
			}
		}
		return len(elems) > 0
	}
	c.ok = add(v)
	return c
}

// float32s returns t's elements converted to float32: a copy when keep
// holds, otherwise possibly t's own storage (not to be modified).
func float32s(t *tensor.Tensor, keep bool) ([]float32, bool) {
	if t.DType() == tensor.Float32 {
		d, err := tensor.Data[float32](t)
		if err != nil {
			return nil, false
		}
		if keep {
			d = slices.Clone(d)
		}
		return d, true
	}
	d, err := t.Float64s()
	if err != nil {
		return nil, false
	}
	out := make([]float32, len(d))
	for i, x := range d {
		out[i] = float32(x)
	}
	return out, true
}
