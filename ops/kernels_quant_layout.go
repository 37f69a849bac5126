package ops

import (
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// qdqLayoutOps are the quantize and dequantize kernels whose PyTorch
// implementation (torch/ao/quantization/fx/_decomposed.py) is a chain of
// elementwise ops on the input, so that the result keeps the input's
// memory layout: quantize_per_tensor of a transposed-dense tensor is
// transposed-dense, quantize_per_channel of a channels-last weight is
// channels-last (checked with PyTorch 2.14.1).
var qdqLayoutOps = map[string]bool{
	"quantized_decomposed.quantize_per_tensor.default":    true,
	"quantized_decomposed.quantize_per_tensor.tensor":     true,
	"quantized_decomposed.quantize_per_tensor.tensor2":    true,
	"quantized_decomposed.dequantize_per_tensor.default":  true,
	"quantized_decomposed.dequantize_per_tensor.tensor":   true,
	"quantized_decomposed.dequantize_per_tensor.tensor2":  true,
	"quantized_decomposed.quantize_per_channel.default":   true,
	"quantized_decomposed.dequantize_per_channel.default": true,
	"quantized_decomposed.fake_quant_per_channel.default": true,
	"quantized_decomposed.convert_element_type.no_fuse":   true,
}

// withQDQLayout wraps a kernel of qdqLayoutOps so that a new contiguous
// result takes its input's layout, as TensorIterator lays it out
// (kernels.IteratorStrides of argument 0 alone: the scales and zero points
// do not take part). A quantized program whose activations are transposed
// (a Llama block's rotary embedding feeds q/dq pairs before attention) then
// has PyTorch's strides after every q/dq node.
func withQDQLayout(f KernelFunc) KernelFunc {
	return func(args []Value) (Value, error) {
		v, err := f(args)
		if err != nil || len(args) == 0 {
			return v, err
		}
		out, ok := v.(*tensor.Tensor)
		in, ok2 := args[0].(*tensor.Tensor)
		if !ok || !ok2 || out == in || !out.IsContiguous() || out.Numel() <= 1 || in.IsContiguous() {
			return v, nil
		}
		return kernels.Restride(out, kernels.IteratorStrides(out.Shape(), in))
	}
}
