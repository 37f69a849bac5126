package fxgraph_test

import (
	"errors"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// A pass that fails half way leaves the graph exactly as it was: Atomic
// undoes the edits made before the failure, names included.
func ExampleGraph_Atomic() {
	relu := ops.MustOverload("aten.relu.default")
	sigmoid := ops.MustOverload("aten.sigmoid.default")
	f32 := ops.Plain(tensor.Float32, 4)

	g := fxgraph.New()
	x := g.Placeholder("x", f32)
	r := g.Call(relu, x)
	r.SetType(f32)
	g.SetOutput(ops.Tuple{r})
	before := fxgraph.Format(g)

	err := g.Atomic(func() error {
		restore := g.InsertingAfter(r)
		s := g.Call(sigmoid, x)
		restore()
		s.SetType(f32)
		g.ReplaceAllUsesWith(r, s, nil)
		if err := g.Erase(r); err != nil {
			return err
		}
		return errors.New("a later check failed")
	})
	fmt.Println("pass:", err)
	fmt.Println("unchanged:", fxgraph.Format(g) == before)
	fmt.Println("a new node takes the name it would have had:", g.Call(sigmoid, x).Name())
	// Output:
	// pass: a later check failed
	// unchanged: true
	// a new node takes the name it would have had: sigmoid_default
}
