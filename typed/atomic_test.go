package typed_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/typed"
)

var (
	atenRelu    = ops.MustOverload("aten.relu.default")
	atenSigmoid = ops.MustOverload("aten.sigmoid.default")
	atenTanh    = ops.MustOverload("aten.tanh.default")
	f32x        = ops.Plain(tensor.Float32, 2, 3)
)

// swapPattern replaces relu(x) by sigmoid(x); with breakTanh its plan then
// also replaces the tanh using the sigmoid by a node of the wrong type,
// which the rewriter refuses: the plan fails half way, after its first
// replacement.
type swapPattern struct{ breakTanh bool }

func (swapPattern) Name() string { return "swap" }

func (p swapPattern) Match(root *fxgraph.Node) (typed.Plan, string) {
	if root.Op() != fxgraph.CallFunction || root.Target() != atenRelu {
		return nil, ""
	}
	return swapPlan{relu: root, breakTanh: p.breakTanh}, ""
}

type swapPlan struct {
	relu      *fxgraph.Node
	breakTanh bool
}

func (p swapPlan) Apply(rw *typed.Rewriter) error {
	defer rw.InsertBefore(p.relu)()
	sig := rw.Call(atenSigmoid, []ops.Value{p.relu.Arg(0)}, nil, p.relu.Type())
	users := p.relu.Users()
	if err := rw.Replace(p.relu, sig); err != nil {
		return err
	}
	if p.breakTanh {
		for _, u := range users {
			if u.Target() == atenTanh {
				bad := rw.Call(atenTanh, []ops.Value{sig}, nil, ops.Plain(tensor.Float64, 2, 3))
				return rw.Replace(u, bad)
			}
		}
	}
	return nil
}

// reluTanhChain builds x -> (relu -> tanh) n times -> output, typed f32.
func reluTanhChain(n int) *fxgraph.Graph {
	g := fxgraph.New()
	v := g.Placeholder("x", f32x)
	for range n {
		r := g.Call(atenRelu, v)
		r.SetType(f32x)
		v = g.Call(atenTanh, r)
		v.SetType(f32x)
	}
	g.SetOutput(v)
	return g
}

// TestCanonicalizeFailureUndoesEarlierReplacements is the case: a
// plan that swaps relu for sigmoid and then fails a type check used to
// leave tanh(sigmoid(x)), which verifies. Now the graph is as before, and
// the plans that succeeded in the same call (the later relus, visited
// first) are undone too.
func TestCanonicalizeFailureUndoesEarlierReplacements(t *testing.T) {
	g := reluTanhChain(3)
	before := fxgraph.Format(g)
	_, err := typed.Canonicalize(g, typed.CanonOptions{Patterns: []typed.Pattern{swapPattern{breakTanh: true}}})
	require.ErrorIs(t, err, typed.ErrTypeContract)
	require.Equal(t, before, fxgraph.Format(g))
	require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)))

	// A later run names its nodes as on a fresh graph.
	opts := typed.CanonOptions{Patterns: []typed.Pattern{swapPattern{}}}
	fresh := reluTanhChain(3)
	_, err = typed.Canonicalize(fresh, opts)
	require.NoError(t, err)
	_, err = typed.Canonicalize(g, opts)
	require.NoError(t, err)
	require.Equal(t, fxgraph.Format(fresh), fxgraph.Format(g))
	require.NotContains(t, fxgraph.Format(g), "relu")
}

// failEveryStep runs Canonicalize on a fresh graph from build with a
// failure injected at edit k, for k = 1, 2, ... until a run completes.
// After each failure the graph prints exactly as before, verifies as
// before, and a run without failure gives what it gives on a fresh graph,
// names included. It returns the number of edits of a full run.
func failEveryStep(t *testing.T, build func() *fxgraph.Graph, opts typed.CanonOptions) int {
	t.Helper()
	verify := func(g *fxgraph.Graph) string {
		if err := fxgraph.Verify(g, typed.VerifyOptions(opts.Registry)); err != nil {
			return err.Error()
		}
		return ""
	}
	fresh := build()
	_, err := typed.Canonicalize(fresh, opts)
	require.NoError(t, err)
	want := fxgraph.Format(fresh)
	require.NotEqual(t, fxgraph.Format(build()), want, "the rewrite changes the graph")
	for k := 1; ; k++ {
		g := build()
		before, vBefore := fxgraph.Format(g), verify(g)
		_, err := typed.Canonicalize(g, typed.WithFailAt(opts, k))
		if err == nil {
			require.Equal(t, want, fxgraph.Format(g))
			return k - 1
		}
		require.ErrorIs(t, err, typed.ErrInjected, "step %d", k)
		require.Equal(t, before, fxgraph.Format(g), "after a failure at step %d", k)
		require.Equal(t, vBefore, verify(g), "after a failure at step %d", k)
		_, err = typed.Canonicalize(g, opts)
		require.NoError(t, err)
		require.Equal(t, want, fxgraph.Format(g), "the run after a failure at step %d", k)
	}
}

func TestCanonicalizeFailureAtEveryStep(t *testing.T) {
	t.Run("swap", func(t *testing.T) {
		steps := failEveryStep(t, func() *fxgraph.Graph { return reluTanhChain(3) },
			typed.CanonOptions{Patterns: []typed.Pattern{swapPattern{}}})
		require.Equal(t, 3*2, steps, "per relu: a sigmoid created, the relu replaced")
	})
	for name, c := range map[string]chain{
		"groupnorm quantized": quantCase(),
		"groupnorm trailing affine": {x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5, trailing: true,
			gc: []float32{1, 2, 3, 4, 5, 6}, hc: []float32{0.5, 0, 0, 0, 0, -1}},
	} {
		t.Run(name, func(t *testing.T) {
			steps := failEveryStep(t, func() *fxgraph.Graph {
				g, _ := c.build(t)
				return g
			}, typed.CanonOptions{Debug: true})
			require.Greater(t, steps, 3)
		})
	}
}
