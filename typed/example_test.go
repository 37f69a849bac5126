package typed_test

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/typed"
)

// Lift a converted reshape → instance_norm → reshape chain into typed
// values, then fold it into one group_norm that keeps the output's type.
func Example() {
	g := fxgraph.New()
	g.SetAttr("w", tensor.F32([]int{2}, 0.5, -1))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 1, 4, 3))
	w := g.GetAttr("w", nil)
	qdq := func(v *fxgraph.Node, s float64, zp int64) *fxgraph.Node {
		q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), v, s, zp, int64(-128), int64(127), tensor.Int8)
		return g.Call(ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default"), q, s, zp, int64(-128), int64(127), tensor.Int8)
	}
	top := g.Call(ops.MustOverload("aten.reshape.default"), qdq(x, 0.02, -3), ops.List{int64(1), int64(2), int64(6)})
	in := g.Call(ops.MustOverload("aten.instance_norm.default"), qdq(top, 0.02, -3), w, nil, nil, nil, true, 0.1, 1e-5, false)
	bottom := g.Call(ops.MustOverload("aten.reshape.default"), qdq(in, 0.08, 5), ops.List{int64(1), int64(4), int64(3)})
	g.SetOutput(ops.Tuple{qdq(bottom, 0.08, 5)})
	if err := typed.InferTypes(g, nil); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := typed.Lift(g, nil); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := typed.Canonicalize(g, typed.CanonOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(fxgraph.Format(g))
	// Output:
	// graph():
	//     %x : f32[1, 4, 3] [num_users=1] = placeholder[target=x]
	//     %quantize_per_tensor_default : !quant.uniform<i8:f32, 0.02:-3>[1, 4, 3] [num_users=1] = call_function[target=torch.ops.quantized_decomposed.quantize_per_tensor.default](args = (%x, 0.02, -3, -128, 127, torch.int8), kwargs = {})
	//     %_typed_gn_weight_0 : f32[4] [num_users=1] = get_attr[target=_typed_gn_weight_0]
	//     %group_norm_default : !quant.uniform<i8:f32, 0.08:5>[1, 4, 3] [num_users=1] = call_function[target=torch.ops.aten.group_norm.default](args = (%quantize_per_tensor_default, 2, %_typed_gn_weight_0, None, 1e-05), kwargs = {})
	//     %dequantize_per_tensor_default_3 : f32[1, 4, 3] [num_users=1] = call_function[target=torch.ops.quantized_decomposed.dequantize_per_tensor.default](args = (%group_norm_default, 0.08, 5, -128, 127, torch.int8), kwargs = {})
	//     return (dequantize_per_tensor_default_3,)
}
