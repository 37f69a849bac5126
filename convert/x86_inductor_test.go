package convert_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ExampleX86InductorQuantizer quantizes y = fc(x), an nn.Linear call (as
// its nn_module_stack says), with torchao's X86InductorQuantizer and the
// dynamic default config: the input gets a run-time uint8 chain, the
// weight int8 per-channel qparams, and the output stays float (the x86
// recipe leaves a linear's output to its consumers).
func ExampleX86InductorQuantizer() {
	g := fxgraph.New()
	g.SetAttr("fc.weight", tensor.MustFromData(tensor.Float32, []int{2, 2}, []float32{0.5, -1, 0.25, 1}))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 1, 2))
	w := g.GetAttr("fc.weight", ops.Plain(tensor.Float32, 2, 2))
	y := g.Call(ops.MustOverload("aten.linear.default"), x, w)
	y.SetType(ops.Plain(tensor.Float32, 1, 2))
	y.Meta.NNModuleStack = []fxgraph.ModuleStackEntry{{Key: "fc", Path: "fc", Type: "torch.nn.modules.linear.Linear"}}
	g.SetOutput(ops.Tuple{y})

	c, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{Dynamic: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	q := convert.NewX86InductorQuantizer().SetGlobal(c)
	if err := convert.Prepare(g, q); err != nil {
		fmt.Println(err)
		return
	}
	batch := []*tensor.Tensor{tensor.MustFromData(tensor.Float32, []int{1, 2}, []float32{1, -2})}
	if err := convert.Calibrate(g, [][]*tensor.Tensor{batch}, nil); err != nil {
		fmt.Println(err)
		return
	}
	if err := convert.Convert(g, convert.ConvertOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(fxgraph.FormatListing(g))
	// Per-channel symmetric int8 over -128..127: scale = max|w| / 127.5 per
	// row, and both rows have max|w| = 1.
	v, _ := g.Attr("_scale_0")
	scales, _ := v.(*tensor.Tensor).Float64s()
	fmt.Println("weight scales:", scales)
	// Output:
	// x | placeholder | x | () | {}
	// choose_qparams_tensor | call_function | quantized_decomposed.choose_qparams.tensor | (%x, 0, 255, 0.000244140625, torch.uint8) | {}
	// getitem | call_function | <built-in function getitem> | (%choose_qparams_tensor, 0) | {}
	// getitem_1 | call_function | <built-in function getitem> | (%choose_qparams_tensor, 1) | {}
	// quantize_per_tensor_tensor | call_function | quantized_decomposed.quantize_per_tensor.tensor | (%x, %getitem, %getitem_1, 0, 255, torch.uint8) | {}
	// dequantize_per_tensor_tensor | call_function | quantized_decomposed.dequantize_per_tensor.tensor | (%quantize_per_tensor_tensor, %getitem, %getitem_1, 0, 255, torch.uint8) | {}
	// _scale_0 | get_attr | _scale_0 | () | {}
	// _zero_point_0 | get_attr | _zero_point_0 | () | {}
	// quantize_per_channel_default | get_attr | _frozen_param0 | () | {}
	// dequantize_per_channel_default | call_function | quantized_decomposed.dequantize_per_channel.default | (%quantize_per_channel_default, %_scale_0, %_zero_point_0, 0, -128, 127, torch.int8) | {}
	// linear_default | call_function | aten.linear.default | (%dequantize_per_tensor_tensor, %dequantize_per_channel_default) | {}
	// output | output | output | ((%linear_default,),) | {}
	// weight scales: [0.007843137718737125 0.007843137718737125]
}

// TestX86InductorConfig checks the default config against
// get_default_x86_inductor_quantization_config in torchao's
// x86_inductor_quantizer.py: uint8 0..255 (0..127 with reduce_range)
// per_tensor_affine activations with a HistogramObserver (static) or a
// PlaceholderObserver (dynamic, is_dynamic), the same spec for the output,
// int8 -128..127 per_channel_symmetric weights on axis 0 with a
// PerChannelMinMaxObserver, no bias spec.
func TestX86InductorConfig(t *testing.T) {
	for _, o := range []convert.X86InductorConfigOptions{{}, {Dynamic: true}, {ReduceRange: true}} {
		c, err := convert.X86InductorQuantizationConfig(o)
		require.NoError(t, err)
		a := c.InputActivation
		assert.Same(t, a, c.OutputActivation)
		assert.Equal(t, observers.UInt8, a.DType)
		assert.Equal(t, int64(0), *a.QuantMin)
		want := int64(255)
		if o.ReduceRange {
			want = 127
		}
		assert.Equal(t, want, *a.QuantMax)
		assert.Equal(t, observers.PerTensorAffine, a.QScheme)
		assert.Equal(t, o.Dynamic, a.IsDynamic)
		obs, err := a.Observer(a)
		require.NoError(t, err)
		if o.Dynamic {
			assert.Equal(t, "PlaceholderObserver", obs.Class())
		} else {
			assert.Equal(t, "HistogramObserver", obs.Class())
		}
		w := c.Weight
		assert.Equal(t, observers.Int8, w.DType)
		assert.Equal(t, []int64{-128, 127}, []int64{*w.QuantMin, *w.QuantMax})
		assert.Equal(t, observers.PerChannelSymmetric, w.QScheme)
		assert.Equal(t, 0, *w.ChAxis)
		wo, err := w.Observer(w)
		require.NoError(t, err)
		assert.Equal(t, "PerChannelMinMaxObserver", wo.Class())
		assert.Nil(t, c.Bias)
		assert.False(t, c.IsQAT)
	}
}

// TestX86InductorQATConfig: get_default_x86_inductor_quantization_config(is_qat=True)
// (x86_inductor_quantizer.py): the PTQ specs with
// FusedMovingAvgObsFakeQuantize observers, a MovingAverageMinMaxObserver
// for activations (uint8 0..255 affine, symmetric_quant False) and a
// MovingAveragePerChannelMinMaxObserver for weights (int8 per channel
// symmetric, axis 0), eps 2**-12, averaging constant 0.01; dynamic QAT is
// refused.
func TestX86InductorQATConfig(t *testing.T) {
	for _, rr := range []bool{false, true} {
		c, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{QAT: true, ReduceRange: rr})
		require.NoError(t, err)
		assert.True(t, c.IsQAT)
		act := c.InputActivation
		assert.Same(t, act, c.OutputActivation)
		qmax := int64(255)
		if rr {
			qmax = 127
		}
		assert.Equal(t, observers.UInt8, act.DType)
		assert.Equal(t, []int64{0, qmax}, []int64{*act.QuantMin, *act.QuantMax})
		assert.Equal(t, observers.PerTensorAffine, act.QScheme)
		ao, err := act.Observer(act)
		require.NoError(t, err)
		fa, ok := ao.(*convert.FakeQuantize)
		require.True(t, ok, "%T", ao)
		assert.Equal(t, "FusedMovingAvgObsFakeQuantize", fa.Class())
		assert.Equal(t, "MovingAverageMinMaxObserver", fa.Observer.Class())
		assert.Equal(t, convert.FakeQuantize{Observer: fa.Observer, QuantMin: 0, QuantMax: qmax, ChAxis: -1,
			AveragingConstant: 0.01, Eps: 1.0 / 4096}, *fa)

		w := c.Weight
		assert.Equal(t, observers.Int8, w.DType)
		assert.Equal(t, []int64{-128, 127}, []int64{*w.QuantMin, *w.QuantMax})
		assert.Equal(t, observers.PerChannelSymmetric, w.QScheme)
		wo, err := w.Observer(w)
		require.NoError(t, err)
		fw, ok := wo.(*convert.FakeQuantize)
		require.True(t, ok, "%T", wo)
		assert.Equal(t, "MovingAveragePerChannelMinMaxObserver", fw.Observer.Class())
		assert.Equal(t, convert.FakeQuantize{Observer: fw.Observer, QuantMin: -128, QuantMax: 127, ChAxis: 0,
			PerChannel: true, Symmetric: true, AveragingConstant: 0.01, Eps: 1.0 / 4096}, *fw)
		assert.Nil(t, c.Bias)
	}
	_, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{QAT: true, Dynamic: true})
	require.ErrorIs(t, err, convert.ErrQAT)
}

// TestX86InductorMixedConfigs follows _need_skip_config: once a config is
// set, one of the other QAT state or the other dynamic state is skipped
// with warnings; nil configs and module types torchao cannot configure are
// handled as upstream.
func TestX86InductorMixedConfigs(t *testing.T) {
	static, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{})
	require.NoError(t, err)
	dynamic, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{Dynamic: true})
	require.NoError(t, err)
	qat := *static
	qat.IsQAT = true

	q := convert.NewX86InductorQuantizer().SetModuleName("a", static)
	q.SetGlobal(dynamic)
	assert.Nil(t, q.Global, "a dynamic global config after a static module config is skipped")
	assert.Len(t, q.Warnings, 2)

	q = convert.NewX86InductorQuantizer().SetGlobal(static).SetModuleName("a", &qat)
	assert.Len(t, q.Warnings, 2, "QAT after non-QAT is skipped")
	q.SetModuleName("b", nil).SetFunctionType("torch.cat", nil)
	assert.Len(t, q.Warnings, 2, "nil configs are never skipped")
	q.SetFunctionType("torch.relu", static)
	assert.Len(t, q.Warnings, 3, "an operator torchao cannot configure")

	// A QAT global config then accepts QAT module configs.
	q = convert.NewX86InductorQuantizer().SetGlobal(&qat).SetModuleName("a", &qat)
	assert.Same(t, &qat, q.Global)
	assert.Empty(t, q.Warnings)
}
