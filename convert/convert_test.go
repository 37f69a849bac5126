package convert_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

var (
	addT    = ops.MustOverload("aten.add.Tensor")
	linearT = ops.MustOverload("aten.linear.default")
	catT    = ops.MustOverload("aten.cat.default")
)

func f32(shape ...int64) ops.Type { return ops.Plain(tensor.Float32, shape...) }

// funcQuantizer annotates with a function.
type funcQuantizer func(g *fxgraph.Graph) error

func (f funcQuantizer) TransformForAnnotation(*fxgraph.Graph) error { return nil }
func (f funcQuantizer) Annotate(g *fxgraph.Graph) error             { return f(g) }
func (f funcQuantizer) Validate(*fxgraph.Graph) error               { return nil }

func minmaxSpec() *convert.QuantizationSpec {
	return &convert.QuantizationSpec{DType: observers.Int8, QScheme: observers.PerTensorAffine,
		QuantMin: observers.Int(-128), QuantMax: observers.Int(127), Observer: convert.MinMaxObserverCtor(observers.Config{})}
}

// addGraph is add(x, y) with both inputs [2].
func addGraph() *fxgraph.Graph {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(2))
	y := g.Placeholder("y", f32(2))
	a := g.Call(addT, x, y)
	a.SetType(f32(2))
	g.SetOutput(ops.Tuple{a})
	return g
}

func node(t *testing.T, g *fxgraph.Graph, name string) *fxgraph.Node {
	t.Helper()
	n, ok := g.NodeByName(name)
	require.True(t, ok, "node %s", name)
	return n
}

func TestPrepareBadInputLeavesGraph(t *testing.T) {
	tests := []struct {
		name     string
		annotate func(g *fxgraph.Graph) error
		want     error
		mention  string
	}{
		{
			name: "input of another graph",
			annotate: func(g *fxgraph.Graph) error {
				other := fxgraph.New().Placeholder("z", f32(2))
				convert.AnnotateInput(node(t, g, "add_tensor"), other, minmaxSpec())
				return nil
			},
			want: convert.ErrAnnotation, mention: `"add_tensor"`,
		},
		{
			name: "input that is not an argument",
			annotate: func(g *fxgraph.Graph) error {
				a := node(t, g, "add_tensor")
				convert.AnnotateInput(a, a, minmaxSpec())
				return nil
			},
			want: convert.ErrAnnotation, mention: "not a positional argument",
		},
		{
			name: "shared spec on an edge with no spec",
			annotate: func(g *fxgraph.Graph) error {
				a, x, y := node(t, g, "add_tensor"), node(t, g, "x"), node(t, g, "y")
				convert.AnnotateInput(a, y, &convert.SharedQuantizationSpec{EdgeOrNode: convert.Edge(x, a)})
				return nil
			},
			want: convert.ErrSharedSpec, mention: "add_tensor",
		},
		{
			name: "spec without observer",
			annotate: func(g *fxgraph.Graph) error {
				convert.AnnotateOutput(node(t, g, "add_tensor"), &convert.QuantizationSpec{DType: observers.Int8})
				return nil
			},
			want: convert.ErrAnnotation, mention: "add_tensor",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := addGraph()
			before := fxgraph.Format(g)
			err := convert.Prepare(g, funcQuantizer(tt.annotate))
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.mention)
			assert.Equal(t, before, fxgraph.Format(g))
		})
	}
}

// TestSharingGroups checks sections 3.3 and 3.4 on add(x, y):
// inputs with equal specs on one producer share, a shared spec joins two
// edges, NoImplicitSharing keeps them apart. Expected observer counts are
// derived by hand from the union rules.
func TestSharingGroups(t *testing.T) {
	tests := []struct {
		name      string
		annotate  func(g *fxgraph.Graph)
		nodes     int // observer nodes
		instances int // distinct observer objects
	}{
		{
			name: "independent inputs and output",
			annotate: func(g *fxgraph.Graph) {
				a := node(t, g, "add_tensor")
				s := minmaxSpec()
				convert.AnnotateInput(a, node(t, g, "x"), s)
				convert.AnnotateInput(a, node(t, g, "y"), s)
				convert.AnnotateOutput(a, s)
			},
			nodes: 3, instances: 3,
		},
		{
			name: "second input shares the first edge",
			annotate: func(g *fxgraph.Graph) {
				a, x := node(t, g, "add_tensor"), node(t, g, "x")
				convert.AnnotateInput(a, x, minmaxSpec())
				convert.AnnotateInput(a, node(t, g, "y"), &convert.SharedQuantizationSpec{EdgeOrNode: convert.Edge(x, a)})
				convert.AnnotateOutput(a, &convert.SharedQuantizationSpec{EdgeOrNode: convert.Edge(x, a)})
			},
			nodes: 3, instances: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := addGraph()
			require.NoError(t, convert.Prepare(g, funcQuantizer(func(g *fxgraph.Graph) error { tt.annotate(g); return nil })))
			nodes := 0
			inst := map[any]bool{}
			for n := range g.All() {
				if n.Op() == fxgraph.CallModule {
					nodes++
					v, _ := g.Attr(n.TargetName())
					inst[v] = true
				}
			}
			assert.Equal(t, tt.nodes, nodes, "observer nodes:\n%s", fxgraph.Format(g))
			assert.Equal(t, tt.instances, len(inst), "observer instances")
		})
	}
}

// TestImplicitSharing: x feeds two adds whose x-edges have equal specs; with
// implicit sharing the second add reuses the first edge's observer node (x
// gets one observer), without it x gets two.
func TestImplicitSharing(t *testing.T) {
	for _, tt := range []struct {
		name     string
		noShare  bool
		xObsNode int
	}{{"shared", false, 1}, {"not shared", true, 2}} {
		t.Run(tt.name, func(t *testing.T) {
			g := fxgraph.New()
			x := g.Placeholder("x", f32(2))
			y := g.Placeholder("y", f32(2))
			a1 := g.Call(addT, x, y)
			a1.SetType(f32(2))
			a2 := g.Call(addT, x, a1)
			a2.SetType(f32(2))
			g.SetOutput(ops.Tuple{a2})
			q := funcQuantizer(func(g *fxgraph.Graph) error {
				s := minmaxSpec()
				for _, name := range []string{"add_tensor", "add_tensor_1"} {
					a := node(t, g, name)
					convert.AnnotateInput(a, node(t, g, "x"), s)
					convert.Annotation(a).NoImplicitSharing = tt.noShare
				}
				return nil
			})
			require.NoError(t, convert.Prepare(g, q))
			assert.Equal(t, tt.xObsNode, node(t, g, "x").NumUsers(), "users of x:\n%s", fxgraph.Format(g))
		})
	}
}

func TestConvertObserverWithoutData(t *testing.T) {
	g := addGraph()
	require.NoError(t, convert.Prepare(g, funcQuantizer(func(g *fxgraph.Graph) error {
		convert.AnnotateOutput(node(t, g, "add_tensor"), minmaxSpec())
		return nil
	})))
	before := fxgraph.Format(g)
	err := convert.Convert(g, convert.ConvertOptions{})
	require.ErrorIs(t, err, convert.ErrObserver)
	require.ErrorIs(t, err, observers.ErrNoData)
	assert.Contains(t, err.Error(), `"activation_post_process_0"`)
	assert.Equal(t, before, fxgraph.Format(g))
}

func TestCalibrateBadBatch(t *testing.T) {
	g := addGraph()
	require.NoError(t, convert.Prepare(g, funcQuantizer(func(g *fxgraph.Graph) error {
		convert.AnnotateOutput(node(t, g, "add_tensor"), minmaxSpec())
		return nil
	})))
	good := tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, 2})
	bad := tensor.MustFromData(tensor.Float32, []int{3}, []float32{1, 2, 3})
	err := convert.Calibrate(g, [][]*tensor.Tensor{{good, good}, {good, bad}}, nil)
	require.ErrorIs(t, err, convert.ErrBatch)
	assert.Contains(t, err.Error(), `batch 1`)
	assert.Contains(t, err.Error(), `"y"`)
	// No batch ran: the observer has no data.
	v, _ := g.Attr("activation_post_process_0")
	_, err = v.(observers.Observer).CalculateQParams()
	require.True(t, errors.Is(err, observers.ErrNoData), "got %v", err)

	var seen []int
	require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{{good, good}, {good, good}}, func(i, n int) { seen = append(seen, i, n) }))
	assert.Equal(t, []int{0, 2, 1, 2}, seen)
}

// TestConvertPerTensor: add(x, y) with x = [1, -2], y = [3, 0.5]; its
// output [4, -1.5] observed by MinMax int8 affine: scale = (4 - -1.5)/255,
// zp = -128 - round(-1.5/scale) = -128 + 70 = -58 (hand calculation).
func TestConvertPerTensor(t *testing.T) {
	g := addGraph()
	require.NoError(t, convert.Prepare(g, funcQuantizer(func(g *fxgraph.Graph) error {
		convert.AnnotateOutput(node(t, g, "add_tensor"), minmaxSpec())
		return nil
	})))
	x := tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, -2})
	y := tensor.MustFromData(tensor.Float32, []int{2}, []float32{3, 0.5})
	require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{{x, y}}, nil))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
	qs := g.FindNodes(fxgraph.CallFunction, ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"))
	require.Len(t, qs, 1)
	scale := float32(5.5) / float32(255)
	assert.Equal(t, float64(scale), qs[0].Arg(1))
	assert.Equal(t, int64(-128+int(math.RoundToEven(1.5/float64(scale)))), qs[0].Arg(2))
	assert.Equal(t, int64(-58), qs[0].Arg(2))
	dqs := g.FindNodes(fxgraph.CallFunction, ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default"))
	require.Len(t, dqs, 1)
	out, _ := g.OutputNode()
	assert.Equal(t, ops.Tuple{dqs[0]}, out.Arg(0))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
}

// TestFoldBatchNorm: conv2d (1 -> 2 channels, 1x1 kernel, bias [0.5, -1])
// followed by batch_norm(weight [2, 1], bias [0.25, 0], mean [1, 0.5],
// var [3, 0], eps 1). Hand calculation per channel:
// r = 1/sqrt(var + eps) = [0.5, 1]; s = weight * r = [1, 1];
// w' = w * s; b' = ((b - mean) * r) * weight + bn_bias
// = [(-0.5 * 0.5) * 2 + 0.25, (-1.5 * 1) * 1 + 0] = [-0.25, -1.5].
func TestFoldBatchNorm(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("conv.weight", tensor.MustFromData(tensor.Float32, []int{2, 1, 1, 1}, []float32{3, -2}))
	g.SetAttr("conv.bias", tensor.MustFromData(tensor.Float32, []int{2}, []float32{0.5, -1}))
	g.SetAttr("bn.weight", tensor.MustFromData(tensor.Float32, []int{2}, []float32{2, 1}))
	g.SetAttr("bn.bias", tensor.MustFromData(tensor.Float32, []int{2}, []float32{0.25, 0}))
	g.SetAttr("bn.running_mean", tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, 0.5}))
	g.SetAttr("bn.running_var", tensor.MustFromData(tensor.Float32, []int{2}, []float32{3, 0}))
	x := g.Placeholder("x", f32(1, 1, 2, 2))
	ga := func(p string, shape ...int64) *fxgraph.Node { return g.GetAttr(p, f32(shape...)) }
	conv := g.Call(ops.MustOverload("aten.conv2d.default"), x, ga("conv.weight", 2, 1, 1, 1), ga("conv.bias", 2))
	conv.SetType(f32(1, 2, 2, 2))
	bn := g.Call(ops.MustOverload("aten.batch_norm.default"), conv, ga("bn.weight", 2), ga("bn.bias", 2),
		ga("bn.running_mean", 2), ga("bn.running_var", 2), false, 0.1, 1.0, false)
	bn.SetType(f32(1, 2, 2, 2))
	g.SetOutput(ops.Tuple{bn})

	require.NoError(t, convert.FoldBatchNorm(g, nil))
	assert.Empty(t, g.FindNodes(fxgraph.CallFunction, ops.MustOverload("aten.batch_norm.default")))
	out, _ := g.OutputNode()
	assert.Equal(t, ops.Tuple{conv}, out.Arg(0))
	w, _ := g.Attr("conv.weight")
	wd, err := tensor.Data[float32](w.(*tensor.Tensor))
	require.NoError(t, err)
	assert.Equal(t, []float32{3, -2}, wd)
	b, _ := g.Attr("conv.bias")
	bd, err := tensor.Data[float32](b.(*tensor.Tensor))
	require.NoError(t, err)
	assert.Equal(t, []float32{-0.25, -1.5}, bd)
}

func TestFoldBatchNormRejectsPlaceholderWeight(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(1, 1, 2, 2))
	w := g.Placeholder("w", f32(2, 1, 1, 1))
	m := g.Placeholder("m", f32(2))
	conv := g.Call(ops.MustOverload("aten.conv2d.default"), x, w)
	bn := g.Call(ops.MustOverload("aten.batch_norm.default"), conv, nil, nil, m, m, false, 0.1, 1e-5, false)
	g.SetOutput(ops.Tuple{bn})
	before := fxgraph.Format(g)
	err := convert.Prepare(g, funcQuantizer(func(*fxgraph.Graph) error { return nil }))
	require.ErrorIs(t, err, convert.ErrFold)
	assert.Contains(t, err.Error(), "expected get_attr node")
	assert.Equal(t, before, fxgraph.Format(g))
}

// TestCatSharesObservers: cat([a, b]) with the XNNPACK config gives both
// inputs and the output one observer instance (Shared((a, cat))).
func TestCatSharesObservers(t *testing.T) {
	g := fxgraph.New()
	a := g.Placeholder("a", f32(2))
	b := g.Placeholder("b", f32(2))
	c := g.Call(catT, ops.List{a, b})
	c.SetType(f32(4))
	fromTorchCat(c)
	g.SetOutput(ops.Tuple{c})
	q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))
	require.NoError(t, convert.Prepare(g, q))
	inst := map[any]int{}
	for n := range g.All() {
		if n.Op() == fxgraph.CallModule {
			v, _ := g.Attr(n.TargetName())
			inst[v]++
		}
	}
	require.Len(t, inst, 1, "%s", fxgraph.Format(g))
	for _, k := range inst {
		assert.Equal(t, 3, k)
	}
}

// TestUnlift turns lifted placeholders into get_attr nodes named from the
// target (spec 3.8's fc1.weight -> fc1_weight).
func TestUnlift(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("fc1.weight", tensor.MustZeros(tensor.Float32, 2, 2))
	w := g.Placeholder("p_fc1_weight", f32(2, 2))
	x := g.Placeholder("x", f32(1, 2))
	l := g.Call(linearT, x, w)
	g.SetOutput(ops.Tuple{l})
	u, err := convert.Unlift(g, []convert.LiftedInput{{Placeholder: "p_fc1_weight", Target: "fc1.weight"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, "fc1_weight | get_attr | fc1.weight | () | {}\nx | placeholder | x | () | {}\n"+
		"linear_default | call_function | aten.linear.default | (%x, %fc1_weight) | {}\noutput | output | output | ((%linear_default,),) | {}\n",
		fxgraph.FormatListing(u))
	_, err = convert.Unlift(g, []convert.LiftedInput{{Placeholder: "nope", Target: "fc1.weight"}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"nope"`)
}
