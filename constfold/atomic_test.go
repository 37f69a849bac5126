package constfold_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/constfold"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// foldState is the graph's printed form, its attributes (path and value
// identity) and what Verify says of it.
func foldState(g *fxgraph.Graph) string {
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

// twoChains is x + t(p0), then + relu(t(p1)): two frontier nodes, and a
// sweep that erases t(p1) and both get_attrs and deletes both attributes.
func twoChains() *fxgraph.Graph {
	g := fxgraph.New()
	g.SetAttr("p0", tensor.F32([]int{2, 2}, 1, 2, 3, 4))
	g.SetAttr("p1", tensor.F32([]int{2, 2}, -1, 2, -3, 4))
	x := g.Placeholder("x", nil)
	a := g.Call(tAdd, x, g.Call(tT, g.GetAttr("p0", nil)))
	g.SetOutput(ops.Tuple{g.Call(tAdd, a, g.Call(tRelu, g.Call(tT, g.GetAttr("p1", nil))))})
	return g
}

// TestFoldFailureAtEveryStep injects a failure at every edit of
// ConstantFold: after each failure the graph prints, stores attributes and
// verifies exactly as before, and a fold without failure then gives what
// it gives on a fresh graph, names and frozen-parameter paths included.
func TestFoldFailureAtEveryStep(t *testing.T) {
	for name, build := range map[string]func() *fxgraph.Graph{
		"two chains":  twoChains,
		"per channel": func() *fxgraph.Graph { return weightGraph(false, false) },
		"affine":      func() *fxgraph.Graph { return weightGraph(true, true) },
	} {
		t.Run(name, func(t *testing.T) {
			fresh := build()
			res, err := constfold.Run(fresh)
			require.NoError(t, err)
			require.True(t, res.Changed)
			want := fxgraph.Format(fresh) + fmt.Sprint(fresh.AttrNames())
			for k := 1; ; k++ {
				g := build()
				before := foldState(g)
				restore := constfold.SetFailAt(k)
				_, err := constfold.Run(g)
				restore()
				if err == nil {
					require.Equal(t, want, fxgraph.Format(g)+fmt.Sprint(g.AttrNames()))
					require.Greater(t, k, 3, "the fold takes steps")
					return
				}
				require.ErrorIs(t, err, constfold.ErrInjected, "step %d", k)
				require.Equal(t, before, foldState(g), "after a failure at step %d", k)
				_, err = constfold.Run(g)
				require.NoError(t, err)
				require.Equal(t, want, fxgraph.Format(g)+fmt.Sprint(g.AttrNames()), "the fold after a failure at step %d", k)
			}
		})
	}
}
