package convert_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

var (
	bnT     = ops.MustOverload("aten.batch_norm.default")
	conv2dT = ops.MustOverload("aten.conv2d.default")
	convT2T = ops.MustOverload("aten.conv_transpose2d.input")
)

// bnParams registers a 2-channel batch norm "<p>.weight/bias/running_mean/
// running_var" and returns its call on in with eps 1. The default values
// are weight [2, 3], bias [0.25, 0], mean [1, 0.5], var [3, 0]: per
// channel r = 1/sqrt(var + 1) = [0.5, 1] and s = weight * r = [1, 3].
func bnParams(g *fxgraph.Graph, p string, in *fxgraph.Node, weight, bias, mean, variance []float32) *fxgraph.Node {
	ga := func(name string, v []float32) *fxgraph.Node {
		g.SetAttr(p+"."+name, tensor.MustFromData(tensor.Float32, []int{2}, v))
		return g.GetAttr(p+"."+name, f32(2))
	}
	bn := g.Call(bnT, in, ga("weight", weight), ga("bias", bias), ga("running_mean", mean), ga("running_var", variance), false, 0.1, 1.0, false)
	bn.SetType(in.Type())
	return bn
}

var (
	bnW, bnB, bnMean, bnVar = []float32{2, 3}, []float32{0.25, 0}, []float32{1, 0.5}, []float32{3, 0}
)

func attrData(t *testing.T, g *fxgraph.Graph, path string) []float32 {
	t.Helper()
	v, ok := g.Attr(path)
	require.True(t, ok, path)
	d, err := tensor.Data[float32](v.(*tensor.Tensor))
	require.NoError(t, err)
	return d
}

// TestFoldLinearBatchNorm: linear(x, w, b) -> batch_norm with the
// bnParams defaults, w = [[1, 2], [3, 4]], b = [0.5, -1]. Section 3.7's
// linear formula by hand: w' = w * s[:, None] = [[1, 2], [9, 12]];
// b' = ((b - mean) * s) + bn_bias = [(-0.5 * 1) + 0.25, (-1.5 * 3) + 0]
// = [-0.25, -4.5]. A 3-D input skips the fold (pytorch/ao#4116) and the
// batch norm stays. Without a bias the new parameter fc.weight_bias holds
// ((0 - mean) * s) + bn_bias = [-0.75, -1.5].
func TestFoldLinearBatchNorm(t *testing.T) {
	tests := []struct {
		name     string
		in       ops.Type
		bias     bool
		folded   bool
		wantW    []float32
		wantBias []float32
		biasPath string
	}{
		{"2-d input", f32(3, 2), true, true, []float32{1, 2, 9, 12}, []float32{-0.25, -4.5}, "fc.bias"},
		{"2-d input without bias", f32(3, 2), false, true, []float32{1, 2, 9, 12}, []float32{-0.75, -1.5}, "fc.weight_bias"},
		{"3-d input is not folded", f32(1, 3, 2), true, false, []float32{1, 2, 3, 4}, []float32{0.5, -1}, "fc.bias"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fxgraph.New()
			g.SetAttr("fc.weight", tensor.MustFromData(tensor.Float32, []int{2, 2}, []float32{1, 2, 3, 4}))
			x := g.Placeholder("x", tt.in)
			args := []ops.Value{x, g.GetAttr("fc.weight", f32(2, 2))}
			if tt.bias {
				g.SetAttr("fc.bias", tensor.MustFromData(tensor.Float32, []int{2}, []float32{0.5, -1}))
				args = append(args, g.GetAttr("fc.bias", f32(2)))
			}
			l := g.Call(linearT, args...)
			l.SetType(f32(3, 2))
			bn := bnParams(g, "bn", l, bnW, bnB, bnMean, bnVar)
			g.SetOutput(ops.Tuple{bn})

			require.NoError(t, convert.FoldBatchNorm(g, nil))
			bns := g.FindNodes(fxgraph.CallFunction, bnT)
			out, _ := g.OutputNode()
			if tt.folded {
				assert.Empty(t, bns)
				assert.Equal(t, ops.Tuple{l}, out.Arg(0))
				for n := range g.All() {
					assert.NotContains(t, n.TargetName(), "bn.", "BN get_attrs are dead code")
				}
			} else {
				assert.Len(t, bns, 1)
			}
			assert.Equal(t, tt.wantW, attrData(t, g, "fc.weight"))
			if tt.bias || tt.folded {
				assert.Equal(t, tt.wantBias, attrData(t, g, tt.biasPath))
			}
			if !tt.bias && tt.folded {
				b, ok := l.Arg(2).(*fxgraph.Node)
				require.True(t, ok)
				assert.Equal(t, "fc_weight_bias", b.Name())
			}
		})
	}
}

// TestFoldConvTransposeBatchNorm: conv_transpose2d's weight is
// [in, out, kh, kw], so s = [1, 3] scales axis 1: w = [[1, 2], [3, 4]]
// (1x1 kernels) becomes [[1, 6], [3, 12]]; the bias follows the conv
// formula ((b - mean) * r) * weight + bn_bias with b = [0.5, -1]:
// [(-0.5 * 0.5) * 2 + 0.25, (-1.5 * 1) * 3 + 0] = [-0.25, -4.5].
//
// The default registry has no conv_transpose schemas (nor kernels); the
// fold recognises the targets without them.
func TestFoldConvTransposeBatchNorm(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("up.weight", tensor.MustFromData(tensor.Float32, []int{2, 2, 1, 1}, []float32{1, 2, 3, 4}))
	g.SetAttr("up.bias", tensor.MustFromData(tensor.Float32, []int{2}, []float32{0.5, -1}))
	x := g.Placeholder("x", f32(1, 2, 2, 2))
	c := g.Call(convT2T, x, g.GetAttr("up.weight", f32(2, 2, 1, 1)), g.GetAttr("up.bias", f32(2)))
	c.SetType(f32(1, 2, 2, 2))
	bn := bnParams(g, "bn", c, bnW, bnB, bnMean, bnVar)
	g.SetOutput(ops.Tuple{bn})
	require.NoError(t, convert.FoldBatchNorm(g, nil))
	assert.Empty(t, g.FindNodes(fxgraph.CallFunction, bnT))
	assert.Equal(t, []float32{1, 6, 3, 12}, attrData(t, g, "up.weight"))
	assert.Equal(t, []float32{-0.25, -4.5}, attrData(t, g, "up.bias"))
}

// TestFoldSharedWeight (section 3.7): two convs share one weight get_attr,
// each followed by its own batch norm. The first fold scales the weight
// by s = [1, 3] ([3, -2] -> [3, -6]) and rewrites conv_a's bias as in
// TestFoldBatchNorm's formula ([0.5, -1] -> [-0.25, -4.5]); the second
// batch norm (s would be [4, 4]) is removed without folding, so conv_b's
// bias stays [7, 8] and the weight is not scaled again.
func TestFoldSharedWeight(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("w", tensor.MustFromData(tensor.Float32, []int{2, 1, 1, 1}, []float32{3, -2}))
	g.SetAttr("ba", tensor.MustFromData(tensor.Float32, []int{2}, []float32{0.5, -1}))
	g.SetAttr("bb", tensor.MustFromData(tensor.Float32, []int{2}, []float32{7, 8}))
	x := g.Placeholder("x", f32(1, 1, 2, 2))
	w := g.GetAttr("w", f32(2, 1, 1, 1))
	ca := g.Call(conv2dT, x, w, g.GetAttr("ba", f32(2)))
	ca.SetType(f32(1, 2, 2, 2))
	cb := g.Call(conv2dT, x, w, g.GetAttr("bb", f32(2)))
	cb.SetType(f32(1, 2, 2, 2))
	bna := bnParams(g, "bn1", ca, bnW, bnB, bnMean, bnVar)
	bnb := bnParams(g, "bn2", cb, []float32{4, 4}, []float32{1, 1}, []float32{0, 0}, []float32{0, 0})
	g.SetOutput(ops.Tuple{bna, bnb})
	require.NoError(t, convert.FoldBatchNorm(g, nil))
	assert.Empty(t, g.FindNodes(fxgraph.CallFunction, bnT))
	out, _ := g.OutputNode()
	assert.Equal(t, ops.Tuple{ca, cb}, out.Arg(0))
	assert.Equal(t, []float32{3, -6}, attrData(t, g, "w"))
	assert.Equal(t, []float32{-0.25, -4.5}, attrData(t, g, "ba"))
	assert.Equal(t, []float32{7, 8}, attrData(t, g, "bb"))
}
