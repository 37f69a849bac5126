package numdebug

import (
	"errors"

	"github.com/fxquant/fxquant/fxgraph"
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
	// float one, in dB (+Inf when they are equal).
	SQNR float64
	// MaxAbsErr is the largest |float - quantized| over all elements.
	MaxAbsErr float64
	// Min and Max are the float value's range.
	Min, Max float64
	// Growth is how much SQNR the node loses over its worst input (dB;
	// positive means the node adds error).
	Growth float64
}

// Comparison is the result of Compare: one Result per handle present in
// both graphs, in the float graph's node order.
type Comparison struct {
	Results []Result
	// WorstGrowth indexes Results: the node whose error grows most over
	// its inputs (-1 when there is none).
	WorstGrowth int
}

// ErrNotImplemented is returned by the skeleton until the debugger lands.
var ErrNotImplemented = errors.New("numdebug: not implemented")

// Compare runs float and quant on every batch and compares the values of
// the nodes that share a numeric debug handle.
func Compare(float, quant *fxgraph.Graph, batches [][]*tensor.Tensor) (*Comparison, error) {
	return nil, ErrNotImplemented
}
