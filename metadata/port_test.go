package metadata_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/metadata"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

func tag(n *fxgraph.Node) any {
	v, _ := n.Meta.Get(metadata.KeyQuantizationTag)
	return v
}

func setTag(n *fxgraph.Node, s string) {
	n.Meta.Set(metadata.KeyQuantizationTag, s)
	n.Meta.StackTrace = s + " trace"
}

func annotate(n *fxgraph.Node, out bool, ins ...metadata.AnnotatedInput) {
	n.Meta.Set(metadata.AnnotationKey, metadata.AnnotationInfo{Inputs: ins, Output: out})
}

// staticLinear builds the static per-channel linear of convert's output
// (before folding): x -> q -> dq; w -> permute -> q_pc -> dq_pc; linear;
// q -> dq. affine swaps the weight q/dq for torchao.quantize_affine /
// dequantize_affine in the given form.
func staticLinear(weightQ, weightDQ ops.Target, affine bool) (g *fxgraph.Graph, x, w, perm, xq, xdq, wq, wdq, lin, oq *fxgraph.Node) {
	g = fxgraph.New()
	i8, lo, hi := tensor.Int8, int64(-128), int64(127)
	g.SetAttr("fc.weight", tensor.F32([]int{2, 2}, 1, 2, 3, 4))
	g.SetAttr("s", tensor.F32([]int{2}, 0.1, 0.1))
	g.SetAttr("z", tensor.MustFromData(tensor.Int64, []int{2}, []int64{0, 0}))
	x = g.Placeholder("x", nil)
	w = g.GetAttr("fc.weight", nil)
	perm = g.Call(ops.MustOverload("aten.permute.default"), w, ops.List{int64(1), int64(0)})
	s, z := g.GetAttr("s", nil), g.GetAttr("z", nil)
	if affine {
		block := ops.List{int64(1), int64(2)}
		wq = g.Call(weightQ, perm, block, s, z, i8, lo, hi)
		wdq = g.Call(weightDQ, wq, block, s, z, i8, lo, hi)
	} else {
		wq = g.Call(weightQ, perm, s, z, int64(0), lo, hi, i8)
		wdq = g.Call(weightDQ, wq, s, z, int64(0), lo, hi, i8)
	}
	xq = g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), x, 0.5, int64(0), lo, hi, i8)
	xdq = g.Call(ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default"), xq, 0.5, int64(0), lo, hi, i8)
	lin = g.Call(ops.MustOverload("aten.linear.default"), xdq, wdq)
	oq = g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), lin, 0.5, int64(0), lo, hi, i8)
	g.SetOutput(ops.Tuple{oq})
	return
}

func TestPortStatic(t *testing.T) {
	tests := []struct {
		name    string
		wq, wdq ops.Target
		affine  bool
	}{
		{"per_channel", ops.MustOverload("quantized_decomposed.quantize_per_channel.default"), ops.MustOverload("quantized_decomposed.dequantize_per_channel.default"), false},
		{"affine_default", ops.MustOverload("torchao.quantize_affine.default"), ops.MustOverload("torchao.dequantize_affine.default"), true},
		{"affine_packet", ops.MustPacket("torchao.quantize_affine"), ops.MustPacket("torchao.dequantize_affine"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, x, w, perm, xq, xdq, wq, wdq, lin, oq := staticLinear(tt.wq, tt.wdq, tt.affine)
			setTag(lin, "linear_0")
			setTag(w, "weight_0")
			// the linear read the permuted weight before observers were inserted
			annotate(lin, true, metadata.AnnotatedInput{Node: x}, metadata.AnnotatedInput{Node: perm})
			res, err := metadata.PortNodeMetaForQDQ(g, metadata.Options{})
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			assert.True(t, res.Changed)
			assert.Equal(t, "linear_0", tag(xdq), "input dq takes the consumer's tag")
			assert.Nil(t, tag(xq), "the input q of a placeholder is not tagged")
			assert.Equal(t, "linear_0", tag(wdq))
			assert.Equal(t, "linear_0 trace", wdq.Meta.StackTrace)
			assert.Equal(t, "weight_0", tag(wq), "the weight q takes the get_attr's tag")
			assert.Equal(t, "weight_0", tag(perm), "as do the views between them")
			assert.Equal(t, "linear_0", tag(oq), "output q")

			before := fxgraph.Format(g)
			res, err = metadata.PortNodeMetaForQDQ(g, metadata.Options{})
			require.NoError(t, err)
			assert.False(t, res.Changed, "a second run changes nothing")
			assert.Equal(t, before, fxgraph.Format(g))
		})
	}
}

// TestPortKwargDequantize: a dequantize passed as a keyword argument is
// found (upstream's kwargs loop iterated names and never found one).
func TestPortKwargDequantize(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	i8 := tensor.Int8
	q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), x, 0.5, int64(0), int64(-128), int64(127), i8)
	dq := g.Call(ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default"), q, 0.5, int64(0), int64(-128), int64(127), i8)
	y := g.Placeholder("y", nil)
	add := g.CallKw(ops.MustOverload("aten.add.Tensor"), []ops.Value{y}, []ops.Kwarg{{Name: "other", Value: dq}})
	g.SetOutput(ops.Tuple{add})
	setTag(add, "add_0")
	annotate(add, false, metadata.AnnotatedInput{Node: x})
	res, err := metadata.PortNodeMetaForQDQ(g, metadata.Options{})
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Equal(t, "add_0", tag(dq))
}

// TestPortDynamic: choose_qparams, q and dq of a dynamic input take the
// consumer's keys, for the decomposed and the affine (both forms) ops.
func TestPortDynamic(t *testing.T) {
	tests := []struct {
		name      string
		cq, q, dq ops.Target
		affine    bool
	}{
		{"decomposed", ops.MustOverload("quantized_decomposed.choose_qparams.tensor"), ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor"), ops.MustOverload("quantized_decomposed.dequantize_per_tensor.tensor"), false},
		{"affine_default", ops.MustOverload("torchao.choose_qparams_affine.default"), ops.MustOverload("torchao.quantize_affine.default"), ops.MustOverload("torchao.dequantize_affine.default"), true},
		{"affine_packet", ops.MustPacket("torchao.choose_qparams_affine"), ops.MustPacket("torchao.quantize_affine"), ops.MustPacket("torchao.dequantize_affine"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fxgraph.New()
			x := g.Placeholder("x", nil)
			i8, lo, hi := tensor.Int8, int64(-128), int64(127)
			var cq, q, dq *fxgraph.Node
			if tt.affine {
				block := ops.List{int64(1), int64(4)}
				cq = g.Call(tt.cq, x, "ASYMMETRIC", block, i8, lo, hi, 1e-5, tensor.Float32, tensor.Int32)
				s, z := g.Call(ops.GetItem, cq, int64(0)), g.Call(ops.GetItem, cq, int64(1))
				q = g.Call(tt.q, x, block, s, z, i8, lo, hi)
				dq = g.Call(tt.dq, q, block, s, z, i8, lo, hi)
			} else {
				cq = g.Call(tt.cq, x, lo, hi, 1e-5, i8)
				s, z := g.Call(ops.GetItem, cq, int64(0)), g.Call(ops.GetItem, cq, int64(1))
				q = g.Call(tt.q, x, s, z, lo, hi, i8)
				dq = g.Call(tt.dq, q, s, z, lo, hi, i8)
			}
			r := g.Call(ops.MustOverload("aten.relu.default"), dq)
			g.SetOutput(ops.Tuple{r})
			setTag(r, "relu_dynamic_0")
			annotate(r, false, metadata.AnnotatedInput{Node: x, Dynamic: true})
			res, err := metadata.PortNodeMetaForQDQ(g, metadata.Options{})
			require.NoError(t, err)
			assert.Equal(t, 3, res.Stats["ported"])
			for _, n := range []*fxgraph.Node{cq, q, dq} {
				assert.Equal(t, "relu_dynamic_0", tag(n), n.Name())
			}
		})
	}
	t.Run("no choose_qparams", func(t *testing.T) {
		g := fxgraph.New()
		x := g.Placeholder("x", nil)
		r := g.Call(ops.MustOverload("aten.relu.default"), x)
		g.SetOutput(ops.Tuple{r})
		annotate(r, false, metadata.AnnotatedInput{Node: x, Dynamic: true})
		_, err := metadata.PortNodeMetaForQDQ(g, metadata.Options{})
		require.ErrorIs(t, err, metadata.ErrNoChooseQParams)
		assert.Contains(t, err.Error(), `node "relu_default"`)
	})
}

// TestNoAnnotationNoChange: without annotations nothing is ported and the
// graph prints the same.
func TestNoAnnotationNoChange(t *testing.T) {
	g, _, w, _, _, _, _, _, lin, _ := staticLinear(ops.MustOverload("quantized_decomposed.quantize_per_channel.default"), ops.MustOverload("quantized_decomposed.dequantize_per_channel.default"), false)
	setTag(lin, "linear_0")
	setTag(w, "weight_0")
	before := fxgraph.Format(g)
	res, err := metadata.PortNodeMetaForQDQ(g, metadata.Options{})
	require.NoError(t, err)
	assert.False(t, res.Changed)
	assert.Equal(t, before, fxgraph.Format(g))
}
