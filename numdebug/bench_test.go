package numdebug_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops/tensor"
)

// quantizedMLP returns a handled float MLP of the given depth and its
// XNNPACK-quantized copy, calibrated on one batch.
func quantizedMLP(tb testing.TB, layers int) (float, quant *fxgraph.Graph, batches [][]*tensor.Tensor) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(5, uint64(layers)))
	g := buildMLP(rng, layers, 64, 4)
	numdebug.GenerateHandles(g)
	float, _ = g.Clone()
	batches = randomBatches(rng, 1, 4, 64)
	if err := convert.Prepare(g, xnnpack()); err != nil {
		tb.Fatal(err)
	}
	if err := convert.Calibrate(g, batches, nil); err != nil {
		tb.Fatal(err)
	}
	if err := convert.Convert(g, convert.ConvertOptions{}); err != nil {
		tb.Fatal(err)
	}
	return float, g, batches
}

// BenchmarkCompare runs the comparison on 100- and 500-layer MLPs
// (linear 64 -> 64 and relu per layer; the 500-layer quantized graph has
// about 5,000 nodes): time per op should grow 5x, linear in nodes.
func BenchmarkCompare(b *testing.B) {
	for _, layers := range []int{100, 500} {
		b.Run("layers="+strconv.Itoa(layers), func(b *testing.B) {
			float, quant, batches := quantizedMLP(b, layers)
			for b.Loop() {
				c, err := numdebug.Compare(float, quant, batches)
				if err != nil {
					b.Fatal(err)
				}
				if len(c.Results) != 2*layers {
					b.Fatalf("%d results, want %d", len(c.Results), 2*layers)
				}
			}
			b.ReportMetric(float64(quant.Len()), "quant-nodes")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(quant.Len()), "ns/node")
		})
	}
}

// TestCompareLinearAllocs is the benchmark's linearity as a test that
// does not depend on the machine's load: Compare's allocations on a
// 100-layer MLP are 5x those on a 20-layer one (within 10%).
func TestCompareLinearAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the comparison 6 times")
	}
	allocs := map[int]float64{}
	for _, layers := range []int{20, 100} {
		float, quant, batches := quantizedMLP(t, layers)
		allocs[layers] = testing.AllocsPerRun(3, func() {
			if _, err := numdebug.Compare(float, quant, batches); err != nil {
				t.Fatal(err)
			}
		})
	}
	ratio := allocs[100] / allocs[20]
	if ratio < 4.5 || ratio > 5.5 {
		t.Errorf("allocations: %v for 20 layers, %v for 100: ratio %.2f, want about 5", allocs[20], allocs[100], ratio)
	}
}
