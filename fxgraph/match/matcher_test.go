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

var foo = ops.Callable{Module: "torch", Name: "foo"}

func count(t *testing.T, g *fxgraph.Graph, p *match.Pattern, opts ...match.Option) []*match.Match {
	t.Helper()
	ms, err := match.Find(g, p, append([]match.Option{match.WithRegistry(testRegistry())}, opts...)...)
	require.NoError(t, err)
	return ms
}

// fx-graph.md 9.3 item 15: an unused placeholder is rejected when the
// pattern is built, with an error naming it.
func TestUnusedPlaceholderRejected(t *testing.T) {
	_, err := match.NewPattern(func(b *B) ops.Value {
		x := b.Placeholder("x")
		b.Placeholder("scale")
		return b.Call(atenRelu, x)
	})
	require.ErrorIs(t, err, match.ErrBadPattern)
	var pe *match.PatternError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "scale", pe.Node)
	assert.Contains(t, err.Error(), `"scale"`)
	assert.Contains(t, err.Error(), "unused")

	// The same rule for a pattern taken from a graph.
	g := mustGraph(func(b *B) ops.Value {
		b.Placeholder("unused")
		return b.Call(atenRelu, b.Placeholder("x"))
	})
	_, err = match.FromGraph(g, nil, nil)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "unused", pe.Node)
}

func TestBadPatterns(t *testing.T) {
	tests := []struct {
		name string
		fn   func(b *B) ops.Value
		node string
	}{
		{"dead code", func(b *B) ops.Value {
			x := b.Placeholder("x")
			b.Call(atenNeg, x)
			return b.Call(atenRelu, x)
		}, "neg_default"},
		{"returns only a literal", func(b *B) ops.Value {
			return int64(3)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := match.NewPattern(tt.fn)
			var pe *match.PatternError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.node, pe.Node)
		})
	}
	t.Run("builder misuse", func(t *testing.T) {
		_, err := match.NewPattern(func(b *B) ops.Value {
			x := b.Placeholder("x")
			r := b.Call(atenRelu, x)
			b.Name("r", r)
			b.Name("r", x)
			b.AnyTarget(x, ops.NewTargetSet(atenRelu))
			return r
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `Name("r")`)
		assert.Contains(t, err.Error(), "want call_function")
	})
	t.Run("nil", func(t *testing.T) {
		_, err := match.NewPattern(nil)
		require.Error(t, err)
		_, err = match.FromGraph(nil, nil, nil)
		require.Error(t, err)
		_, err = match.NewMatcher(nil)
		require.Error(t, err)
	})
}

// 9.3 item 16: an anchor without candidates in a multi-anchor pattern
// gives zero matches, not an error.
func TestAnchorWithoutCandidates(t *testing.T) {
	g := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		return ops.Tuple{b.Call(atenRelu, x), b.Call(atenNeg, x)}
	})
	p := mustPattern(func(b *B) ops.Value {
		a := b.Placeholder("a")
		return ops.Tuple{b.Call(atenRelu, a), b.Call(atenSigmoid, a)}
	})
	assert.Empty(t, count(t, g, p))
}

// 9.3 item 17: literals versus placeholders.
func TestLiteralsAndPlaceholders(t *testing.T) {
	fooXY := mustPattern(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), b.Placeholder("y")) })
	fooX3 := mustPattern(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), int64(3)) })
	g3 := mustGraph(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), int64(3)) })
	gY := mustGraph(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), b.Placeholder("y")) })

	t.Run("placeholder binds literal", func(t *testing.T) {
		ms := count(t, g3, fooXY)
		require.Len(t, ms, 1)
		y := fooXY.Placeholders()[1]
		v, ok := ms[0].Lookup(y)
		require.True(t, ok)
		assert.Equal(t, int64(3), v)
		assert.Equal(t, []ops.Value{ms[0].PlaceholderNodes[0], int64(3)}, ms[0].PlaceholderNodes)
	})
	t.Run("literal does not match node", func(t *testing.T) {
		assert.Empty(t, count(t, gY, fooX3))
	})
	t.Run("x+1 vs x+2", func(t *testing.T) {
		g := mustGraph(func(b *B) ops.Value { return b.Call(oAdd, b.Placeholder("x"), int64(2)) })
		p := mustPattern(func(b *B) ops.Value { return b.Call(oAdd, b.Placeholder("x"), int64(1)) })
		assert.Empty(t, count(t, g, p))
		assert.Len(t, count(t, g, p, match.IgnoreLiterals(true)), 1)
	})
	t.Run("1 vs 1.0 vs true", func(t *testing.T) {
		p := mustPattern(func(b *B) ops.Value { return b.Call(oAdd, b.Placeholder("x"), int64(1)) })
		for _, lit := range []ops.Value{float64(1), true} {
			g := mustGraph(func(b *B) ops.Value { return b.Call(oAdd, b.Placeholder("x"), lit) })
			assert.Empty(t, count(t, g, p), "%T", lit)
		}
	})
	t.Run("repeated placeholder binds equal literals only", func(t *testing.T) {
		p := mustPattern(func(b *B) ops.Value {
			y := b.Placeholder("y")
			return b.Call(foo, b.Placeholder("x"), y, y)
		})
		same := mustGraph(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), int64(3), int64(3)) })
		diff := mustGraph(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), int64(3), int64(4)) })
		assert.Len(t, count(t, same, p), 1)
		assert.Empty(t, count(t, diff, p))
	})
	t.Run("dtype literal must be equal", func(t *testing.T) {
		p := mustPattern(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), tensor.Int8) })
		gi8 := mustGraph(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), tensor.Int8) })
		gu8 := mustGraph(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), tensor.UInt8) })
		assert.Len(t, count(t, gi8, p), 1)
		assert.Empty(t, count(t, gu8, p))
	})
}

// 9.3 item 18: placeholders bind injectively and consistently.
func TestPlaceholderBindingRules(t *testing.T) {
	addAA := mustPattern(func(b *B) ops.Value {
		a := b.Placeholder("a")
		return b.Call(atenAdd, a, a)
	})
	addAB := mustPattern(func(b *B) ops.Value { return b.Call(atenAdd, b.Placeholder("a"), b.Placeholder("b")) })
	gVV := mustGraph(func(b *B) ops.Value {
		v := b.Placeholder("v")
		return b.Call(atenAdd, v, v)
	})
	gVW := mustGraph(func(b *B) ops.Value { return b.Call(atenAdd, b.Placeholder("v"), b.Placeholder("w")) })
	assert.Len(t, count(t, gVV, addAA), 1, "add(a, a) vs add(v, v)")
	assert.Empty(t, count(t, gVW, addAA), "add(a, a) vs add(v, w)")
	assert.Empty(t, count(t, gVV, addAB), "add(a, b) vs add(v, v)")
	assert.Len(t, count(t, gVW, addAB), 1, "add(a, b) vs add(v, w)")
}

// 9.3 item 19: lists and tuples.
func TestListsAndTuples(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value {
		y := b.Placeholder("y")
		z := b.Placeholder("z")
		return b.CallMethod("view", y, ops.List{z, b.Call(ops.GetItem, b.CallMethod("size", y), int64(0))})
	})
	good := mustGraph(func(b *B) ops.Value {
		y := b.Placeholder("y")
		return b.CallMethod("view", y, ops.Tuple{int64(5), b.Call(ops.GetItem, b.CallMethod("size", y), int64(0))})
	})
	bad := mustGraph(func(b *B) ops.Value {
		y := b.Placeholder("y")
		return b.CallMethod("view", y, ops.List{int64(5), b.Call(ops.GetItem, b.CallMethod("size", y), int64(0)), int64(1)})
	})
	ms := count(t, good, p)
	require.Len(t, ms, 1)
	assert.Equal(t, int64(5), ms[0].PlaceholderNodes[1], "z binds 5")
	assert.Empty(t, count(t, bad, p), "lists of different lengths")

	t.Run("placeholder binds a whole list", func(t *testing.T) {
		p := mustPattern(func(b *B) ops.Value { return b.Call(atenCat, b.Placeholder("tensors")) })
		var x, c *fxgraph.Node
		g := mustGraph(func(b *B) ops.Value {
			x = b.Placeholder("x")
			c = b.Call(atenNeg, x)
			return b.Call(atenCat, ops.List{c, x})
		})
		ms := count(t, g, p)
		require.Len(t, ms, 1)
		assert.Equal(t, ops.List{c, x}, ms[0].PlaceholderNodes[0])
	})
}

// 9.3 item 20: keyword arguments and schema normalisation.
func TestKwargsAndNormalization(t *testing.T) {
	reorder := func(target ops.Target) (*fxgraph.Graph, *match.Pattern) {
		g := mustGraph(func(b *B) ops.Value {
			return b.CallKw(target, []ops.Value{b.Placeholder("x")}, ops.Kwarg{Name: "scale", Value: 0.5}, ops.Kwarg{Name: "zero_point", Value: int64(3)})
		})
		p := mustPattern(func(b *B) ops.Value {
			return b.CallKw(target, []ops.Value{b.Placeholder("x")}, ops.Kwarg{Name: "zero_point", Value: int64(3)}, ops.Kwarg{Name: "scale", Value: 0.5})
		})
		return g, p
	}
	t.Run("kwarg order matters without a schema", func(t *testing.T) {
		g, p := reorder(foo)
		assert.Empty(t, count(t, g, p))
	})
	t.Run("kwarg order is normalised for an overload", func(t *testing.T) {
		g, p := reorder(qDefault)
		// quantize_per_tensor needs all six arguments; give them by keyword.
		g = mustGraph(func(b *B) ops.Value {
			return b.CallKw(qDefault, []ops.Value{b.Placeholder("x")},
				ops.Kwarg{Name: "scale", Value: 0.5}, ops.Kwarg{Name: "zero_point", Value: int64(3)},
				ops.Kwarg{Name: "quant_min", Value: int64(-128)}, ops.Kwarg{Name: "quant_max", Value: int64(127)},
				ops.Kwarg{Name: "dtype", Value: tensor.Int8})
		})
		p = mustPattern(func(b *B) ops.Value {
			return b.CallKw(qDefault, []ops.Value{b.Placeholder("x"), 0.5, int64(3)},
				ops.Kwarg{Name: "dtype", Value: tensor.Int8},
				ops.Kwarg{Name: "quant_max", Value: int64(127)}, ops.Kwarg{Name: "quant_min", Value: int64(-128)})
		})
		assert.Len(t, count(t, g, p), 1)
		// Without the schema in the registry the forms differ.
		ms, err := match.Find(g, p, match.WithRegistry(ops.NewRegistry()))
		require.NoError(t, err)
		assert.Empty(t, ms)
	})
	t.Run("explicit default matches an omitted one", func(t *testing.T) {
		p := mustPattern(func(b *B) ops.Value {
			return b.Call(atenLinear, b.Placeholder("x"), b.Placeholder("w"), nil)
		})
		g := mustGraph(func(b *B) ops.Value { return b.Call(atenLinear, b.Placeholder("x"), b.Placeholder("w")) })
		assert.Len(t, count(t, g, p), 1)
		gAlpha := mustGraph(func(b *B) ops.Value {
			return b.CallKw(atenAdd, []ops.Value{b.Placeholder("x"), b.Placeholder("y")}, ops.Kwarg{Name: "alpha", Value: int64(1)})
		})
		pAdd := mustPattern(func(b *B) ops.Value { return b.Call(atenAdd, b.Placeholder("x"), b.Placeholder("y")) })
		assert.Len(t, count(t, gAlpha, pAdd), 1, "alpha=1 is add's default")
		gAlpha2 := mustGraph(func(b *B) ops.Value {
			return b.CallKw(atenAdd, []ops.Value{b.Placeholder("x"), b.Placeholder("y")}, ops.Kwarg{Name: "alpha", Value: int64(2)})
		})
		assert.Empty(t, count(t, gAlpha2, pAdd), "alpha=2 differs from the default")
	})
	t.Run("pattern kwargs match positional graph args", func(t *testing.T) {
		p := mustPattern(func(b *B) ops.Value {
			return b.CallKw(atenLinear, []ops.Value{b.Placeholder("a"), b.Placeholder("b")}, ops.Kwarg{Name: "bias", Value: b.Placeholder("bias")})
		})
		g := mustGraph(func(b *B) ops.Value {
			return b.Call(atenLinear, b.Placeholder("x"), b.Placeholder("w"), b.Placeholder("bias"))
		})
		ms := count(t, g, p)
		require.Len(t, ms, 1)
		assert.Equal(t, "bias", ms[0].PlaceholderNodes[2].(*fxgraph.Node).Name())
	})
}

// 9.3 item 25: under match_placeholder a placeholder still binds a literal.
func TestMatchPlaceholderBindsLiteral(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), b.Placeholder("y")) })
	g := mustGraph(func(b *B) ops.Value { return b.Call(foo, b.Placeholder("x"), int64(3)) })
	ms := count(t, g, p, match.MatchPlaceholder(true))
	require.Len(t, ms, 1)
	assert.Equal(t, int64(3), ms[0].PlaceholderNodes[1])
}

// 9.2 item 14 and the TargetSet option.
func TestPacketVersusOverload(t *testing.T) {
	gDefault := mustGraph(func(b *B) ops.Value { return b.Call(atenLinear, b.Placeholder("x"), b.Placeholder("w")) })
	gPacket := mustGraph(func(b *B) ops.Value { return b.Call(atenLinearP, b.Placeholder("x"), b.Placeholder("w")) })
	pPacket := mustPattern(func(b *B) ops.Value { return b.Call(atenLinearP, b.Placeholder("x"), b.Placeholder("w")) })
	pDefault := mustPattern(func(b *B) ops.Value { return b.Call(atenLinear, b.Placeholder("x"), b.Placeholder("w")) })
	assert.Empty(t, count(t, gDefault, pPacket), "packet pattern vs .default graph")
	assert.Empty(t, count(t, gPacket, pDefault), ".default pattern vs packet graph")
	assert.Len(t, count(t, gDefault, pDefault), 1)
	assert.Len(t, count(t, gPacket, pPacket), 1)

	set := &ops.TargetSet{}
	set.AddPacketAndOverloads(atenLinearP)
	pAny := mustPattern(func(b *B) ops.Value {
		return b.AnyTarget(b.Call(atenLinearP, b.Placeholder("x"), b.Placeholder("w")), set)
	})
	assert.Len(t, count(t, gDefault, pAny), 1, "target set vs .default")
	assert.Len(t, count(t, gPacket, pAny), 1, "target set vs packet")

	// A target-set node normalises against the graph node's overload.
	gBias := mustGraph(func(b *B) ops.Value {
		return b.CallKw(atenLinear, []ops.Value{b.Placeholder("x"), b.Placeholder("w")}, ops.Kwarg{Name: "bias", Value: nil})
	})
	assert.Len(t, count(t, gBias, pAny), 1, "target set, bias=None given by keyword")
}

// 9.3 item 27: get_attr matches a tensor attribute, not a module.
func TestGetAttr(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value { return b.Call(atenNeg, b.GetAttr("anything")) })
	g := mustGraph(func(b *B) ops.Value { return b.Call(atenNeg, b.GetAttr("w")) })
	g.SetAttr("w", tensor.F32([]int{2}, 1, 2))
	assert.Len(t, count(t, g, p), 1, "tensor attribute, any name")
	gMod := mustGraph(func(b *B) ops.Value { return b.Call(atenNeg, b.GetAttr("m")) })
	gMod.SetAttr("m", struct{ Name string }{"observer"})
	assert.Empty(t, count(t, gMod, p), "non-tensor attribute")
}

// 9.3 item 28: call_module compares paths; node_name_match.
func TestCallModuleAndNodeNameMatch(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value { return b.CallModule("layer.conv", b.Placeholder("x")) })
	same := mustGraph(func(b *B) ops.Value { return b.CallModule("layer.conv", b.Placeholder("x")) })
	other := mustGraph(func(b *B) ops.Value { return b.CallModule("layer.conv2", b.Placeholder("x")) })
	assert.Len(t, count(t, same, p), 1)
	assert.Empty(t, count(t, other, p))

	relu := mustPattern(func(b *B) ops.Value { return b.Call(atenRelu, b.Placeholder("x")) })
	g := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		return b.Call(atenAdd, b.Call(atenNeg, x), b.Call(atenSigmoid, x))
	})
	ms := count(t, g, relu, match.NodeNameMatch("sigm"))
	require.Len(t, ms, 1)
	assert.Equal(t, "sigmoid_default", ms[0].ReturningNodes[0].Name())
}

// 9.3 item 29 and 4.6: the name map.
func TestNameNodeMap(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value {
		x := b.Name("input", b.Placeholder("x"))
		s := b.Name("scale", b.Placeholder("s"))
		l := b.Name("linear", b.Call(atenLinear, x, b.Placeholder("w")))
		return b.Name("relu", b.Call(foo, b.Call(atenRelu, l), s))
	})
	assert.Equal(t, []string{"input", "linear", "relu", "scale"}, p.Names())
	g := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("act")
		return b.Call(foo, b.Call(atenRelu, b.Call(atenLinear, x, b.Placeholder("weight"))), 0.25)
	})
	ms := count(t, g, p)
	require.Len(t, ms, 1)
	m := ms[0]
	assert.Equal(t, "act", m.Node("input").Name())
	assert.Equal(t, "linear_default", m.Node("linear").Name())
	assert.Equal(t, "foo", m.Node("relu").Name())
	v, ok := m.Named("scale")
	require.True(t, ok)
	assert.Equal(t, 0.25, v)
	assert.Nil(t, m.Node("scale"), "a literal binding is not a node")
	assert.Len(t, m.NameNodeMap(), 4)
	_, ok = m.Named("nope")
	assert.False(t, ok)
}

// A match's node map lists the anchor first, then the backward walk's
// pre-order (fx-graph.md 4.5).
func TestNodesMapOrder(t *testing.T) {
	p := mustPattern(func(b *B) ops.Value {
		return b.Call(atenAdd, b.Call(atenNeg, b.Placeholder("x")), b.Placeholder("y"))
	})
	g := mustGraph(func(b *B) ops.Value {
		return b.Call(atenAdd, b.Call(atenNeg, b.Placeholder("a")), b.Placeholder("b"))
	})
	ms := count(t, g, p)
	require.Len(t, ms, 1)
	var got []string
	for _, bnd := range ms[0].NodesMap() {
		got = append(got, bnd.Pattern.Name()+"="+bnd.Value.(*fxgraph.Node).Name())
	}
	assert.Equal(t, []string{"add_tensor=add_tensor", "neg_default=neg_default", "x=a", "y=b"}, got)
	assert.Equal(t, []*fxgraph.Node{p.Returning()[0]}, ms[0].Anchors)
}

// A graph whose program order puts a matched node after the anchor (a
// node using a later node: malformed, but reachable through MoveAfter)
// still matches, as it does through a prebuilt index.
func TestMatchNodeAfterAnchor(t *testing.T) {
	g := mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		r := b.Call(atenRelu, x)
		n := b.Call(atenNeg, r)
		return b.Call(atenSigmoid, n)
	})
	relu, ok := g.NodeByName("relu_default")
	require.True(t, ok)
	neg, ok := g.NodeByName("neg_default")
	require.True(t, ok)
	require.NoError(t, g.MoveAfter(relu, neg)) // x, neg, relu, sigmoid, output
	p := mustPattern(func(b *B) ops.Value { return b.Call(atenNeg, b.Call(atenRelu, b.Placeholder("x"))) })
	ms := count(t, g, p)
	require.Len(t, ms, 1)
	assert.Equal(t, "relu_default neg_default", names(ms[0]))

	mr, err := match.NewMatcher(p, match.WithRegistry(testRegistry()))
	require.NoError(t, err)
	viaIndex, err := mr.MatchIndex(match.NewIndex(g))
	require.NoError(t, err)
	require.Len(t, viaIndex, 1)
	assert.Equal(t, ms[0].String(), viaIndex[0].String())
}
