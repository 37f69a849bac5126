package pt2_test

import (
	"bytes"
	"fmt"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// Quantize a program PyTorch exported and write the result with the float
// program's signature, so that PyTorch runs it on the same inputs.
func ExampleProgram_WithGraph() {
	p, err := pt2.ReadFile("../tests/testdata/pt2e/mlp.float.pt2", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := p.Unlifted()
	if err != nil {
		fmt.Println(err)
		return
	}
	q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))
	if err := convert.Prepare(g, q); err != nil {
		fmt.Println(err)
		return
	}
	x := make([]float32, 4*32)
	for i := range x {
		x[i] = float32(i%9-4) / 4
	}
	batch, _ := tensor.FromData(tensor.Float32, []int{4, 32}, x)
	if err := convert.Calibrate(g, [][]*tensor.Tensor{{batch}}, nil); err != nil {
		fmt.Println(err)
		return
	}
	if err := convert.Convert(g, convert.ConvertOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	out, err := p.WithGraph(g)
	if err != nil {
		fmt.Println(err)
		return
	}
	var buf bytes.Buffer
	if err := out.WriteArchive(&buf, nil); err != nil {
		fmt.Println(err)
		return
	}
	back, err := pt2.Read(buf.Bytes(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range back.Signature.Inputs {
		if in.Kind == pt2.UserInput {
			fmt.Println("user input:", in.Name)
		}
	}
	fmt.Println("outputs:", len(back.Signature.Outputs))
	fmt.Println("verifies:", fxgraph.Verify(back.Graph, fxgraph.VerifyOptions{Lifted: back.LiftedAttrs()}) == nil)
	// Output:
	// user input: x
	// outputs: 1
	// verifies: true
}
