package typed_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/typed"
)

// benchSizes are the numbers of GroupNorm-fold sites per fixture.
var benchSizes = []int{10, 100, 1000}

// foldSites builds a converted graph of n reshape → instance_norm →
// reshape sites in sequence on x [1, 6, 2, 2], each value quantized by a
// quantize_per_tensor/dequantize_per_tensor pair (a site's input and
// its top reshape at one scale, its instance_norm and bottom reshape at
// the other; 0.02 and 0.08 alternate from site to site) and each
// instance_norm with its own weight and bias constants: 11 nodes per
// site.
func foldSites(tb testing.TB, n int) *fxgraph.Graph {
	tb.Helper()
	g := fxgraph.New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 1, 6, 2, 2))
	qdq := func(v *fxgraph.Node, s float64, zp int64) *fxgraph.Node {
		q := g.Call(qpt, v, s, zp, int64(-128), int64(127), tensor.Int8)
		return g.Call(dqpt, q, s, zp, int64(-128), int64(127), tensor.Int8)
	}
	type qp struct {
		s  float64
		zp int64
	}
	a, b := qp{0.02, -3}, qp{0.08, 5}
	cur := qdq(x, a.s, a.zp)
	for i := range n {
		ws, bs := "w"+strconv.Itoa(i), "b"+strconv.Itoa(i)
		g.SetAttr(ws, tensor.F32([]int{3}, 0.5, 1.5, -2))
		g.SetAttr(bs, tensor.F32([]int{3}, 0.1, -0.2, 0.3))
		top := g.Call(reshape, cur, ops.List{int64(1), int64(3), int64(-1)})
		in := g.Call(instNorm, qdq(top, a.s, a.zp), g.GetAttr(ws, nil), g.GetAttr(bs, nil), nil, nil, true, 0.1, 1e-5, false)
		bottom := g.Call(reshape, qdq(in, b.s, b.zp), ops.List{int64(1), int64(6), int64(2), int64(2)})
		cur = qdq(bottom, b.s, b.zp)
		a, b = b, a
	}
	g.SetOutput(ops.Tuple{cur})
	if err := typed.InferTypes(g, nil); err != nil {
		tb.Fatal(err)
	}
	return g
}

// lifted returns Lift(g) on a clone.
func lifted(tb testing.TB, g *fxgraph.Graph) *fxgraph.Graph {
	tb.Helper()
	c, _ := g.Clone()
	if _, err := typed.Lift(c, nil); err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestFoldSitesFixture checks the benchmark fixture does what the
// benchmarks claim: every site lifts and folds, and the result verifies.
func TestFoldSitesFixture(t *testing.T) {
	g := lifted(t, foldSites(t, 10))
	res, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats["groupnorm_fold"] != 10 {
		t.Fatalf("folded %d sites, want 10: %v", res.Stats["groupnorm_fold"], res.Notes)
	}
	if err := fxgraph.Verify(g, typed.VerifyOptions(nil)); err != nil {
		t.Fatal(err)
	}
}

// benchOnClones runs pass as sub-benchmark name on a fresh clone of g per
// iteration, cloned outside the timer.
func benchOnClones(b *testing.B, name string, g *fxgraph.Graph, pass func(*fxgraph.Graph) error) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			c, _ := g.Clone()
			b.StartTimer()
			if err := pass(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLift lifts the converted fixture (a fresh clone per
// iteration, cloned outside the timer).
func BenchmarkLift(b *testing.B) {
	for _, n := range benchSizes {
		benchOnClones(b, strconv.Itoa(n), foldSites(b, n), func(c *fxgraph.Graph) error {
			_, err := typed.Lift(c, nil)
			return err
		})
	}
}

// BenchmarkLower lowers the lifted fixture.
func BenchmarkLower(b *testing.B) {
	for _, n := range benchSizes {
		benchOnClones(b, strconv.Itoa(n), lifted(b, foldSites(b, n)), func(c *fxgraph.Graph) error {
			_, err := typed.Lower(c, nil)
			return err
		})
	}
}

// BenchmarkCanonicalize folds every site of the lifted fixture: Debug
// off (the default), and Debug on (fingerprint per Match, which stays
// linear, plus a full verification per rewrite, which is quadratic in the
// number of sites) for the smaller sizes.
func BenchmarkCanonicalize(b *testing.B) {
	for _, debug := range []bool{false, true} {
		for _, n := range benchSizes {
			if debug && n > 100 {
				continue
			}
			g := lifted(b, foldSites(b, n))
			name := strconv.Itoa(n)
			if debug {
				name = "debug/" + name
			}
			benchOnClones(b, name, g, func(c *fxgraph.Graph) error {
				res, err := typed.Canonicalize(c, typed.CanonOptions{Debug: debug})
				if err != nil {
					return err
				}
				if res.Stats["groupnorm_fold"] != n {
					return fmt.Errorf("folded %d of %d sites", res.Stats["groupnorm_fold"], n)
				}
				return nil
			})
		}
	}
}
