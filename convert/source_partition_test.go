package convert_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// fromTorchCat gives n the source_fn_stack the pre-2.14 capture APIs
// record for a torch.cat call, through which torchao's cat annotator finds it.
func fromTorchCat(n *fxgraph.Node) {
	n.Meta.SourceFnStack = []fxgraph.SourceFn{{Name: "cat", Target: "torch.cat"}}
}

// inPoolModule gives n the nn_module_stack torch 2.14's export records for
// a call of an nn.AdaptiveAvgPool2d module at path.
func inPoolModule(n *fxgraph.Node, path string) {
	n.Meta.NNModuleStack = []fxgraph.ModuleStackEntry{
		{Key: "L__self__", Path: "", Type: "zoo_models.Net"},
		{Key: "L__self___" + path, Path: path, Type: "torch.nn.modules.pooling.AdaptiveAvgPool2d"},
	}
}

// TestSourcePartitionsOnTorch214Exports follows torch 2.14's
// get_source_partitions on an export graph, which has no source_fn_stack:
// an nn.AdaptiveAvgPool2d module call is found through its nn_module_stack,
// while a torch.cat call and an F.adaptive_avg_pool2d call made in another
// module are not, so torchao (and fxquant by default) leaves them
// unannotated. AnnotateByTarget annotates both.
func TestSourcePartitionsOnTorch214Exports(t *testing.T) {
	build := func() (g *fxgraph.Graph, modPool, fnPool, cat *fxgraph.Node) {
		g = fxgraph.New()
		x := g.Placeholder("x", f32(1, 2, 4, 4))
		modPool = g.Call(aapT, x, ops.List{int64(1), int64(1)})
		modPool.SetType(f32(1, 2, 1, 1))
		inPoolModule(modPool, "avgpool")
		fnPool = g.Call(aapT, x, ops.List{int64(1), int64(1)})
		fnPool.SetType(f32(1, 2, 1, 1))
		// F.adaptive_avg_pool2d called in the model's own forward: the
		// innermost module is the model, and torch_fn names the function.
		fnPool.Meta.NNModuleStack = []fxgraph.ModuleStackEntry{{Key: "L__self__", Path: "", Type: "zoo_models.Net"}}
		fnPool.Meta.TorchFn = []string{"adaptive_avg_pool2d_1", "function.adaptive_avg_pool2d"}
		cat = g.Call(catT, ops.List{modPool, fnPool}, int64(1))
		cat.SetType(f32(1, 4, 1, 1))
		cat.Meta.NNModuleStack = fnPool.Meta.NNModuleStack
		cat.Meta.TorchFn = []string{"cat_1", "builtin_function_or_method.cat"}
		g.SetOutput(ops.Tuple{cat})
		return
	}
	c := staticConfig()

	g, modPool, fnPool, cat := build()
	require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
	x := g.Nodes()[0]
	requireAnnotation(t, modPool, []in{{x, c.InputActivation}}, shared(convert.Edge(x, modPool)))
	assert.Nil(t, convert.Annotation(fnPool), "F.adaptive_avg_pool2d outside an AdaptiveAvgPool2d module")
	assert.Nil(t, convert.Annotation(cat), "torch.cat on a 2.14 export")

	g, modPool, fnPool, cat = build()
	q := convert.NewXNNPACKQuantizer(c)
	q.AnnotateByTarget = true
	require.NoError(t, q.Annotate(g))
	x = g.Nodes()[0]
	requireAnnotation(t, modPool, []in{{x, c.InputActivation}}, shared(convert.Edge(x, modPool)))
	requireAnnotation(t, fnPool, []in{{x, c.InputActivation}}, shared(convert.Edge(x, fnPool)))
	sh := shared(convert.Edge(modPool, cat))
	requireAnnotation(t, cat, []in{{modPool, c.InputActivation}, {fnPool, sh}}, sh)
}

// TestSourcePartitionEndsInOtherOp: torchao raises when an
// AdaptiveAvgPool2d partition's output is not adaptive_avg_pool2d (a module
// subclass whose forward does more); fxquant returns an error naming it.
func TestSourcePartitionEndsInOtherOp(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(1, 2, 4, 4))
	pool := g.Call(aapT, x, ops.List{int64(1), int64(1)})
	pool.SetType(f32(1, 2, 1, 1))
	inPoolModule(pool, "avgpool")
	fl := g.Call(ops.MustOverload("aten.flatten.using_ints"), pool, int64(1))
	fl.SetType(f32(1, 2))
	inPoolModule(fl, "avgpool")
	g.SetOutput(ops.Tuple{fl})
	err := convert.NewXNNPACKQuantizer(staticConfig()).Annotate(g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"flatten`)
	assert.Contains(t, err.Error(), "AdaptiveAvgPool2d")
}
