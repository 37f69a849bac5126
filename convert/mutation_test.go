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

var (
	copyT = ops.MustOverload("aten.copy_.default")
	viewT = ops.MustOverload("aten.view.default")
	mulT  = ops.MustOverload("aten.mul.Tensor")
	addIT = ops.MustOverload("aten.add_.Tensor")
)

// registryWith returns a copy of the default registry with extra schemas
// (ops the default registry lacks, for graphs built in tests).
func registryWith(t *testing.T, schemas ...string) *ops.Registry {
	t.Helper()
	base := ops.Default()
	r := ops.NewRegistry()
	for _, o := range base.All() {
		d, _ := base.Op(o)
		cp := *d
		require.NoError(t, r.Register(&cp))
	}
	for _, s := range schemas {
		ns, sc, err := ops.ParseQualifiedSchema(s)
		require.NoError(t, err)
		if r.Known(ops.Overload{Packet: ops.Packet{NS: ns, Name: sc.Name}, Name: sc.Overload}) {
			continue // the default registry has it now
		}
		_, err = r.RegisterSchema(s, nil, nil)
		require.NoError(t, err)
	}
	return r
}

// TestMutatingOpSkip checks section 3.4's in-place rule (pytorch/ao PR
// #4466): the written first argument of a mutating op gets no observer
// when its producers include a get_attr of a registered buffer; every
// other annotated edge does. The graphs are op(dst, x) with both inputs
// annotated; dst is built by the case.
func TestMutatingOpSkip(t *testing.T) {
	reg := registryWith(t) // aten.add_.Tensor is a default row (ops/oprows_elem.go)
	tests := []struct {
		name    string
		op      ops.Overload
		dst     func(g *fxgraph.Graph, buf, x *fxgraph.Node) *fxgraph.Node
		buffers []string
		skip    bool // dst's edge is left unobserved
	}{
		{"copy_ into buffer", copyT, func(g *fxgraph.Graph, buf, _ *fxgraph.Node) *fxgraph.Node { return buf }, []string{"buf"}, true},
		{"add_ into buffer", addIT, func(g *fxgraph.Graph, buf, _ *fxgraph.Node) *fxgraph.Node { return buf }, []string{"buf"}, true},
		{"add_ into a view of the buffer", addIT, func(g *fxgraph.Graph, buf, _ *fxgraph.Node) *fxgraph.Node {
			v := g.Call(viewT, buf, ops.List{int64(2)})
			v.SetType(f32(2))
			return v
		}, []string{"buf"}, true},
		{"attribute that is not a buffer", copyT, func(g *fxgraph.Graph, buf, _ *fxgraph.Node) *fxgraph.Node { return buf }, []string{"other"}, false},
		{"no buffers known", copyT, func(g *fxgraph.Graph, buf, _ *fxgraph.Node) *fxgraph.Node { return buf }, nil, false},
		{"producers reach a placeholder", addIT, func(g *fxgraph.Graph, buf, x *fxgraph.Node) *fxgraph.Node {
			m := g.Call(mulT, buf, x)
			m.SetType(f32(2))
			return m
		}, []string{"buf"}, false},
		{"op that does not mutate", addT, func(g *fxgraph.Graph, buf, _ *fxgraph.Node) *fxgraph.Node { return buf }, []string{"buf"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fxgraph.New()
			g.SetAttr("buf", zeros2(t))
			x := g.Placeholder("x", f32(2))
			buf := g.GetAttr("buf", f32(2))
			dst := tt.dst(g, buf, x)
			op := g.Call(tt.op, dst, x)
			op.SetType(f32(2))
			g.SetOutput(ops.Tuple{op})
			q := funcQuantizer(func(c *fxgraph.Graph) error {
				// Prepare annotates a clone: look the nodes up by name.
				a := &convert.QuantizationAnnotation{NoImplicitSharing: true}
				a.SetInput(node(t, c, dst.Name()), minmaxSpec())
				a.SetInput(node(t, c, "x"), minmaxSpec())
				convert.SetAnnotation(node(t, c, op.Name()), a)
				return nil
			})
			require.NoError(t, convert.PrepareWithOptions(g, q, convert.PrepareOptions{Registry: reg, Buffers: tt.buffers}))
			op = node(t, g, op.Name())
			first, ok := op.Arg(0).(*fxgraph.Node)
			require.True(t, ok)
			if tt.skip {
				assert.Equal(t, dst.Name(), first.Name(), "%s", fxgraph.Format(g))
			} else {
				assert.Equal(t, fxgraph.CallModule, first.Op(), "%s", fxgraph.Format(g))
			}
			second := op.Arg(1).(*fxgraph.Node)
			assert.Equal(t, fxgraph.CallModule, second.Op(), "x is observed")
		})
	}
}

func zeros2(t *testing.T) *tensor.Tensor {
	t.Helper()
	return tensor.MustZeros(tensor.Float32, 2)
}
