package ops_test

import (
	"fmt"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Quantized types print in the MLIR style and parse back to equal types;
// equality is exact, so int8 types with different scales differ.
func ExampleParseType() {
	for _, s := range []string{
		"f32[1, 16]",
		"!quant.uniform<i8:f32, 0.02:-3>[1, 16]",
		"!quant.uniform<i8<-127:127>:f32:0, {0.1,0.2:3}>[2, 4]",
		"(f32[1], i32[1])",
		"!quant.uniform<i8:f32, 0.02:-300>[1]", // zero point outside [-128, 127]
	} {
		t, err := ops.ParseType(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%T %v\n", t, t)
	}
	// Output:
	// ops.TensorType f32[1, 16]
	// ops.TensorType !quant.uniform<i8:f32, 0.02:-3>[1, 16]
	// ops.TensorType !quant.uniform<i8<-127:127>:f32:0, {0.1,0.2:3}>[2, 4]
	// ops.TupleType (f32[1], i32[1])
	// error: ops: type "!quant.uniform<i8:f32, 0.02:-300>[1]": at offset 15: zero point outside the storage range: -300 not in [-128, 127]
}

// Type.Equal compares shapes, element types and every quantization
// parameter exactly.
func ExampleTensorType_Equal() {
	q02, _ := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, 0.02, -3)
	q03, _ := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, 0.03, -3)
	a := ops.TensorType{Shape: []int64{1, 16}, Elem: q02}
	b := ops.TensorType{Shape: []int64{1, 16}, Elem: q03}
	parsed, _ := ops.ParseType(a.String())
	fmt.Println(a)
	fmt.Println("a == parse(a):", a.Equal(parsed))
	fmt.Println("a == b (scale 0.03):", a.Equal(b))
	fmt.Println("a == i8[1, 16]:", a.Equal(ops.Plain(tensor.Int8, 1, 16)))
	// Output:
	// !quant.uniform<i8:f32, 0.02:-3>[1, 16]
	// a == parse(a): true
	// a == b (scale 0.03): false
	// a == i8[1, 16]: false
}
