package reftransform_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/reftransform"
)

var (
	tQ      = ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	tDQ     = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default")
	tQT     = ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor")
	tDQT    = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.tensor")
	tQC     = ops.MustOverload("quantized_decomposed.quantize_per_channel.default")
	tDQC    = ops.MustOverload("quantized_decomposed.dequantize_per_channel.default")
	tChoose = ops.MustOverload("quantized_decomposed.choose_qparams.tensor")
	tLin    = ops.MustOverload("aten.linear.default")
	tConv   = ops.MustOverload("aten.convolution.default")
	tAdd    = ops.MustOverload("aten.add.Tensor")
	tRelu   = ops.MustOverload("aten.relu.default")
	tMPI    = ops.MustOverload("aten.max_pool2d_with_indices.default")
	tCQA    = ops.MustOverload("torchao.choose_qparams_affine.default")
	tQA     = ops.MustOverload("torchao.quantize_affine.default")
	tDQA    = ops.MustOverload("torchao.dequantize_affine.default")
)

// randF32 returns a seeded float32 tensor with values in [lo, hi).
func randF32(seed uint64, lo, hi float64, shape ...int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, tensor.Numel(shape))
	for i := range v {
		v[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return tensor.MustFromData(tensor.Float32, shape, v)
}

// randI8 returns a seeded int8 tensor with values in [lo, hi].
func randI8(seed uint64, lo, hi int, shape ...int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 2))
	v := make([]int8, tensor.Numel(shape))
	for i := range v {
		v[i] = int8(lo + r.IntN(hi-lo+1))
	}
	return tensor.MustFromData(tensor.Int8, shape, v)
}

// entryCase is one graph built for a rewrite entry.
type entryCase struct {
	entry string
	// build returns the graph and its inputs; dt is the quantized dtype
	// (int8 for the matching graph, uint8 for the variant that must not
	// match), lo/hi its range.
	build func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor)
	// tol is one quantisation step of the output, in output units.
	tol float64
}

func qdqIn(g *fxgraph.Graph, x *fxgraph.Node, s float64, z, lo, hi int64, dt tensor.DType) *fxgraph.Node {
	q := g.Call(tQ, x, s, z, lo, hi, dt)
	return g.Call(tDQ, q, s, z, lo, hi, dt)
}

func weightDQ(g *fxgraph.Graph, name string, w *tensor.Tensor, s float64, dt tensor.DType, lo, hi int64) *fxgraph.Node {
	g.SetAttr(name, w)
	wn := g.GetAttr(name, nil)
	return g.Call(tDQ, wn, s, int64(0), lo, hi, dt)
}

func mid(lo, hi int64) int64 { return (lo + hi + 1) / 2 }

func entryCases() []entryCase {
	return []entryCase{
		{entry: "quantize_per_tensor", tol: 1, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			x := g.Placeholder("x", nil)
			g.SetOutput(ops.Tuple{g.Call(tQ, x, 0.05, mid(lo, hi)+3, lo, hi, dt)})
			return g, []*tensor.Tensor{randF32(1, -4, 4, 2, 5)}
		}},
		{entry: "dequantize_per_tensor", tol: 0.05, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			g.SetAttr("w", randI8(2, -100, 100, 3, 4))
			if dt != tensor.Int8 {
				g.SetAttr("w", tensor.MustZeros(dt, 3, 4))
			}
			w := g.GetAttr("w", nil)
			g.SetOutput(ops.Tuple{g.Call(tDQ, w, 0.05, int64(3), lo, hi, dt)})
			return g, nil
		}},
		{entry: "quantize_per_channel", tol: 1, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			g.SetAttr("s", tensor.F32([]int{3}, 0.02, 0.05, 0.1))
			g.SetAttr("z", tensor.MustFromData(tensor.Int64, []int{3}, []int64{0, 2, -1}))
			x := g.Placeholder("x", nil)
			s, z := g.GetAttr("s", nil), g.GetAttr("z", nil)
			g.SetOutput(ops.Tuple{g.Call(tQC, x, s, z, int64(0), lo, hi, dt)})
			return g, []*tensor.Tensor{randF32(3, -3, 3, 3, 4)}
		}},
		{entry: "dequantize_per_channel", tol: 0.1, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			g.SetAttr("s", tensor.F32([]int{4}, 0.02, 0.05, 0.1, 0.03))
			g.SetAttr("z", tensor.MustFromData(tensor.Int64, []int{4}, []int64{0, 0, 0, 0}))
			g.SetAttr("w", randI8(4, -127, 127, 3, 4))
			w := g.GetAttr("w", nil)
			s, z := g.GetAttr("s", nil), g.GetAttr("z", nil)
			g.SetOutput(ops.Tuple{g.Call(tDQC, w, s, z, int64(1), lo, hi, dt)})
			return g, nil
		}},
		{entry: "static_linear", tol: 0.03, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			x := g.Placeholder("x", nil)
			xd := qdqIn(g, x, 0.02, mid(lo, hi), lo, hi, dt)
			wd := weightDQ(g, "w", randI8(5, -127, 127, 4, 5), 0.01, dt, lo, hi)
			g.SetAttr("b", randF32(6, -0.5, 0.5, 4))
			lin := g.Call(tLin, xd, wd, g.GetAttr("b", nil))
			g.SetOutput(ops.Tuple{qdqIn(g, lin, 0.03, mid(lo, hi)+5, lo, hi, dt)})
			return g, []*tensor.Tensor{randF32(7, -1, 1, 2, 5)}
		}},
		{entry: "static_conv2d", tol: 0.05, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			x := g.Placeholder("x", nil)
			xd := qdqIn(g, x, 0.02, mid(lo, hi), lo, hi, dt)
			wd := weightDQ(g, "w", randI8(13, -127, 127, 2, 3, 3, 3), 0.01, dt, lo, hi)
			g.SetAttr("b", randF32(14, -0.5, 0.5, 2))
			conv := g.Call(tConv, xd, wd, g.GetAttr("b", nil), ops.List{int64(1), int64(1)}, ops.List{int64(1), int64(1)}, ops.List{int64(1), int64(1)}, false, ops.List{int64(0), int64(0)}, int64(1))
			g.SetOutput(ops.Tuple{qdqIn(g, conv, 0.05, mid(lo, hi)+5, lo, hi, dt)})
			return g, []*tensor.Tensor{randF32(15, -1, 1, 1, 3, 5, 5)}
		}},
		// Strided, unpadded, grouped: the convolution's literals are bound to
		// placeholders, so any values match and reach out_dtype.
		{entry: "static_conv2d", tol: 0.05, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			x := g.Placeholder("x", nil)
			xd := qdqIn(g, x, 0.02, mid(lo, hi)-7, lo, hi, dt)
			wd := weightDQ(g, "w", randI8(17, -127, 127, 4, 2, 3, 3), 0.01, dt, lo, hi)
			g.SetAttr("b", randF32(18, -0.5, 0.5, 4))
			conv := g.Call(tConv, xd, wd, g.GetAttr("b", nil), ops.List{int64(2), int64(2)}, ops.List{int64(0), int64(0)}, ops.List{int64(1), int64(1)}, false, ops.List{int64(0), int64(0)}, int64(2))
			g.SetOutput(ops.Tuple{qdqIn(g, conv, 0.05, mid(lo, hi)+2, lo, hi, dt)})
			return g, []*tensor.Tensor{randF32(19, -1, 1, 1, 4, 7, 7)}
		}},
		{entry: "max_pool2d", tol: 0.03, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			x := g.Placeholder("x", nil)
			xd := qdqIn(g, x, 0.02, mid(lo, hi)+4, lo, hi, dt)
			mp := g.Call(tMPI, xd, ops.List{int64(2), int64(2)}, ops.List{int64(2), int64(2)}, ops.List{int64(0), int64(0)}, ops.List{int64(1), int64(1)}, false)
			out := g.Call(ops.GetItem, mp, int64(0))
			g.SetOutput(ops.Tuple{qdqIn(g, out, 0.03, mid(lo, hi)-3, lo, hi, dt)})
			return g, []*tensor.Tensor{randF32(16, -2, 2, 1, 2, 4, 4)}
		}},
		{entry: "add_relu", tol: 0.04, build: addCase(true)},
		{entry: "add", tol: 0.04, build: addCase(false)},
		{entry: "dynamic_linear", tol: 1e-3, build: func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
			g := fxgraph.New()
			x := g.Placeholder("x", nil)
			cq := g.Call(tChoose, x, lo, hi, 1.1920928955078125e-07, dt)
			s := g.Call(ops.GetItem, cq, int64(0))
			z := g.Call(ops.GetItem, cq, int64(1))
			xq := g.Call(tQT, x, s, z, lo, hi, dt)
			xd := g.Call(tDQT, xq, s, z, lo, hi, dt)
			wd := weightDQ(g, "w", randI8(8, -127, 127, 4, 5), 0.01, dt, -127, 127)
			g.SetAttr("b", randF32(9, -0.5, 0.5, 4))
			g.SetOutput(ops.Tuple{g.Call(tLin, xd, wd, g.GetAttr("b", nil))})
			return g, []*tensor.Tensor{randF32(10, -1, 1, 2, 5)}
		}},
	}
}

func addCase(relu bool) func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
	return func(dt tensor.DType, lo, hi int64) (*fxgraph.Graph, []*tensor.Tensor) {
		g := fxgraph.New()
		x, y := g.Placeholder("x", nil), g.Placeholder("y", nil)
		xd := qdqIn(g, x, 0.02, mid(lo, hi)+1, lo, hi, dt)
		yd := qdqIn(g, y, 0.03, mid(lo, hi)-2, lo, hi, dt)
		out := g.Call(tAdd, xd, yd)
		if relu {
			out = g.Call(tRelu, out)
		}
		g.SetOutput(ops.Tuple{qdqIn(g, out, 0.04, mid(lo, hi)-20, lo, hi, dt)})
		return g, []*tensor.Tensor{randF32(11, -2, 2, 1, 3, 3, 3), randF32(12, -2, 2, 1, 3, 3, 3)}
	}
}

func runGraph(t *testing.T, g *fxgraph.Graph, in []*tensor.Tensor) []float64 {
	t.Helper()
	outs, err := interp.Run(g, in, interp.Options{})
	require.NoError(t, err)
	v, err := outs[0].(*tensor.Tensor).Contiguous().Float64s()
	require.NoError(t, err)
	return v
}

// TestEntries builds a graph for each rewrite entry: the entry matches it
// once, its uint8 variant not at all, and the rewritten graph's outputs stay
// within one quantisation step of the q/dq graph's.
func TestEntries(t *testing.T) {
	for i, tc := range entryCases() {
		t.Run(fmt.Sprintf("%d_%s", i, tc.entry), func(t *testing.T) {
			g, in := tc.build(tensor.Int8, -128, 127)
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			want := runGraph(t, g, in)

			_, err := reftransform.RemoveTensorOverloadForQDQOps(g)
			require.NoError(t, err)
			n, err := reftransform.RunEntry(g, tc.entry)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "matches on the int8 graph")
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			// static_conv2d and max_pool2d run out_dtype(convolution, int32)
			// and max_pool2d_with_indices on int32: ops/kernels' integer
			// convolution and max-pool.
			got := runGraph(t, g, in)
			require.Len(t, got, len(want))
			off := 0
			for i := range got {
				if math.Abs(got[i]-want[i]) > tc.tol+1e-6 {
					t.Errorf("element %d: got %g, want %g (one step = %g)", i, got[i], want[i], tc.tol)
				}
				if got[i] != want[i] {
					off++
				}
			}
			t.Logf("%d of %d outputs differ from the q/dq graph's, all within one step", off, len(got))

			u, _ := tc.build(tensor.UInt8, 0, 255)
			_, err = reftransform.RemoveTensorOverloadForQDQOps(u)
			require.NoError(t, err)
			before := fxgraph.Format(u)
			n, err = reftransform.RunEntry(u, tc.entry)
			require.NoError(t, err)
			assert.Zero(t, n, "matches on the uint8 variant")
			assert.Equal(t, before, fxgraph.Format(u))
		})
	}
}

// int4Graph builds the q/dq int4 groupwise dynamic linear of torchao's
// pattern with .default ops for activation rank 2 or 3 and group size gs on
// Linear(32, 8).
func int4Graph(rank, gs int, actDT tensor.DType, withBias bool) (*fxgraph.Graph, *tensor.Tensor) {
	const n, k = 8, 32
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	g.SetAttr("w", randI8(20, -8, 7, n, k))
	r := rand.New(rand.NewPCG(21, 3))
	sc := make([]float32, n*(k/gs))
	for i := range sc {
		sc[i] = float32(0.01 + 0.05*r.Float64())
	}
	if gs == k {
		g.SetAttr("ws", tensor.MustFromData(tensor.Float32, []int{n}, sc))
		g.SetAttr("wz", tensor.MustZeros(tensor.Float32, n))
	} else {
		g.SetAttr("ws", tensor.MustFromData(tensor.Float32, []int{n, k / gs}, sc))
		g.SetAttr("wz", tensor.MustZeros(tensor.Float32, n, k/gs))
	}
	block := ops.List{int64(1), int64(k)}
	shape := []int{4, k}
	if rank == 3 {
		block = ops.List{int64(1), int64(1), int64(k)}
		shape = []int{2, 2, k}
	}
	lo, hi := int64(-128), int64(127)
	if actDT == tensor.UInt8 {
		lo, hi = 0, 255
	}
	cq := g.Call(tCQA, x, "ASYMMETRIC", block, actDT, lo, hi, 1.1920928955078125e-07, tensor.Float32, tensor.Int32)
	s := g.Call(ops.GetItem, cq, int64(0))
	z := g.Call(ops.GetItem, cq, int64(1))
	xq := g.Call(tQA, x, block, s, z, actDT, lo, hi)
	xd := g.CallKw(tDQA, []ops.Value{xq, block, s, z, actDT, lo, hi}, []ops.Kwarg{{Name: "output_dtype", Value: tensor.Float32}})
	w, ws, wz := g.GetAttr("w", nil), g.GetAttr("ws", nil), g.GetAttr("wz", nil)
	wd := g.Call(tDQA, w, ops.Tuple{int64(1), int64(gs)}, ws, wz, tensor.Int8, int64(-8), int64(7))
	var lin *fxgraph.Node
	if withBias {
		g.SetAttr("b", randF32(22, -0.5, 0.5, n))
		lin = g.Call(tLin, xd, wd, g.GetAttr("b", nil))
	} else {
		lin = g.Call(tLin, xd, wd)
	}
	g.SetOutput(ops.Tuple{lin})
	return g, randF32(23, -2, 2, shape...)
}

// TestInt4Entry covers the int4 rewrite on built graphs: every group size
// dividing K (a whole-row group included), 2-D and 3-D activations, with
// and without bias; a uint8 activation is rejected by the filter.
func TestInt4Entry(t *testing.T) {
	// |ref - qdq| stays within about 0.003 on the fixtures (README); the
	// reference rounds weight scales through bfloat16.
	const tol = 0.02
	for _, rank := range []int{2, 3} {
		for _, gs := range []int{4, 8, 16, 32} {
			for _, bias := range []bool{true, false} {
				name := strings.Join([]string{"rank", string(rune('0' + rank)), "gs", itoa(gs), map[bool]string{true: "bias", false: "nobias"}[bias]}, "_")
				t.Run(name, func(t *testing.T) {
					g, x := int4Graph(rank, gs, tensor.Int8, bias)
					require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
					want := runGraph(t, g, []*tensor.Tensor{x})
					res, err := reftransform.Run(g)
					require.NoError(t, err)
					entry := "int4_dynamic_linear_2d"
					if rank == 3 {
						entry = "int4_dynamic_linear_3d"
					}
					assert.Equal(t, 1, res.Stats[entry])
					require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
					assert.Equal(t, 1, countTarget(g, func(x ops.Target) bool { return x == refInt4 }))
					ref := g.FindNodes(fxgraph.CallFunction, refInt4)[0]
					assert.Equal(t, ops.Tuple{int64(1), int64(gs)}, ref.Arg(6), "group size bound from the weight dequantize")
					got := runGraph(t, g, []*tensor.Tensor{x})
					for i := range got {
						if math.Abs(got[i]-want[i]) > tol {
							t.Errorf("element %d: got %g, want %g", i, got[i], want[i])
						}
					}

					u, _ := int4Graph(rank, gs, tensor.UInt8, bias)
					before := fxgraph.Format(u)
					res, err = reftransform.Run(u)
					require.NoError(t, err)
					assert.False(t, res.Changed, "uint8 activations are not rewritten")
					assert.Equal(t, before, fxgraph.Format(u))
				})
			}
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
