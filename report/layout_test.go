package report

import (
	"bytes"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fxquant/fxquant/fxgraph"
)

func fixedSize(int) float64 { return 80 }
func fixedH(int) float64    { return 34 }

// checkLayout checks a drawing's invariants: every box inside the
// drawing, boxes of one row apart by at least nodeGap, every edge going
// down from its source's bottom to its target's top.
func checkLayout(t *testing.T, g *fxgraph.Graph, L *layout) {
	t.Helper()
	const eps = 0.25 // coordinates are rounded to a tenth
	rows := map[float64][]int{}
	for i := range L.nodes {
		if L.x[i] < -eps || L.y[i] < -eps || L.x[i]+L.w[i] > L.width+eps || L.y[i]+L.h[i] > L.height+eps {
			t.Errorf("node %s at (%v, %v) %vx%v outside the %vx%v drawing", L.nodes[i].Name(), L.x[i], L.y[i], L.w[i], L.h[i], L.width, L.height)
		}
		mid := L.y[i] + L.h[i]/2
		rows[mid] = append(rows[mid], i)
	}
	for _, row := range rows {
		slices.SortFunc(row, func(a, b int) int {
			switch {
			case L.x[a] < L.x[b]:
				return -1
			case L.x[a] > L.x[b]:
				return 1
			}
			return 0
		})
		for k := 1; k < len(row); k++ {
			a, b := row[k-1], row[k]
			if L.x[a]+L.w[a]+nodeGap > L.x[b]+eps {
				t.Errorf("nodes %s and %s overlap or touch: x %v+%v and %v", L.nodes[a].Name(), L.nodes[b].Name(), L.x[a], L.w[a], L.x[b])
			}
		}
	}
	want := 0
	for n := range g.All() {
		want += len(n.InputNodes())
	}
	if len(L.edges) != want {
		t.Errorf("%d edges drawn, the graph has %d", len(L.edges), want)
	}
	for _, e := range L.edges {
		for k := 1; k < len(e); k++ {
			if e[k].y <= e[k-1].y {
				t.Errorf("edge %v does not go down", e)
				break
			}
		}
	}
}

func TestLayoutInvariants(t *testing.T) {
	for _, skip := range []bool{false, true} {
		p := page(t, 6, skip)
		for _, g := range []*fxgraph.Graph{p.Float, p.Quant} {
			L := layoutGraph(g, fixedSize, fixedH)
			checkLayout(t, g, L)
		}
	}
}

// A chain is drawn as a straight column: one node per layer, each right
// under the previous one.
func TestLayoutChainIsStraight(t *testing.T) {
	g := mlp(3, false)
	L := layoutGraph(g, fixedSize, fixedH)
	var prev = -1
	for i, n := range L.nodes {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		if prev >= 0 && (math.Abs(L.x[i]-L.x[prev]) > 0.5 || L.y[i] <= L.y[prev]) {
			t.Errorf("%s at (%v, %v), the previous call %s at (%v, %v): want the same x (within half a pixel), below", n.Name(), L.x[i], L.y[i], L.nodes[prev].Name(), L.x[prev], L.y[prev])
		}
		prev = i
	}
}

// Weights sit one layer above their linear, not at the top.
func TestLayoutWeightsNearUsers(t *testing.T) {
	g := mlp(8, false)
	L := layoutGraph(g, fixedSize, fixedH)
	rowOf := func(i int) float64 { return L.y[i] }
	idx := map[string]int{}
	for i, n := range L.nodes {
		idx[n.Name()] = i
	}
	for i, n := range L.nodes {
		if n.Op() != fxgraph.GetAttr {
			continue
		}
		u := n.Users()[0]
		if d := rowOf(idx[u.Name()]) - rowOf(i); d <= 0 || d > 34+layerGap+0.5 {
			t.Errorf("weight %s is %v above its user %s, want one layer (%v)", n.Name(), d, u.Name(), 34+layerGap)
		}
	}
}

// The 500-layer MLP (4,002 float nodes here, more after convert) lays out
// fast and the same way twice.
func TestLayoutLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	g := mlp(500, true)
	start := time.Now()
	L := layoutGraph(g, fixedSize, fixedH)
	t.Logf("%d nodes laid out in %v", len(L.nodes), time.Since(start))
	checkLayout(t, g, L)
	L2 := layoutGraph(g, fixedSize, fixedH)
	if !slices.Equal(L.x, L2.x) || !slices.Equal(L.y, L2.y) {
		t.Error("two layouts of one graph differ")
	}
}

// BenchmarkHTML500 is the page of a 500-layer MLP with residual adds,
// layout included, the graphs and numbers given.
func BenchmarkHTML500(b *testing.B) {
	p := page(b, 500, true)
	b.ReportMetric(float64(p.Float.Len()+p.Quant.Len()), "nodes")
	b.ResetTimer()
	var size int
	for b.Loop() {
		html, err := HTML(p)
		if err != nil {
			b.Fatal(err)
		}
		size = len(html)
	}
	b.ReportMetric(float64(size), "bytes")
	_ = bytes.MinRead
}
