package match_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// failEveryStep runs rewrite on a fresh graph from build with a failure
// injected at step k, for k = 1, 2, ... until a run takes fewer steps than
// k and succeeds. After each failure the graph must print exactly as
// before, verify, and rewrite (without a failure) to exactly what a fresh
// graph rewrites to, names included: the namespace was restored too. It
// returns the number of steps the rewrite takes.
func failEveryStep(t *testing.T, build func() *fxgraph.Graph, rewrite func(g *fxgraph.Graph, opts ...match.Option) error) int {
	t.Helper()
	fresh := build()
	require.NoError(t, rewrite(fresh))
	want := fxgraph.Format(fresh)
	for k := 1; ; k++ {
		g := build()
		before, verifyBefore := fxgraph.Format(g), verifyText(g)
		err := rewrite(g, match.FailAt(k))
		if err == nil {
			require.Equal(t, want, fxgraph.Format(g), "no failure at step %d: the rewrite completes", k)
			require.Greater(t, k, 1, "the rewrite takes steps")
			return k - 1
		}
		require.ErrorIs(t, err, match.ErrInjected, "step %d", k)
		var re *match.ReplaceError
		require.ErrorAs(t, err, &re)
		require.Equal(t, before, fxgraph.Format(g), "after a failure at step %d", k)
		require.Equal(t, verifyBefore, verifyText(g), "verify after a failure at step %d", k)
		require.NoError(t, rewrite(g), "the rewrite after a failure at step %d", k)
		require.Equal(t, want, fxgraph.Format(g), "the rewrite after a failure at step %d", k)
	}
}

// verifyText returns what Verify says of g (the test graphs may lack their
// attributes, which Verify reports).
func verifyText(g *fxgraph.Graph) string {
	if err := fxgraph.Verify(g, fxgraph.VerifyOptions{Registry: testRegistry()}); err != nil {
		return err.Error()
	}
	return ""
}

// Every rewrite path undoes all its edits when one fails: the one-pass
// rewrite, the two-phase one with incremental and with full rechecks, a
// rewrite with filters, and one whose replacement copies attributes.
func TestReplaceFailureAtEveryStepLeavesGraphUnchanged(t *testing.T) {
	reg := match.WithRegistry(testRegistry())
	p, r := qLinearPattern(), qLinearReplacement()
	static := func(extra ...match.Option) func(g *fxgraph.Graph, opts ...match.Option) error {
		return func(g *fxgraph.Graph, opts ...match.Option) error {
			_, err := match.ReplacePattern(g, p, r, append(append([]match.Option{reg}, extra...), opts...)...)
			return err
		}
	}
	build := func() *fxgraph.Graph { return qLinearGraph(4) }
	for name, rewrite := range map[string]func(g *fxgraph.Graph, opts ...match.Option) error{
		"one pass":     static(),
		"two phase":    static(match.TwoPhase()),
		"full recheck": static(match.TwoPhase(), match.FullRecheck()),
	} {
		t.Run(name, func(t *testing.T) {
			steps := failEveryStep(t, build, rewrite)
			// Per match: one node created, its uses rewired, three erased.
			require.Equal(t, 4*5, steps)
		})
	}
	t.Run("filters", func(t *testing.T) {
		odd := func(m *match.Match, _ *fxgraph.Graph, _ *match.Pattern) bool {
			return m.ReturningNodes[0].Name() != "quantize_per_tensor_default_2"
		}
		steps := failEveryStep(t, build, func(g *fxgraph.Graph, opts ...match.Option) error {
			_, err := match.ReplacePatternWithFilters(g, p, match.Static(r), []match.Filter{odd}, false, append([]match.Option{reg}, opts...)...)
			return err
		})
		require.Equal(t, 3*5, steps)
	})
	t.Run("attributes and chains", func(t *testing.T) {
		sig := mustPattern(func(b *B) ops.Value { return b.Call(tSigmoid, b.Call(tSigmoid, b.Placeholder("x"))) })
		repl := mustGraph(func(b *B) ops.Value {
			x := b.Placeholder("x")
			return b.Call(atenAdd, b.Call(atenNeg, x), b.GetAttr("shift"))
		})
		repl.SetAttr("shift", tensor.F32([]int{1}, 2))
		build := func() *fxgraph.Graph {
			g := chainOfSigmoids(6)
			g.SetAttr("other", tensor.F32([]int{1}, 1))
			return g
		}
		steps := failEveryStep(t, build, func(g *fxgraph.Graph, opts ...match.Option) error {
			_, err := match.ReplacePatternWithFilters(g, sig, match.Static(repl), nil, false, append([]match.Option{reg}, opts...)...)
			if _, has := g.Attr("shift"); err != nil && has {
				return fmt.Errorf("attribute left behind by a failed rewrite: %w", err)
			}
			return err
		})
		// Per match: two nodes created (get_attr, neg and add: the get_attr
		// too), uses rewired, two erased.
		require.Equal(t, 3*(3+1+2), steps)
	})
}
