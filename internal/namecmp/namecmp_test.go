package namecmp

import (
	"math"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// scaled is x -> mul(x, k) -> relu (nodes mul_scalar and relu_default).
func scaled(k float64) *fxgraph.Graph {
	g := fxgraph.New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 4))
	m := g.Call(ops.MustOverload("aten.mul.Scalar"), x, k)
	m.SetType(ops.Plain(tensor.Float32, 4))
	r := g.Call(ops.MustOverload("aten.relu.default"), m)
	r.SetType(ops.Plain(tensor.Float32, 4))
	g.SetOutput(ops.Tuple{r})
	return g
}

// By hand: f = 2x, q = 2.5x, so f - q = -0.5x and the SQNR is
// 10 log10(4 / 0.25) = 10 log10 16 dB for mul; relu keeps the positive
// elements (3 and 1): the same ratio. Max |f - q| is 0.5 max|x| = 2 for
// mul and 1.5 for relu.
func TestCompareByHand(t *testing.T) {
	batch := [][]*tensor.Tensor{{tensor.MustFromData(tensor.Float32, []int{4}, []float32{3, -4, 1, 0})}}
	c, err := Compare(scaled(2), scaled(2.5), batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Results) != 2 {
		t.Fatalf("%d results, want mul and relu: %+v", len(c.Results), c.Results)
	}
	want := 10 * math.Log10(16)
	for k, w := range []struct {
		name             string
		maxAbs, min, max float64
	}{{"mul_scalar", 2, -8, 6}, {"relu_default", 1.5, 0, 6}} {
		r := c.Results[k]
		if r.FloatNode != w.name || r.QuantNode != w.name || math.Abs(r.SQNR-want) > 1e-9 || r.MaxAbsErr != w.maxAbs || r.Min != w.min || r.Max != w.max {
			t.Errorf("result %d: %+v; want %s, SQNR %v, max err %v, range [%v, %v]", k, r, w.name, want, w.maxAbs, w.min, w.max)
		}
	}
	if g := c.Results[1].Growth; math.Abs(g) > 1e-9 {
		t.Errorf("relu's growth %v, want 0 (same SQNR as its input)", g)
	}
	same, err := Compare(scaled(2), scaled(2), batch)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(same.Results[0].SQNR, 1) || same.Results[0].MaxAbsErr != 0 {
		t.Errorf("equal graphs: %+v, want SQNR +Inf and no error", same.Results[0])
	}
}
