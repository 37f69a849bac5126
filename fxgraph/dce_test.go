package fxgraph

import (
	"fmt"
	"math/rand/v2"
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
