package convert_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

func x86Static(t *testing.T) *convert.X86InductorQuantizer {
	t.Helper()
	c, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{})
	require.NoError(t, err)
	return convert.NewX86InductorQuantizer().SetGlobal(c)
}

// convGraph builds y = conv2d(x, w) with the nn_module_stack of an
// nn.Conv2d call, followed by what tail adds.
func convGraph(t *testing.T, tail func(g *fxgraph.Graph, conv *fxgraph.Node) *fxgraph.Node) *fxgraph.Graph {
	t.Helper()
	g := fxgraph.New()
	g.SetAttr("conv.weight", tensor.MustFromData(tensor.Float32, []int{1, 1, 1, 1}, []float32{2}))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 1, 1, 2, 2))
	w := g.GetAttr("conv.weight", ops.Plain(tensor.Float32, 1, 1, 1, 1))
	conv := g.Call(ops.MustOverload("aten.conv2d.default"), x, w)
	conv.SetType(ops.Plain(tensor.Float32, 1, 1, 2, 2))
	conv.Meta.NNModuleStack = []fxgraph.ModuleStackEntry{{Key: "conv", Path: "conv", Type: "torch.nn.modules.conv.Conv2d"}}
	g.SetOutput(ops.Tuple{tail(g, conv)})
	return g
}

// TestX86InductorRefusesWhatTorchaoRaisesOn: where torchao's annotators
// raise or assert, Annotate returns an ErrAnnotation naming the node and
// leaves no panic.
func TestX86InductorRefusesWhatTorchaoRaisesOn(t *testing.T) {
	t.Run("conv partition ending in another op", func(t *testing.T) {
		g := convGraph(t, func(g *fxgraph.Graph, conv *fxgraph.Node) *fxgraph.Node {
			r := g.Call(ops.MustOverload("aten.relu.default"), conv)
			r.SetType(ops.Plain(tensor.Float32, 1, 1, 2, 2))
			// The relu claims to run inside the same nn.Conv2d call.
			r.Meta.NNModuleStack = conv.Meta.NNModuleStack
			return r
		})
		err := x86Static(t).Annotate(g)
		require.ErrorIs(t, err, convert.ErrAnnotation)
		assert.Contains(t, err.Error(), `"relu_default" is not an aten conv2d operator`)
	})
	t.Run("add with a scalar after a conv", func(t *testing.T) {
		g := convGraph(t, func(g *fxgraph.Graph, conv *fxgraph.Node) *fxgraph.Node {
			a := g.Call(ops.MustOverload("aten.add.Tensor"), conv, 1.0)
			a.SetType(ops.Plain(tensor.Float32, 1, 1, 2, 2))
			a.Meta.TorchFn = []string{"add_1", "method_descriptor.add"}
			return a
		})
		err := x86Static(t).Annotate(g)
		require.ErrorIs(t, err, convert.ErrAnnotation)
		assert.Contains(t, err.Error(), `"add_tensor": argument 1 of the binary post-op is not a node`)
	})
	t.Run("a plain conv is annotated", func(t *testing.T) {
		g := convGraph(t, func(_ *fxgraph.Graph, conv *fxgraph.Node) *fxgraph.Node { return conv })
		require.NoError(t, x86Static(t).Annotate(g))
		conv, ok := g.NodeByName("conv2d_default")
		require.True(t, ok)
		a := convert.Annotation(conv)
		require.NotNil(t, a)
		assert.Len(t, a.InputQSpecMap, 2)
		assert.Nil(t, a.OutputQSpec, "the x86 recipe gives a conv no output spec")
	})
}
