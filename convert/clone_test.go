package convert

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestCloneRemapsAnnotations: a graph cloned by the caller (fxgraph's
// Clone) carries annotations that name the clone's nodes, so converting the
// clone and then the original both work and give the same graph.
func TestCloneRemapsAnnotations(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("w", tensor.MustFromData(tensor.Float32, []int{2, 2}, []float32{0.5, -1, 0.25, 1}))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 1, 2))
	w := g.GetAttr("w", ops.Plain(tensor.Float32, 2, 2))
	y := g.Call(ops.MustOverload("aten.linear.default"), x, w)
	y.SetType(ops.Plain(tensor.Float32, 1, 2))
	g.SetOutput(ops.Tuple{y})

	cfg := DefaultSymmetricConfigOptions()
	cfg.Dynamic = true
	require.NoError(t, Prepare(g, NewXNNPACKQuantizer(SymmetricQuantizationConfig(cfg))))
	batch := [][]*tensor.Tensor{{tensor.MustFromData(tensor.Float32, []int{1, 2}, []float32{1, -2})}}
	require.NoError(t, Calibrate(g, batch, nil))

	c, m := g.Clone()
	for n := range g.All() {
		a := Annotation(n)
		if a == nil {
			continue
		}
		ca := Annotation(m[n])
		require.NotNil(t, ca)
		require.NotSame(t, a, ca, "the clone has its own annotation")
		for i, e := range ca.InputQSpecMap {
			require.Same(t, m[a.InputQSpecMap[i].Input], e.Input, "clone's annotation names the clone's node")
		}
	}
	require.NoError(t, Convert(c, ConvertOptions{}))
	require.NoError(t, Convert(g, ConvertOptions{}))
	require.Equal(t, fxgraph.Format(c), fxgraph.Format(g))
}
