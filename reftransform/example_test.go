package reftransform_test

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/reftransform"
)

// ExampleRun rewrites a per-tensor int8 quantize into its integer reference
// arithmetic: round(x / scale) + zero_point, clamped, as int8.
func ExampleRun() {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), x, 0.5, int64(3), int64(-128), int64(127), tensor.Int8)
	g.SetOutput(ops.Tuple{q})

	res, err := reftransform.Run(g)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("quantize_per_tensor rewrites:", res.Stats["quantize_per_tensor"])
	fmt.Print(fxgraph.FormatListing(g))
	// Output:
	// quantize_per_tensor rewrites: 1
	// x | placeholder | x | () | {}
	// div | call_function | aten.div.Tensor | (%x, 0.5) | {}
	// round_1 | call_function | aten.round.default | (%div,) | {}
	// to | call_function | aten.to.dtype | (%round_1, torch.int32) | {}
	// add | call_function | aten.add.Tensor | (%to, 3) | {}
	// clamp | call_function | aten.clamp | (%add, -128, 127) | {}
	// to_1 | call_function | aten.to.dtype | (%clamp, torch.int8) | {}
	// output | output | output | ((%to_1,),) | {}
}
