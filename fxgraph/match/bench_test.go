package match_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// qLinearGraph builds x -> quantize, then n blocks of get_attr w, get_attr
// b, dequantize(w), dequantize(x), linear, quantize_per_tensor, then a
// final dequantize and the output: 6n+4 nodes.
func qLinearGraph(n int) *fxgraph.Graph {
	return mustGraph(func(b *B) ops.Value {
		x := b.Placeholder("x")
		q := b.Call(qDefault, x, 0.05, int64(0), int64(-128), int64(127), tensor.Int8)
		for i := range n {
			w := b.GetAttr(fmt.Sprintf("w%d", i))
			bias := b.GetAttr(fmt.Sprintf("b%d", i))
			dw := b.Call(dqDefault, w, 0.01, int64(0), int64(-127), int64(127), tensor.Int8)
			dx := b.Call(dqDefault, q, 0.05, int64(0), int64(-128), int64(127), tensor.Int8)
			lin := b.Call(atenLinear, dx, dw, bias)
			q = b.Call(qDefault, lin, 0.05, int64(0), int64(-128), int64(127), tensor.Int8)
		}
		return b.Call(dqDefault, q, 0.05, int64(0), int64(-128), int64(127), tensor.Int8)
	})
}

// qLinearPattern is the 3-node dequantize -> linear -> quantize pattern.
func qLinearPattern() *match.Pattern {
	return mustPattern(func(b *B) ops.Value {
		x, sx, zx := b.Placeholder("x"), b.Placeholder("sx"), b.Placeholder("zx")
		w, bias := b.Placeholder("w"), b.Placeholder("b")
		so, zo := b.Placeholder("so"), b.Placeholder("zo")
		dx := b.Call(dqDefault, x, sx, zx, int64(-128), int64(127), tensor.Int8)
		lin := b.Call(atenLinear, dx, w, bias)
		return b.Call(qDefault, lin, so, zo, int64(-128), int64(127), tensor.Int8)
	})
}

var qLinearOp = ops.Callable{Module: "fxquant", Name: "qlinear"}

func qLinearReplacement() *fxgraph.Graph {
	return mustGraph(func(b *B) ops.Value {
		args := []ops.Value{}
		for _, name := range []string{"x", "sx", "zx", "w", "b", "so", "zo"} {
			args = append(args, b.Placeholder(name))
		}
		return b.Call(qLinearOp, args...)
	})
}

var benchSizes = []int{100, 1000, 10000}

// BenchmarkMatch times a full Match (index, search, match records) on a
// prebuilt graph. The graph is built before the timer starts; the testing
// package collects garbage before each timed run, so the garbage of
// building it is not charged to the matcher.
func BenchmarkMatch(b *testing.B) {
	p := qLinearPattern()
	m, err := match.NewMatcher(p, match.WithRegistry(testRegistry()))
	require.NoError(b, err)
	for _, n := range benchSizes {
		g := qLinearGraph(n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ms, err := m.Match(g)
				if err != nil || len(ms) != n {
					b.Fatalf("got %d matches (err %v), want %d", len(ms), err, n)
				}
			}
		})
	}
}

// BenchmarkMatchReplace times a full ReplacePattern (match, checks,
// splice, erase) on a fresh graph per iteration. Building the graph and
// collecting the garbage it and the previous iteration left are kept out
// of the timer: runtime.GC before StartTimer makes each iteration pay for
// its own allocations only, not for a collection of a heap it did not
// create, so that the N=10000/N=1000 ratio measures the rewriter.
func BenchmarkMatchReplace(b *testing.B) {
	p := qLinearPattern()
	r := qLinearReplacement()
	reg := testRegistry()
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				g := qLinearGraph(n)
				runtime.GC()
				b.StartTimer()
				res, err := match.ReplacePattern(g, p, r, match.WithRegistry(reg))
				if err != nil || len(res) != n {
					b.Fatalf("got %d replacements (err %v), want %d", len(res), err, n)
				}
			}
		})
	}
}

func TestQLinearGraphShape(t *testing.T) {
	for _, n := range []int{1, 3} {
		g := qLinearGraph(n)
		require.Equal(t, 6*n+4, g.Len())
		res, err := match.ReplacePattern(g, qLinearPattern(), qLinearReplacement(), match.WithRegistry(testRegistry()))
		require.NoError(t, err)
		require.Len(t, res, n)
		// Each block leaves get_attr w, get_attr b, dequantize(w) and one qlinear.
		require.Equal(t, 4*n+4, g.Len(), dump(g))
	}
}
