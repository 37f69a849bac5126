package match_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

var atenAssertMeta = ops.MustOverload("aten._assert_tensor_metadata.default")

// TestImpureUnusedPatternNode follows torch 2.14's SubgraphMatcher on a
// pattern that torch.export writes for `relu(x.to(float32))`-like code: an
// unused aten._assert_tensor_metadata next to the computation. torch only
// refuses unused nodes that are pure (matcher_utils.py: `not
// node.is_impure()` guards the dead-code assertion); the anchors are the
// output's inputs and the search walks only their arguments, so the assert
// is never bound, and the graph's own assert (a user of the placeholder's
// match, which the containment check skips) is left alone. Checked with
// torch 2.14.1: SubgraphMatcher finds one match binding {x, relu}.
// torch's replace_pattern then raises KeyError on the unbound pattern node
// after rewiring the uses (a half-rewritten graph); fxquant's rewrite
// replaces the bound nodes and keeps the graph's assert.
func TestImpureUnusedPatternNode(t *testing.T) {
	withAssert := func(b *match.Builder) ops.Value {
		x := b.Placeholder("x")
		b.Call(atenAssertMeta, x, nil, nil, tensor.Float32)
		return b.Call(atenRelu, x)
	}
	p, err := match.NewPattern(withAssert)
	require.NoError(t, err, "an impure unused node is not dead code")

	g := mustGraph(func(b *match.Builder) ops.Value {
		x := b.Placeholder("x")
		b.Call(atenAssertMeta, x, nil, nil, tensor.Float32)
		return b.Call(atenNeg, b.Call(atenRelu, x))
	})
	m, err := match.NewMatcher(p)
	require.NoError(t, err)
	ms, err := m.Match(g)
	require.NoError(t, err)
	require.Len(t, ms, 1)

	repl := mustGraph(func(b *match.Builder) ops.Value { return b.Call(atenSigmoid, b.Placeholder("x")) })
	rs, err := match.ReplacePattern(g, p, repl)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	var targets []string
	for _, n := range g.Nodes() {
		if n.Op() == fxgraph.CallFunction {
			targets = append(targets, n.Target().String())
		}
	}
	assert.Equal(t, []string{"aten._assert_tensor_metadata.default", "aten.sigmoid.default", "aten.neg.default"}, targets)

	// A pure unused node is still dead code.
	_, err = match.NewPattern(func(b *match.Builder) ops.Value {
		x := b.Placeholder("x")
		b.Call(atenNeg, x)
		return b.Call(atenRelu, x)
	})
	var pe *match.PatternError
	require.ErrorAs(t, err, &pe)
}
