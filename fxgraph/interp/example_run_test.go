package interp_test

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Run a quantize/dequantize pair on four values: with scale 0.5 and zero
// point 0, x/0.5 rounds half to even (0.25/0.5 = 0.5 gives 0, 0.75/0.5 =
// 1.5 gives 2) and 100/0.5 = 200 clamps to 127, which reads back as 63.5.
func ExampleRun() {
	q := ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	dq := ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default")
	g := fxgraph.New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 4))
	qx := g.Call(q, x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	dqx := g.Call(dq, qx, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	g.SetOutput(ops.Tuple{qx, dqx})

	in := tensor.F32([]int{4}, 0.25, 0.75, -1, 100)
	outs, err := interp.Run(g, []*tensor.Tensor{in}, interp.Options{
		Hook: func(n *fxgraph.Node, v ops.Value) error {
			fmt.Printf("ran %s -> %v\n", n.Name(), v.(*tensor.Tensor).DType())
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ints, _ := tensor.Data[int8](outs[0].(*tensor.Tensor))
	floats, _ := tensor.Data[float32](outs[1].(*tensor.Tensor))
	fmt.Println(ints, floats)
	// Output:
	// ran x -> float32
	// ran quantize_per_tensor_default -> int8
	// ran dequantize_per_tensor_default -> float32
	// [0 2 -2 127] [0 1 -1 63.5]
}

// Errors name the node that failed.
func ExampleRun_error() {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	g.SetOutput(ops.Tuple{g.Call(ops.MustOverload("aten.relu.default"), x)})
	_, err := interp.Run(g, nil, interp.Options{})
	fmt.Println(err)
	// Output:
	// interp: node "x" (x): bad inputs: no input given for placeholder "x", one of 1
}
