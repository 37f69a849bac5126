package convert_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// fakeQuantGraph builds x -> fused_moving_avg_obs_fake_quant -> output with
// the given min/max state and quant range; minFromPlaceholder passes
// running_min as a placeholder instead of a buffer.
func fakeQuantGraph(t *testing.T, lo, hi float32, qmin, qmax int64, minFromPlaceholder bool) *fxgraph.Graph {
	t.Helper()
	g := fxgraph.New()
	set := func(name string, v *tensor.Tensor) *fxgraph.Node {
		g.SetAttr(name, v)
		return g.GetAttr(name, convert.TensorTypeOf(v))
	}
	on := set("fq.observer_enabled", tensor.MustFromData(tensor.Int64, []int{1}, []int64{1}))
	fon := set("fq.fake_quant_enabled", tensor.MustFromData(tensor.Int64, []int{1}, []int64{1}))
	mn := set("fq.activation_post_process.min_val", tensor.MustFromData(tensor.Float32, []int{}, []float32{lo}))
	mx := set("fq.activation_post_process.max_val", tensor.MustFromData(tensor.Float32, []int{}, []float32{hi}))
	sc := set("fq.scale", tensor.MustFromData(tensor.Float32, []int{1}, []float32{1}))
	zp := set("fq.zero_point", tensor.MustFromData(tensor.Int32, []int{1}, []int32{0}))
	set("fq.activation_post_process.eps", tensor.MustFromData(tensor.Float32, []int{1}, []float32{1.0 / 4096}))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 2, 3))
	if minFromPlaceholder {
		mn = g.Placeholder("m", ops.Plain(tensor.Float32))
	}
	fq := g.Call(convert.FusedFakeQuantize, x, on, fon, mn, mx, sc, zp, 0.01, qmin, qmax, int64(-1))
	fq.SetType(ops.Plain(tensor.Float32, 2, 3))
	g.SetOutput(ops.Tuple{fq})
	return g
}

// TestConvertQATFakeQuantState: the trained min/max give the qparams
// torch's MovingAverageMinMaxObserver computes (hand calculation below);
// bad state or arguments are refused naming the node, the graph unchanged.
func TestConvertQATFakeQuantState(t *testing.T) {
	g := fakeQuantGraph(t, -1, 3, -128, 127, false)
	require.NoError(t, convert.ConvertQAT(g, convert.ConvertOptions{}))
	var q *fxgraph.Node
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction && n.Target() == ops.MustOverload("quantized_decomposed.quantize_per_tensor.default") {
			q = n
		}
	}
	require.NotNil(t, q)
	// per_tensor_affine int8: scale = (max - min) / 255 in float32 = 4/255,
	// zero_point = -128 - round(min / scale) = -128 + round(63.75) = -64.
	assert.Equal(t, float64(float32(4)/float32(255)), q.Arg(1))
	assert.Equal(t, int64(-64), q.Arg(2))
	assert.Equal(t, []any{int64(-128), int64(127), tensor.Int8}, []any{q.Arg(3), q.Arg(4), q.Arg(5)})

	for _, tc := range []struct {
		name   string
		g      *fxgraph.Graph
		substr string
	}{
		{"untrained", fakeQuantGraph(t, float32(math.Inf(1)), float32(math.Inf(-1)), -128, 127, false), "never observed data"},
		{"min above max", fakeQuantGraph(t, 2, 1, -128, 127, false), "min_val 2, max_val 1"},
		{"range", fakeQuantGraph(t, -1, 1, -1000, 1000, false), "quant range [-1000, 1000] is neither int8 nor uint8"},
		{"state not a buffer", fakeQuantGraph(t, -1, 1, -128, 127, true), "running_min: want a get_attr node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fxgraph.Format(tc.g)
			err := convert.ConvertQAT(tc.g, convert.ConvertOptions{})
			require.ErrorIs(t, err, convert.ErrQAT)
			assert.Contains(t, err.Error(), `fake quantize node "fused_moving_avg_obs_fake_quant_default"`)
			assert.Contains(t, err.Error(), tc.substr)
			assert.Equal(t, before, fxgraph.Format(tc.g))
		})
	}
}

// Two fake quantizers reading one state (torchao registers one module
// under two names: mnasnet's relu and the mean after it) both keep the
// program's eps. Range [0, 1e-5]: (max - min) / 255 is below eps, so
// scale = eps = 2**-12 for both; with float32 eps (the default when the
// buffer is gone) it would be 1e-5/255 clamped to 2**-23 instead.
func TestConvertQATSharedStateKeepsEps(t *testing.T) {
	g := fakeQuantGraph(t, 0, 1e-5, -128, 127, false)
	var fq *fxgraph.Node
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction {
			fq = n
		}
	}
	args := append([]ops.Value{fq}, fq.Args()[1:]...)
	restore := g.InsertingAfter(fq)
	fq2 := g.Call(convert.FusedFakeQuantize, args...)
	restore()
	fq2.SetType(ops.Plain(tensor.Float32, 2, 3))
	g.SetOutput(ops.Tuple{fq2})
	require.NoError(t, convert.ConvertQAT(g, convert.ConvertOptions{}))
	var scales []any
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction && n.Target() == ops.MustOverload("quantized_decomposed.quantize_per_tensor.default") {
			scales = append(scales, n.Arg(1))
		}
	}
	assert.Equal(t, []any{1.0 / 4096, 1.0 / 4096}, scales)
}
