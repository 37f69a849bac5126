package tensor_test

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Views share storage: a transposed view reads the same elements in
// another order, and Contiguous copies them into row-major layout.
func ExampleTensor_Permute() {
	x := tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	t, err := x.Permute(1, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := t.At(2, 1) // x[1][2]
	fmt.Println(t.Shape(), t.IsContiguous(), v)
	c, _ := tensor.Data[float32](t.Contiguous())
	fmt.Println(c)
	// Output:
	// [3 2] false 6
	// [1 4 2 5 3 6]
}

// ParseDType reads torch names and abbreviations; Int4 is a logical type
// stored in int8.
func ExampleParseDType() {
	for _, s := range []string{"torch.int8", "f32", "int4", "torch.float8_e4m3fn"} {
		d, err := tensor.ParseDType(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		lo, hi, _ := d.IntRange()
		fmt.Println(d, d.Abbrev(), d.Storage(), lo, hi)
	}
	// Output:
	// int8 i8 int8 -128 127
	// float32 f32 float32 0 0
	// int4 i4 int8 -8 7
	// float8_e4m3fn f8e4m3fn float8_e4m3fn 0 0
}
