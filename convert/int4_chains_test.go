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

// twoLinearsOnOneInput is a decoder's wq/wk pair in small: two bias-free
// linears read the same activation x [1, 2, 32].
func twoLinearsOnOneInput(t *testing.T) *fxgraph.Graph {
	t.Helper()
	g := fxgraph.New()
	x := g.Placeholder("x", f32(1, 2, 32))
	var outs ops.Tuple
	for i, name := range []string{"wq", "wk"} {
		w := make([]float32, 4*32)
		for j := range w {
			w[j] = float32((j*7+i*3)%17-8) / 16
		}
		wt, err := tensor.FromData(tensor.Float32, []int{4, 32}, w)
		require.NoError(t, err)
		g.SetAttr(name, wt)
		wn := g.GetAttr(name, f32(4, 32))
		l := g.Call(ops.MustOverload("aten.linear.default"), x, wn)
		l.SetType(f32(1, 2, 4))
		outs = append(outs, l)
	}
	g.SetOutput(outs)
	return g
}

func countCalls(g *fxgraph.Graph, target string) int {
	n := 0
	for _, nd := range g.Nodes() {
		if nd.Op() == fxgraph.CallFunction && nd.Target().String() == target {
			n++
		}
	}
	return n
}

// TestInt4OwnActivationChains: by default, as torchao's prepare does, the
// two linears reading x share one activation observer, so convert makes one
// choose_qparams/quantize/dequantize chain whose dequantize has two users,
// and the reference rewrite (which needs a dequantize with one user) leaves
// both linears alone (torchao's llama_tiny: wq/wk/wv are not rewritten).
// OwnActivationChains gives each linear its own chain, and both become
// reference_dqlinear_int4.
func TestInt4OwnActivationChains(t *testing.T) {
	x := make([]float32, 2*32)
	for i := range x {
		x[i] = float32(i%11-5) / 4
	}
	batch, err := tensor.FromData(tensor.Float32, []int{1, 2, 32}, x)
	require.NoError(t, err)
	for _, tc := range []struct {
		own            bool
		chains, refOps int
	}{{false, 1, 0}, {true, 2, 2}} {
		for _, ref := range []bool{false, true} {
			g := twoLinearsOnOneInput(t)
			q := convert.Int4GroupwiseQuantizer{GroupSize: 16, OwnActivationChains: tc.own}
			require.NoError(t, convert.Prepare(g, q))
			require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{{batch}}, nil))
			require.NoError(t, convert.Convert(g, convert.ConvertOptions{ReferenceRepresentation: ref}))
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			if !ref {
				assert.Equal(t, tc.chains, countCalls(g, "torchao.choose_qparams_affine.default"), "own=%v: activation chains", tc.own)
				continue
			}
			assert.Equal(t, tc.refOps, countCalls(g, "torchao.reference_dqlinear_int4.default"), "own=%v\n%s", tc.own, fxgraph.Format(g))
		}
	}
}
