package pt2_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/pt2"
)

// Example reads a program exported by PyTorch, lists its graph and
// signature, and writes it back as a PT2 archive.
func Example() {
	p, err := pt2.ReadFile("../tests/testdata/pt2e/int4_linear_g8.float.pt2", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(fxgraph.FormatListing(p.Graph))
	for _, in := range p.Signature.Inputs {
		fmt.Println(strings.TrimSpace(fmt.Sprint(in.Kind, " ", in.Name, " ", in.Target)))
	}
	var buf bytes.Buffer
	if err := p.WriteArchive(&buf, nil); err != nil {
		fmt.Println(err)
		return
	}
	q, err := pt2.Read(buf.Bytes(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("round trip equal:", fxgraph.Format(q.Graph) == fxgraph.Format(p.Graph))
	// Output:
	// p_linear_weight | placeholder | p_linear_weight | () | {}
	// p_linear_bias | placeholder | p_linear_bias | () | {}
	// x | placeholder | x | () | {}
	// linear | call_function | aten.linear.default | (%x, %p_linear_weight, %p_linear_bias) | {}
	// output | output | output | ((%linear,),) | {}
	// parameter p_linear_weight linear.weight
	// parameter p_linear_bias linear.bias
	// user_input x
	// round trip equal: true
}
