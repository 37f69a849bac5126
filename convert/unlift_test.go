package convert_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// quantize is the README's "Using the library" snippet, word for word:
// keep the two in step.
func quantize(path string, batches [][]*tensor.Tensor) (*fxgraph.Graph, error) {
	prog, err := pt2.ReadFile(path, nil) // or build a graph with fxgraph
	if err != nil {
		return nil, err
	}
	g, err := prog.Unlifted() // parameters become get_attr nodes, as .module() does
	if err != nil {
		return nil, err
	}
	o := convert.DefaultSymmetricConfigOptions()
	o.PerChannel = true
	q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(o))
	if err := convert.Prepare(g, q); err != nil { // annotate, insert observers
		return nil, err
	}
	if err := convert.Calibrate(g, batches, nil); err != nil { // run the observers on data
		return nil, err
	}
	if err := convert.Convert(g, convert.ConvertOptions{ReferenceRepresentation: true}); err != nil {
		return nil, err
	}
	return g, fxgraph.Verify(g, fxgraph.VerifyOptions{})
}

// ExampleUnlift runs the README's flow on the MLP PyTorch exported: the
// program is unlifted as ExportedProgram.module() does
// ((*pt2.Program).Unlifted builds Unlift's lists from the graph
// signature), quantized per channel and converted to the reference
// representation. It prints the listing up to the user input: the same
// rows as torchao's (tests/testdata/pt2e/mlp.static.refrep.graph.txt).
func ExampleUnlift() {
	x := make([]float32, 4*32) // mlp's input is f32[4, 32]
	for i := range x {
		x[i] = float32(i%9-4) / 4
	}
	g, err := quantize("../tests/testdata/pt2e/mlp.float.pt2",
		[][]*tensor.Tensor{{tensor.MustFromData(tensor.Float32, []int{4, 32}, x)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	listing, _, _ := strings.Cut(fxgraph.FormatListing(g), "\nx | placeholder")
	fmt.Println(listing)
	// Output:
	// _scale_0 | get_attr | _scale_0 | () | {}
	// _zero_point_0 | get_attr | _zero_point_0 | () | {}
	// quantize_per_channel_default | get_attr | _frozen_param0 | () | {}
	// fc1_bias | get_attr | fc1.bias | () | {}
	// _scale_1 | get_attr | _scale_1 | () | {}
	// _zero_point_1 | get_attr | _zero_point_1 | () | {}
	// quantize_per_channel_default_1 | get_attr | _frozen_param1 | () | {}
	// fc2_bias | get_attr | fc2.bias | () | {}
}

// TestReadmeSnippet: the README's "Using the library" code block is
// quantize above, character for character, so the README compiles.
func TestReadmeSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## Using the library\n\n```go\n")
	if !ok {
		t.Fatal("README.md has no \"Using the library\" go block")
	}
	block, _, _ := strings.Cut(rest, "```\n")
	src, err := os.ReadFile("unlift_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), block) {
		t.Errorf("README.md's snippet differs from quantize in convert/unlift_test.go:\n%s", block)
	}
}
