package reftransform_test

import (
	"strconv"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/reftransform"
)

// qdqChain is x followed by n (quantize, dequantize, relu) triples.
func qdqChain(n int) *fxgraph.Graph {
	g := fxgraph.New()
	v := g.Placeholder("x", nil)
	for range n {
		q := g.Call(tQ, v, 0.05, int64(1), int64(-128), int64(127), tensor.Int8)
		d := g.Call(tDQ, q, 0.05, int64(1), int64(-128), int64(127), tensor.Int8)
		v = g.Call(tRelu, d)
	}
	g.SetOutput(ops.Tuple{v})
	return g
}

func BenchmarkRun(b *testing.B) {
	for _, n := range []int{10, 1000, 10_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				g := qdqChain(n)
				b.StartTimer()
				if _, err := reftransform.Run(g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
