package tests

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

func init() {
	registerVectorRunner("fx_static_linear", runFXStaticLinearCase)
}

// fxsTensor is a vector-file tensor; float32 values are read from bits.
type fxsTensor struct {
	DType  string    `json:"dtype"`
	Shape  []int     `json:"shape"`
	Values []float64 `json:"values"`
	Bits   []string  `json:"bits"`
}

func (x *fxsTensor) f32(t *testing.T) []float32 {
	t.Helper()
	return float32Values(t, x.Bits, x.Values, func(_ int, v float64) float32 { return float32(v) })
}

func (x *fxsTensor) tensor(t *testing.T) *tensor.Tensor {
	t.Helper()
	return float32Tensor(t, x.DType, x.Shape, x.f32)
}

type fxsCase struct {
	QConfig     string               `json:"qconfig"`
	Params      map[string]fxsTensor `json:"params"`
	Calibration []fxsTensor          `json:"calibration_inputs"`
	XTest       fxsTensor            `json:"x_test"`
	Observers   map[string]struct {
		Type      string    `json:"type"`
		Scale     fxsTensor `json:"scale"`
		ZeroPoint fxsTensor `json:"zero_point"`
	} `json:"observers"`
	QuantizeNodes []struct {
		Input     string    `json:"input"`
		Scale     fxsTensor `json:"scale"`
		ZeroPoint fxsTensor `json:"zero_point"`
	} `json:"quantize_nodes"`
	RefLinear map[string]struct {
		WeightScale     fxsTensor `json:"weight_scale"`
		WeightZeroPoint fxsTensor `json:"weight_zero_point"`
		WeightQ         fxsTensor `json:"weight_q"`
	} `json:"reference_linear_modules"`
	Expected struct {
		YReference fxsTensor `json:"y_reference"`
	} `json:"expected"`
}

// fxsQuantizer annotates the two-linear model as prepare_fx's qconfig does:
// act0 on the input of l1, act1 on the (fused) relu output and the input of
// l2, act2 on the output of l2, w on both weights; biases stay float.
type fxsQuantizer struct {
	l1, relu, l2        *fxgraph.Node
	act0, act1, act2, w convert.QSpec
}

func (q *fxsQuantizer) TransformForAnnotation(*fxgraph.Graph) error { return nil }
func (q *fxsQuantizer) Validate(*fxgraph.Graph) error               { return nil }
func (q *fxsQuantizer) Annotate(g *fxgraph.Graph) error {
	lin := g.FindNodes(fxgraph.CallFunction, ops.MustOverload("aten.linear.default"))
	relus := g.FindNodes(fxgraph.CallFunction, ops.MustOverload("aten.relu.default"))
	if len(lin) != 2 || len(relus) != 1 {
		return fmt.Errorf("want 2 linears and 1 relu, got %d and %d", len(lin), len(relus))
	}
	l1, relu, l2 := lin[0], relus[0], lin[1]
	q.l1, q.relu, q.l2 = l1, relu, l2
	convert.AnnotateInput(q.l1, q.l1.Arg(0).(*fxgraph.Node), q.act0)
	convert.AnnotateInput(q.l1, q.l1.Arg(1).(*fxgraph.Node), q.w)
	convert.AnnotateOutput(q.relu, q.act1)
	convert.AnnotateInput(q.l2, q.l2.Arg(0).(*fxgraph.Node), q.act1)
	convert.AnnotateInput(q.l2, q.l2.Arg(1).(*fxgraph.Node), q.w)
	convert.AnnotateOutput(q.l2, q.act2)
	return nil
}

// runFXStaticLinearCase builds Linear(16,8) -> ReLU -> Linear(8,4) from the
// recorded state dict with the Go API, prepares it, calibrates on the
// recorded batches and converts it.
//
// per_tensor_minmax first runs the recorded qconfig itself
// (MinMaxObserver(quint8, per_tensor_affine) activations,
// MinMaxObserver(qint8, per_tensor_symmetric) weights): every scale and zero
// point, those of the observers after a linear included (the linear kernel
// sums in torch's CPU order, ops/kernels/aten_gemm_exact.go), and y_reference
// come out bit for bit. Both qconfigs then run
// with the recorded activation qparams as FixedQParams specs over the full
// quint8 range (what torch.quantize_per_tensor clamps to; for default_fbgemm,
// whose torch 1.13 HistogramObserver used reduce_range, the README asks for
// exactly this) and observed weights: every quantize node's scale and zero
// point, the int8 weights and their scales, and y_reference on x_test are
// then checked bit for bit.
func runFXStaticLinearCase(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	var c fxsCase
	require.NoError(t, json.Unmarshal(raw, &c))

	fixed := func(name string) convert.QSpec {
		o, ok := c.Observers[name]
		require.True(t, ok, "observer %s", name)
		return &convert.FixedQParamsQuantizationSpec{DType: observers.QUInt8, QScheme: observers.PerTensorAffine,
			Scale: float64(o.Scale.f32(t)[0]), ZeroPoint: int64(o.ZeroPoint.Values[0]),
			QuantMin: observers.Int(0), QuantMax: observers.Int(255)}
	}
	recorded := &fxsQuantizer{act0: fixed("activation_post_process_0"), act1: fixed("activation_post_process_1"), act2: fixed("activation_post_process_2")}
	switch c.QConfig {
	case "per_tensor_minmax":
		act := &convert.QuantizationSpec{DType: observers.QUInt8, QScheme: observers.PerTensorAffine,
			Observer: convert.MinMaxObserverCtor(observers.Config{})}
		w := &convert.QuantizationSpec{DType: observers.QInt8, QScheme: observers.PerTensorSymmetric,
			Observer: convert.MinMaxObserverCtor(observers.Config{})}
		// The observers themselves: every qparam bit for bit.
		fxsFlow(t, &c, &fxsQuantizer{act0: act, act1: act, act2: act, w: w})
		recorded.w = w
	case "default_fbgemm":
		zero := 0
		recorded.w = &convert.QuantizationSpec{DType: observers.QInt8, QScheme: observers.PerChannelSymmetric, ChAxis: &zero,
			Observer: convert.PerChannelMinMaxObserverCtor(observers.Config{})}
	default:
		t.Fatalf("unknown qconfig %q", c.QConfig)
	}
	// With the recorded activation qparams, everything bit for bit.
	fxsFlow(t, &c, recorded)
}

// fxsFlow builds the model, prepares it with q, calibrates, converts and
// checks the quantize nodes, the int8 weights and the reference output bit
// for bit.
func fxsFlow(t *testing.T, c *fxsCase, q *fxsQuantizer) {
	g := fxgraph.New()
	for _, name := range []string{"l1.weight", "l1.bias", "l2.weight", "l2.bias"} {
		p, ok := c.Params[name]
		require.True(t, ok, "param %s", name)
		g.SetAttr(name, p.tensor(t))
	}
	typ := func(shape ...int64) ops.Type { return ops.Plain(tensor.Float32, shape...) }
	calShape := c.Calibration[0].Shape
	n := int64(calShape[0])
	x := g.Placeholder("x", typ(n, 16))
	w1, b1 := g.GetAttr("l1.weight", typ(8, 16)), g.GetAttr("l1.bias", typ(8))
	w2, b2 := g.GetAttr("l2.weight", typ(4, 8)), g.GetAttr("l2.bias", typ(4))
	linear := ops.MustOverload("aten.linear.default")
	l1 := g.Call(linear, x, w1, b1)
	l1.SetType(typ(n, 8))
	relu := g.Call(ops.MustOverload("aten.relu.default"), l1)
	relu.SetType(typ(n, 8))
	l2 := g.Call(linear, relu, w2, b2)
	l2.SetType(typ(n, 4))
	g.SetOutput(ops.Tuple{l2})

	require.NoError(t, convert.Prepare(g, q))

	var batches [][]*tensor.Tensor
	for i := range c.Calibration {
		batches = append(batches, []*tensor.Tensor{c.Calibration[i].tensor(t)})
	}
	require.NoError(t, convert.Calibrate(g, batches, nil))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))

	// Activation quantize nodes, in graph order: x, l1 (relu), l2.
	var acts []*fxgraph.Node
	qpt := ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	for nd := range g.All() {
		if nd.Op() == fxgraph.CallFunction && nd.Target() == qpt {
			acts = append(acts, nd)
		}
	}
	require.Len(t, acts, len(c.QuantizeNodes), "activation quantize nodes:\n%s", fxgraph.Format(g))
	for i, want := range c.QuantizeNodes {
		s, ok := acts[i].Arg(1).(float64)
		require.True(t, ok)
		zp, ok := acts[i].Arg(2).(int64)
		require.True(t, ok)
		assert.Equal(t, pgBits(want.Scale.f32(t)), pgBits([]float32{float32(s)}), "quantize of %s: scale", want.Input)
		assert.Equal(t, float64(float32(s)), s, "quantize of %s: scale literal is float(float32)", want.Input)
		assert.Equal(t, int64(want.ZeroPoint.Values[0]), zp, "quantize of %s: zero point", want.Input)
		assert.Equal(t, tensor.UInt8, acts[i].Arg(5), "quantize of %s: dtype", want.Input)
	}

	// Weights: folded int8 constants feeding the dequantize, with the
	// recorded scales.
	var dqs []*fxgraph.Node
	for nd := range g.All() {
		if nd.Op() == fxgraph.CallFunction && (nd.Target() == ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default") ||
			nd.Target() == ops.MustOverload("quantized_decomposed.dequantize_per_channel.default")) {
			if src, ok := nd.Arg(0).(*fxgraph.Node); ok && src.Op() == fxgraph.GetAttr {
				dqs = append(dqs, nd)
			}
		}
	}
	require.Len(t, dqs, 2, "weight dequantizes:\n%s", fxgraph.Format(g))
	for i, key := range []string{"l1.0", "l2"} {
		ref, ok := c.RefLinear[key]
		require.True(t, ok, "reference module %s", key)
		src := dqs[i].Arg(0).(*fxgraph.Node)
		v, _ := g.Attr(src.TargetName())
		wq, ok := v.(*tensor.Tensor)
		require.True(t, ok)
		assert.Equal(t, tensor.Int8, wq.DType(), "%s: folded weight dtype", key)
		got, err := wq.Int64s()
		require.NoError(t, err)
		wantQ := make([]int64, len(ref.WeightQ.Values))
		for j, f := range ref.WeightQ.Values {
			wantQ[j] = int64(f)
		}
		assert.Equal(t, wantQ, got, "%s: int8 weight", key)
		var scales []float32
		switch s := dqs[i].Arg(1).(type) {
		case float64:
			scales = []float32{float32(s)}
		case *fxgraph.Node:
			sv, _ := g.Attr(s.TargetName())
			st, ok := sv.(*tensor.Tensor)
			require.True(t, ok)
			scales, err = tensor.Data[float32](st.Contiguous())
			require.NoError(t, err)
		}
		assert.Equal(t, pgBits(ref.WeightScale.f32(t)), pgBits(scales), "%s: weight scale", key)
	}

	res, err := interp.Run(g, []*tensor.Tensor{c.XTest.tensor(t)}, interp.Options{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	y, ok := res[0].(*tensor.Tensor)
	require.True(t, ok)
	got, err := tensor.Data[float32](y.Contiguous())
	require.NoError(t, err)
	assert.Equal(t, c.Expected.YReference.Shape, y.Shape())
	assert.Equal(t, pgBits(c.Expected.YReference.f32(t)), pgBits(got), "y_reference")
}
