package fxgraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
)

// TestEliminateDeadCodeSparseAndDense checks both of EliminateDeadCode's
// strategies (visiting the list of unused nodes when they are few,
// walking the graph when they are many) against FX's walk (fxDCE), on
// random graphs with dead chains, dead nodes feeding each other and
// impure dead nodes.
func TestEliminateDeadCodeSparseAndDense(t *testing.T) {
	reg := irRegistry(t)
	for _, deadEvery := range []int{3, 40} {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("dead1in%d/seed%d", deadEvery, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				g := New()
				x := g.Placeholder("x", irF32)
				g.Placeholder("unused_input", irF32)
				prev := x
				var outs []*Node
				for i := range 400 {
					var n *Node
					if rng.IntN(4) == 0 {
						n = g.CallKw(irAdd, []ops.Value{prev, x}, []Kwarg{{Name: "alpha", Value: int64(1)}})
					} else {
						n = g.Call(irRelu, prev)
					}
					n.SetType(irF32)
					switch {
					case i%deadEvery == 0: // a dead chain of one to three nodes
						for range rng.IntN(3) {
							n = g.Call(irRelu, n)
							n.SetType(irF32)
						}
					case i%deadEvery == 1 && rng.IntN(2) == 0: // an impure dead node
						g.Call(irAssert, int64(1), "msg")
					default:
						prev = n
						if rng.IntN(8) == 0 {
							outs = append(outs, n)
						}
					}
				}
				g.SetOutput(tupleOf(append(outs, prev)))
				g.compactUnused()
				dense := len(g.unused)*denseUnused >= g.length
				require.Equal(t, deadEvery == 3, dense, "the case exercises the intended strategy")

				ref, _ := g.Clone()
				want := fxDCE(ref, reg)
				require.Equal(t, want, g.EliminateDeadCode(reg, nil))
				require.Equal(t, irNames(ref.Nodes()), irNames(g.Nodes()))
				require.NoError(t, Verify(g, irOpts(t)))
				require.False(t, g.EliminateDeadCode(reg, nil), "a second run finds nothing")
			})
		}
	}
}

func tupleOf(ns []*Node) ops.Tuple {
	t := make(ops.Tuple, len(ns))
	for i, n := range ns {
		t[i] = n
	}
	return t
}

// checkDCE runs EliminateDeadCode on g and FX's walk (fxDCE) on a clone,
// and requires the same nodes to survive, a valid graph (which includes
// a complete list of unused nodes) and nothing left for a second run.
func checkDCE(t *testing.T, g *Graph) {
	t.Helper()
	reg := irRegistry(t)
	ref, _ := g.Clone()
	want := fxDCE(ref, reg)
	require.Equal(t, want, g.EliminateDeadCode(reg, nil))
	require.Equal(t, irNames(ref.Nodes()), irNames(g.Nodes()))
	require.NoError(t, Verify(g, irOpts(t)))
	listed := map[*Node]bool{}
	for _, n := range g.unused {
		require.False(t, listed[n], "%s is listed as unused twice", n)
		listed[n] = true
	}
	require.False(t, g.EliminateDeadCode(reg, nil), "a second run finds nothing")
}

// scansChunks reports whether EliminateDeadCode takes its chunk scan on g
// (many unused nodes, few erased ones in the chunks).
func scansChunks(g *Graph) bool {
	g.compactUnused()
	return len(g.unused)*denseUnused >= g.length && g.chunkNodes <= 2*g.length+2*maxNodeChunk
}

// TestEliminateDeadCodeScanOutOfOrder covers the chunk scan on nodes made
// out of program order: an input made after its user (inserted before
// it) is visited first, while it still has a use, so the user's erasure
// must deal with it on the spot: erase it when pure, list it as unused
// when impure (a placeholder). An input made before its user is left to
// the scan, which lists it once.
func TestEliminateDeadCodeScanOutOfOrder(t *testing.T) {
	g := New()
	x := g.Placeholder("x", irF32)
	early := g.Placeholder("early", irF32)
	g.Call(irRelu, early).SetType(irF32) // early's only user, dead
	var dead []*Node
	for range 20 {
		d := g.Call(irRelu, x)
		d.SetType(irF32)
		dead = append(dead, d)
	}
	var lateImpure []string
	for i, d := range dead {
		restore := g.InsertingBefore(d)
		var in *Node
		if i%4 == 0 {
			in = g.Placeholder(fmt.Sprintf("late_%d", i), irF32) // impure: stays, unused
			lateImpure = append(lateImpure, in.Name())
		} else {
			in = g.Call(irRelu, x) // pure: goes with its user
			in.SetType(irF32)
			mid := g.Call(irRelu, in) // and a chain of two made after d
			mid.SetType(irF32)
			in = mid
		}
		restore()
		require.Greater(t, in.ID(), d.ID())
		require.NoError(t, g.SetArg(d, 0, in))
	}
	g.SetOutput(x)
	require.True(t, scansChunks(g))
	checkDCE(t, g)
	require.Equal(t, append([]string{"x", "early"}, lateImpure...), irNames(g.Nodes())[:2+len(lateImpure)])
	require.Len(t, g.Nodes(), 3+len(lateImpure), "x, early, the late placeholders and the output")
	for _, n := range g.Nodes()[1 : 2+len(lateImpure)] {
		require.Zero(t, n.NumUses())
	}
}

// TestEliminateDeadCodeScanAfterErasures checks that a graph whose chunks
// hold mostly erased nodes is walked instead of scanned, and that a graph
// that received another's nodes through ReplaceWith is scanned over them
// and over the nodes it makes afterwards.
func TestEliminateDeadCodeScanAfterErasures(t *testing.T) {
	build := func(g *Graph, x *Node, n int) {
		for range n {
			d := g.Call(irRelu, x)
			d.SetType(irF32)
			d = g.Call(irRelu, d)
			d.SetType(irF32)
		}
	}
	t.Run("mostly erased", func(t *testing.T) {
		g := New()
		x := g.Placeholder("x", irF32)
		restore := g.InsertingBefore(g.SetOutput(x))
		build(g, x, 600)
		require.True(t, scansChunks(g))
		checkDCE(t, g)
		build(g, x, 10)
		restore()
		require.False(t, scansChunks(g), "1,200 erased nodes against 22 live ones")
		checkDCE(t, g)

		// New chunks drop the listed ones that hold only erased nodes.
		restore = g.InsertingBefore(x.Next())
		build(g, x, 300)
		restore()
		for _, c := range g.chunks {
			live := slices.ContainsFunc(c, func(n Node) bool { return n.graph == g && !n.erased })
			require.True(t, live, "a listed chunk of %d nodes, all erased", len(c))
		}
		require.True(t, scansChunks(g))
		checkDCE(t, g)
	})
	t.Run("replaced", func(t *testing.T) {
		g := New()
		g.SetOutput(g.Placeholder("old", irF32))
		other := New()
		x := other.Placeholder("x", irF32)
		build(other, x, 40)
		other.SetOutput(x)
		g.ReplaceWith(other)
		out, _ := g.OutputNode()
		restore := g.InsertingBefore(out)
		build(g, x, 40)
		restore()
		require.True(t, scansChunks(g))
		checkDCE(t, g)
		require.Equal(t, []string{"x", "output"}, irNames(g.Nodes()))
	})
}
