package match_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
)

var (
	pRelu = ops.Callable{Module: "torch", Name: "relu"}
	pNeg  = ops.Callable{Module: "torch", Name: "neg"}
	pAdd  = ops.Callable{Module: "torch", Name: "add"}
	pMul  = ops.Callable{Module: "torch", Name: "mul"}
)

// randomGraph builds a seeded random DAG over relu/neg (one input) and
// add/mul (two inputs, sometimes a literal second argument).
func randomGraph(rng *rand.Rand, size int) *fxgraph.Graph {
	return mustGraph(func(b *B) ops.Value {
		var vals []*fxgraph.Node
		for i := range 2 + rng.IntN(2) {
			vals = append(vals, b.Placeholder(fmt.Sprintf("in%d", i)))
		}
		pick := func() *fxgraph.Node {
			// Prefer recent values so that chains form.
			if rng.IntN(3) > 0 {
				return vals[len(vals)-1-rng.IntN(min(3, len(vals)))]
			}
			return vals[rng.IntN(len(vals))]
		}
		for range size {
			var n *fxgraph.Node
			switch rng.IntN(4) {
			case 0:
				n = b.Call(pRelu, pick())
			case 1:
				n = b.Call(pNeg, pick())
			case 2:
				if rng.IntN(4) == 0 {
					n = b.Call(pAdd, pick(), int64(rng.IntN(2)+1))
				} else {
					n = b.Call(pAdd, pick(), pick())
				}
			default:
				n = b.Call(pMul, pick(), pick())
			}
			vals = append(vals, n)
		}
		return ops.Tuple{vals[len(vals)-1], vals[len(vals)-2]}
	})
}

var propertyPatterns = []struct {
	name string
	fn   func(b *B) ops.Value
}{
	{"relu-neg", func(b *B) ops.Value { return b.Call(pNeg, b.Call(pRelu, b.Placeholder("x"))) }},
	{"add-aa", func(b *B) ops.Value {
		a := b.Placeholder("a")
		return b.Call(pAdd, a, a)
	}},
	{"add-relu", func(b *B) ops.Value {
		return b.Call(pAdd, b.Placeholder("x"), b.Call(pRelu, b.Placeholder("y")))
	}},
	{"add-literal", func(b *B) ops.Value { return b.Call(pAdd, b.Placeholder("x"), int64(1)) }},
	{"diamond", func(b *B) ops.Value {
		r := b.Call(pRelu, b.Placeholder("x"))
		return b.Call(pMul, b.Call(pNeg, r), r)
	}},
	{"horizontal", func(b *B) ops.Value {
		x := b.Placeholder("x")
		return ops.Tuple{b.Call(pRelu, x), b.Call(pNeg, x)}
	}},
	{"multi-out", func(b *B) ops.Value {
		r := b.Call(pRelu, b.Placeholder("x"))
		return ops.Tuple{r, b.Call(pMul, r, b.Placeholder("y"))}
	}},
}

// checkMatch re-checks a reported match from first principles, without
// the matcher's code: structure, injectivity, containment and acyclicity.
func checkMatch(g *fxgraph.Graph, p *match.Pattern, m *match.Match, ignoreLiterals bool) error {
	img := map[*fxgraph.Node]ops.Value{}
	for _, bnd := range m.NodesMap() {
		img[bnd.Pattern] = bnd.Value
	}
	seen := map[*fxgraph.Node]*fxgraph.Node{}
	compute := map[*fxgraph.Node]bool{}
	returning := map[*fxgraph.Node]bool{}
	for _, r := range p.Returning() {
		returning[r] = true
	}
	for pn := range p.Graph().All() {
		if pn.Op() == fxgraph.Output {
			continue
		}
		v, ok := img[pn]
		if !ok {
			return fmt.Errorf("pattern node %s unbound", pn)
		}
		gn, isNode := v.(*fxgraph.Node)
		if !isNode {
			if pn.Op() != fxgraph.Placeholder {
				return fmt.Errorf("compute node %s bound to literal %v", pn, v)
			}
			continue
		}
		if gn.Graph() != g || gn.Erased() {
			return fmt.Errorf("%s bound to a node outside the graph", pn)
		}
		if other, dup := seen[gn]; dup {
			return fmt.Errorf("%s and %s both bind %s", other, pn, gn)
		}
		seen[gn] = pn
		if pn.Op() == fxgraph.Placeholder {
			continue
		}
		compute[gn] = true
		if gn.Op() != pn.Op() || gn.Target() != pn.Target() || len(gn.Args()) != len(pn.Args()) {
			return fmt.Errorf("%s -> %s: op, target or arity differs", pn, gn)
		}
		for i, pa := range pn.Args() {
			ga := gn.Args()[i]
			if pan, ok := pa.(*fxgraph.Node); ok {
				if img[pan] != ga {
					return fmt.Errorf("%s arg %d: pattern %s bound to %v, graph has %v", pn, i, pan, img[pan], ga)
				}
				continue
			}
			if !ignoreLiterals && pa != ga {
				return fmt.Errorf("%s arg %d: literal %v vs %v", pn, i, pa, ga)
			}
		}
	}
	for pn, v := range img {
		gn, ok := v.(*fxgraph.Node)
		if !ok || pn.Op() == fxgraph.Placeholder || returning[pn] {
			continue
		}
		for _, u := range gn.Users() {
			if !compute[u] {
				return fmt.Errorf("internal node %s (%s) escapes to %s", gn, pn, u)
			}
		}
	}
	// Acyclic if fused: no path leaves the partition and comes back.
	reaches := map[*fxgraph.Node]bool{}
	var visit func(n *fxgraph.Node) bool
	visit = func(n *fxgraph.Node) bool {
		if r, ok := reaches[n]; ok {
			return r
		}
		reaches[n] = false
		r := false
		for _, u := range n.Users() {
			if compute[u] || visit(u) {
				r = true
			}
		}
		reaches[n] = r
		return r
	}
	for gn := range compute {
		for _, u := range gn.Users() {
			if !compute[u] && visit(u) {
				return fmt.Errorf("fusing would create a cycle through %s", u)
			}
		}
	}
	return nil
}

// checkGraph is an independent well-formedness check: every argument is a
// live, earlier node of the graph and use counts agree.
func checkGraph(g *fxgraph.Graph) error {
	pos := map[*fxgraph.Node]int{}
	uses := map[*fxgraph.Node]int{}
	i := 0
	for n := range g.All() {
		pos[n] = i
		i++
		var err error
		walk := func(v ops.Value) {
			_, _ = ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
				m := x.(*fxgraph.Node)
				if j, ok := pos[m]; !ok || j >= pos[n] || m.Erased() {
					err = fmt.Errorf("%s uses %s, not an earlier live node", n, m)
				}
				uses[m]++
				return x, nil
			})
		}
		for _, a := range n.Args() {
			walk(a)
		}
		for _, kw := range n.Kwargs() {
			walk(kw.Value)
		}
		if err != nil {
			return err
		}
	}
	for n := range g.All() {
		if n.NumUses() != uses[n] {
			return fmt.Errorf("%s records %d uses, has %d", n, n.NumUses(), uses[n])
		}
	}
	return nil
}

func TestPropertyRandomGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	total := 0
	for iter := range 150 {
		size := 5 + rng.IntN(40)
		g := randomGraph(rng, size)
		for _, pp := range propertyPatterns {
			p := mustPattern(pp.fn)
			for _, ign := range []bool{false, true} {
				for _, keep := range []bool{false, true} {
					mr, err := match.NewMatcher(p, match.IgnoreLiterals(ign), match.RemoveOverlappingMatches(!keep), match.WithRegistry(ops.NewRegistry()))
					require.NoError(t, err)
					ms, err := mr.Match(g)
					require.NoError(t, err)
					// Match searches inside its own order pass; MatchIndex
					// searches candidate lists of a prebuilt index. Same result.
					viaIndex, err := mr.MatchIndex(match.NewIndex(g))
					require.NoError(t, err)
					require.Equal(t, matchStrings(ms), matchStrings(viaIndex), "iter %d pattern %s", iter, pp.name)
					claimed := map[*fxgraph.Node]bool{}
					for _, m := range ms {
						total++
						require.NoError(t, checkMatch(g, p, m, ign), "iter %d pattern %s\n%s\n%s", iter, pp.name, m, dump(g))
						if keep {
							continue
						}
						for _, n := range m.GraphNodes() {
							require.False(t, claimed[n], "iter %d pattern %s: overlapping matches", iter, pp.name)
							claimed[n] = true
						}
					}
				}
			}
			before := dump(g)
			// A filtered rewrite leaves the graph byte-identical.
			none := func(*match.Match, *fxgraph.Graph, *match.Pattern) bool { return false }
			r := mustGraph(func(b *B) ops.Value {
				var last ops.Value
				for _, ph := range p.Placeholders() {
					last = b.Placeholder(ph.Name())
				}
				outs := ops.Tuple{}
				for range p.Returning() {
					outs = append(outs, b.Call(pNeg, last))
				}
				return outs
			})
			_, err := match.ReplacePatternWithFilters(g, p, match.Static(r), []match.Filter{none}, false, match.WithRegistry(ops.NewRegistry()))
			require.NoError(t, err)
			require.Equal(t, before, dump(g))
			// A failed rewrite (one placeholder too many) leaves it byte-identical.
			bad := mustGraph(func(b *B) ops.Value {
				b.Placeholder("extra")
				var last ops.Value
				for _, ph := range p.Placeholders() {
					last = b.Placeholder(ph.Name())
				}
				outs := ops.Tuple{}
				for range p.Returning() {
					outs = append(outs, b.Call(pNeg, last))
				}
				return outs
			})
			res, err := match.ReplacePattern(g, p, bad, match.WithRegistry(ops.NewRegistry()))
			if err != nil {
				require.ErrorIs(t, err, match.ErrPlaceholderCount)
			} else {
				require.Empty(t, res)
			}
			require.Equal(t, before, dump(g))
			// A successful rewrite on a clone leaves a well-formed graph.
			c, _ := g.Clone()
			_, err = match.ReplacePattern(c, p, r, match.WithRegistry(ops.NewRegistry()))
			require.NoError(t, err)
			require.NoError(t, checkGraph(c), "iter %d pattern %s\nbefore:\n%s\nafter:\n%s", iter, pp.name, before, dump(c))
		}
	}
	assert.Greater(t, total, 500, "the random graphs should produce plenty of matches")
}

func matchStrings(ms []*match.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return out
}
