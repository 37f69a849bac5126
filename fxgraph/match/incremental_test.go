package match_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
)

// replacedString describes a rewrite's result: per replacement, its match
// (bindings in binding order) and the names of the new nodes.
// requireSameRewrite checks that a rewrite under test (graph got, its
// result and error) did what the reference rewrite did: both fail or
// neither does (with the same message when sameErr), and the graphs and
// the replacement records print the same.
func requireSameRewrite(t *testing.T, name string, want *fxgraph.Graph, wantRes []match.Replaced, wantErr error,
	got *fxgraph.Graph, gotRes []match.Replaced, gotErr error, sameErr bool) {
	t.Helper()
	require.Equal(t, wantErr == nil, gotErr == nil, "%s: %v / %v", name, gotErr, wantErr)
	if sameErr && wantErr != nil {
		require.Equal(t, wantErr.Error(), gotErr.Error(), name)
	}
	require.Equal(t, dump(want), dump(got), name)
	require.Equal(t, replacedString(wantRes), replacedString(gotRes), name)
}

func replacedString(res []match.Replaced) string {
	var b strings.Builder
	for _, r := range res {
		fmt.Fprintf(&b, "%s %s ->", r.Anchor.Name(), r.Match)
		for _, n := range r.Replacements {
			fmt.Fprintf(&b, " %s", n.Name())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// replacementsFor returns replacement graphs of several shapes for p: one
// reading every placeholder, one reading only the last, two returning a
// placeholder itself, and a two-node one.
func replacementsFor(p *match.Pattern) []namedGraph {
	phs := func(b *B) []ops.Value {
		var out []ops.Value
		for _, ph := range p.Placeholders() {
			out = append(out, b.Placeholder(ph.Name()))
		}
		return out
	}
	results := func(v ops.Value) ops.Value {
		if len(p.Returning()) == 1 {
			return v
		}
		out := ops.Tuple{}
		for range p.Returning() {
			out = append(out, v)
		}
		return out
	}
	return []namedGraph{
		{"all", mustGraph(func(b *B) ops.Value { return results(b.Call(qLinearOp, phs(b)...)) })},
		{"last", mustGraph(func(b *B) ops.Value {
			in := phs(b)
			return results(b.Call(pNeg, in[len(in)-1]))
		})},
		{"identity", mustGraph(func(b *B) ops.Value { return results(phs(b)[0]) })},
		{"identity-last", mustGraph(func(b *B) ops.Value {
			in := phs(b)
			return results(in[len(in)-1])
		})},
		{"two", mustGraph(func(b *B) ops.Value {
			in := phs(b)
			return results(b.Call(pRelu, b.Call(pMul, in[0], in[len(in)-1])))
		})},
	}
}

type namedGraph struct {
	name string
	g    *fxgraph.Graph
}

// TestIncrementalRecheckAgreesWithFull rewrites random graphs twice, once
// rechecking each match by re-reading only what earlier replacements
// rewired and once rechecking every match in full, and requires the same
// graph and the same replacements. The patterns chain in the random
// graphs, so later matches read nodes that earlier ones rewired.
func TestIncrementalRecheckAgreesWithFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	incremental, full := 0, 0
	for iter := range 120 {
		g := randomGraph(rng, 5+rng.IntN(40))
		for _, pp := range propertyPatterns {
			p := mustPattern(pp.fn)
			for _, rg := range replacementsFor(p) {
				rname, r := rg.name, rg.g
				for _, ign := range []bool{false, true} {
					name := fmt.Sprintf("iter %d pattern %s replacement %s ignoreLiterals %v", iter, pp.name, rname, ign)
					a, _ := g.Clone()
					b, _ := g.Clone()
					var st match.RecheckStats
					resA, errA := match.ReplacePatternWithFilters(a, p, match.Static(r), nil, ign,
						match.WithRegistry(ops.NewRegistry()), match.WithRecheckStats(&st))
					resB, errB := match.ReplacePatternWithFilters(b, p, match.Static(r), nil, ign,
						match.WithRegistry(ops.NewRegistry()), match.FullRecheck())
					requireSameRewrite(t, name, b, resB, errB, a, resA, errA, false)
					inc, fl := st.Counts()
					incremental += inc
					full += fl
				}
			}
		}
	}
	t.Logf("rechecks: %d incremental, %d full", incremental, full)
	assert.Greater(t, incremental, 1000, "the incremental recheck should be exercised")
}

// TestIncrementalRecheckOnChain checks that a chain of matches, each
// reading the value the previous replacement produced, is rechecked
// incrementally throughout, and that patterns the argument does not cover
// (two returning nodes) are rechecked in full.
func TestIncrementalRecheckOnChain(t *testing.T) {
	const n = 50
	g := qLinearGraph(n)
	var st match.RecheckStats
	res, err := match.ReplacePatternWithFilters(g, qLinearPattern(), match.Static(qLinearReplacement()), nil, false,
		match.WithRegistry(testRegistry()), match.WithRecheckStats(&st))
	require.NoError(t, err)
	require.Len(t, res, n)
	inc, fl := st.Counts()
	assert.Equal(t, n, inc)
	assert.Equal(t, 0, fl)

	multi := mustPattern(func(b *B) ops.Value {
		r := b.Call(pRelu, b.Placeholder("x"))
		return ops.Tuple{r, b.Call(pNeg, r)}
	})
	chain := mustGraph(func(b *B) ops.Value {
		v := ops.Value(b.Placeholder("x"))
		for range 4 {
			v = b.Call(pNeg, b.Call(pRelu, v))
		}
		return v
	})
	st = match.RecheckStats{}
	res, err = match.ReplacePatternWithFilters(chain, multi, match.Static(replacementsFor(multi)[1].g), nil, false,
		match.WithRegistry(ops.NewRegistry()), match.WithRecheckStats(&st))
	require.NoError(t, err)
	inc, fl = st.Counts()
	assert.Equal(t, 0, inc)
	assert.Equal(t, len(res), fl)
}

// TestIncrementalRecheckDeclines checks a match that an earlier
// replacement invalidates: replacing add(x, neg(y)) by y turns the second
// match's x into its y's node, which one placeholder cannot share with
// another. The incremental recheck finds the conflict and leaves the
// verdict to the full recheck, which skips the match.
func TestIncrementalRecheckDeclines(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value {
		return b.Call(pAdd, b.Placeholder("x"), b.Call(pNeg, b.Placeholder("y")))
	})
	r := mustGraph(func(b *B) ops.Value {
		b.Placeholder("x")
		return b.Placeholder("y")
	})
	g := mustGraph(func(b *B) ops.Value {
		i0, i1 := b.Placeholder("i0"), b.Placeholder("i1")
		s1 := b.Call(pAdd, i1, b.Call(pNeg, i0))
		return b.Call(pAdd, s1, b.Call(pNeg, i0))
	})
	var st match.RecheckStats
	res, err := match.ReplacePatternWithFilters(g, p, match.Static(r), nil, false,
		match.WithRegistry(ops.NewRegistry()), match.WithRecheckStats(&st))
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, "add", res[0].Match.ReturningNodes[0].Name())
	inc, fl := st.Counts()
	assert.Equal(t, 1, inc, "the first match is rechecked incrementally")
	assert.Equal(t, 1, fl, "the second is declined and rechecked in full")
	out, ok := g.OutputNode()
	require.True(t, ok)
	second := out.Arg(0).(*fxgraph.Node)
	assert.Equal(t, "add_1", second.Name())
	assert.Equal(t, "i0", second.Arg(0).(*fxgraph.Node).Name(), "the first add was replaced by its y, i0")
}
