// Command quickstart walks through fxquant's PT2E flow on a small MLP built
// with the Go API: prepare, calibrate, convert, reference representation,
// verification and printing.
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

var (
	linear = ops.MustOverload("aten.linear.default")
	relu   = ops.MustOverload("aten.relu.default")
)

// buildMLP returns linear(16 -> 32) -> relu -> linear(32 -> 8) with seeded
// random weights stored as graph attributes.
func buildMLP(rng *rand.Rand) *fxgraph.Graph {
	g := fxgraph.New()
	param := func(name string, shape ...int) *fxgraph.Node {
		vals := make([]float32, tensor.Numel(shape))
		for i := range vals {
			vals[i] = float32(rng.NormFloat64() * 0.2)
		}
		g.SetAttr(name, tensor.MustFromData(tensor.Float32, shape, vals))
		return g.GetAttr(name, ops.Plain(tensor.Float32, ops.ShapeInts(shape)...))
	}
	w1, b1 := param("fc1.weight", 32, 16), param("fc1.bias", 32)
	w2, b2 := param("fc2.weight", 8, 32), param("fc2.bias", 8)
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 4, 16))
	h := g.Call(linear, x, w1, b1)
	h.SetType(ops.Plain(tensor.Float32, 4, 32))
	r := g.Call(relu, h)
	r.SetType(ops.Plain(tensor.Float32, 4, 32))
	y := g.Call(linear, r, w2, b2)
	y.SetType(ops.Plain(tensor.Float32, 4, 8))
	g.SetOutput(ops.Tuple{y})
	return g
}

func randomBatch(rng *rand.Rand) []*tensor.Tensor {
	vals := make([]float32, 4*16)
	for i := range vals {
		vals[i] = float32(rng.NormFloat64())
	}
	return []*tensor.Tensor{tensor.MustFromData(tensor.Float32, []int{4, 16}, vals)}
}

func run() error {
	rng := rand.New(rand.NewPCG(1, 2))
	g := buildMLP(rng)
	float, _ := g.Clone()

	quantizer := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))
	if err := convert.Prepare(g, quantizer); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	var batches [][]*tensor.Tensor
	for range 64 {
		batches = append(batches, randomBatch(rng))
	}
	if err := convert.Calibrate(g, batches, nil); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := convert.Convert(g, convert.ConvertOptions{ReferenceRepresentation: true}); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	if err := fxgraph.Verify(g, fxgraph.VerifyOptions{}); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	fmt.Print(fxgraph.Format(g))

	eval := randomBatch(rng)
	want, err := interp.Run(float, eval, interp.Options{})
	if err != nil {
		return fmt.Errorf("run float graph: %w", err)
	}
	got, err := interp.Run(g, eval, interp.Options{})
	if err != nil {
		return fmt.Errorf("run quantized graph: %w", err)
	}
	sqnr, err := sqnrDB(want[0].(*tensor.Tensor), got[0].(*tensor.Tensor))
	if err != nil {
		return err
	}
	fmt.Printf("\nfloat vs quantized output SQNR: %.1f dB\n", sqnr)
	return nil
}

// sqnrDB returns 10*log10(|ref|^2 / |ref - got|^2).
func sqnrDB(ref, got *tensor.Tensor) (float64, error) {
	r, err := ref.Float64s()
	if err != nil {
		return 0, err
	}
	q, err := got.Float64s()
	if err != nil {
		return 0, err
	}
	var sig, noise float64
	for i := range r {
		sig += r[i] * r[i]
		noise += (r[i] - q[i]) * (r[i] - q[i])
	}
	if noise == 0 {
		return math.Inf(1), nil
	}
	return 10 * math.Log10(sig/noise), nil
}
