package metadata_test

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/metadata"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ExamplePortNodeMetaForQDQ tags the dequantize feeding an annotated relu
// and the quantize of its output with the relu's quantization_tag.
func ExamplePortNodeMetaForQDQ() {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	dq := g.Call(ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default"), q, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	r := g.Call(ops.MustOverload("aten.relu.default"), dq)
	oq := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), r, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	g.SetOutput(ops.Tuple{oq})

	r.Meta.Set(metadata.KeyQuantizationTag, "BackendA_relu_0")
	r.Meta.Set(metadata.AnnotationKey, metadata.AnnotationInfo{Inputs: []metadata.AnnotatedInput{{Node: x}}, Output: true})

	res, err := metadata.PortNodeMetaForQDQ(g, metadata.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ported:", res.Stats["ported"], "keys:", metadata.PortedKeys)
	for _, n := range []*fxgraph.Node{q, dq, oq} {
		tag, _ := n.Meta.Get(metadata.KeyQuantizationTag)
		fmt.Println(n.Name(), tag)
	}
	// Output:
	// ported: 2 keys: [stack_trace quantization_tag]
	// quantize_per_tensor_default <nil>
	// dequantize_per_tensor_default BackendA_relu_0
	// quantize_per_tensor_default_1 BackendA_relu_0
}
