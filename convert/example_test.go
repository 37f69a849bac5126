package convert_test

import (
	"fmt"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Example builds y = linear(x, w, b), quantizes it with the XNNPACK
// per-tensor config, calibrates on one batch and converts it.
func Example() {
	g := fxgraph.New()
	g.SetAttr("fc.weight", tensor.MustFromData(tensor.Float32, []int{2, 2}, []float32{0.5, -1, 0.25, 1}))
	g.SetAttr("fc.bias", tensor.MustFromData(tensor.Float32, []int{2}, []float32{0, 0.5}))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 1, 2))
	w := g.GetAttr("fc.weight", ops.Plain(tensor.Float32, 2, 2))
	b := g.GetAttr("fc.bias", ops.Plain(tensor.Float32, 2))
	y := g.Call(ops.MustOverload("aten.linear.default"), x, w, b)
	y.SetType(ops.Plain(tensor.Float32, 1, 2))
	g.SetOutput(ops.Tuple{y})

	q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))
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
	// Output:
	// x | placeholder | x | () | {}
	// quantize_per_tensor_default | call_function | quantized_decomposed.quantize_per_tensor.default | (%x, 0.011758961714804173, 42, -128, 127, torch.int8) | {}
	// dequantize_per_tensor_default | call_function | quantized_decomposed.dequantize_per_tensor.default | (%quantize_per_tensor_default, 0.011758961714804173, 42, -128, 127, torch.int8) | {}
	// quantize_per_tensor_default_1 | get_attr | _frozen_param0 | () | {}
	// dequantize_per_tensor_default_1 | call_function | quantized_decomposed.dequantize_per_tensor.default | (%quantize_per_tensor_default_1, 0.007874015718698502, 0, -127, 127, torch.int8) | {}
	// fc_bias | get_attr | fc.bias | () | {}
	// linear_default | call_function | aten.linear.default | (%dequantize_per_tensor_default, %dequantize_per_tensor_default_1, %fc_bias) | {}
	// quantize_per_tensor_default_2 | call_function | quantized_decomposed.quantize_per_tensor.default | (%linear_default, 0.014698701910674572, -43, -128, 127, torch.int8) | {}
	// dequantize_per_tensor_default_2 | call_function | quantized_decomposed.dequantize_per_tensor.default | (%quantize_per_tensor_default_2, 0.014698701910674572, -43, -128, 127, torch.int8) | {}
	// output | output | output | ((%dequantize_per_tensor_default_2,),) | {}
}

// ExampleParseQuantizerConfig reads a quantizer config file that says what
// a torchao user's Python setup says:
//
//	q = ComposableQuantizer([
//	    EmbeddingQuantizer(),
//	    XNNPACKQuantizer()
//	        .set_global(get_symmetric_quantization_config(is_per_channel=True))
//	        .set_module_name("head", get_symmetric_quantization_config()),
//	])
func ExampleParseQuantizerConfig() {
	q, err := convert.ParseQuantizerConfig([]byte(`{
	  "format": "fxquant-quantizer-config/1",
	  "quantizers": [
	    {"quantizer": "embedding"},
	    {"quantizer": "xnnpack",
	     "set_global": {"function": "get_symmetric_quantization_config", "is_per_channel": true},
	     "set_module_name": {"head": {"function": "get_symmetric_quantization_config"}}}
	  ]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, s := range q.(convert.ComposableQuantizer) {
		fmt.Printf("%d: %T\n", i, s)
	}
	x := q.(convert.ComposableQuantizer)[1].(*convert.XNNPACKQuantizer)
	names, _ := x.ModuleKeys()
	fmt.Println("global weights:", x.Global.Weight.QScheme, "modules:", names)

	_, err = convert.ParseQuantizerConfig([]byte(`{"quantizers": [{"quantizer": "xnnpack", "set_global": {"function": "get_symmetric_quantization_config", "is_per_chanel": true}}]}`))
	fmt.Println(err)
	// Output:
	// 0: convert.EmbeddingQuantizer
	// 1: *convert.XNNPACKQuantizer
	// global weights: torch.per_channel_symmetric modules: [head]
	// quantizers[0].set_global.is_per_chanel: unknown field; want one of act_qmax, act_qmin, function, is_dynamic, is_per_channel, is_qat, weight_qmax, weight_qmin
}

// ExampleCalibrateWithOptions calibrates on four goroutines: observers
// record the batches in batch order, so the converted graph, scales
// included, is the one a run on one core gives.
func ExampleCalibrateWithOptions() {
	quantized := func(workers int, progress func(i, n int)) string {
		g := fxgraph.New()
		g.SetAttr("fc.weight", tensor.MustFromData(tensor.Float32, []int{2, 2}, []float32{0.5, -1, 0.25, 1}))
		x := g.Placeholder("x", ops.Plain(tensor.Float32, 1, 2))
		w := g.GetAttr("fc.weight", ops.Plain(tensor.Float32, 2, 2))
		y := g.Call(ops.MustOverload("aten.linear.default"), x, w)
		y.SetType(ops.Plain(tensor.Float32, 1, 2))
		g.SetOutput(ops.Tuple{y})
		q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))
		if err := convert.Prepare(g, q); err != nil {
			return err.Error()
		}
		var batches [][]*tensor.Tensor
		for b := range 6 {
			v := []float32{float32(b) / 3, -float32(b*b) / 7}
			batches = append(batches, []*tensor.Tensor{tensor.MustFromData(tensor.Float32, []int{1, 2}, v)})
		}
		opts := convert.CalibrateOptions{Workers: workers, Progress: progress}
		if err := convert.CalibrateWithOptions(g, batches, opts); err != nil {
			return err.Error()
		}
		if err := convert.Convert(g, convert.ConvertOptions{}); err != nil {
			return err.Error()
		}
		return fxgraph.FormatListing(g)
	}
	one := quantized(1, nil)
	four := quantized(4, func(i, n int) { fmt.Printf("batch %d of %d\n", i+1, n) })
	fmt.Println("same graph:", one == four)
	// Output:
	// batch 1 of 6
	// batch 2 of 6
	// batch 3 of 6
	// batch 4 of 6
	// batch 5 of 6
	// batch 6 of 6
	// same graph: true
}
