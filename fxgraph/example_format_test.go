package fxgraph_test

import (
	"fmt"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

func ExampleFormat() {
	g := fxgraph.New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 1, 16))
	q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), x, 0.05, int64(0), int64(-128), int64(127), tensor.Int8)
	q.SetType(ops.Plain(tensor.Int8, 1, 16))
	g.SetOutput(ops.Tuple{q})
	fmt.Print(fxgraph.Format(g))
	// Output:
	// graph():
	//     %x : f32[1, 16] [num_users=1] = placeholder[target=x]
	//     %quantize_per_tensor_default : i8[1, 16] [num_users=1] = call_function[target=torch.ops.quantized_decomposed.quantize_per_tensor.default](args = (%x, 0.05, 0, -128, 127, torch.int8), kwargs = {})
	//     return (quantize_per_tensor_default,)
}

func ExampleParse() {
	src := `graph():
    %x : f32[4] [num_users=1] = placeholder[target=x]
    %choose : (f32[1], i32[1]) [num_users=1] = call_function[target=torch.ops.torchao.choose_qparams_affine](args = (%x, ASYMMETRIC, (1, 4), torch.int8, -128, 127, 1.1920928955078125e-07, torch.float32, torch.int32), kwargs = {})
    %getitem : f32[1] [num_users=1] = call_function[target=operator.getitem](args = (%choose, 0), kwargs = {})
    return (getitem,)
`
	g, err := fxgraph.Parse(strings.NewReader(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	choose, _ := g.NodeByName("choose")
	fmt.Printf("%T %v\n", choose.Target(), choose.Target())
	fmt.Printf("%T %q, %T %v\n", choose.Arg(1), choose.Arg(1), choose.Arg(6), choose.Arg(6))
	fmt.Print(fxgraph.FormatListing(g))
	// Output:
	// ops.Packet torchao.choose_qparams_affine
	// string "ASYMMETRIC", float64 1.1920928955078125e-07
	// x | placeholder | x | () | {}
	// choose | call_function | torchao.choose_qparams_affine | (%x, 'ASYMMETRIC', (1, 4), torch.int8, -128, 127, 1.1920928955078125e-07, torch.float32, torch.int32) | {}
	// getitem | call_function | <built-in function getitem> | (%choose, 0) | {}
	// output | output | output | ((%getitem,),) | {}
}
