package fxgraph_test

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Build a graph, rewrite relu(relu(x)) to relu(x), remove the dead node and
// check the result with the verifier.
func ExampleGraph_ReplaceAllUsesWith() {
	relu := ops.MustOverload("aten.relu.default")
	add := ops.MustOverload("aten.add.Tensor")
	f32 := ops.Plain(tensor.Float32, 2, 3)

	g := fxgraph.New()
	x := g.Placeholder("x", f32)
	r1 := g.Call(relu, x)
	r1.SetType(f32)
	r2 := g.Call(relu, r1) // relu is idempotent: r2 computes the same as r1
	r2.SetType(f32)
	sum := g.Call(add, r2, r2) // uses r2 twice: one user, two uses
	sum.SetType(f32)
	g.SetOutput(ops.Tuple{sum})
	fmt.Printf("%s: %d user, %d uses\n", r2, r2.NumUsers(), r2.NumUses())

	changed := g.ReplaceAllUsesWith(r2, r1, nil)
	fmt.Println("changed users:", changed)
	if err := g.Erase(x); err != nil { // x still has users
		fmt.Println("erase:", err)
	}
	fmt.Println("dce erased something:", g.EliminateDeadCode(nil, nil))
	fmt.Println("r2 erased:", r2.Erased())
	if err := fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true}); err != nil {
		fmt.Println(err)
	}
	fmt.Print(fxgraph.Format(g))
	// Output:
	// %relu_default_1: 1 user, 2 uses
	// changed users: [%add_tensor]
	// erase: fxgraph: erase %x: node still has users: 1 users [%relu_default]
	// dce erased something: true
	// r2 erased: true
	// graph():
	//     %x : f32[2, 3] [num_users=1] = placeholder[target=x]
	//     %relu_default : f32[2, 3] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})
	//     %add_tensor : f32[2, 3] [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%relu_default, %relu_default), kwargs = {})
	//     return (add_tensor,)
}

// The verifier reports every problem at once, each naming the node, the
// field and what was expected.
func ExampleVerify() {
	add := ops.MustOverload("aten.add.Tensor")
	g := fxgraph.New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 2, 3))
	y := g.Placeholder("y", ops.Plain(tensor.Float32, 2, 3))
	sum := g.Call(add, x, y)
	sum.SetType(ops.Plain(tensor.Float32, 3, 2)) // wrong shape
	bad := g.Call(add, x)                        // missing an argument
	g.SetOutput(ops.Tuple{sum, bad})

	err := fxgraph.Verify(g, fxgraph.VerifyOptions{})
	for _, e := range fxgraph.VerifyErrors(err) {
		fmt.Println(e)
	}
	// Output:
	// node "add_tensor" (aten.add.Tensor): type: want f32[2, 3], got f32[3, 2] (shape: want [2 3], got [3 2])
	// node "add_tensor_1" (aten.add.Tensor): args: add.Tensor: missing required argument "other"
}

// ReplaceAllUsesWithMeta is FX's replace_all_uses_with(...,
// propagate_meta=True): the replacement takes a copy of the node's
// metadata, and one that already has metadata is refused.
func ExampleGraph_ReplaceAllUsesWithMeta() {
	relu := ops.MustOverload("aten.relu.default")
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	old := g.Call(relu, x)
	old.Meta.StackTrace = "model.py:3"
	out := g.SetOutput(old)
	restore := g.InsertingBefore(out)
	repl := g.Call(relu, x)
	restore()

	changed, err := g.ReplaceAllUsesWithMeta(old, repl, nil)
	fmt.Println(changed, err, repl.Meta.StackTrace)
	_, err = g.ReplaceAllUsesWithMeta(repl, old, nil)
	fmt.Println(err)
	fmt.Println(fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	// Output:
	// [%output] <nil> model.py:3
	// fxgraph: replace all uses of %relu_default_1 with %relu_default: want a replacement without metadata, got %relu_default with meta keys [stack_trace]: replacement node already has metadata
	// <nil>
}
