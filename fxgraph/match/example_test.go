package match_test

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
)

// Replace every relu(neg(x)) with one fused call.
func ExampleReplacePatternWithFilters() {
	relu := ops.MustOverload("aten.relu.default")
	neg := ops.MustOverload("aten.neg.default")
	fused := ops.Callable{Module: "mylib", Name: "neg_relu"}

	g, _ := match.NewGraph(func(b *match.Builder) ops.Value {
		x := b.Placeholder("x")
		return b.Call(relu, b.Call(neg, b.Call(relu, b.Call(neg, x))))
	})
	pattern, err := match.NewPattern(func(b *match.Builder) ops.Value {
		n := b.Name("neg", b.Call(neg, b.Placeholder("x")))
		return b.Call(relu, n)
	})
	if err != nil {
		panic(err)
	}
	replacement, _ := match.NewGraph(func(b *match.Builder) ops.Value {
		return b.Call(fused, b.Placeholder("x"))
	})

	onlyFirst := func(m *match.Match, _ *fxgraph.Graph, _ *match.Pattern) bool {
		return m.Node("neg").Name() == "neg_default"
	}
	res, err := match.ReplacePatternWithFilters(g, pattern, match.Static(replacement),
		[]match.Filter{onlyFirst}, false, match.WithRegistry(ops.NewRegistry()))
	if err != nil {
		panic(err)
	}
	fmt.Println("replaced:", len(res), "new node:", res[0].Replacements[0].Name())
	for n := range g.All() {
		fmt.Println(n.Name(), n.TargetName(), n.InputNodes())
	}
	// Output:
	// replaced: 1 new node: neg_relu
	// x x []
	// neg_relu mylib.neg_relu [%x]
	// neg_default_1 aten.neg.default [%neg_relu]
	// relu_default_1 aten.relu.default [%neg_default_1]
	// output output [%relu_default_1]
}
