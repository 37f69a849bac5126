package numdebug_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/pt2"
)

// ExampleCompare numbers the nodes of the MLP PyTorch exported, quantizes
// it with the XNNPACK quantizer and compares the float and the quantized
// graph node by node on two eval batches that did not calibrate it.
func ExampleCompare() {
	prog, err := pt2.ReadFile("../tests/testdata/pt2e/mlp.float.pt2", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := prog.Unlifted()
	if err != nil {
		fmt.Println(err)
		return
	}
	numdebug.GenerateHandles(g) // before prepare: the passes carry them
	float, _ := g.Clone()
	o := convert.DefaultSymmetricConfigOptions()
	o.PerChannel = true
	if err := convert.Prepare(g, convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(o))); err != nil {
		fmt.Println(err)
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if err := convert.Calibrate(g, randomBatches(rng, 4, 4, 32), nil); err != nil {
		fmt.Println(err)
		return
	}
	if err := convert.Convert(g, convert.ConvertOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	c, err := numdebug.Compare(float, g, randomBatches(rng, 2, 4, 32))
	if err != nil {
		fmt.Println(err)
		return
	}
	// linear's value is the linear itself (XNNPACK quantizes the output
	// of linear+relu after the relu); the others end at a dequantize.
	for _, r := range c.Results {
		fmt.Printf("%d %-8s -> %-31s SQNR %.1f dB\n", r.Handle, r.FloatNode, r.QuantNode, r.SQNR)
	}
	// Output:
	// 1 linear   -> linear                          SQNR 26.2 dB
	// 2 relu     -> dequantize_per_tensor_default_1 SQNR 23.4 dB
	// 3 linear_1 -> dequantize_per_tensor_default_2 SQNR 21.5 dB
}

// ExampleGenerateHandles shows torchao's numbering: every node but
// placeholders, get_attr nodes and the output, in graph order from 1.
func ExampleGenerateHandles() {
	g := buildMLP(rand.New(rand.NewPCG(1, 1)), 2, 4, 1)
	fmt.Println(numdebug.GenerateHandles(g), "handles")
	for n := range g.All() {
		if h := n.Meta.NumericDebugHandle; h != 0 {
			fmt.Println(h, n.Name())
		}
	}
	// Output:
	// 4 handles
	// 1 linear_default
	// 2 relu_default
	// 3 linear_default_1
	// 4 relu_default_1
}

// ExampleAdoptHandles compares a program torchao quantized: the float
// program after torchao's generate_numeric_debug_handle, and torchao's
// converted model re-exported, both saved by PyTorch. The re-traced nodes
// kept their handles in meta["custom"]; the quantize and dequantize nodes
// carry only from_node, and AdoptHandles follows it to their float node.
func ExampleAdoptHandles() {
	read := func(path string) *fxgraph.Graph {
		p, err := pt2.ReadFile(path, nil)
		if err != nil {
			panic(err)
		}
		g, err := p.Unlifted()
		if err != nil {
			panic(err)
		}
		return g
	}
	float := read("../tests/testdata/numdebug/mlp.handles.pt2")
	quant := read("../tests/testdata/numdebug/mlp.torchao.pt2")
	fmt.Println(numdebug.AdoptHandles(float, quant), "nodes adopted a handle")
	c, err := numdebug.Compare(float, quant, randomBatches(rand.New(rand.NewPCG(1, 2)), 1, 4, 32))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range c.Results {
		fmt.Printf("%d %-8s -> %s\n", r.Handle, r.FloatNode, r.QuantNode)
	}
	// Output:
	// 4 nodes adopted a handle
	// 1 linear   -> linear
	// 2 relu     -> dequantize_per_tensor_1
	// 3 linear_1 -> dequantize_per_tensor_2
}
