package constfold_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/constfold"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

var (
	tQPC  = ops.MustOverload("quantized_decomposed.quantize_per_channel.default")
	tDQPC = ops.MustOverload("quantized_decomposed.dequantize_per_channel.default")
	tQA   = ops.MustOverload("torchao.quantize_affine.default")
	tDQA  = ops.MustOverload("torchao.dequantize_affine.default")
	pQA   = ops.MustPacket("torchao.quantize_affine")
	pDQA  = ops.MustPacket("torchao.dequantize_affine")
	tT    = ops.MustOverload("aten.t.default")
	tLin  = ops.MustOverload("aten.linear.default")
	tAdd  = ops.MustOverload("aten.add.Tensor")
	tRelu = ops.MustOverload("aten.relu.default")
)

// weightGraph is w (f32 [2, 4]) -> t -> quantize -> dequantize -> linear(x).
// The weights transpose to [[1, -1], [0.5, 0.25], [-0.5, 2], [0, 1.5]]
// (out_features 4, in_features 2); with scale 0.25 per channel and zero
// point 0 the int8 weight is w^T / 0.25 = [[4, -4], [2, 1], [-2, 8], [0, 6]].
func weightGraph(affine, packet bool) *fxgraph.Graph {
	g := fxgraph.New()
	g.SetAttr("fc.weight", tensor.F32([]int{2, 4}, 1, 0.5, -0.5, 0, -1, 0.25, 2, 1.5))
	g.SetAttr("_scale_0", tensor.F32([]int{4}, 0.25, 0.25, 0.25, 0.25))
	g.SetAttr("_zero_point_0", tensor.MustFromData(tensor.Int64, []int{4}, []int64{0, 0, 0, 0}))
	x := g.Placeholder("x", nil)
	w := g.GetAttr("fc.weight", nil)
	wt := g.Call(tT, w)
	s, z := g.GetAttr("_scale_0", nil), g.GetAttr("_zero_point_0", nil)
	var q, dq *fxgraph.Node
	switch {
	case affine:
		qt, dqt := ops.Target(tQA), ops.Target(tDQA)
		if packet {
			qt, dqt = pQA, pDQA
		}
		block := ops.List{int64(1), int64(2)}
		q = g.Call(qt, wt, block, s, z, tensor.Int8, int64(-127), int64(127))
		dq = g.CallKw(dqt, []ops.Value{q, block, s, z, tensor.Int8, int64(-127), int64(127)}, []ops.Kwarg{{Name: "output_dtype", Value: tensor.Float32}})
	default:
		q = g.Call(tQPC, wt, s, z, int64(0), int64(-127), int64(127), tensor.Int8)
		dq = g.Call(tDQPC, q, s, z, int64(0), int64(-127), int64(127), tensor.Int8)
	}
	g.SetOutput(ops.Tuple{g.Call(tLin, x, dq)})
	return g
}

func node(t *testing.T, g *fxgraph.Graph, name string) *fxgraph.Node {
	t.Helper()
	n, ok := g.NodeByName(name)
	require.True(t, ok, "node %s", name)
	return n
}

// TestWeightQuantizeFolded folds w -> t -> quantize into one int8 frozen
// constant named after the quantize, keeps the dequantize (both forms of
// the affine op and the decomposed per-channel op), and drops the float
// weight chain.
func TestWeightQuantizeFolded(t *testing.T) {
	tests := []struct {
		name           string
		affine, packet bool
		qName, dqName  string
	}{
		{"per_channel", false, false, "quantize_per_channel_default", "dequantize_per_channel_default"},
		{"affine_default", true, false, "quantize_affine_default", "dequantize_affine_default"},
		{"affine_packet", true, true, "quantize_affine", "dequantize_affine"},
	}
	want := tensor.MustFromData(tensor.Int8, []int{4, 2}, []int8{4, -4, 2, 1, -2, 8, 0, 6})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := weightGraph(tt.affine, tt.packet)
			node(t, g, tt.qName).Meta.StackTrace = "quantize trace"
			dqTarget := node(t, g, tt.dqName).Target()
			res, err := constfold.ConstantFold(g, constfold.Options{Constraint: constfold.QuantNodeConstraint})
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			assert.True(t, res.Changed)
			assert.Equal(t, 1, res.Stats["folded"])

			f := node(t, g, tt.qName)
			assert.Equal(t, fxgraph.GetAttr, f.Op(), "the frozen get_attr keeps the quantize's name")
			assert.Equal(t, "_frozen_param0", f.TargetName())
			assert.Equal(t, "quantize trace", f.Meta.StackTrace, "and its metadata")
			v, ok := g.Attr("_frozen_param0")
			require.True(t, ok)
			assert.NoError(t, tensor.Diff(v.(*tensor.Tensor), want), "the folded weight holds int8 data")

			dq := node(t, g, tt.dqName)
			assert.Equal(t, dqTarget, dq.Target(), "the dequantize is never folded")
			assert.Equal(t, f, dq.Arg(0))
			assert.Empty(t, g.FindNodes(fxgraph.CallFunction, tT), "the transpose is folded away")
			_, hasW := g.NodeByName("fc_weight")
			assert.False(t, hasW)
			_, kept := g.Attr("fc.weight")
			assert.True(t, kept, "a dotted attribute stays registered, as in torchao")
		})
	}
}

// TestDequantizeNeverFolded: without a constraint the folder would fold the
// whole weight chain; the dequantize (each form, and an op added with
// AddDontFold) stops it, so only the quantize is folded.
func TestDequantizeNeverFolded(t *testing.T) {
	tests := []struct {
		name           string
		affine, packet bool
		dq             string
	}{
		{"per_channel", false, false, "dequantize_per_channel_default"},
		{"affine_default", true, false, "dequantize_affine_default"},
		{"affine_packet", true, true, "dequantize_affine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := weightGraph(tt.affine, tt.packet)
			res, err := constfold.Run(g)
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			assert.Equal(t, 1, res.Stats["folded"])
			assert.Equal(t, fxgraph.CallFunction, node(t, g, tt.dq).Op())
		})
	}
	t.Run("AddDontFold", func(t *testing.T) {
		t.Cleanup(constfold.ClearDontFold)
		constfold.AddDontFold(tT)
		g := weightGraph(false, false)
		res, err := constfold.Run(g)
		require.NoError(t, err)
		// t is not folded, so nothing downstream of it is constant.
		assert.False(t, res.Changed)
		assert.Len(t, g.FindNodes(fxgraph.CallFunction, tT), 1)
		constfold.ClearDontFold()
		res, err = constfold.Run(weightGraph(false, false))
		require.NoError(t, err)
		assert.True(t, res.Changed, "ClearDontFold restores folding")
	})
	t.Run("Options.DontFold", func(t *testing.T) {
		g := weightGraph(true, false)
		res, err := constfold.ConstantFold(g, constfold.Options{DontFold: ops.NewTargetSet(tQA)})
		require.NoError(t, err)
		// only t is constant now; it is folded into a float constant
		assert.Equal(t, 1, res.Stats["folded"])
		assert.Equal(t, fxgraph.CallFunction, node(t, g, "quantize_affine_default").Op())
	})
}

// TestNonQuantChainFollowsConstraint: param.t() feeding an unquantized add is
// computed but not replaced under convert's constraint, and folded without
// one.
func TestNonQuantChainFollowsConstraint(t *testing.T) {
	build := func() *fxgraph.Graph {
		g := fxgraph.New()
		g.SetAttr("param", tensor.F32([]int{2, 2}, 1, 2, 3, 4))
		x := g.Placeholder("x", nil)
		p := g.GetAttr("param", nil)
		g.SetOutput(ops.Tuple{g.Call(tAdd, x, g.Call(tT, p))})
		return g
	}
	g := build()
	before := fxgraph.Format(g)
	res, err := constfold.ConstantFold(g, constfold.Options{Constraint: constfold.QuantNodeConstraint})
	require.NoError(t, err)
	assert.False(t, res.Changed)
	assert.Equal(t, before, fxgraph.Format(g), "a pass that changes nothing leaves the graph byte-identical")

	g = build()
	res, err = constfold.Run(g)
	require.NoError(t, err)
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	assert.Equal(t, 1, res.Stats["folded"])
	f := node(t, g, "t_default")
	assert.Equal(t, fxgraph.GetAttr, f.Op())
	v, _ := g.Attr(f.TargetName())
	assert.NoError(t, tensor.Diff(v.(*tensor.Tensor), tensor.F32([]int{2, 2}, 1, 3, 2, 4)))
	_, kept := g.Attr("param")
	assert.False(t, kept, "a top-level attribute no get_attr reads is deleted")
}

// TestMutableBufferNotFolded: a buffer written by copy_ is never folded.
func TestMutableBufferNotFolded(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("buf", tensor.F32([]int{2}, 1, 2))
	x := g.Placeholder("x", nil)
	b := g.GetAttr("buf", nil)
	r := g.Call(tRelu, b)
	g.Call(ops.MustOverload("aten.copy_.default"), b, x)
	g.SetOutput(ops.Tuple{g.Call(tAdd, x, r)})
	before := fxgraph.Format(g)
	res, err := constfold.Run(g)
	require.NoError(t, err)
	assert.False(t, res.Changed)
	assert.Equal(t, before, fxgraph.Format(g))
}
