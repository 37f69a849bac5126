package typed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/typed"
)

// opPattern replaces the node named target by a call of op on it, typed
// as the node it replaces.
type opPattern struct {
	target string
	op     ops.Target
}

func (opPattern) Name() string { return "op_pattern" }

func (p opPattern) Match(root *fxgraph.Node) (typed.Plan, string) {
	if root.Name() != p.target {
		return nil, ""
	}
	return opPlan{root: root, op: p.op}, ""
}

type opPlan struct {
	root *fxgraph.Node
	op   ops.Target
}

func (p opPlan) Apply(rw *typed.Rewriter) error {
	restore := rw.InsertBefore(p.root)
	defer restore()
	n := rw.Call(p.op, []ops.Value{p.root.Arg(0)}, nil, p.root.Type())
	return rw.Replace(p.root, n)
}

// TestRewriteOfOpWithoutRuleFails: a typed rewrite that creates a node of
// an op without a result-type rule (aten.sinh, known from
// PyTorch's table only) fails with ErrNoRule naming the op, and leaves the
// graph as it was; the same rewrite with an op that has a rule succeeds.
func TestRewriteOfOpWithoutRuleFails(t *testing.T) {
	c := chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5, trailing: true,
		gc: []float32{1, 2, 3, 4, 5, 6}, hc: []float32{0, 0, 0, 0, 0, 0}}
	g, nodes := c.build(t)
	before := fxgraph.Format(g)
	_, err := typed.Canonicalize(g, typed.CanonOptions{
		Patterns: []typed.Pattern{opPattern{target: nodes["add"].Name(), op: ops.MustOverload("aten.sinh.default")}}})
	require.ErrorIs(t, err, typed.ErrNoRule)
	assert.Contains(t, err.Error(), "aten.sinh.default")
	assert.Equal(t, before, fxgraph.Format(g), "the failed rewrite leaves the graph as it was")

	g, nodes = c.build(t)
	_, err = typed.Canonicalize(g, typed.CanonOptions{MaxIterations: 1,
		Patterns: []typed.Pattern{opPattern{target: nodes["add"].Name(), op: ops.MustOverload("aten.relu.default")}}})
	require.NoError(t, err)
}
