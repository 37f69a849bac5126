package typed_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/typed"
)

// convertedChain builds, with the Go API, the graph convert_pt2e gives a
// model x → reshape → instance_norm → reshape under a quantizer that
// quantizes every op's output (reshapes share their input's qparams):
// one quantize → dequantize pair per value, then the output's dequantize.
func convertedChain(t *testing.T) *fxgraph.Graph {
	t.Helper()
	g := fxgraph.New()
	g.SetAttr("in_weight", tensor.F32([]int{3}, 0.5, 1.5, -2))
	g.SetAttr("in_bias", tensor.F32([]int{3}, 0.1, -0.2, 0.3))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 2, 12, 5, 7))
	w := g.GetAttr("in_weight", nil)
	b := g.GetAttr("in_bias", nil)
	qdq := func(v *fxgraph.Node, s float64, zp int64) *fxgraph.Node {
		q := g.Call(qpt, v, s, zp, int64(-128), int64(127), tensor.Int8)
		return g.Call(dqpt, q, s, zp, int64(-128), int64(127), tensor.Int8)
	}
	d0 := qdq(x, 0.02, -3)
	top := g.Call(reshape, d0, ops.List{int64(2), int64(3), int64(-1)})
	d1 := qdq(top, 0.02, -3)
	in := g.Call(instNorm, d1, w, b, nil, nil, true, 0.1, 1e-5, false)
	d2 := qdq(in, 0.08, 5)
	bottom := g.Call(reshape, d2, ops.List{int64(2), int64(12), int64(5), int64(7)})
	d3 := qdq(bottom, 0.08, 5)
	g.SetOutput(ops.Tuple{d3})
	require.NoError(t, typed.InferTypes(g, nil))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true}))
	return g
}

// runLiftCanonicalize runs lift_qdq then typed_canonicalize (Debug on) on
// g in a pipeline that verifies, with types required, after each pass, and
// returns the two pass runs.
func runLiftCanonicalize(t *testing.T, g *fxgraph.Graph) []fxgraph.PassRun {
	t.Helper()
	pl, err := fxgraph.NewPipeline([]fxgraph.Pass{
		typed.LiftPass(nil),
		typed.CanonicalizePass(typed.CanonOptions{Debug: true}),
	}, [][2]string{{"lift_qdq", "typed_canonicalize"}})
	require.NoError(t, err)
	pl.Verify = typed.VerifyOptions(nil)
	pl.Verify.RequireTypes = true
	runs, err := pl.Run(context.Background(), g)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	return runs
}

// TestTwoStageLiftThenCanonicalize: a converted graph is lifted to typed
// form and canonicalised in a verifying pipeline; the result keeps the
// function's return type and computes the same output within 1 LSB of
// the output type (scale 0.08).
func TestTwoStageLiftThenCanonicalize(t *testing.T) {
	conv := convertedChain(t)
	g, _ := conv.Clone()
	sig := returnType(t, g)
	runs := runLiftCanonicalize(t, g)
	assert.Empty(t, runs[0].Result.Notes)
	assert.Equal(t, 1, runs[1].Result.Stats["groupnorm_fold"])

	gn := groupNormNode(t, g)
	assert.True(t, ops.TypesEqual(sig, returnType(t, g)), "return type kept")
	want := ops.TensorType{Shape: []int64{2, 12, 5, 7}, Elem: tout}
	assert.True(t, want.Equal(gn.Type()), ops.TypeDiff(want, gn.Type()))
	in, _ := gn.Arg(0).(*fxgraph.Node)
	require.NotNil(t, in)
	assert.True(t, (ops.TensorType{Shape: []int64{2, 12, 5, 7}, Elem: tin}).Equal(in.Type()), "the group_norm reads the input's quantized value")

	x := input([]int64{2, 12, 5, 7})
	ref, err := interp.Run(conv, []*tensor.Tensor{x}, interp.Options{})
	require.NoError(t, err)
	rv, err := tensor.Data[float32](ref[0].(*tensor.Tensor).Contiguous())
	require.NoError(t, err)
	got := runOne(t, g, x)
	require.Len(t, got, len(rv))
	for i := range rv {
		require.LessOrEqual(t, math.Abs(float64(got[i]-rv[i])), 0.08*(1+1e-6), "element %d", i)
	}

	// Lowering the canonicalised graph gives an ordinary converted graph
	// that the plain verifier accepts.
	low, _ := g.Clone()
	_, err = typed.Lower(low, nil)
	require.NoError(t, err)
	require.NoError(t, fxgraph.Verify(low, fxgraph.VerifyOptions{RequireTypes: true}))
}

// TestLiftLowerRoundTripChain: Lift then Lower gives back the converted
// chain up to node names.
func TestLiftLowerRoundTripChain(t *testing.T) {
	conv := convertedChain(t)
	g, _ := conv.Clone()
	res, err := typed.Lift(g, nil)
	require.NoError(t, err)
	assert.Equal(t, 4, res.Stats["values_typed"])
	assert.Equal(t, 1, res.Stats["quantize_kept"], "the input's quantize stays")
	assert.Equal(t, 1, res.Stats["dequantize_kept"], "the output's dequantize stays")
	require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)))
	_, err = typed.Lower(g, nil)
	require.NoError(t, err)
	require.NoError(t, typed.Equiv(conv, g))
	// Names aside, the printed forms agree too.
	assert.Equal(t, canonical(t, conv), canonical(t, g))
}

// canonical prints g with nodes renamed n0, n1, ... in program order.
func canonical(t *testing.T, g *fxgraph.Graph) string {
	t.Helper()
	c, _ := g.Clone()
	for i, n := range c.Nodes() {
		if n.Op() != fxgraph.Output {
			c.Rename(n, "n"+itoa(i)+"_")
		}
	}
	return fxgraph.Format(c)
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
