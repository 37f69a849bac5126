package constfold_test

import (
	"fmt"

	"github.com/fxquant/fxquant/constfold"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ExampleConstantFold folds a weight's quantize into an int8 constant
// (0.5 / 0.25 = 2, -1 / 0.25 = -4) and
// keeps its dequantize, as convert does.
func ExampleConstantFold() {
	g := fxgraph.New()
	g.SetAttr("w", tensor.F32([]int{2}, 0.5, -1))
	x := g.Placeholder("x", nil)
	w := g.GetAttr("w", nil)
	q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), w, 0.25, int64(0), int64(-128), int64(127), tensor.Int8)
	dq := g.Call(ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default"), q, 0.25, int64(0), int64(-128), int64(127), tensor.Int8)
	g.SetOutput(ops.Tuple{g.Call(ops.MustOverload("aten.mul.Tensor"), x, dq)})

	res, err := constfold.ConstantFold(g, constfold.Options{Constraint: constfold.QuantNodeConstraint})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("folded:", res.Stats["folded"])
	fmt.Print(fxgraph.Format(g))
	v, _ := g.Attr("_frozen_param0")
	fmt.Println(v.(*tensor.Tensor).Int64s())
	// Output:
	// folded: 1
	// graph():
	//     %x : [num_users=1] = placeholder[target=x]
	//     %quantize_per_tensor_default : i8[2] [num_users=1] = get_attr[target=_frozen_param0]
	//     %dequantize_per_tensor_default : [num_users=1] = call_function[target=torch.ops.quantized_decomposed.dequantize_per_tensor.default](args = (%quantize_per_tensor_default, 0.25, 0, -128, 127, torch.int8), kwargs = {})
	//     %mul_tensor : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%x, %dequantize_per_tensor_default), kwargs = {})
	//     return (mul_tensor,)
	// [2 -4] <nil>
}
