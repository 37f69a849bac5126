package kernels_test

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// With scale 0.5 and zero point 3, q = clamp(round_half_even(x / 0.5) + 3,
// -128, 127): 0.25 and -0.25 give ±0.5, which round to 0 (q = 3); 0.75
// gives 1.5, which rounds to 2 (q = 5); ±100 clamp. Dequantizing gives
// (q - 3) * 0.5.
func ExampleQuantizePerTensor() {
	x := tensor.F32([]int{7}, 0, 0.25, -0.25, 1, 100, -100, 0.75)
	q, err := kernels.QuantizePerTensor(x, 0.5, 3, -128, 127, tensor.Int8)
	if err != nil {
		fmt.Println(err)
		return
	}
	qs, _ := tensor.Data[int8](q)
	fmt.Println(q.DType(), qs)

	dq, err := kernels.DequantizePerTensor(q, 0.5, 3, -128, 127, tensor.Int8, tensor.Float32)
	if err != nil {
		fmt.Println(err)
		return
	}
	ds, _ := tensor.Data[float32](dq)
	fmt.Println(dq.DType(), ds)

	// Bounds outside the storage type are an error, not a panic.
	_, err = kernels.QuantizePerTensor(x, 0.5, 3, -129, 127, tensor.Int8)
	fmt.Println(err)
	// Output:
	// int8 [3 3 3 5 127 -128 5]
	// float32 [0 0 0 1 62 -65.5 1]
	// kernels: bad argument: quant_min, quant_max = -129, 127: want within the int8 range -128..127
}
