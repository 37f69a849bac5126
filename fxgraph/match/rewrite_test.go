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

func replace(t *testing.T, g *fxgraph.Graph, p *match.Pattern, r *fxgraph.Graph, filters ...match.Filter) []match.Replaced {
	t.Helper()
	res, err := match.ReplacePatternWithFilters(g, p, match.Static(r), filters, false, match.WithRegistry(testRegistry()))
	require.NoError(t, err)
	return res
}

func chainOfSigmoids(n int) *fxgraph.Graph {
	return mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		for range n {
			x = b.Call(tSigmoid, x)
		}
		return x
	})
}

// fx-graph.md 9.4 items 32 and 37: 4 chained sigmoids with
// sigmoid(sigmoid(x)) -> neg give neg(neg(x)); the second match's
// placeholder is rewired to the first replacement.
func TestReplaceChainedSigmoids(t *testing.T) {
	g := chainOfSigmoids(4)
	p := mustPattern(func(b *B) ops.Value { return b.Call(tSigmoid, b.Call(tSigmoid, b.Placeholder("x"))) })
	r := mustGraph(func(b *B) ops.Value { return b.Call(tNeg, b.Placeholder("x")) })
	res := replace(t, g, p, r)
	require.Len(t, res, 2)
	assert.Equal(t, `graph():
    %x : [num_users=1] = placeholder[target=x]
    %neg : [num_users=1] = call_function[target=torch.neg](args = (%x,), kwargs = {})
    %neg_1 : [num_users=1] = call_function[target=torch.neg](args = (%neg,), kwargs = {})
    return neg_1
`, dump(g))
	assert.Equal(t, "neg", res[0].Replacements[0].Name())
	assert.Equal(t, "neg_1", res[1].Replacements[0].Name(), "names uniquified (9.4 item 34)")
	// 9.4 item 36: Anchor is a pattern node; matched nodes are erased.
	assert.Equal(t, p.Returning()[0], res[0].Anchor)
	for _, rp := range res {
		for _, n := range rp.Match.GraphNodes() {
			assert.True(t, n.Erased(), "%s erased", n)
		}
	}
	// The second match's placeholder now names the first replacement.
	assert.Equal(t, res[0].Replacements[0], res[1].Match.PlaceholderNodes[0])
}

// 9.4 item 37: add(x, x) -> x over two nested adds gives 2 matches, the
// second with no replacements.
func TestReplaceIdentity(t *testing.T) {
	g := parseGraph(t, `graph():
    %x : [num_users=1] = placeholder[target=x]
    %add : [num_users=1] = call_function[target=operator.add](args = (%x, %x), kwargs = {})
    %add_1 : [num_users=1] = call_function[target=operator.add](args = (%add, %add), kwargs = {})
    return add_1
`)
	p := mustPattern(func(b *B) ops.Value {
		x := b.Placeholder("x")
		return b.Call(oAdd, x, x)
	})
	r := mustGraph(func(b *B) ops.Value { return b.Placeholder("x") })
	res := replace(t, g, p, r)
	require.Len(t, res, 2)
	assert.Empty(t, res[0].Replacements)
	assert.Empty(t, res[1].Replacements)
	assert.Equal(t, `graph():
    %x : [num_users=1] = placeholder[target=x]
    return x
`, dump(g))
}

// 9.4 item 37: pattern `return b, c, a` (a internal and returned) with a
// replacement returning y2, y2, y1.
func TestReplaceMultiOutputReturnsSameNodeTwice(t *testing.T) {
	g := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		a := b.Call(atenRelu, x)
		bb := b.Call(atenSigmoid, a)
		c := b.Call(atenNeg, a)
		return ops.Tuple{b.Call(oAdd, bb, c), a}
	})
	p := mustPattern(func(b *B) ops.Value {
		x := b.Placeholder("x")
		a := b.Call(atenRelu, x)
		return ops.Tuple{b.Call(atenSigmoid, a), b.Call(atenNeg, a), a}
	})
	r := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		y1 := b.Call(tNeg, x)
		y2 := b.Call(tSigmoid, y1)
		return ops.Tuple{y2, y2, y1}
	})
	res := replace(t, g, p, r)
	require.Len(t, res, 1)
	assert.Equal(t, `graph():
    %x : [num_users=1] = placeholder[target=x]
    %neg : [num_users=2] = call_function[target=torch.neg](args = (%x,), kwargs = {})
    %sigmoid : [num_users=1] = call_function[target=torch.sigmoid](args = (%neg,), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%sigmoid, %sigmoid), kwargs = {})
    return (add, neg)
`, dump(g))
}

// 9.4 items 30 and 31: count mismatches are errors that leave the graph
// as it was.
func TestReplaceCountMismatch(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value { return b.Call(tSigmoid, b.Call(tSigmoid, b.Placeholder("x"))) })
	tests := []struct {
		name string
		r    *fxgraph.Graph
		want error
	}{
		{"too many placeholders", mustGraph(func(b *B) ops.Value {
			b.Placeholder("y")
			return b.Call(tNeg, b.Placeholder("x"))
		}), match.ErrPlaceholderCount},
		{"too many outputs", mustGraph(func(b *B) ops.Value {
			x := b.Placeholder("x")
			return ops.Tuple{b.Call(tNeg, x), b.Call(tNeg, x)}
		}), match.ErrOutputCount},
		{"literal output", mustGraph(func(b *B) ops.Value {
			b.Placeholder("x")
			return int64(1)
		}), match.ErrBadReplacement},
		{"missing attribute", mustGraph(func(b *B) ops.Value {
			return b.Call(tAdd, b.Placeholder("x"), b.GetAttr("nowhere"))
		}), match.ErrBadReplacement},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := chainOfSigmoids(4)
			before := dump(g)
			_, err := match.ReplacePattern(g, p, tt.r, match.WithRegistry(testRegistry()))
			require.ErrorIs(t, err, tt.want)
			var re *match.ReplaceError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "%sigmoid_1", re.Anchor)
			assert.Equal(t, before, dump(g), "graph unchanged")
		})
	}
	t.Run("unused replacement parameter is fine", func(t *testing.T) {
		p2 := mustPattern(func(b *B) ops.Value { return b.Call(tAdd, b.Placeholder("a"), b.Placeholder("b")) })
		g := mustGraph(func(b *B) ops.Value { return b.Call(tAdd, b.Placeholder("x"), b.Placeholder("y")) })
		r := mustGraph(func(b *B) ops.Value {
			b.Placeholder("first")
			return b.Call(tNeg, b.Placeholder("second"))
		})
		res := replace(t, g, p2, r)
		require.Len(t, res, 1)
		assert.Equal(t, `graph():
    %x : [num_users=0] = placeholder[target=x]
    %y : [num_users=1] = placeholder[target=y]
    %neg : [num_users=1] = call_function[target=torch.neg](args = (%y,), kwargs = {})
    return neg
`, dump(g),
			"binding by position: the second placeholder gets y; graph placeholders survive")
	})
}

// 9.4 item 33: returning nodes without users: the replacement goes right
// after the last returning node.
func TestReplaceUnusedResult(t *testing.T) {
	g := parseGraph(t, `graph():
    %x : [num_users=2] = placeholder[target=x]
    %relu_default : [num_users=0] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})
    %neg_default : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%x,), kwargs = {})
    return neg_default
`)
	p := mustPattern(func(b *B) ops.Value { return b.Call(atenRelu, b.Placeholder("x")) })
	r := mustGraph(func(b *B) ops.Value { return b.Call(atenSigmoid, b.Placeholder("x")) })
	res := replace(t, g, p, r)
	require.Len(t, res, 1)
	assert.Equal(t, `graph():
    %x : [num_users=2] = placeholder[target=x]
    %sigmoid_default : [num_users=0] = call_function[target=torch.ops.aten.sigmoid.default](args = (%x,), kwargs = {})
    %neg_default : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%x,), kwargs = {})
    return neg_default
`, dump(g))
}

// 9.4 item 37: an escaping internal node gives no replacement; a filter
// keeps 1 of 2 matches.
func TestReplaceEscapingAndFilters(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value { return b.Call(atenNeg, b.Call(atenRelu, b.Placeholder("x"))) })
	r := mustGraph(func(b *B) ops.Value { return b.Call(atenSigmoid, b.Placeholder("x")) })
	g := mustGraph(func(b *B) ops.Value {
		rl := b.Call(atenRelu, b.Placeholder("x"))
		return b.Call(oAdd, b.Call(atenNeg, rl), rl)
	})
	before := dump(g)
	assert.Empty(t, replace(t, g, p, r))
	assert.Equal(t, before, dump(g))

	pf := mustPattern(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), b.Placeholder("k")) })
	g2 := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		return b.Call(foo, b.Call(foo, x, "mode"), int64(2))
	})
	isNumber := func(m *match.Match, _ *fxgraph.Graph, _ *match.Pattern) bool {
		switch m.PlaceholderNodes[1].(type) {
		case int64, float64:
			return true
		}
		return false
	}
	rf := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		return b.Call(tMax, x, b.Placeholder("k"))
	})
	res := replace(t, g2, pf, rf, isNumber)
	require.Len(t, res, 1)
	// FX prints the string "mode" bare.
	assert.Equal(t, `graph():
    %x : [num_users=1] = placeholder[target=x]
    %foo : [num_users=1] = call_function[target=torch.foo](args = (%x, mode), kwargs = {})
    %max_1 : [num_users=1] = call_function[target=torch.max](args = (%foo, 2), kwargs = {})
    return max_1
`, dump(g2), "literal binding substituted; max is a builtin name")

	// A filter that rejects everything leaves the graph byte-identical.
	g3 := chainOfSigmoids(4)
	before = dump(g3)
	none := func(*match.Match, *fxgraph.Graph, *match.Pattern) bool { return false }
	ps := mustPattern(func(b *B) ops.Value { return b.Call(tSigmoid, b.Placeholder("x")) })
	assert.Empty(t, replace(t, g3, ps, r, none))
	assert.Equal(t, before, dump(g3))
}

// pytorch/pytorch#159613: a placeholder bound to a list holding a node an
// earlier replacement replaced follows the replacement.
func TestReplaceListBindingFollowsEarlierReplacement(t *testing.T) {
	g := mustGraph(func(b *B) ops.Value {
		x, x2 := b.Placeholder("x"), b.Placeholder("x2")
		r1 := b.Call(atenRelu, b.Call(atenCat, ops.List{x, x2}))
		return b.Call(atenRelu, b.Call(atenCat, ops.List{r1, x}))
	})
	p := mustPattern(func(b *B) ops.Value { return b.Call(atenRelu, b.Call(atenCat, b.Placeholder("ts"))) })
	r := mustGraph(func(b *B) ops.Value { return b.Call(atenSigmoid, b.Call(atenCat, b.Placeholder("ts"))) })
	res := replace(t, g, p, r)
	require.Len(t, res, 2)
	// Names are never reused after an erase (fx-graph.md 9.1 item 10).
	assert.Equal(t, `graph():
    %x : [num_users=2] = placeholder[target=x]
    %x2 : [num_users=1] = placeholder[target=x2]
    %cat_default_2 : [num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%x, %x2],), kwargs = {})
    %sigmoid_default : [num_users=1] = call_function[target=torch.ops.aten.sigmoid.default](args = (%cat_default_2,), kwargs = {})
    %cat_default_3 : [num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%sigmoid_default, %x],), kwargs = {})
    %sigmoid_default_1 : [num_users=1] = call_function[target=torch.ops.aten.sigmoid.default](args = (%cat_default_3,), kwargs = {})
    return sigmoid_default_1
`, dump(g))
}

// 9.4 item 35: attributes of the replacement are copied when the graph
// lacks them; the graph's own are kept.
func TestReplaceAttributes(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value { return b.Call(atenRelu, b.Placeholder("x")) })
	r := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		return b.Call(atenAdd, b.Call(atenAdd, x, b.GetAttr("bias")), b.GetAttr("shift"))
	})
	rBias, rShift := tensor.F32([]int{1}, 1), tensor.F32([]int{1}, 2)
	gShift := tensor.F32([]int{1}, 3)
	r.SetAttr("bias", rBias)
	r.SetAttr("shift", rShift)
	g := mustGraph(func(b *B) ops.Value { return b.Call(atenRelu, b.Placeholder("x")) })
	g.SetAttr("shift", gShift)
	replace(t, g, p, r)
	a, ok := g.Attr("bias")
	require.True(t, ok)
	assert.Same(t, rBias, a)
	a, _ = g.Attr("shift")
	assert.Same(t, gShift, a, "the graph's attribute is kept")
}

// Types and metadata of replacement nodes are derived on purpose: a
// returned value takes the type and (when the replacement has none) the
// metadata of the value it replaces; other nodes keep the replacement's.
func TestReplaceTypesAndMeta(t *testing.T) {
	qt, err := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, 0.5, 3)
	require.NoError(t, err)
	i8q := ops.TensorType{Shape: []int64{2, 4}, Elem: qt}
	f32 := ops.Plain(tensor.Float32, 2, 4)
	build := func() *fxgraph.Graph {
		return mustGraph(func(b *B) ops.Value {
			x := b.Typed(b.Placeholder("x"), i8q)
			d := b.Typed(b.Call(dqDefault, x, 0.5, int64(3), int64(-128), int64(127), tensor.Int8), f32)
			d.Meta.StackTrace = "model.py:12"
			return b.Typed(b.Call(atenRelu, d), f32)
		})
	}
	p := mustPattern(func(b *B) ops.Value {
		return b.Call(dqDefault, b.Placeholder("x"), b.Placeholder("s"), b.Placeholder("z"), int64(-128), int64(127), tensor.Int8)
	})
	t.Run("derived", func(t *testing.T) {
		r := mustGraph(func(b *B) ops.Value {
			x, s, z := b.Placeholder("x"), b.Placeholder("s"), b.Placeholder("z")
			i32 := b.Typed(b.CallMethod("to", x, tensor.Int32), ops.Plain(tensor.Int32, 2, 4))
			sub := b.Call(tAdd, i32, z) // no type given
			return b.Call(oMul, sub, s)
		})
		g := build()
		res := replace(t, g, p, r)
		require.Len(t, res, 1)
		news := res[0].Replacements
		require.Len(t, news, 3)
		assert.Equal(t, "i32[2, 4]", news[0].Type().String(), "replacement type kept")
		assert.Nil(t, news[1].Type(), "no type invented, none copied from the input")
		assert.True(t, f32.Equal(news[2].Type()), "returned node takes the replaced value's type, not the input's %v", i8q)
		assert.Equal(t, "model.py:12", news[2].Meta.StackTrace)
		assert.Equal(t, "", news[0].Meta.StackTrace)
	})
	t.Run("mismatch leaves graph unchanged", func(t *testing.T) {
		r := mustGraph(func(b *B) ops.Value {
			x := b.Placeholder("x")
			b.Placeholder("s")
			b.Placeholder("z")
			return b.Typed(b.CallMethod("to", x, tensor.Int32), ops.Plain(tensor.Int32, 2, 4))
		})
		g := build()
		before := dump(g)
		_, err := match.ReplacePattern(g, p, r, match.WithRegistry(testRegistry()))
		require.ErrorIs(t, err, match.ErrTypeMismatch)
		assert.Contains(t, err.Error(), "element type")
		assert.Equal(t, before, dump(g))
		d, ok := g.NodeByName("dequantize_per_tensor_default")
		require.True(t, ok)
		assert.Equal(t, "model.py:12", d.Meta.StackTrace, "metadata kept (the printed form does not show it)")
	})
	t.Run("identity onto a value of another type is refused", func(t *testing.T) {
		r := mustGraph(func(b *B) ops.Value {
			x := b.Placeholder("x")
			b.Placeholder("s")
			b.Placeholder("z")
			return x
		})
		g := build()
		before := dump(g)
		_, err := match.ReplacePattern(g, p, r, match.WithRegistry(testRegistry()))
		require.ErrorIs(t, err, match.ErrTypeMismatch)
		assert.Equal(t, before, dump(g))
	})
}

// A replacement callback sees each match; returning an error aborts the
// whole rewrite before any change.
func TestReplaceCallback(t *testing.T) {
	g := chainOfSigmoids(4)
	p := mustPattern(func(b *B) ops.Value { return b.Call(tSigmoid, b.Call(tSigmoid, b.Placeholder("x"))) })
	calls := 0
	cb := func(m *match.Match, _ *fxgraph.Graph, _ *match.Pattern) (*fxgraph.Graph, error) {
		calls++
		name := m.ReturningNodes[0].Name()
		return match.NewGraph(func(b *B) ops.Value {
			return b.Call(ops.Callable{Module: "torch", Name: "r_" + name}, b.Placeholder("x"))
		})
	}
	res, err := match.ReplacePatternWithFilters(g, p, cb, nil, false, match.WithRegistry(testRegistry()))
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, 2, calls)
	assert.Equal(t, `graph():
    %x : [num_users=1] = placeholder[target=x]
    %r_sigmoid_1 : [num_users=1] = call_function[target=torch.r_sigmoid_1](args = (%x,), kwargs = {})
    %r_sigmoid_3 : [num_users=1] = call_function[target=torch.r_sigmoid_3](args = (%r_sigmoid_1,), kwargs = {})
    return r_sigmoid_3
`, dump(g))

	g = chainOfSigmoids(4)
	before := dump(g)
	n := 0
	failSecond := func(m *match.Match, gg *fxgraph.Graph, pp *match.Pattern) (*fxgraph.Graph, error) {
		n++
		if n == 2 {
			return nil, assert.AnError
		}
		return cb(m, gg, pp)
	}
	_, err = match.ReplacePatternWithFilters(g, p, failSecond, nil, false)
	require.ErrorIs(t, err, assert.AnError)
	assert.Equal(t, before, dump(g))
}

// Replacing a pattern with itself keeps the graph's structure (9.4 item 37).
func TestReplaceWithItself(t *testing.T) {
	fn := func(b *B) ops.Value {
		a := b.Call(atenNeg, b.Placeholder("x"))
		return b.Call(atenAdd, a, a)
	}
	g := mustGraph(fn)
	p := mustPattern(fn)
	res := replace(t, g, p, mustGraph(fn))
	require.Len(t, res, 1)
	assert.Equal(t, `graph():
    %x : [num_users=1] = placeholder[target=x]
    %neg_default_1 : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%x,), kwargs = {})
    %add_tensor_1 : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%neg_default_1, %neg_default_1), kwargs = {})
    return add_tensor_1
`, dump(g))
}
