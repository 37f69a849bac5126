package fxgraph_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/golden"
	"github.com/fxquant/fxquant/ops"
)

// The DOT of the STYLE.md example graph matches its golden file, and two
// renders of one graph are byte-identical (unlike draw.DOT's map order).
func TestDOTGolden(t *testing.T) {
	a, err := golden.ReadArchive("testdata/format/style_example.txtar")
	require.NoError(t, err)
	in, ok := a.Get("input")
	require.True(t, ok)
	g, err := fxgraph.ParseString(string(in))
	require.NoError(t, err)
	out := fxgraph.DOT(g)
	require.Equal(t, out, fxgraph.DOT(g), "second render differs")
	golden.Check(t, "testdata/dot/style_example.dot", []byte(out))
}

// Record labels follow fx-graph.md 2.9: {name=%x|op_code=...|...}, the
// drawer's fixed colours per opcode, lists cut to 8 items, record
// characters escaped, and one edge per (node, user) pair.
func TestDOTRecords(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	w := g.GetAttr("w", nil)
	m := g.CallModule("obs", x)
	long := ops.List{int64(0), int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), int64(7), int64(8), int64(9)}
	c := g.Call(ops.MustOverload("aten.add.Tensor"), m, m, long, "a|b{c}")
	g.SetOutput(ops.Tuple{c, w})
	out := fxgraph.DOT(g)
	for _, want := range []string{
		`"x" [label="{name=%x|op_code=placeholder|target=x|num_users=1}", fillcolor="AliceBlue"];`,
		`"w" [label="{name=%w|op_code=get_attr|target=w|num_users=1}", fillcolor="LightGrey"];`,
		`"obs" [label="{name=%obs|op_code=call_module|target=obs|args=(%x,)|kwargs=\{\}|num_users=1}", fillcolor="LemonChiffon1"];`,
		`args=(%obs, %obs, [0, 1, 2, 3, 4, 5, 6, 7, ...[total_len=10]], 'a\|b\{c\}')`,
		`"output" [label="{name=%output|op_code=output|args=((%add_tensor, %w),)}", fillcolor="PowderBlue"];`,
		"    \"x\" -> \"obs\";\n",
		"    \"obs\" -> \"add_tensor\";\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.Equal(t, 1, strings.Count(out, `"obs" -> "add_tensor"`), "add(obs, obs) is one edge")
}
