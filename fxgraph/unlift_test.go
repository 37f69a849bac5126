package fxgraph_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// unliftGraph is b_buf (buffer "buf"), x -> add_tensor = b_buf + x,
// returning (add_tensor, add_tensor): torch lists the buffer mutation first, then the same value
// as a user output.
func unliftGraph() *fxgraph.Graph {
	g := fxgraph.New()
	g.SetAttr("buf", tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, 2}))
	b := g.Placeholder("b_buf", ops.Plain(tensor.Float32, 2))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 2))
	add := g.Call(ops.MustOverload("aten.add.Tensor"), b, x)
	add.SetType(ops.Plain(tensor.Float32, 2))
	g.SetOutput(ops.Tuple{add, add})
	return g
}

func unliftRows(g *fxgraph.Graph) []string {
	var out []string
	for n := range g.All() {
		args := ""
		for i, a := range n.Args() {
			if i > 0 {
				args += ", "
			}
			args += fmt.Sprint(a)
		}
		out = append(out, fmt.Sprintf("%s %s %s (%s)", n.Name(), n.Op(), n.TargetName(), args))
	}
	return out
}

// TestUnlift follows torch's _unlift (torchao-pt2e.md 3.8): the lifted
// placeholder becomes a get_attr in its place, a mutation claims the
// first matching output position only, and the copy_ goes before the
// output.
func TestUnlift(t *testing.T) {
	g := unliftGraph()
	before := unliftRows(g)
	u, err := fxgraph.Unlift(g, []fxgraph.LiftedInput{{Placeholder: "b_buf", Target: "buf"}},
		[]fxgraph.Mutation{{Value: "add_tensor", Target: "buf"}})
	require.NoError(t, err)
	assert.Equal(t, before, unliftRows(g), "g is not modified")
	assert.Equal(t, []string{
		"buf get_attr buf ()",
		"x placeholder x ()",
		"add_tensor call_function aten.add.Tensor (%buf, %x)",
		"copy__default call_function aten.copy_.default (%buf, %add_tensor)",
		"output output output ([%add_tensor])",
	}, unliftRows(u))

	for _, tt := range []struct {
		name      string
		lifted    []fxgraph.LiftedInput
		mutations []fxgraph.Mutation
		want      string
	}{
		{"no such placeholder", []fxgraph.LiftedInput{{Placeholder: "b_nope", Target: "buf"}}, nil,
			`unlift: lifted input "b_nope": no placeholder of that name`},
		{"attribute not stored", []fxgraph.LiftedInput{{Placeholder: "b_buf", Target: "other"}}, nil,
			`unlift: lifted input "b_buf": attribute "other" is not in the graph`},
		{"value not returned", []fxgraph.LiftedInput{{Placeholder: "b_buf", Target: "buf"}},
			[]fxgraph.Mutation{{Value: "x", Target: "buf"}},
			`unlift: mutation of "buf": the output returns no (unclaimed) node "x"`},
		{"three mutations of two results", []fxgraph.LiftedInput{{Placeholder: "b_buf", Target: "buf"}},
			[]fxgraph.Mutation{{Value: "add_tensor", Target: "buf"}, {Value: "add_tensor", Target: "buf"}, {Value: "add_tensor", Target: "buf"}},
			`unlift: mutation of "buf": the output returns no (unclaimed) node "add_tensor"`},
		{"target not lifted", nil, []fxgraph.Mutation{{Value: "add_tensor", Target: "buf"}},
			`unlift: mutation of "buf" by node "add_tensor": no get_attr or input of that name`},
		{"user input that is not a placeholder", nil, []fxgraph.Mutation{{Value: "add_tensor", Target: "add", FromUserInput: true}},
			`unlift: mutation of "add" by node "add_tensor": no get_attr or input of that name`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fxgraph.Unlift(unliftGraph(), tt.lifted, tt.mutations)
			require.Error(t, err)
			assert.EqualError(t, err, tt.want)
		})
	}
}
