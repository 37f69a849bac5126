package convert_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops/tensor"
)

// graphState is the graph's printed form, its attributes (path and value
// identity) and what Verify says of it.
func graphState(g *fxgraph.Graph) string {
	s := fxgraph.Format(g)
	for _, p := range g.AttrNames() {
		a, _ := g.Attr(p)
		s += fmt.Sprintf("attr %s %p\n", p, a)
	}
	if err := fxgraph.Verify(g, fxgraph.VerifyOptions{}); err != nil {
		s += err.Error()
	}
	return s
}

// failEveryStep runs edit on a fresh graph from build with a failure
// injected at step k, for k = 1, 2, ... until a run completes: after each
// failure the graph's state is as before, and a run without failure gives
// what it gives on a fresh graph (printed form and attribute paths). It
// returns the number of steps.
func failEveryStep(t *testing.T, build func() *fxgraph.Graph, edit func(*fxgraph.Graph) error) int {
	t.Helper()
	fresh := build()
	require.NoError(t, edit(fresh))
	want := fxgraph.Format(fresh) + fmt.Sprint(fresh.AttrNames())
	for k := 1; ; k++ {
		g := build()
		before := graphState(g)
		restore := convert.SetFailAt(k)
		err := edit(g)
		restore()
		if err == nil {
			require.Equal(t, want, fxgraph.Format(g)+fmt.Sprint(g.AttrNames()))
			return k - 1
		}
		require.ErrorIs(t, err, convert.ErrInjected, "step %d", k)
		require.Equal(t, before, graphState(g), "after a failure at step %d", k)
		require.NoError(t, edit(g), "after a failure at step %d", k)
		require.Equal(t, want, fxgraph.Format(g)+fmt.Sprint(g.AttrNames()), "the run after a failure at step %d", k)
	}
}

// weightedLinearAdd is linearAddGraph with its weight stored.
func weightedLinearAdd() *fxgraph.Graph {
	g := linearAddGraph()
	g.SetAttr("weight", tensor.F32([]int{2, 2}, 0.5, -1, 2, 0.25))
	return g
}

// prepared returns weightedLinearAdd prepared with XNNPACK's static
// config and calibrated on one batch.
func prepared(t *testing.T) *fxgraph.Graph {
	g := weightedLinearAdd()
	require.NoError(t, convert.Prepare(g, convert.NewXNNPACKQuantizer(staticConfig())))
	x, y := tensor.F32([]int{1, 2}, 1, -2), tensor.F32([]int{1, 2}, 0.5, 3)
	require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{{x, y}}, nil))
	return g
}

// TestPrepareFailureAtEveryStep: Prepare works on a clone, so a failure
// at any stage leaves the graph as it was.
func TestPrepareFailureAtEveryStep(t *testing.T) {
	steps := failEveryStep(t, weightedLinearAdd, func(g *fxgraph.Graph) error {
		return convert.Prepare(g, convert.NewXNNPACKQuantizer(staticConfig()))
	})
	require.Equal(t, 6, steps, "fold, transform, annotate, validate, observers, swap")
}

// TestConvertFailureAtEveryStep: Convert works on a clone, so a failure
// at any observer or step leaves the graph as it was; ReplaceObservers on
// its own is all or nothing too.
func TestConvertFailureAtEveryStep(t *testing.T) {
	steps := failEveryStep(t, func() *fxgraph.Graph { return prepared(t) }, func(g *fxgraph.Graph) error {
		return convert.Convert(g, convert.ConvertOptions{})
	})
	require.Greater(t, steps, 4, "an observer each, then the steps")
	steps = failEveryStep(t, func() *fxgraph.Graph { return prepared(t) }, func(g *fxgraph.Graph) error {
		return convert.ReplaceObservers(g, convert.ConvertOptions{})
	})
	require.Greater(t, steps, 2, "an observer each")
}
