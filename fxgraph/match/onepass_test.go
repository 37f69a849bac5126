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

// onePassReplacements returns replacement graphs for p: a single call of
// every placeholder and a chain of muls over them (which ReplacePattern
// may apply in one pass), and shapes it may not (a result that skips a
// placeholder, a returned placeholder, a typed result, a get_attr).
func onePassReplacements(p *match.Pattern) []namedGraph {
	phs := func(b *B) []ops.Value {
		var out []ops.Value
		for _, ph := range p.Placeholders() {
			out = append(out, b.Placeholder(ph.Name()))
		}
		return out
	}
	return []namedGraph{
		{"all", mustGraph(func(b *B) ops.Value { return b.Call(qLinearOp, phs(b)...) })},
		{"mul-chain", mustGraph(func(b *B) ops.Value {
			in := phs(b)
			v := b.Call(pRelu, in[0])
			for _, x := range in[1:] {
				v = b.Call(pMul, v, x)
			}
			return b.Call(pNeg, v)
		})},
		{"skips-first", mustGraph(func(b *B) ops.Value {
			in := phs(b)
			b.Call(pRelu, in[0]) // dead
			return b.Call(pNeg, in[len(in)-1])
		})},
		{"identity", mustGraph(func(b *B) ops.Value { return phs(b)[0] })},
		{"typed", mustGraph(func(b *B) ops.Value {
			in := phs(b)
			return b.Typed(b.Call(qLinearOp, in...), ops.TensorType{Shape: []int64{2}})
		})},
		{"get_attr", mustGraph(func(b *B) ops.Value {
			in := append(phs(b), b.GetAttr("c"))
			return b.Call(qLinearOp, in...)
		})},
	}
}

// scramble makes g's list order disagree with its data flow: a few nodes
// take as an argument a node that comes later in the list (one that does
// not depend on them, so the graph stays acyclic).
func scramble(rng *rand.Rand, g *fxgraph.Graph) {
	nodes := g.Nodes()
	dependsOn := func(b, a *fxgraph.Node) bool {
		seen := map[*fxgraph.Node]bool{}
		var walk func(n *fxgraph.Node) bool
		walk = func(n *fxgraph.Node) bool {
			if n == a {
				return true
			}
			if seen[n] {
				return false
			}
			seen[n] = true
			for _, in := range n.InputNodes() {
				if walk(in) {
					return true
				}
			}
			return false
		}
		return walk(b)
	}
	for range 1 + rng.IntN(3) {
		i, j := rng.IntN(len(nodes)), rng.IntN(len(nodes))
		a, b := nodes[min(i, j)], nodes[max(i, j)]
		if a == b || a.Op() != fxgraph.CallFunction || b.Op() == fxgraph.Output || len(a.Args()) == 0 || dependsOn(b, a) {
			continue
		}
		require.NoError(nil, g.SetArg(a, 0, b))
	}
}

var onePassIters = 150

// TestOnePassAgreesWithTwoPhase rewrites random graphs, some with nodes
// out of program order, with ReplacePattern twice: as it chooses (in one
// pass where it can) and with every match found before any is replaced.
// The graphs and the replacements must be the same.
func TestOnePassAgreesWithTwoPhase(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	onePass, rest := 0, 0
	for iter := range onePassIters {
		g := randomGraph(rng, 5+rng.IntN(40))
		if iter%3 == 2 {
			scramble(rng, g)
		}
		g.SetAttr("c", 1.5)
		for _, pp := range propertyPatterns {
			p := mustPattern(pp.fn)
			for _, rg := range onePassReplacements(p) {
				name := fmt.Sprintf("iter %d pattern %s replacement %s", iter, pp.name, rg.name)
				a, _ := g.Clone()
				b, _ := g.Clone()
				var st match.RecheckStats
				resA, errA := match.ReplacePattern(a, p, rg.g, match.WithRegistry(ops.NewRegistry()), match.WithRecheckStats(&st))
				resB, errB := match.ReplacePattern(b, p, rg.g, match.WithRegistry(ops.NewRegistry()), match.TwoPhase())
				requireSameRewrite(t, name, b, resB, errB, a, resA, errA, true)
				op, r := st.OnePass()
				onePass += op
				rest += r
			}
		}
	}
	t.Logf("one pass: %d replaced, %d left to the two-phase rest", onePass, rest)
	assert.Greater(t, onePass, 500, "the one-pass rewrite should be exercised")
	assert.Greater(t, rest, 10, "the fallback for nodes out of order should be exercised")
}

// TestOnePassOnChain checks that the benchmark's chain of matches, each
// reading the value the previous replacement produced, is replaced in
// one pass, with the names and graph of the two-phase rewrite.
func TestOnePassOnChain(t *testing.T) {
	const n = 20
	a, b := qLinearGraph(n), qLinearGraph(n)
	for _, g := range []*fxgraph.Graph{a, b} {
		for i := range n {
			g.SetAttr(fmt.Sprintf("w%d", i), 1.0)
			g.SetAttr(fmt.Sprintf("b%d", i), 1.0)
		}
	}
	var st match.RecheckStats
	resA, err := match.ReplacePattern(a, qLinearPattern(), qLinearReplacement(), match.WithRegistry(testRegistry()), match.WithRecheckStats(&st))
	require.NoError(t, err)
	resB, err := match.ReplacePattern(b, qLinearPattern(), qLinearReplacement(), match.WithRegistry(testRegistry()), match.TwoPhase())
	require.NoError(t, err)
	op, rest := st.OnePass()
	assert.Equal(t, n, op)
	assert.Equal(t, 0, rest)
	assert.Equal(t, dump(b), dump(a))
	assert.Equal(t, replacedString(resB), replacedString(resA))
	assert.Equal(t, "qlinear_19", resA[n-1].Replacements[0].Name())
	// The names entered the name table in a batch: both graphs verify.
	for _, g := range []*fxgraph.Graph{a, b} {
		require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{Registry: testRegistry(), AllowOpaque: true, SkipTypes: true}))
	}
}

// TestOnePassCases covers, one graph each, what a one-pass rewrite must
// not do differently from finding every match first: bind a node an
// earlier replacement created as a compute node, accept a match whose
// inner node lost an outside user to an earlier replacement that does not
// read it, or replace some matches before a later one fails its type
// check. Each expectation is the two-phase rewrite's, written out.
func TestOnePassCases(t *testing.T) {
	reg := match.WithRegistry(ops.NewRegistry())
	t.Run("replacement looks like the pattern", func(t *testing.T) {
		// neg(relu(x)) -> relu(neg(x)): the second neg reads the first
		// replacement's relu, which the original graph did not have.
		p := mustPattern(func(b *B) ops.Value { return b.Call(pNeg, b.Call(pRelu, b.Placeholder("x"))) })
		r := mustGraph(func(b *B) ops.Value { return b.Call(pRelu, b.Call(pNeg, b.Placeholder("x"))) })
		g := mustGraph(func(b *B) ops.Value {
			return b.Call(pNeg, b.Call(pNeg, b.Call(pRelu, b.Placeholder("in"))))
		})
		res, err := match.ReplacePattern(g, p, r, reg)
		require.NoError(t, err)
		require.Len(t, res, 1)
		out, _ := g.OutputNode()
		last := out.Arg(0).(*fxgraph.Node)
		assert.Equal(t, "neg_1", last.Name(), "the second neg stays")
		assert.Equal(t, "relu_1", last.Arg(0).(*fxgraph.Node).Name(), "it reads the replacement")
	})
	t.Run("inner node used by an earlier match", func(t *testing.T) {
		// add(x, relu(y)) -> neg(y). The relu r feeds the first add (as
		// its x) and the second (as its relu): the second match's inner
		// node has a user outside it, so the search on the original graph
		// rejects it, although the first replacement drops that use.
		p := mustPattern(func(b *B) ops.Value {
			return b.Call(pAdd, b.Placeholder("x"), b.Call(pRelu, b.Placeholder("y")))
		})
		r := mustGraph(func(b *B) ops.Value {
			b.Placeholder("x")
			return b.Call(pNeg, b.Placeholder("y"))
		})
		g := mustGraph(func(b *B) ops.Value {
			in0, in1 := b.Placeholder("in0"), b.Placeholder("in1")
			rel := b.Call(pRelu, in0)
			first := b.Call(pAdd, rel, b.Call(pRelu, in1))
			return b.Call(pAdd, first, rel)
		})
		res, err := match.ReplacePattern(g, p, r, reg)
		require.NoError(t, err)
		require.Len(t, res, 1, "only the first add is replaced")
		assert.Equal(t, "add", res[0].Match.ReturningNodes[0].Name())
	})
	t.Run("a later match fails its type check", func(t *testing.T) {
		// relu(x) -> typed neg: the second relu's type differs, so
		// nothing is replaced.
		f2 := ops.TensorType{Shape: []int64{2}}
		f3 := ops.TensorType{Shape: []int64{3}}
		p := mustPattern(func(b *B) ops.Value { return b.Call(pRelu, b.Placeholder("x")) })
		r := mustGraph(func(b *B) ops.Value { return b.Typed(b.Call(pNeg, b.Placeholder("x")), f2) })
		g := mustGraph(func(b *B) ops.Value {
			a := b.Typed(b.Call(pRelu, b.Placeholder("in")), f2)
			return b.Typed(b.Call(pRelu, a), f3)
		})
		before := dump(g)
		_, err := match.ReplacePattern(g, p, r, reg)
		require.ErrorIs(t, err, match.ErrTypeMismatch)
		assert.Equal(t, before, dump(g))
	})
}
