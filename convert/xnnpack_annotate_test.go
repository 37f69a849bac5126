package convert_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Targets the section 4 annotators match.
var (
	xReluT     = ops.MustOverload("aten.relu.default")
	xConv2dT   = ops.MustOverload("aten.conv2d.default")
	xConvT2dT  = ops.MustOverload("aten.conv_transpose2d.input")
	aapT       = ops.MustOverload("aten.adaptive_avg_pool2d.default")
	maxPoolT   = ops.MustOverload("aten.max_pool2d.default")
	hardtanhT  = ops.MustOverload("aten.hardtanh.default")
	meanDimT   = ops.MustOverload("aten.mean.dim")
	permuteT   = ops.MustOverload("aten.permute.default")
	squeezeT   = ops.MustOverload("aten.squeeze.dim")
	xViewT     = ops.MustOverload("aten.view.default")
	sliceCopyT = ops.MustOverload("aten.slice_copy.Tensor")
	sliceT     = ops.MustOverload("aten.slice.Tensor")
	flattenT   = ops.MustOverload("aten.flatten.using_ints")
	subT       = ops.MustOverload("aten.sub.Tensor")
)

// staticConfig is get_symmetric_quantization_config() with its defaults.
func staticConfig() *convert.QuantizationConfig {
	return convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions())
}

// in is one expected InputQSpecMap entry.
type in struct {
	node *fxgraph.Node
	spec convert.QSpec
}

// shared is the expected SharedQuantizationSpec on e.
func shared(e convert.EdgeOrNode) convert.QSpec {
	return &convert.SharedQuantizationSpec{EdgeOrNode: e}
}

// requireSpec checks got against want: a *QuantizationSpec must be the
// config's own spec (same pointer), a shared spec must name the same edge
// or node, nil must be nil.
func requireSpec(t *testing.T, want, got convert.QSpec, what string) {
	t.Helper()
	switch w := want.(type) {
	case nil:
		assert.Nil(t, got, "%s: want no spec", what)
	case *convert.QuantizationSpec:
		assert.Same(t, w, got, "%s: want the config's spec", what)
	case *convert.SharedQuantizationSpec:
		s, ok := got.(*convert.SharedQuantizationSpec)
		if assert.True(t, ok, "%s: want Shared(%s), got %T", what, w.EdgeOrNode, got) {
			assert.Equal(t, w.EdgeOrNode, s.EdgeOrNode, "%s: shared with %s, want %s", what, s.EdgeOrNode, w.EdgeOrNode)
		}
	default:
		t.Fatalf("%s: unexpected want %T", what, want)
	}
}

// requireAnnotation checks n's annotation: the input entries in order, the
// output spec, and the Annotated flag.
func requireAnnotation(t *testing.T, n *fxgraph.Node, inputs []in, out convert.QSpec) {
	t.Helper()
	a := convert.Annotation(n)
	require.NotNil(t, a, "%s has no annotation", n)
	assert.True(t, a.Annotated, "%s not marked annotated", n)
	require.Len(t, a.InputQSpecMap, len(inputs), "%s input entries", n)
	for i, w := range inputs {
		assert.Same(t, w.node, a.InputQSpecMap[i].Input, "%s input %d", n, i)
		requireSpec(t, w.spec, a.InputQSpecMap[i].Spec, fmt.Sprintf("%s input %s", n, w.node))
	}
	requireSpec(t, out, a.OutputQSpec, fmt.Sprintf("%s output", n))
}

// requireUnannotated checks that no annotator gave n a spec.
func requireUnannotated(t *testing.T, n *fxgraph.Node) {
	t.Helper()
	assert.False(t, convert.Annotation(n).Valid(), "%s should carry no spec", n)
}

// binaryGraph is op(x, y) [-> relu] with extra users of op when
// extraUser is set (op is then also a graph output).
func binaryGraph(op ops.Overload, withRelu, extraUser bool) (g *fxgraph.Graph, x, y, bin, relu *fxgraph.Node) {
	g = fxgraph.New()
	x = g.Placeholder("x", f32(2))
	y = g.Placeholder("y", f32(2))
	bin = g.Call(op, x, y)
	bin.SetType(f32(2))
	outs := ops.Tuple{}
	if withRelu {
		relu = g.Call(xReluT, bin)
		relu.SetType(f32(2))
		outs = append(outs, relu)
	}
	if extraUser || !withRelu {
		outs = append(outs, bin)
	}
	g.SetOutput(outs)
	return g, x, y, bin, relu
}

// TestXNNPACKBinaryAnnotators follows section 4's add / add_relu / mul /
// mul_relu rows: each node input gets the input-activation spec; the
// output spec goes on the add/mul, or on the relu when fused; fusion needs
// the add/mul to have a single user (otherwise add is annotated alone and
// propagate_annotation makes the relu share its output).
func TestXNNPACKBinaryAnnotators(t *testing.T) {
	for _, op := range []ops.Overload{addT, mulT} {
		t.Run(op.String()+"/alone", func(t *testing.T) {
			c := staticConfig()
			g, x, y, bin, _ := binaryGraph(op, false, false)
			require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
			requireAnnotation(t, bin, []in{{x, c.InputActivation}, {y, c.InputActivation}}, c.OutputActivation)
		})
		t.Run(op.String()+"/relu fused", func(t *testing.T) {
			c := staticConfig()
			g, x, y, bin, relu := binaryGraph(op, true, false)
			require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
			requireAnnotation(t, bin, []in{{x, c.InputActivation}, {y, c.InputActivation}}, nil)
			requireAnnotation(t, relu, nil, c.OutputActivation)
		})
		t.Run(op.String()+"/relu not fused with two users", func(t *testing.T) {
			c := staticConfig()
			g, x, y, bin, relu := binaryGraph(op, true, true)
			require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
			requireAnnotation(t, bin, []in{{x, c.InputActivation}, {y, c.InputActivation}}, c.OutputActivation)
			requireAnnotation(t, relu, []in{{bin, shared(convert.NodeOutput(bin))}}, shared(convert.NodeOutput(bin)))
		})
	}
	t.Run("x+x has one input entry", func(t *testing.T) {
		c := staticConfig()
		g := fxgraph.New()
		x := g.Placeholder("x", f32(2))
		a := g.Call(addT, x, x)
		a.SetType(f32(2))
		g.SetOutput(ops.Tuple{a})
		require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
		requireAnnotation(t, a, []in{{x, c.InputActivation}}, c.OutputActivation)
	})
	t.Run("sub is not annotated", func(t *testing.T) {
		g, _, _, bin, _ := binaryGraph(subT, false, false)
		require.NoError(t, convert.NewXNNPACKQuantizer(staticConfig()).Annotate(g))
		requireUnannotated(t, bin)
	})
}

// weightedGraph is op(x, w, b) -> relu, with w and b get_attr nodes; with
// extraUser op is also a graph output.
func weightedGraph(op ops.Overload, extraUser bool) (g *fxgraph.Graph, x, w, b, n, relu *fxgraph.Node) {
	g = fxgraph.New()
	g.SetAttr("weight", tensor.MustZeros(tensor.Float32, 1, 1, 1, 1))
	g.SetAttr("bias", tensor.MustZeros(tensor.Float32, 1))
	x = g.Placeholder("x", f32(1, 1, 4, 4))
	w = g.GetAttr("weight", f32(1, 1, 1, 1))
	b = g.GetAttr("bias", f32(1))
	n = g.Call(op, x, w, b)
	n.SetType(f32(1, 1, 4, 4))
	relu = g.Call(xReluT, n)
	relu.SetType(f32(1, 1, 4, 4))
	outs := ops.Tuple{relu}
	if extraUser {
		outs = append(outs, n)
	}
	g.SetOutput(outs)
	return
}

// TestXNNPACKWeightedReluAnnotators follows the linear_relu, conv_relu and
// conv_transpose_relu rows: with one user the op gets act/weight/bias
// inputs (bias spec None in the XNNPACK config) and no output spec, the
// relu gets the output spec, and weight and bias are marked annotated.
// With a second user the relu is not fused: linear and conv are then
// annotated alone (output on the op) and the relu shares the op's output;
// conv_transpose has no stand-alone annotator, so nothing is annotated.
func TestXNNPACKWeightedReluAnnotators(t *testing.T) {
	for _, op := range []ops.Overload{linearT, xConv2dT, xConvT2dT} {
		t.Run(op.String()+"/fused", func(t *testing.T) {
			c := staticConfig()
			g, x, w, b, n, relu := weightedGraph(op, false)
			require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
			requireAnnotation(t, n, []in{{x, c.InputActivation}, {w, c.Weight}, {b, nil}}, nil)
			requireAnnotation(t, relu, nil, c.OutputActivation)
			assert.True(t, convert.IsAnnotated(w), "weight marked annotated")
			assert.True(t, convert.IsAnnotated(b), "bias marked annotated")
			assert.False(t, convert.IsAnnotated(x), "activation input is not marked")
		})
		t.Run(op.String()+"/two users", func(t *testing.T) {
			c := staticConfig()
			g, x, w, b, n, relu := weightedGraph(op, true)
			require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
			if op == xConvT2dT {
				requireUnannotated(t, n)
				requireUnannotated(t, relu)
				return
			}
			requireAnnotation(t, n, []in{{x, c.InputActivation}, {w, c.Weight}, {b, nil}}, c.OutputActivation)
			requireAnnotation(t, relu, []in{{n, shared(convert.NodeOutput(n))}}, shared(convert.NodeOutput(n)))
		})
	}
	t.Run("conv3d alone is not annotated", func(t *testing.T) {
		g := fxgraph.New()
		x := g.Placeholder("x", f32(1, 1, 2, 2, 2))
		w := g.GetAttr("weight", f32(1, 1, 1, 1, 1))
		n := g.Call(ops.MustOverload("aten.conv3d.default"), x, w)
		n.SetType(f32(1, 1, 2, 2, 2))
		g.SetOutput(ops.Tuple{n})
		require.NoError(t, convert.NewXNNPACKQuantizer(staticConfig()).Annotate(g))
		requireUnannotated(t, n)
	})
	t.Run("linear without bias", func(t *testing.T) {
		c := staticConfig()
		g := fxgraph.New()
		x := g.Placeholder("x", f32(1, 2))
		w := g.GetAttr("weight", f32(2, 2))
		n := g.Call(linearT, x, w)
		n.SetType(f32(1, 2))
		g.SetOutput(ops.Tuple{n})
		require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
		requireAnnotation(t, n, []in{{x, c.InputActivation}, {w, c.Weight}}, c.OutputActivation)
	})
}

// TestXNNPACKCatAnnotator: cat([a, b, a, c]) gives input0 the input spec,
// every other distinct input Shared((a, cat)), and the output the same
// shared spec (section 4's cat row).
func TestXNNPACKCatAnnotator(t *testing.T) {
	c := staticConfig()
	g := fxgraph.New()
	a := g.Placeholder("a", f32(2))
	b := g.Placeholder("b", f32(2))
	d := g.Placeholder("c", f32(2))
	n := g.Call(catT, ops.List{a, b, a, d})
	n.SetType(f32(8))
	fromTorchCat(n)
	g.SetOutput(ops.Tuple{n})
	require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
	sh := shared(convert.Edge(a, n))
	requireAnnotation(t, n, []in{{a, c.InputActivation}, {b, sh}, {d, sh}}, sh)
}

// TestXNNPACKAdaptiveAvgPool follows the adaptive_avg_pool2d row: the
// input spec is Shared(input) when the input's annotation has an output
// spec (here a conv's), else the input-activation spec; the output is
// Shared((input, pool)) either way.
func TestXNNPACKAdaptiveAvgPool(t *testing.T) {
	t.Run("after conv", func(t *testing.T) {
		c := staticConfig()
		g := fxgraph.New()
		x := g.Placeholder("x", f32(1, 1, 4, 4))
		w := g.GetAttr("weight", f32(1, 1, 1, 1))
		conv := g.Call(xConv2dT, x, w)
		conv.SetType(f32(1, 1, 4, 4))
		pool := g.Call(aapT, conv, ops.List{int64(1), int64(1)})
		pool.SetType(f32(1, 1, 1, 1))
		inPoolModule(pool, "pool")
		g.SetOutput(ops.Tuple{pool})
		require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
		requireAnnotation(t, conv, []in{{x, c.InputActivation}, {w, c.Weight}}, c.OutputActivation)
		requireAnnotation(t, pool, []in{{conv, shared(convert.NodeOutput(conv))}}, shared(convert.Edge(conv, pool)))
	})
	t.Run("on a placeholder", func(t *testing.T) {
		c := staticConfig()
		g := fxgraph.New()
		x := g.Placeholder("x", f32(1, 1, 4, 4))
		pool := g.Call(aapT, x, ops.List{int64(1), int64(1)})
		pool.SetType(f32(1, 1, 1, 1))
		inPoolModule(pool, "pool")
		g.SetOutput(ops.Tuple{pool})
		require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
		requireAnnotation(t, pool, []in{{x, c.InputActivation}}, shared(convert.Edge(x, pool)))
	})
}

// TestPropagateAnnotation follows section 4's propagate_annotation row for
// every listed op after a conv (whose annotation has an output spec): the
// op gets input {conv: Shared(conv)} and output Shared(conv). aten.slice
// (not slice_copy) is not in the list; a node whose arg0 has no output
// spec, or that is already annotated, is left alone.
func TestPropagateAnnotation(t *testing.T) {
	tests := []struct {
		target ops.Overload
		extra  []ops.Value
		want   bool
	}{
		{maxPoolT, []ops.Value{ops.List{int64(2), int64(2)}}, true},
		{hardtanhT, []ops.Value{-1.0, 1.0}, true},
		{ops.MustOverload("aten.hardtanh_.default"), []ops.Value{-1.0, 1.0}, true},
		{meanDimT, []ops.Value{ops.List{int64(-1)}, true}, true},
		{ops.MustOverload("aten.mean.default"), nil, true},
		{permuteT, []ops.Value{ops.List{int64(0), int64(1), int64(3), int64(2)}}, true},
		{ops.MustOverload("aten.permute_copy.default"), []ops.Value{ops.List{int64(0), int64(1), int64(3), int64(2)}}, true},
		{squeezeT, []ops.Value{int64(0)}, true},
		{ops.MustOverload("aten.squeeze_copy.dim"), []ops.Value{int64(0)}, true},
		{xViewT, []ops.Value{ops.List{int64(16)}}, true},
		{ops.MustOverload("aten.view_copy.default"), []ops.Value{ops.List{int64(16)}}, true},
		{sliceCopyT, []ops.Value{int64(3), int64(0), int64(2)}, true},
		{flattenT, []ops.Value{int64(0), int64(-1)}, true},
		{xReluT, nil, true},
		{sliceT, []ops.Value{int64(3), int64(0), int64(2)}, false},
		{ops.MustOverload("aten.sigmoid.default"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.target.String(), func(t *testing.T) {
			g := fxgraph.New()
			x := g.Placeholder("x", f32(1, 1, 4, 4))
			w := g.GetAttr("weight", f32(1, 1, 1, 1))
			conv := g.Call(xConv2dT, x, w)
			conv.SetType(f32(1, 1, 4, 4))
			// A second user keeps conv_relu from fusing the relu case.
			n := g.Call(tt.target, append([]ops.Value{conv}, tt.extra...)...)
			g.SetOutput(ops.Tuple{n, conv})
			require.NoError(t, convert.NewXNNPACKQuantizer(staticConfig()).Annotate(g))
			if !tt.want {
				requireUnannotated(t, n)
				return
			}
			requireAnnotation(t, n, []in{{conv, shared(convert.NodeOutput(conv))}}, shared(convert.NodeOutput(conv)))
		})
	}
	t.Run("chain propagates from the previous shared op", func(t *testing.T) {
		g := fxgraph.New()
		x := g.Placeholder("x", f32(1, 1, 4, 4))
		w := g.GetAttr("weight", f32(1, 1, 1, 1))
		conv := g.Call(xConv2dT, x, w)
		mp := g.Call(maxPoolT, conv, ops.List{int64(2), int64(2)})
		fl := g.Call(flattenT, mp, int64(0), int64(-1))
		g.SetOutput(ops.Tuple{fl})
		require.NoError(t, convert.NewXNNPACKQuantizer(staticConfig()).Annotate(g))
		requireAnnotation(t, mp, []in{{conv, shared(convert.NodeOutput(conv))}}, shared(convert.NodeOutput(conv)))
		requireAnnotation(t, fl, []in{{mp, shared(convert.NodeOutput(mp))}}, shared(convert.NodeOutput(mp)))
	})
	t.Run("arg0 without output spec", func(t *testing.T) {
		g := fxgraph.New()
		x := g.Placeholder("x", f32(1, 1, 4, 4))
		fl := g.Call(flattenT, x, int64(0), int64(-1))
		g.SetOutput(ops.Tuple{fl})
		require.NoError(t, convert.NewXNNPACKQuantizer(staticConfig()).Annotate(g))
		requireUnannotated(t, fl)
	})
	t.Run("dynamic config has no output spec to propagate", func(t *testing.T) {
		o := convert.DefaultSymmetricConfigOptions()
		o.Dynamic = true
		g := fxgraph.New()
		x := g.Placeholder("x", f32(1, 2))
		w := g.GetAttr("weight", f32(2, 2))
		l := g.Call(linearT, x, w)
		v := g.Call(xViewT, l, ops.List{int64(2)})
		g.SetOutput(ops.Tuple{v})
		c := convert.SymmetricQuantizationConfig(o)
		require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
		requireAnnotation(t, l, []in{{x, c.InputActivation}, {w, c.Weight}}, nil)
		requireUnannotated(t, v)
	})
	t.Run("already annotated node is kept", func(t *testing.T) {
		g := fxgraph.New()
		x := g.Placeholder("x", f32(1, 1, 4, 4))
		w := g.GetAttr("weight", f32(1, 1, 1, 1))
		conv := g.Call(xConv2dT, x, w)
		fl := g.Call(flattenT, conv, int64(0), int64(-1))
		g.SetOutput(ops.Tuple{fl})
		mine := minmaxSpec()
		convert.AnnotateOutput(fl, mine)
		convert.MarkAnnotated(fl)
		convert.PropagateAnnotation(g) // conv not annotated yet: nothing to do
		require.NoError(t, convert.NewXNNPACKQuantizer(staticConfig()).Annotate(g))
		requireAnnotation(t, fl, nil, mine)
	})
}

// scalarConstGraph is add or mul (x, c) [-> relu] with c a get_attr of
// value v and type typ.
func scalarConstGraph(op ops.Overload, v *tensor.Tensor, typ ops.Type, withRelu bool) (g *fxgraph.Graph, x, c, bin, relu *fxgraph.Node) {
	g = fxgraph.New()
	g.SetAttr("const", v)
	x = g.Placeholder("x", f32(2))
	c = g.GetAttr("const", typ)
	bin = g.Call(op, x, c)
	bin.SetType(f32(2))
	out := bin
	if withRelu {
		relu = g.Call(xReluT, bin)
		relu.SetType(f32(2))
		out = relu
	}
	g.SetOutput(ops.Tuple{out})
	return
}

// TestXNNPACKScalarConstantSkip: add and mul (alone and with relu) are
// skipped when an input is a one-element get_attr with |v| > 3.4028235e15
// (histc's limit) or its type is not float32 (section 4). Values are
// chosen well away from the limit so float32 rounding of 3.4028235e15
// cannot matter.
func TestXNNPACKScalarConstantSkip(t *testing.T) {
	scalar := func(v float32) *tensor.Tensor { return tensor.MustFromData(tensor.Float32, []int{}, []float32{v}) }
	tests := []struct {
		name string
		val  *tensor.Tensor
		typ  ops.Type
		skip bool
	}{
		{"small scalar", scalar(2), f32(), false},
		{"just under the limit", scalar(3e15), f32(), false},
		{"large scalar", scalar(4e15), f32(), true},
		{"large negative scalar", scalar(-4e15), f32(), true},
		{"large one-element 1-d", tensor.MustFromData(tensor.Float32, []int{1}, []float32{1e16}), f32(1), true},
		{"large but two elements", tensor.MustFromData(tensor.Float32, []int{2}, []float32{1e16, 1}), f32(2), false},
		{"int64 constant", tensor.MustFromData(tensor.Int64, []int{}, []int64{2}), ops.Plain(tensor.Int64), true},
		{"float64 constant", tensor.MustFromData(tensor.Float64, []int{}, []float64{2}), ops.Plain(tensor.Float64), true},
		{"untyped constant", scalar(2), nil, true},
	}
	for _, op := range []ops.Overload{addT, mulT} {
		for _, tt := range tests {
			t.Run(op.String()+"/"+tt.name, func(t *testing.T) {
				cfg := staticConfig()
				g, x, c, bin, _ := scalarConstGraph(op, tt.val, tt.typ, false)
				require.NoError(t, convert.NewXNNPACKQuantizer(cfg).Annotate(g))
				if tt.skip {
					requireUnannotated(t, bin)
					return
				}
				requireAnnotation(t, bin, []in{{x, cfg.InputActivation}, {c, cfg.InputActivation}}, cfg.OutputActivation)
			})
			t.Run(op.String()+"_relu/"+tt.name, func(t *testing.T) {
				cfg := staticConfig()
				g, x, c, bin, relu := scalarConstGraph(op, tt.val, tt.typ, true)
				require.NoError(t, convert.NewXNNPACKQuantizer(cfg).Annotate(g))
				if tt.skip {
					requireUnannotated(t, bin)
					requireUnannotated(t, relu)
					return
				}
				requireAnnotation(t, bin, []in{{x, cfg.InputActivation}, {c, cfg.InputActivation}}, nil)
				requireAnnotation(t, relu, nil, cfg.OutputActivation)
			})
		}
	}
}

// TestConvertScalarsToAttrs: TransformForAnnotation turns every non-node
// positional argument of add.Tensor and mul.Tensor into a get_attr of a new
// float32 0-dim attribute _tensor_constant_<i> (float(v): ints and bools
// too), inserted right before the op; other ops and node arguments are
// left alone, and an existing _tensor_constant_0 is not reused.
func TestConvertScalarsToAttrs(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("_tensor_constant_0", tensor.MustZeros(tensor.Float32))
	x := g.Placeholder("x", f32(2))
	a := g.Call(addT, x, 2.5)
	a.SetType(f32(2))
	m := g.Call(mulT, int64(3), a)
	m.SetType(f32(2))
	s := g.Call(subT, m, 1.5)
	s.SetType(f32(2))
	b := g.Call(addT, s, true)
	b.SetType(f32(2))
	g.SetOutput(ops.Tuple{b})

	q := convert.NewXNNPACKQuantizer(staticConfig())
	require.NoError(t, q.TransformForAnnotation(g))

	want := "x | placeholder | x | () | {}\n" +
		"_tensor_constant_1 | get_attr | _tensor_constant_1 | () | {}\n" +
		"add_tensor | call_function | aten.add.Tensor | (%x, %_tensor_constant_1) | {}\n" +
		"_tensor_constant_2 | get_attr | _tensor_constant_2 | () | {}\n" +
		"mul_tensor | call_function | aten.mul.Tensor | (%_tensor_constant_2, %add_tensor) | {}\n" +
		"sub_tensor | call_function | aten.sub.Tensor | (%mul_tensor, 1.5) | {}\n" +
		"_tensor_constant_3 | get_attr | _tensor_constant_3 | () | {}\n" +
		"add_tensor_1 | call_function | aten.add.Tensor | (%sub_tensor, %_tensor_constant_3) | {}\n" +
		"output | output | output | ((%add_tensor_1,),) | {}\n"
	assert.Equal(t, want, fxgraph.FormatListing(g))

	for _, tt := range []struct {
		attr string
		want float32
	}{{"_tensor_constant_1", 2.5}, {"_tensor_constant_2", 3}, {"_tensor_constant_3", 1}} {
		t.Run(tt.attr, func(t *testing.T) {
			v, ok := g.Attr(tt.attr)
			require.True(t, ok)
			tn, ok := v.(*tensor.Tensor)
			require.True(t, ok, "attr is %T", v)
			assert.Equal(t, tensor.Float32, tn.DType())
			assert.Empty(t, tn.Shape(), "0-dim")
			f, err := tensor.Data[float32](tn)
			require.NoError(t, err)
			require.Len(t, f, 1)
			assert.Equal(t, math.Float32bits(tt.want), math.Float32bits(f[0]), "got %g, want %g", f[0], tt.want)
			n := node(t, g, tt.attr)
			assert.Equal(t, ops.Plain(tensor.Float32), n.Type())
		})
	}

	t.Run("annotated after transform", func(t *testing.T) {
		cfg := staticConfig()
		require.NoError(t, convert.NewXNNPACKQuantizer(cfg).Annotate(g))
		add := node(t, g, "add_tensor")
		requireAnnotation(t, add, []in{{x, cfg.InputActivation}, {node(t, g, "_tensor_constant_1"), cfg.InputActivation}}, cfg.OutputActivation)
	})
}

// TestConvertScalarsToAttrsBadArg: a string operand cannot become a
// tensor constant; Prepare reports the node and leaves the graph as it
// was.
func TestConvertScalarsToAttrsBadArg(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(2))
	a := g.Call(addT, x, "two")
	a.SetType(f32(2))
	g.SetOutput(ops.Tuple{a})
	before := fxgraph.Format(g)
	err := convert.Prepare(g, convert.NewXNNPACKQuantizer(staticConfig()))
	require.ErrorIs(t, err, convert.ErrAnnotation)
	assert.Contains(t, err.Error(), `"add_tensor"`)
	assert.Contains(t, err.Error(), "arg 1")
	assert.Equal(t, before, fxgraph.Format(g))
	assert.Empty(t, g.AttrNames())
}
