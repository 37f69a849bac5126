package main

import (
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// deepMLP returns the float graph of a layers-deep MLP with the embedded
// model's signature (x: f32[4, 32] -> f32[4, 16]): Linear(32, 64), ReLU,
// then Linear(64, 64), ReLU layers, and a last Linear(64, 16), ReLU, with
// seeded random weights. 500 layers give 2,002 nodes, 12,013 after
// convert with --reference.
func deepMLP(layers int) *fxgraph.Graph {
	rng := rand.New(rand.NewPCG(7, 500))
	linear := ops.MustOverload("aten.linear.default")
	relu := ops.MustOverload("aten.relu.default")
	g := fxgraph.New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 4, 32))
	h, in := x, 32
	for l := range layers {
		out := 64
		if l == layers-1 {
			out = 16
		}
		param := func(name string, shape ...int) *fxgraph.Node {
			vals := make([]float32, tensor.Numel(shape))
			scale := 1.4 / float64(in)
			for i := range vals {
				vals[i] = float32(rng.NormFloat64() * scale * 8)
			}
			g.SetAttr(name, tensor.MustFromData(tensor.Float32, shape, vals))
			return g.GetAttr(name, ops.Plain(tensor.Float32, ops.ShapeInts(shape)...))
		}
		w := param("fc"+strconv.Itoa(l)+".weight", out, in)
		b := param("fc"+strconv.Itoa(l)+".bias", out)
		y := g.Call(linear, h, w, b)
		y.SetType(ops.Plain(tensor.Float32, 4, int64(out)))
		h = g.Call(relu, y)
		h.SetType(ops.Plain(tensor.Float32, 4, int64(out)))
		in = out
	}
	g.SetOutput(ops.Tuple{h})
	return g
}

// writeDeepMLP writes deepMLP(layers) as a .pt2 program in dir, built on
// the embedded model's signature.
func writeDeepMLP(t testing.TB, dir string, layers int) string {
	t.Helper()
	base, err := pt2.Read(embeddedModel, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := base.WithGraph(deepMLP(layers))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mlp"+strconv.Itoa(layers)+".pt2")
	if err := p.WriteFile(path, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDeepMLPRuns(t *testing.T) {
	path := writeDeepMLP(t, t.TempDir(), 3)
	c, err := parseRunFlags(&env{}, []string{path, "--reference", "--no-progress"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runPipeline(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("float %d nodes, quant %d nodes, sqnr %v", res.float.Len(), res.quant.Len(), res.cmp.Output.SQNR)
}
