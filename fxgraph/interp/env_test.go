package interp_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops/tensor"
)

// A reference to a node that is not one of the run's has no value, even
// when it is a node of the same graph with the ID of a live node: after
// ReplaceWith, the replaced nodes (erased, still of g) share IDs with the
// new ones.
func TestRunForeignNodeSameID(t *testing.T) {
	for _, release := range []bool{false, true} {
		g := fxgraph.New()
		old := g.Placeholder("old", nil)
		h := fxgraph.New()
		x := h.Placeholder("x", nil)
		require.Equal(t, old.ID(), x.ID())
		h.SetOutput(h.Call(target("aten.add.Tensor"), x, old))
		g.ReplaceWith(h)
		require.True(t, old.Erased())
		require.Same(t, g, old.Graph())

		_, err := interp.Run(g, []*tensor.Tensor{tensor.F32([]int{2}, 1, 2)}, interp.Options{Release: release})
		require.ErrorIs(t, err, interp.ErrInputs, "release %v", release)
		var ne *interp.NodeError
		require.True(t, errors.As(err, &ne))
		require.Contains(t, ne.Err.Error(), `argument "old" has no value`)
	}
}
