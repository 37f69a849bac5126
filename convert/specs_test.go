package convert_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

var (
	sigmoidT   = ops.MustOverload("aten.sigmoid.default")
	qPTTensor  = ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor")
	dqPTTensor = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.tensor")
	noFuseT    = ops.MustOverload("quantized_decomposed.convert_element_type.no_fuse")
	chooseQPT  = ops.MustOverload("quantized_decomposed.choose_qparams.tensor")
	int32Min   = int64(math.MinInt32)
	int32Max   = int64(math.MaxInt32)
	symWeight  = func() *convert.QuantizationSpec {
		return &convert.QuantizationSpec{DType: observers.Int8, QScheme: observers.PerTensorSymmetric,
			QuantMin: observers.Int(-127), QuantMax: observers.Int(127), Observer: convert.MinMaxObserverCtor(observers.Config{})}
	}
)

// countTargets counts call_function nodes per target.
func countTargets(g *fxgraph.Graph, ts ...ops.Target) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = len(g.FindNodes(fxgraph.CallFunction, t))
	}
	return out
}

// TestDerivedBiasQSpec is test_derived_qspec on a linear: y = linear(x, w,
// b) with x = [[1, -2]], w = [[0.5, -1], [0.25, 1]], b = [1, -1]; x and
// y observed by MinMax int8 affine, w by MinMax int8 symmetric (-127..127),
// and b by a DerivedQuantizationSpec over (x, linear) and (w, linear):
// scale = act_scale * weight_scale, zero point 0, int32 over the full
// range, per_tensor_symmetric. By hand (float32 arithmetic):
// act_scale = 3/255 with zp -128 - round(-2 / (3/255)) = 42,
// weight_scale = 1/127 with zp 0, bias scale = f32(3/255) * f32(1/127),
// bias q = round(b / bias_scale) = round(+-255*127/3) = +-10795;
// y = [3.5, -2.75] gives scale 6.25/255 and zp -128 + round(2.75 * 255 / 6.25)
// = -128 + 112 = -16. After the constant fold (weight and bias quantize
// folded) there are 2 quantize and 4 dequantize nodes.
func TestDerivedBiasQSpec(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("fc.weight", tensor.MustFromData(tensor.Float32, []int{2, 2}, []float32{0.5, -1, 0.25, 1}))
	g.SetAttr("fc.bias", tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, -1}))
	x := g.Placeholder("x", f32(1, 2))
	y := g.Call(linearT, x, g.GetAttr("fc.weight", f32(2, 2)), g.GetAttr("fc.bias", f32(2)))
	y.SetType(f32(1, 2))
	g.SetOutput(ops.Tuple{y})

	derive := func(obs []observers.Observer) (*tensor.Tensor, *tensor.Tensor, error) {
		a, err := obs[0].CalculateQParams()
		if err != nil {
			return nil, nil, err
		}
		w, err := obs[1].CalculateQParams()
		if err != nil {
			return nil, nil, err
		}
		as, _ := tensor.Data[float32](a.Scale)
		ws, _ := tensor.Data[float32](w.Scale)
		s := tensor.MustFromData(tensor.Float32, []int{1}, []float32{as[0] * ws[0]})
		return s, tensor.MustFromData(tensor.Int32, []int{1}, []int32{0}), nil
	}
	q := funcQuantizer(func(c *fxgraph.Graph) error {
		lin, xn := node(t, c, "linear_default"), node(t, c, "x")
		wn, bn := node(t, c, "fc_weight"), node(t, c, "fc_bias")
		convert.AnnotateInput(lin, xn, minmaxSpec())
		convert.AnnotateInput(lin, wn, symWeight())
		convert.AnnotateInput(lin, bn, &convert.DerivedQuantizationSpec{
			DerivedFrom:   []convert.EdgeOrNode{convert.Edge(xn, lin), convert.Edge(wn, lin)},
			DeriveQParams: derive, DType: observers.Int32,
			QuantMin: observers.Int(int32Min), QuantMax: observers.Int(int32Max), QScheme: observers.PerTensorSymmetric,
		})
		convert.AnnotateOutput(lin, minmaxSpec())
		return nil
	})
	require.NoError(t, convert.Prepare(g, q))
	batch := []*tensor.Tensor{tensor.MustFromData(tensor.Float32, []int{1, 2}, []float32{1, -2})}
	require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{batch}, nil))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
	assert.Equal(t, []int{2, 4}, countTargets(g, qPT, dqPT), "%s", fxgraph.Format(g))

	actScale := float32(3) / float32(255)
	wScale := float32(1) / float32(127)
	biasScale := float64(actScale * wScale)
	lin := node(t, g, "linear_default")
	xdq, wdq, bdq := lin.Arg(0).(*fxgraph.Node), lin.Arg(1).(*fxgraph.Node), lin.Arg(2).(*fxgraph.Node)
	assert.Equal(t, []ops.Value{float64(actScale), int64(42), int64(-128), int64(127), tensor.Int8}, xdq.Args()[1:])
	assert.Equal(t, []ops.Value{float64(wScale), int64(0), int64(-127), int64(127), tensor.Int8}, wdq.Args()[1:])
	assert.Equal(t, []ops.Value{biasScale, int64(0), int32Min, int32Max, tensor.Int32}, bdq.Args()[1:])

	frozen := bdq.Arg(0).(*fxgraph.Node)
	require.Equal(t, fxgraph.GetAttr, frozen.Op())
	v, _ := g.Attr(frozen.TargetName())
	bq, err := tensor.Data[int32](v.(*tensor.Tensor))
	require.NoError(t, err)
	inv := float32(1 / biasScale)
	assert.Equal(t, []int32{int32(math.RoundToEven(float64(inv))), int32(math.RoundToEven(float64(-inv)))}, bq)
	assert.Equal(t, []int32{10795, -10795}, bq)

	out, _ := g.OutputNode()
	ydq := out.Arg(0).(ops.Tuple)[0].(*fxgraph.Node)
	assert.Equal(t, []ops.Value{float64(float32(6.25) / float32(255)), int64(-16), int64(-128), int64(127), tensor.Int8}, ydq.Args()[1:])
}

// TestFixedQParamsQSpec is test_fixed_qparams_qspec_ptq and
// test_fixed_qparams_qspec_observer_dedup: FixedQParams(uint8, 1/256, 0,
// 0..255) as torchao's fixed-qparams ops use for sigmoid. On sigmoid alone
// every q/dq has scale 0.00390625 and zp 0, q x2 and dq x2; on
// sigmoid(x) + y with the same spec everywhere the (sigmoid, add) edge
// shares sigmoid's output observer (equal scale and zero point), giving
// q x4 and dq x4.
func TestFixedQParamsQSpec(t *testing.T) {
	fixed := &convert.FixedQParamsQuantizationSpec{DType: observers.UInt8, Scale: 1.0 / 256, ZeroPoint: 0,
		QuantMin: observers.Int(0), QuantMax: observers.Int(255), QScheme: observers.PerTensorAffine}
	tests := []struct {
		name   string
		withY  bool
		counts []int
	}{
		{"sigmoid", false, []int{2, 2}},
		{"sigmoid plus y", true, []int{4, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fxgraph.New()
			x := g.Placeholder("x", f32(2))
			var y *fxgraph.Node
			if tt.withY {
				y = g.Placeholder("y", f32(2))
			}
			s := g.Call(sigmoidT, x)
			s.SetType(f32(2))
			res := s
			if tt.withY {
				res = g.Call(addT, s, y)
				res.SetType(f32(2))
			}
			g.SetOutput(ops.Tuple{res})
			require.NoError(t, convert.Prepare(g, funcQuantizer(func(c *fxgraph.Graph) error {
				sn := node(t, c, "sigmoid_default")
				convert.AnnotateInput(sn, node(t, c, "x"), fixed)
				convert.AnnotateOutput(sn, fixed)
				if tt.withY {
					an := node(t, c, "add_tensor")
					convert.AnnotateInput(an, sn, fixed)
					convert.AnnotateInput(an, node(t, c, "y"), fixed)
					convert.AnnotateOutput(an, fixed)
				}
				return nil
			})))
			b := []*tensor.Tensor{tensor.MustFromData(tensor.Float32, []int{2}, []float32{-1, 3})}
			if tt.withY {
				b = append(b, b[0])
			}
			require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{b}, nil))
			require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
			assert.Equal(t, tt.counts, countTargets(g, qPT, dqPT), "%s", fxgraph.Format(g))
			for n := range g.All() {
				if n.Op() == fxgraph.CallFunction && (n.Target() == qPT || n.Target() == dqPT) {
					assert.Equal(t, []ops.Value{0.00390625, int64(0), int64(0), int64(255), tensor.UInt8}, n.Args()[1:], n.Name())
				}
			}
		})
	}
}

// TestFloat16Observer (section 2.4 step 5): a float16 PlaceholderObserver
// becomes convert_element_type.no_fuse(x, torch.float16) followed by
// no_fuse(., torch.float32), which the consumer reads; no from_node.
func TestFloat16Observer(t *testing.T) {
	g := addGraph()
	spec := &convert.QuantizationSpec{DType: observers.Float16, Observer: convert.PlaceholderObserverCtor(observers.PlaceholderConfig{})}
	require.NoError(t, convert.Prepare(g, funcQuantizer(func(c *fxgraph.Graph) error {
		convert.AnnotateInput(node(t, c, "add_tensor"), node(t, c, "x"), spec)
		return nil
	})))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
	casts := g.FindNodes(fxgraph.CallFunction, noFuseT)
	require.Len(t, casts, 2, "%s", fxgraph.Format(g))
	assert.Equal(t, []ops.Value{node(t, g, "x"), tensor.Float16}, casts[0].Args())
	assert.Equal(t, []ops.Value{casts[0], tensor.Float32}, casts[1].Args())
	assert.Equal(t, ops.Value(casts[1]), node(t, g, "add_tensor").Arg(0))
	for _, c := range casts {
		assert.Empty(t, c.Meta.FromNode)
	}
	assert.Equal(t, []int{0, 0}, countTargets(g, qPT, dqPT))
}

// TestDequantizeOutDType (section 2.4 step 7): the dequantize gets
// out_dtype only when the observed node's dtype is not float32 (a bf16
// model gets out_dtype=torch.bfloat16), for static and dynamic plans; a
// node with no type (no val) gets none.
func TestDequantizeOutDType(t *testing.T) {
	fixed := &convert.FixedQParamsQuantizationSpec{DType: observers.Int8, Scale: 0.5, ZeroPoint: 0,
		QuantMin: observers.Int(-128), QuantMax: observers.Int(127)}
	dynamic := &convert.QuantizationSpec{DType: observers.Int8, QuantMin: observers.Int(-128), QuantMax: observers.Int(127),
		QScheme: observers.PerTensorAffine, IsDynamic: true, Observer: convert.PlaceholderObserverCtor(observers.PlaceholderConfig{Eps: 0.000244140625})}
	tests := []struct {
		name string
		typ  ops.Type
		spec convert.QSpec
		dq   ops.Overload
		want []fxgraph.Kwarg
	}{
		{"float32 static", f32(2), fixed, dqPT, nil},
		{"bfloat16 static", ops.Plain(tensor.BFloat16, 2), fixed, dqPT, []fxgraph.Kwarg{{Name: "out_dtype", Value: tensor.BFloat16}}},
		{"float16 static", ops.Plain(tensor.Float16, 2), fixed, dqPT, []fxgraph.Kwarg{{Name: "out_dtype", Value: tensor.Float16}}},
		{"untyped static", nil, fixed, dqPT, nil},
		{"float32 dynamic", f32(2), dynamic, dqPTTensor, nil},
		{"bfloat16 dynamic", ops.Plain(tensor.BFloat16, 2), dynamic, dqPTTensor, []fxgraph.Kwarg{{Name: "out_dtype", Value: tensor.BFloat16}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fxgraph.New()
			x := g.Placeholder("x", tt.typ)
			y := g.Placeholder("y", tt.typ)
			a := g.Call(addT, x, y)
			a.SetType(tt.typ)
			g.SetOutput(ops.Tuple{a})
			require.NoError(t, convert.Prepare(g, funcQuantizer(func(c *fxgraph.Graph) error {
				convert.AnnotateInput(node(t, c, "add_tensor"), node(t, c, "x"), tt.spec)
				return nil
			})))
			require.NoError(t, convert.ReplaceObservers(g, convert.ConvertOptions{}))
			dqs := g.FindNodes(fxgraph.CallFunction, tt.dq)
			require.Len(t, dqs, 1, "%s", fxgraph.Format(g))
			assert.Equal(t, tt.want, dqs[0].Kwargs())
			if tt.dq == dqPTTensor {
				assert.Len(t, g.FindNodes(fxgraph.CallFunction, chooseQPT), 1)
				assert.Len(t, g.FindNodes(fxgraph.CallFunction, qPTTensor), 1)
			}
		})
	}
}
