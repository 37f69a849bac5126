package fxgraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
)

// TestRandomEditsKeepGraphValid applies seeded random sequences of edits
// (create at random insertion points, replace all uses, erase dead nodes,
// move within the legal range, set args and kwargs, DCE, clone) and
// requires after every edit that Verify passes, and every few edits that
// the printed form parses back to a graph that prints the same and
// verifies.
func TestRandomEditsKeepGraphValid(t *testing.T) {
	reg := irRegistry(t)
	opts := VerifyOptions{Registry: reg, RequireTypes: true}
	const steps = 400
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			g := New()
			x := g.Placeholder("x", irF32)
			g.Placeholder("y", irF32)
			out := g.SetOutput(ops.Tuple{x})
			var log []string
			for step := range steps {
				nodes := g.Nodes()
				pos := make(map[*Node]int, len(nodes))
				for i, n := range nodes {
					pos[n] = i
				}
				// before returns a random value node at a position < limit.
				before := func(limit int) *Node {
					return nodes[rng.IntN(limit)]
				}
				calls := slices.DeleteFunc(slices.Clone(nodes), func(n *Node) bool { return n.Op() != CallFunction })
				var what string
				switch op := rng.IntN(8); {
				case op <= 1: // create after a random node (or before the output)
					p := rng.IntN(len(nodes) - 1) // a non-output anchor
					var n *Node
					if rng.IntN(2) == 0 {
						restore := g.InsertingBefore(nodes[p+1])
						n = g.Call(irRelu, before(p+1))
						restore()
					} else {
						restore := g.InsertingAfter(nodes[p])
						n = g.CallKw(irAdd, []ops.Value{before(p + 1), before(p + 1)}, []Kwarg{{Name: "alpha", Value: int64(rng.IntN(3))}})
						restore()
					}
					n.SetType(irF32)
					what = "create " + n.Name()
				case op == 2 && len(calls) > 0: // replace all uses with an earlier node
					n := calls[rng.IntN(len(calls))]
					m := before(pos[n])
					g.ReplaceAllUsesWith(n, m, nil)
					what = fmt.Sprintf("rauw %s -> %s", n, m)
				case op == 3: // erase a dead node
					for _, n := range calls {
						if n.NumUses() == 0 {
							require.NoError(t, g.Erase(n))
							what = "erase " + n.Name()
							break
						}
					}
				case op == 4 && len(calls) > 0: // move within the legal range
					n := calls[rng.IntN(len(calls))]
					lo := 0
					for _, in := range n.InputNodes() {
						lo = max(lo, pos[in]+1)
					}
					hi := len(nodes) - 1
					for _, u := range n.Users() {
						hi = min(hi, pos[u])
					}
					anchor := nodes[lo+rng.IntN(hi-lo+1)]
					if anchor != n {
						require.NoError(t, g.MoveBefore(n, anchor))
					}
					what = fmt.Sprintf("move %s before %s", n, anchor)
				case op == 5 && len(calls) > 0: // set an arg or kwarg
					n := calls[rng.IntN(len(calls))]
					i := rng.IntN(len(n.Args()))
					require.NoError(t, g.SetArg(n, i, before(pos[n])))
					if n.Target() == irAdd && rng.IntN(2) == 0 {
						g.SetKwarg(n, "alpha", int64(rng.IntN(5)))
					}
					what = fmt.Sprintf("set arg %d of %s", i, n)
				case op == 6: // return some node
					if len(calls) > 0 {
						g.SetArgs(out, ops.Tuple{calls[rng.IntN(len(calls))], x})
					}
					what = "set output"
				default:
					if rng.IntN(4) == 0 {
						g.EliminateDeadCode(reg, nil)
						what = "dce"
					} else {
						c, _ := g.Clone()
						g.ReplaceWith(c)
						out = g.Last()
						x = g.First()
						what = "clone and swap"
					}
				}
				log = append(log, what)
				if err := Verify(g, opts); err != nil {
					t.Fatalf("step %d (%s): %v\nlast edits: %v", step, what, err, log[max(0, len(log)-5):])
				}
				if step%20 == 0 || step == steps-1 {
					irRoundTrip(t, g, opts)
				}
			}
			kinds := map[string]int{}
			for _, w := range log {
				k, _, _ := strings.Cut(w, " ")
				kinds[k]++
			}
			t.Logf("%d nodes after %d edits: %v", g.Len(), steps, kinds)
			require.Greater(t, kinds["create"], steps/10, "the sequence creates nodes")
			require.Greater(t, kinds["rauw"]+kinds["move"]+kinds["set"], steps/10, "and rewires them")
		})
	}
}

// irRoundTrip requires Format(Parse(Format(g))) == Format(g) and that the
// parsed graph verifies.
func irRoundTrip(t *testing.T, g *Graph, opts VerifyOptions) {
	t.Helper()
	text := Format(g)
	h, err := ParseString(text)
	require.NoError(t, err, "parse of printed graph:\n%s", text)
	require.Equal(t, text, Format(h))
	require.NoError(t, Verify(h, opts), "parsed graph:\n%s", text)
}
