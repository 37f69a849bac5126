package fxgraph_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// A pipeline runs a pass list with the verifier before the first pass and
// after each one; a pass whose result the verifier rejects leaves the graph
// as it was.
func ExamplePipeline() {
	relu := ops.MustOverload("aten.relu.default")
	f32 := ops.Plain(tensor.Float32, 4)

	g := fxgraph.New()
	x := g.Placeholder("x", f32)
	r1 := g.Call(relu, x)
	r1.SetType(f32)
	r2 := g.Call(relu, r1)
	r2.SetType(f32)
	g.SetOutput(ops.Tuple{r2})

	// foldRelu rewrites relu(relu(y)) to relu(y).
	foldRelu := fxgraph.Pass{Name: "fold_relu", Run: func(_ context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		n := 0
		for _, r := range g.FindNodes(fxgraph.CallFunction, relu) {
			if in, ok := r.Arg(0).(*fxgraph.Node); ok && in.Target() == relu {
				g.ReplaceAllUsesWith(r, in, nil)
				n++
			}
		}
		return fxgraph.Result{Changed: n > 0, Stats: map[string]int{"folded": n}}, nil
	}}
	dce := fxgraph.Pass{Name: "dce", Run: func(_ context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		return fxgraph.Result{Changed: g.EliminateDeadCode(nil, nil)}, nil
	}}
	// reshapeBadly gives a node a type its op's rule does not produce.
	reshapeBadly := fxgraph.Pass{Name: "reshape_badly", Run: func(_ context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		g.FindNodes(fxgraph.CallFunction, relu)[0].SetType(ops.Plain(tensor.Float32, 2, 2))
		return fxgraph.Result{Changed: true}, nil
	}}

	p, err := fxgraph.NewPipeline([]fxgraph.Pass{foldRelu, dce, reshapeBadly}, [][2]string{{"fold_relu", "dce"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	runs, err := p.Run(context.Background(), g)
	for _, r := range runs {
		fmt.Printf("%s: changed=%v stats=%v\n", r.Pass, r.Result.Changed, r.Result.Stats)
	}
	var pe *fxgraph.PassError
	if errors.As(err, &pe) {
		fmt.Printf("pass %q rejected by the verifier: %v\n", pe.Pass, pe.Verify)
	}
	fmt.Print(fxgraph.Format(g)) // the graph after dce: reshape_badly was rolled back
	// Output:
	// fold_relu: changed=true stats=map[folded:1]
	// dce: changed=true stats=map[]
	// pass "reshape_badly" rejected by the verifier: true
	// graph():
	//     %x : f32[4] [num_users=1] = placeholder[target=x]
	//     %relu_default : f32[4] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})
	//     return (relu_default,)
}

// Pipeline orders are checked when the pipeline is built.
func ExampleNewPipeline() {
	noop := func(_ context.Context, _ *fxgraph.Graph) (fxgraph.Result, error) { return fxgraph.Result{}, nil }
	_, err := fxgraph.NewPipeline([]fxgraph.Pass{{Name: "dce", Run: noop}, {Name: "fold", Run: noop}}, [][2]string{{"fold", "dce"}})
	fmt.Println(err)
	// Output:
	// fxgraph: new pipeline: order: want pass "fold" before "dce", got it at 1 and "dce" at 0
}
