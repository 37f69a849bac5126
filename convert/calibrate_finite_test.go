package convert_test

import (
	"errors"
	"math"
	"testing"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCalibrateNonFiniteInput: NaN or ±Inf in the calibration data is
// refused before any batch runs, naming the batch, the placeholder and
// the element (flat index and position).
func TestCalibrateNonFiniteInput(t *testing.T) {
	for _, tt := range []struct {
		bad  float32
		text string
	}{{float32(math.NaN()), "NaN"}, {float32(math.Inf(1)), "+Inf"}, {float32(math.Inf(-1)), "-Inf"}} {
		g := fxgraph.New()
		x := g.Placeholder("x", ops.Plain(tensor.Float32, 2, 3))
		y := g.Placeholder("y", ops.Plain(tensor.Float32, 2, 3))
		a := g.Call(addT, x, y)
		a.SetType(ops.Plain(tensor.Float32, 2, 3))
		g.SetOutput(ops.Tuple{a})
		require.NoError(t, convert.Prepare(g, funcQuantizer(func(g *fxgraph.Graph) error {
			convert.AnnotateOutput(node(t, g, "add_tensor"), minmaxSpec())
			return nil
		})))
		good := tensor.MustFromData(tensor.Float32, []int{2, 3}, []float32{1, 2, 3, 4, 5, 6})
		vals := []float32{1, 2, 3, 4, 5, 6}
		vals[5] = tt.bad
		withBad := tensor.MustFromData(tensor.Float32, []int{2, 3}, vals)
		err := convert.Calibrate(g, [][]*tensor.Tensor{{good, good}, {good, withBad}}, nil)
		require.ErrorIs(t, err, convert.ErrBatch)
		assert.Equal(t, `calibrate: batch 1: bad calibration batch: placeholder "y": element 5 (index [1 2]) is `+
			tt.text+"; calibration data must be finite", err.Error())
		// Nothing ran: the observer has no data.
		v, _ := g.Attr("activation_post_process_0")
		_, err = v.(observers.Observer).CalculateQParams()
		require.True(t, errors.Is(err, observers.ErrNoData), "got %v", err)
	}
}

// divGraph is div(x, y) with both inputs [2], observed at its output by
// an observer of spec.
func divGraph(t *testing.T, spec *convert.QuantizationSpec) *fxgraph.Graph {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(2))
	y := g.Placeholder("y", f32(2))
	d := g.Call(ops.MustOverload("aten.div.Tensor"), x, y)
	d.SetType(f32(2))
	g.SetOutput(ops.Tuple{d})
	require.NoError(t, convert.Prepare(g, funcQuantizer(func(g *fxgraph.Graph) error {
		convert.AnnotateOutput(node(t, g, "div_tensor"), spec)
		return nil
	})))
	return g
}

// TestObserverFailureNamesObservedNode: a NaN the graph computes (0/0)
// makes the HistogramObserver fail during calibration, as PyTorch's
// torch.histc does; an infinity it computes (1/0) gives MinMaxObserver
// infinite statistics, whose qparams convert refuses. Both errors name
// the observer and the node it observes.
func TestObserverFailureNamesObservedNode(t *testing.T) {
	hist := minmaxSpec()
	hist.Observer = convert.HistogramObserverCtor(observers.Config{})
	g := divGraph(t, hist)
	x := tensor.MustFromData(tensor.Float32, []int{2}, []float32{0, 1})
	err := convert.Calibrate(g, [][]*tensor.Tensor{{x, x}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `calibrate: batch 0: observer "activation_post_process_0" of node "div_tensor": `)
	assert.Contains(t, err.Error(), "NaN")

	g = divGraph(t, minmaxSpec())
	y := tensor.MustFromData(tensor.Float32, []int{2}, []float32{0, 1})
	one := tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, 1})
	require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{{one, y}}, nil), "MinMaxObserver records inf, as PyTorch's does")
	err = convert.Convert(g, convert.ConvertOptions{})
	require.ErrorIs(t, err, observers.ErrInvalidStats)
	assert.Contains(t, err.Error(), `observer node "activation_post_process_0" (MinMaxObserver) of node "div_tensor": `)
}
