package fxgraph

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
)

// TestDependencyViewCrossChecksOrder builds random graphs with fxgraph's
// API and checks, with the independent dominikbraun/graph implementation,
// that program order is a valid dependency order and that the library finds
// an order too: every edge it holds goes forward in program order.
func TestDependencyViewCrossChecksOrder(t *testing.T) {
	add := ops.MustOverload("aten.add.Tensor")
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		g := New()
		nodes := []*Node{g.Placeholder("x", nil)}
		for range 60 {
			a := nodes[rng.IntN(len(nodes))]
			b := nodes[rng.IntN(len(nodes))]
			nodes = append(nodes, g.Call(add, a, b))
		}
		pos := map[*Node]int{}
		for i, n := range g.Nodes() {
			pos[n] = i
		}
		view, err := DependencyView(g.Nodes())
		require.NoError(t, err)
		edges, err := view.Edges()
		require.NoError(t, err)
		for _, e := range edges {
			src, _ := view.Vertex(e.Source)
			dst, _ := view.Vertex(e.Target)
			assert.Less(t, pos[src], pos[dst], "seed %d: edge %s -> %s goes backwards", seed, src, dst)
		}
		order, err := TopoOrder(g.Nodes())
		require.NoError(t, err)
		require.Len(t, order, g.Len())
		seen := map[*Node]bool{}
		for _, n := range order {
			for _, in := range n.InputNodes() {
				assert.True(t, seen[in], "seed %d: %s ordered before its input %s", seed, n, in)
			}
			seen[n] = true
		}
	}
}

// TestTopoOrderFindsCycle: a cycle made by editing arguments (which
// Verify reports as ErrCycle) is reported by the library too.
func TestTopoOrderFindsCycle(t *testing.T) {
	relu := ops.MustOverload("aten.relu.default")
	g := New()
	x := g.Placeholder("x", nil)
	a := g.Call(relu, x)
	b := g.Call(relu, a)
	g.SetArgs(a, b) // a <- b <- a
	_, err := TopoOrder([]*Node{a, b})
	require.Error(t, err)
	require.ErrorIs(t, Verify(g, VerifyOptions{SkipSchema: true}), ErrCycle)
}

func TestDependencyViewErrors(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	_, err := DependencyView([]*Node{x, x})
	require.ErrorContains(t, err, "given twice")
	_, err = DependencyView([]*Node{nil})
	require.ErrorContains(t, err, "nil node")
	_, err = DependencyView(make([]*Node, MaxViewNodes+1))
	require.ErrorContains(t, err, "at most")
}
