package convert_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// recordingQuantizer logs each hook call as "<name>.<hook>" and can fail
// one of them.
type recordingQuantizer struct {
	name   string
	log    *[]string
	failAt string // hook name that returns an error
	inner  convert.Quantizer
}

func (r recordingQuantizer) hook(h string, g *fxgraph.Graph, f func(*fxgraph.Graph) error) error {
	*r.log = append(*r.log, r.name+"."+h)
	if r.failAt == h {
		return fmt.Errorf("%s refuses", r.name)
	}
	if r.inner != nil {
		return f(g)
	}
	return nil
}

func (r recordingQuantizer) TransformForAnnotation(g *fxgraph.Graph) error {
	return r.hook("transform", g, func(g *fxgraph.Graph) error { return r.inner.TransformForAnnotation(g) })
}

func (r recordingQuantizer) Annotate(g *fxgraph.Graph) error {
	return r.hook("annotate", g, func(g *fxgraph.Graph) error { return r.inner.Annotate(g) })
}

func (r recordingQuantizer) Validate(g *fxgraph.Graph) error {
	return r.hook("validate", g, func(g *fxgraph.Graph) error { return r.inner.Validate(g) })
}

// linearAddGraph is add(linear(x, w), y).
func linearAddGraph() *fxgraph.Graph {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(1, 2))
	y := g.Placeholder("y", f32(1, 2))
	w := g.GetAttr("weight", f32(2, 2))
	l := g.Call(linearT, x, w)
	l.SetType(f32(1, 2))
	a := g.Call(addT, l, y)
	a.SetType(f32(1, 2))
	g.SetOutput(ops.Tuple{a})
	return g
}

// TestComposableQuantizer: the quantizers run one after another (every
// transform, then every annotate, then every validate, each for every
// quantizer), the first annotation of a node wins, and an error names the
// quantizer's position and leaves the graph as it was.
func TestComposableQuantizer(t *testing.T) {
	t.Run("hook order", func(t *testing.T) {
		var log []string
		q := convert.ComposableQuantizer{
			recordingQuantizer{name: "a", log: &log},
			recordingQuantizer{name: "b", log: &log},
		}
		require.NoError(t, convert.Prepare(linearAddGraph(), q))
		assert.Equal(t, []string{"a.transform", "b.transform", "a.annotate", "b.annotate", "a.validate", "b.validate"}, log)
	})
	for _, hook := range []string{"transform", "annotate", "validate"} {
		t.Run("second fails in "+hook, func(t *testing.T) {
			var log []string
			q := convert.ComposableQuantizer{
				recordingQuantizer{name: "a", log: &log, inner: convert.NewXNNPACKQuantizer(staticConfig())},
				recordingQuantizer{name: "b", log: &log, failAt: hook},
			}
			g := linearAddGraph()
			before := fxgraph.Format(g)
			err := convert.Prepare(g, q)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "quantizer 1: b refuses")
			assert.Equal(t, before, fxgraph.Format(g))
			for n := range g.All() {
				assert.Nil(t, convert.Annotation(n), "%s annotated after a failed Prepare", n)
			}
		})
	}
	t.Run("first annotation wins", func(t *testing.T) {
		mk := func(qmin int64) *convert.QuantizationConfig {
			o := convert.DefaultSymmetricConfigOptions()
			o.WeightQMin = qmin
			return convert.SymmetricQuantizationConfig(o)
		}
		first, second := mk(-127), mk(-126)
		for _, tt := range []struct {
			name string
			q    convert.ComposableQuantizer
			want *convert.QuantizationConfig
		}{
			{"first then second", convert.ComposableQuantizer{convert.NewXNNPACKQuantizer(first), convert.NewXNNPACKQuantizer(second)}, first},
			{"second then first", convert.ComposableQuantizer{convert.NewXNNPACKQuantizer(second), convert.NewXNNPACKQuantizer(first)}, second},
		} {
			t.Run(tt.name, func(t *testing.T) {
				g := linearAddGraph()
				require.NoError(t, tt.q.Annotate(g))
				l, a := node(t, g, "linear_default"), node(t, g, "add_tensor")
				requireAnnotation(t, l, []in{{node(t, g, "x"), tt.want.InputActivation}, {node(t, g, "weight"), tt.want.Weight}}, tt.want.OutputActivation)
				requireAnnotation(t, a, []in{{l, tt.want.InputActivation}, {node(t, g, "y"), tt.want.InputActivation}}, tt.want.OutputActivation)
			})
		}
	})
	t.Run("int4 linear then XNNPACK add", func(t *testing.T) {
		c := staticConfig()
		g := linearAddGraph()
		q := convert.ComposableQuantizer{convert.Int4GroupwiseQuantizer{GroupSize: 2}, convert.NewXNNPACKQuantizer(c)}
		require.NoError(t, q.Annotate(g))
		l := node(t, g, "linear_default")
		a := convert.Annotation(l)
		require.NotNil(t, a)
		require.Len(t, a.InputQSpecMap, 2)
		spec := a.InputQSpecMap[0].Spec.(*convert.QuantizationSpec)
		assert.True(t, spec.IsDynamic, "int4 quantizer's dynamic activation spec")
		assert.Nil(t, a.OutputQSpec, "int4 leaves the linear's output float")
		// The add is claimed by the XNNPACK quantizer.
		requireAnnotation(t, node(t, g, "add_tensor"), []in{{l, c.InputActivation}, {node(t, g, "y"), c.InputActivation}}, c.OutputActivation)
	})
}

// observerEdges lists each call_module observer node of a prepared graph
// as "<arg> -> <observer node> -> <users>" with the observer's attribute
// instance index (first-seen order), so sharing is visible.
func observerEdges(g *fxgraph.Graph) []string {
	var out []string
	inst := map[any]int{}
	for n := range g.All() {
		if n.Op() != fxgraph.CallModule {
			continue
		}
		v, _ := g.Attr(n.TargetName())
		if _, ok := inst[v]; !ok {
			inst[v] = len(inst)
		}
		users := ""
		for i, u := range n.Users() {
			if i > 0 {
				users += ","
			}
			users += u.Name()
		}
		out = append(out, fmt.Sprintf("%s -> obs%d %s -> %s", n.Arg(0).(*fxgraph.Node).Name(), inst[v], v.(observers.Observer).Class(), users))
	}
	return out
}

// TestXNNPACKPreparedObservers checks where Prepare puts observers for a
// few section 4 patterns. Expectations by hand from the annotations
// (section 4) and the insertion rules of sections 3.3 and 3.4: one
// observer per input edge and output with a spec, shared specs reuse one
// instance, the bias (spec None) and an output without spec get none.
func TestXNNPACKPreparedObservers(t *testing.T) {
	tests := []struct {
		name  string
		build func() *fxgraph.Graph
		want  []string
	}{
		{
			name: "add_relu",
			build: func() *fxgraph.Graph {
				g, _, _, _, _ := binaryGraph(addT, true, false)
				return g
			},
			want: []string{
				"x -> obs0 HistogramObserver -> add_tensor",
				"y -> obs1 HistogramObserver -> add_tensor",
				"relu_default -> obs2 HistogramObserver -> output",
			},
		},
		{
			name: "conv_relu",
			build: func() *fxgraph.Graph {
				g, _, _, _, _, _ := weightedGraph(xConv2dT, false)
				return g
			},
			want: []string{
				"x -> obs0 HistogramObserver -> conv2d_default",
				"weight -> obs1 MinMaxObserver -> conv2d_default",
				"relu_default -> obs2 HistogramObserver -> output",
			},
		},
		{
			name: "conv then adaptive_avg_pool2d shares the conv output observer",
			build: func() *fxgraph.Graph {
				g := fxgraph.New()
				x := g.Placeholder("x", f32(1, 1, 4, 4))
				g.SetAttr("weight", tensor.MustZeros(tensor.Float32, 1, 1, 1, 1))
				w := g.GetAttr("weight", f32(1, 1, 1, 1))
				conv := g.Call(xConv2dT, x, w)
				conv.SetType(f32(1, 1, 4, 4))
				pool := g.Call(aapT, conv, ops.List{int64(1), int64(1)})
				pool.SetType(f32(1, 1, 1, 1))
				g.SetOutput(ops.Tuple{pool})
				return g
			},
			want: []string{
				"x -> obs0 HistogramObserver -> conv2d_default",
				"weight -> obs1 MinMaxObserver -> conv2d_default",
				"conv2d_default -> obs2 HistogramObserver -> adaptive_avg_pool2d_default",
				"adaptive_avg_pool2d_default -> obs2 HistogramObserver -> output",
			},
		},
		{
			name: "linear then view propagates",
			build: func() *fxgraph.Graph {
				g := fxgraph.New()
				x := g.Placeholder("x", f32(1, 2))
				g.SetAttr("weight", tensor.MustZeros(tensor.Float32, 2, 2))
				w := g.GetAttr("weight", f32(2, 2))
				l := g.Call(linearT, x, w)
				l.SetType(f32(1, 2))
				v := g.Call(xViewT, l, ops.List{int64(2)})
				v.SetType(f32(2))
				g.SetOutput(ops.Tuple{v})
				return g
			},
			want: []string{
				"x -> obs0 HistogramObserver -> linear_default",
				"weight -> obs1 MinMaxObserver -> linear_default",
				"linear_default -> obs2 HistogramObserver -> view_default",
				"view_default -> obs2 HistogramObserver -> output",
			},
		},
		{
			name: "cat of three",
			build: func() *fxgraph.Graph {
				g := fxgraph.New()
				a := g.Placeholder("a", f32(2))
				b := g.Placeholder("b", f32(2))
				c := g.Placeholder("c", f32(2))
				n := g.Call(catT, ops.List{a, b, c})
				n.SetType(f32(6))
				fromTorchCat(n)
				g.SetOutput(ops.Tuple{n})
				return g
			},
			want: []string{
				"a -> obs0 HistogramObserver -> cat_default",
				"b -> obs0 HistogramObserver -> cat_default",
				"c -> obs0 HistogramObserver -> cat_default",
				"cat_default -> obs0 HistogramObserver -> output",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.build()
			require.NoError(t, convert.Prepare(g, convert.NewXNNPACKQuantizer(staticConfig())))
			assert.Equal(t, tt.want, observerEdges(g), "%s", fxgraph.FormatListing(g))
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
		})
	}
}

// TestPrepareBadAnnotations: annotations that name erased nodes, nodes of
// another graph, nodes that are not arguments, or shared and derived
// specs with nothing to share, fail with an error that names the
// annotated node and wraps the class sentinel; the graph passed to
// Prepare is left unchanged.
func TestPrepareBadAnnotations(t *testing.T) {
	erased := func(g *fxgraph.Graph) *fxgraph.Node {
		z := g.Call(xReluT, node(t, g, "x"))
		require.NoError(t, g.Erase(z))
		require.True(t, z.Erased())
		return z
	}
	tests := []struct {
		name     string
		annotate func(g *fxgraph.Graph) error
		want     error
		mention  []string
	}{
		{
			name: "input is an erased node",
			annotate: func(g *fxgraph.Graph) error {
				convert.AnnotateInput(node(t, g, "add_tensor"), erased(g), minmaxSpec())
				return nil
			},
			want: convert.ErrAnnotation, mention: []string{`"add_tensor"`, `"relu_default"`, "not a node of the graph"},
		},
		{
			name: "input is a node of another graph",
			annotate: func(g *fxgraph.Graph) error {
				other := fxgraph.New().Placeholder("z", f32(2))
				convert.AnnotateInput(node(t, g, "add_tensor"), other, minmaxSpec())
				return nil
			},
			want: convert.ErrAnnotation, mention: []string{`"add_tensor"`, `"z"`},
		},
		{
			name: "input is a live node that is not an argument",
			annotate: func(g *fxgraph.Graph) error {
				a := node(t, g, "add_tensor")
				convert.AnnotateInput(a, a, minmaxSpec())
				return nil
			},
			want: convert.ErrAnnotation, mention: []string{`"add_tensor"`, "not a positional argument"},
		},
		{
			name: "shared spec points at an erased node",
			annotate: func(g *fxgraph.Graph) error {
				convert.AnnotateOutput(node(t, g, "add_tensor"), &convert.SharedQuantizationSpec{EdgeOrNode: convert.NodeOutput(erased(g))})
				return nil
			},
			want: convert.ErrSharedSpec, mention: []string{`"add_tensor"`, "not a node of the graph"},
		},
		{
			name: "shared spec points at another graph's edge",
			annotate: func(g *fxgraph.Graph) error {
				o := fxgraph.New()
				p := o.Placeholder("p", f32(2))
				r := o.Call(xReluT, p)
				convert.AnnotateOutput(node(t, g, "add_tensor"), &convert.SharedQuantizationSpec{EdgeOrNode: convert.Edge(p, r)})
				return nil
			},
			want: convert.ErrSharedSpec, mention: []string{`"add_tensor"`, "not a node of the graph"},
		},
		{
			name: "shared input spec on an edge with no spec",
			annotate: func(g *fxgraph.Graph) error {
				a, x, y := node(t, g, "add_tensor"), node(t, g, "x"), node(t, g, "y")
				convert.AnnotateInput(a, y, &convert.SharedQuantizationSpec{EdgeOrNode: convert.Edge(x, a)})
				return nil
			},
			want: convert.ErrSharedSpec, mention: []string{`"add_tensor"`, "(%x, %add_tensor) has no quantization spec"},
		},
		{
			name: "shared output spec on a node output with no spec",
			annotate: func(g *fxgraph.Graph) error {
				convert.AnnotateOutput(node(t, g, "add_tensor"), &convert.SharedQuantizationSpec{EdgeOrNode: convert.NodeOutput(node(t, g, "x"))})
				return nil
			},
			want: convert.ErrSharedSpec, mention: []string{`"add_tensor"`, "%x has no quantization spec"},
		},
		{
			name: "shared specs that point at each other",
			annotate: func(g *fxgraph.Graph) error {
				a, x, y := node(t, g, "add_tensor"), node(t, g, "x"), node(t, g, "y")
				convert.AnnotateInput(a, x, &convert.SharedQuantizationSpec{EdgeOrNode: convert.Edge(y, a)})
				convert.AnnotateInput(a, y, &convert.SharedQuantizationSpec{EdgeOrNode: convert.Edge(x, a)})
				return nil
			},
			want: convert.ErrSharedSpec, mention: []string{`"add_tensor"`},
		},
		{
			name: "derived spec from an edge with no spec",
			annotate: func(g *fxgraph.Graph) error {
				a, x := node(t, g, "add_tensor"), node(t, g, "x")
				convert.AnnotateOutput(a, &convert.DerivedQuantizationSpec{
					DerivedFrom: []convert.EdgeOrNode{convert.Edge(x, a)}, DType: observers.Int32,
					QScheme: observers.PerTensorSymmetric,
				})
				return nil
			},
			want: convert.ErrSharedSpec, mention: []string{`"add_tensor"`, "(%x, %add_tensor)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := addGraph()
			before := fxgraph.Format(g)
			err := convert.Prepare(g, funcQuantizer(tt.annotate))
			require.ErrorIs(t, err, tt.want)
			for _, m := range tt.mention {
				assert.Contains(t, err.Error(), m)
			}
			assert.Equal(t, before, fxgraph.Format(g))
			assert.Empty(t, g.AttrNames(), "no observer attribute left behind")
		})
	}
}

// TestPrepareRejectsAnnotationsOnTheCallersGraph: Prepare hands the
// quantizer a clone, so a quantizer that annotates nodes it captured from
// the caller's graph would quantize nothing; Prepare reports the node and
// restores the caller's annotations.
func TestPrepareRejectsAnnotationsOnTheCallersGraph(t *testing.T) {
	t.Run("new annotation", func(t *testing.T) {
		g := addGraph()
		a := node(t, g, "add_tensor")
		before := fxgraph.Format(g)
		err := convert.Prepare(g, funcQuantizer(func(*fxgraph.Graph) error {
			convert.AnnotateOutput(a, minmaxSpec())
			return nil
		}))
		require.ErrorIs(t, err, convert.ErrAnnotation)
		assert.Contains(t, err.Error(), `"add_tensor"`)
		assert.Equal(t, before, fxgraph.Format(g))
		assert.Nil(t, convert.Annotation(a))
	})
	t.Run("edited annotation", func(t *testing.T) {
		g := addGraph()
		a, x := node(t, g, "add_tensor"), node(t, g, "x")
		s := minmaxSpec()
		convert.AnnotateInput(a, x, s)
		err := convert.Prepare(g, funcQuantizer(func(*fxgraph.Graph) error {
			convert.AnnotateInput(a, node(t, g, "y"), s)
			return nil
		}))
		require.ErrorIs(t, err, convert.ErrAnnotation)
		assert.Contains(t, err.Error(), `"add_tensor"`)
		ann := convert.Annotation(a)
		require.NotNil(t, ann)
		require.Len(t, ann.InputQSpecMap, 1, "the caller's annotation is restored")
		assert.Same(t, x, ann.InputQSpecMap[0].Input)
	})
	t.Run("pre-existing annotations on the caller's graph are used", func(t *testing.T) {
		g := addGraph()
		convert.AnnotateOutput(node(t, g, "add_tensor"), minmaxSpec())
		require.NoError(t, convert.Prepare(g, funcQuantizer(func(*fxgraph.Graph) error { return nil })))
		assert.Equal(t, []string{"add_tensor -> obs0 MinMaxObserver -> output"}, observerEdges(g))
	})
	t.Run("annotation error is not hidden", func(t *testing.T) {
		g := addGraph()
		boom := errors.New("boom")
		err := convert.Prepare(g, funcQuantizer(func(*fxgraph.Graph) error { return boom }))
		require.ErrorIs(t, err, boom)
	})
}
