package match_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

type B = match.Builder

// na marks a combination the reference table does not give.
const na = -1

// The cases of fx-graph.md 4.8 (pytorch/pytorch test/test_fx_passes.py,
// TestFXMatcherUtils), graphs written as symbolic_trace records them:
// torch functions and operator.* as call_function, tensor methods as
// call_method. Node names follow FX (fx-graph.md 1.6): "sum" is a Python
// builtin, so the first sum node is sum_1.
var table48 = []struct {
	name    string
	graph   func(b *B) ops.Value
	pattern func(b *B) ops.Value
	// counts for (match_output, match_placeholder) = (F,F), (T,F), (F,T), (T,T)
	counts [4]int
	// keep is the (F,F) count with remove_overlapping_matches=False (na: not given)
	keep int
	// ff lists, per (F,F) match, the graph nodes bound to the pattern's
	// compute nodes in pattern order.
	ff []string
}{
	{
		name: "SingleNode",
		graph: func(b *B) ops.Value {
			x := b.Placeholder("x")
			v := b.Call(tNeg, x)
			return b.Call(tAdd, v, v)
		},
		pattern: func(b *B) ops.Value { return b.Call(tNeg, b.Placeholder("a")) },
		counts:  [4]int{1, 0, 1, 0}, keep: na, ff: []string{"neg"},
	},
	{
		name: "Simple",
		graph: func(b *B) ops.Value {
			x, w1, w2 := b.Placeholder("x"), b.Placeholder("w1"), b.Placeholder("w2")
			m1 := b.CallMethod("sum", b.Call(tCat, ops.List{w1, w2}))
			m2 := b.CallMethod("sum", b.Call(tCat, ops.List{w2, w1}))
			m3 := b.CallMethod("sum", b.Call(tCat, ops.List{m1, m2}))
			a1 := b.Call(oAdd, x, b.Call(tMax, m1))
			a2 := b.Call(oAdd, a1, b.Call(tMax, m2))
			return b.Call(oAdd, a2, m3)
		},
		pattern: func(b *B) ops.Value {
			a, c := b.Placeholder("a"), b.Placeholder("b")
			return b.CallMethod("sum", b.Call(tCat, ops.List{a, c}))
		},
		counts: [4]int{3, 0, 2, 0}, keep: na, ff: []string{"cat sum_1", "cat_1 sum_2", "cat_2 sum_3"},
	},
	{
		name: "FullGraph",
		graph: func(b *B) ops.Value {
			a := b.Call(tNeg, b.Placeholder("x"))
			return b.Call(tAdd, a, a)
		},
		pattern: func(b *B) ops.Value {
			a := b.Call(tNeg, b.Placeholder("x"))
			return b.Call(tAdd, a, a)
		},
		counts: [4]int{1, 1, 1, 1}, keep: na, ff: []string{"neg add"},
	},
	{
		name: "Diamond",
		graph: func(b *B) ops.Value {
			a := b.CallMethod("relu", b.Call(tNeg, b.Placeholder("x")))
			return b.Call(oAdd, b.CallMethod("sigmoid", a), b.CallMethod("relu", a))
		},
		pattern: func(b *B) ops.Value {
			a := b.CallMethod("relu", b.Placeholder("a"))
			return b.Call(oAdd, b.CallMethod("sigmoid", a), b.CallMethod("relu", a))
		},
		counts: [4]int{1, 1, 0, 0}, keep: na, ff: []string{"relu sigmoid relu_1 add"},
	},
	{
		name: "NonFullyContained",
		graph: func(b *B) ops.Value {
			x, w1, w2, b1, b2 := b.Placeholder("x"), b.Placeholder("w1"), b.Placeholder("w2"), b.Placeholder("b1"), b.Placeholder("b2")
			m1 := b.Call(tCat, ops.List{w1, w2})
			m2 := b.Call(tCat, ops.List{x, b2})
			t0 := b.Call(tAddmm, b1, m1, b.CallMethod("t", m2))
			t0sum := b.Call(tSum, t0)
			m3 := b.Call(tCat, ops.List{w1, w2})
			m4 := b.Call(tCat, ops.List{x, b2})
			b.Call(tAddmm, b1, m3, b.CallMethod("t", m4)) // t1, unused
			m3sum := b.Call(tSum, m3)
			return ops.Tuple{t0sum, m3sum}
		},
		pattern: func(b *B) ops.Value {
			x, w1, w2, b1, b2 := b.Placeholder("x"), b.Placeholder("w1"), b.Placeholder("w2"), b.Placeholder("b1"), b.Placeholder("b2")
			m1 := b.Call(tCat, ops.List{w1, w2})
			m2 := b.Call(tCat, ops.List{x, b2})
			return b.Call(tAddmm, b1, m1, b.CallMethod("t", m2))
		},
		counts: [4]int{1, 0, 1, na}, keep: na, ff: []string{"cat cat_1 t addmm"},
	},
	{
		name: "ChainRepeated",
		graph: func(b *B) ops.Value {
			x := b.Placeholder("x")
			for range 4 {
				x = b.Call(tSigmoid, x)
			}
			return x
		},
		pattern: func(b *B) ops.Value { return b.Call(tSigmoid, b.Call(tSigmoid, b.Placeholder("x"))) },
		counts:  [4]int{2, 1, 1, 0}, keep: 3, ff: []string{"sigmoid sigmoid_1", "sigmoid_2 sigmoid_3"},
	},
	{
		name: "QuantizationModel",
		graph: func(b *B) ops.Value {
			x := b.Call(oIAdd, b.Placeholder("x"), int64(3))
			x = b.CallMethod("dequantize", x)
			x = b.Call(tSigmoid, x)
			return b.CallMethod("to", x, tensor.Float16)
		},
		pattern: func(b *B) ops.Value {
			x := b.CallMethod("dequantize", b.Placeholder("x"))
			x = b.Call(tSigmoid, x)
			return b.CallMethod("to", x, tensor.Float16)
		},
		counts: [4]int{1, 1, 0, 0}, keep: na, ff: []string{"dequantize sigmoid to"},
	},
	{
		name: "MultiOutWithDependency",
		graph: func(b *B) ops.Value {
			y := b.CallMethod("relu", b.Placeholder("x"))
			z := b.CallMethod("sigmoid", y)
			return ops.Tuple{z, y}
		},
		pattern: func(b *B) ops.Value {
			bb := b.CallMethod("relu", b.Placeholder("a"))
			c := b.CallMethod("sigmoid", bb)
			return ops.Tuple{bb, c}
		},
		counts: [4]int{1, 0, 1, 0}, keep: na, ff: []string{"relu sigmoid"},
	},
	{
		name: "MultiOutWithoutDependency",
		graph: func(b *B) ops.Value {
			x := b.Call(oAdd, b.Placeholder("x"), int64(1))
			x = b.CallMethod("relu", x)
			z := b.CallMethod("sum", x)
			y := b.CallMethod("sigmoid", x)
			return b.Call(oAdd, b.CallMethod("sigmoid", y), b.CallMethod("sum", z))
		},
		pattern: func(b *B) ops.Value {
			a := b.CallMethod("relu", b.Placeholder("a"))
			bb := b.CallMethod("sigmoid", a)
			c := b.CallMethod("sum", a)
			return ops.Tuple{bb, c}
		},
		counts: [4]int{1, 0, 0, 0}, keep: na, ff: []string{"relu sigmoid sum_1"},
	},
	{
		name: "MultiOutOverlapping",
		graph: func(b *B) ops.Value {
			x := b.Call(oAdd, b.Placeholder("x"), int64(1))
			x = b.CallMethod("relu", x)
			z := b.CallMethod("sum", x)
			z1 := b.CallMethod("sum", x)
			y := b.CallMethod("sigmoid", x)
			y1 := b.CallMethod("sigmoid", x)
			return b.Call(oAdd, b.Call(oAdd, b.Call(oAdd, z, z1), y), y1)
		},
		pattern: func(b *B) ops.Value {
			a := b.CallMethod("relu", b.Placeholder("a"))
			bb := b.CallMethod("sigmoid", a)
			c := b.CallMethod("sum", a)
			return ops.Tuple{a, bb, c}
		},
		counts: [4]int{1, na, na, na}, keep: 4, ff: []string{"relu sigmoid sum_1"},
	},
	{
		name: "MultiOutNonOverlapping",
		graph: func(b *B) ops.Value {
			x := b.Call(oAdd, b.Placeholder("x"), int64(1))
			x = b.CallMethod("relu", x)
			z := b.CallMethod("sum", x)
			y := b.CallMethod("sigmoid", x)
			x = b.CallMethod("relu", x)
			z1 := b.CallMethod("sum", x)
			y1 := b.CallMethod("sigmoid", x)
			return b.Call(oAdd, b.Call(oAdd, b.Call(oAdd, z, z1), y), y1)
		},
		pattern: func(b *B) ops.Value {
			a := b.CallMethod("relu", b.Placeholder("a"))
			bb := b.CallMethod("sigmoid", a)
			c := b.CallMethod("sum", a)
			return ops.Tuple{bb, c}
		},
		// The first relu has a second user (the second relu), so only the
		// second block is contained.
		counts: [4]int{1, na, na, na}, keep: na, ff: []string{"relu_1 sigmoid_1 sum_2"},
	},
	{
		name: "IdenticalAnchor",
		graph: func(b *B) ops.Value {
			x := b.Call(oAdd, b.Placeholder("x"), int64(1))
			x = b.CallMethod("relu", x)
			return ops.Tuple{b.CallMethod("sigmoid", x), b.CallMethod("sigmoid", x)}
		},
		pattern: func(b *B) ops.Value {
			a := b.CallMethod("relu", b.Placeholder("a"))
			return ops.Tuple{b.CallMethod("sigmoid", a), b.CallMethod("sigmoid", a)}
		},
		// (F,F): 1 after overlap removal (fx-graph.md 9.3 item 26, derived);
		// the two permutations are 2 matches with overlaps kept.
		counts: [4]int{1, 1, 0, na}, keep: 2, ff: []string{"relu sigmoid sigmoid_1"},
	},
	{
		name: "Horizontal",
		graph: func(b *B) ops.Value {
			x := b.Call(oAdd, b.Placeholder("x"), int64(1))
			return ops.Tuple{b.CallMethod("relu", x), b.CallMethod("sigmoid", x)}
		},
		pattern: func(b *B) ops.Value {
			a := b.Placeholder("a")
			return ops.Tuple{b.CallMethod("relu", a), b.CallMethod("sigmoid", a)}
		},
		counts: [4]int{1, 1, 0, 0}, keep: na, ff: []string{"relu sigmoid"},
	},
	{
		name: "MultiOutInvalidCycle",
		graph: func(b *B) ops.Value {
			x := b.Placeholder("x")
			res0 := b.Call(tLinearF, x, b.Call(tRand, int64(3), int64(3)))
			res1 := b.Call(tSigmoid, res0)
			res2 := b.Call(oMul, res0, res1)
			return b.CallKw(tSum, []ops.Value{res2}, ops.Kwarg{Name: "dim", Value: int64(1)})
		},
		pattern: func(b *B) ops.Value {
			a, bb, c := b.Placeholder("a"), b.Placeholder("b"), b.Placeholder("c")
			lin := b.Call(tLinearF, a, bb)
			return ops.Tuple{lin, b.Call(oMul, lin, c)}
		},
		counts: [4]int{0, 0, 0, na}, keep: na,
	},
	{
		name: "NoAnchorFound",
		graph: func(b *B) ops.Value {
			return b.Call(oAdd, b.Placeholder("x"), int64(1))
		},
		pattern: func(b *B) ops.Value { return b.CallMethod("relu", b.Placeholder("a")) },
		counts:  [4]int{0, 0, 0, 0}, keep: na,
	},
}

func TestReferenceOutcomes(t *testing.T) {
	combos := [4][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}
	for _, tc := range table48 {
		t.Run(tc.name, func(t *testing.T) {
			g := mustGraph(tc.graph)
			p := mustPattern(tc.pattern)
			for i, c := range combos {
				if tc.counts[i] == na {
					continue
				}
				ms, err := match.Find(g, p, match.MatchOutput(c[0]), match.MatchPlaceholder(c[1]), match.WithRegistry(ops.NewRegistry()))
				require.NoError(t, err)
				assert.Len(t, ms, tc.counts[i], "match_output=%v match_placeholder=%v", c[0], c[1])
				if i == 0 && tc.ff != nil {
					var got []string
					for _, m := range ms {
						got = append(got, names(m))
					}
					assert.Equal(t, tc.ff, got, "bound nodes")
				}
			}
			if tc.keep != na {
				ms, err := match.Find(g, p, match.RemoveOverlappingMatches(false), match.WithRegistry(ops.NewRegistry()))
				require.NoError(t, err)
				assert.Len(t, ms, tc.keep, "remove_overlapping_matches=false")
			}
		})
	}
}
