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

// ddqGraph builds x -> q -> dq feeding two relu users and returns the
// graph, the dq and the users. kind selects the q/dq ops: "per_tensor",
// "affine_default", "affine_packet", or a dynamic form
// "dynamic:<choose op>" whose scale comes from choose_qparams.
func ddqGraph(t *testing.T, kind string) (*fxgraph.Graph, *fxgraph.Node, []*fxgraph.Node) {
	t.Helper()
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	relu := ops.MustOverload("aten.relu.default")
	var dq *fxgraph.Node
	i8, lo, hi := tensor.Int8, int64(-128), int64(127)
	switch kind {
	case "per_tensor":
		q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), x, 0.5, int64(0), lo, hi, i8)
		dq = g.Call(ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default"), q, 0.5, int64(0), lo, hi, i8)
	case "affine_default", "affine_packet":
		qt, dqt := ops.Target(ops.MustOverload("torchao.quantize_affine.default")), ops.Target(ops.MustOverload("torchao.dequantize_affine.default"))
		if kind == "affine_packet" {
			qt, dqt = ops.MustPacket("torchao.quantize_affine"), ops.MustPacket("torchao.dequantize_affine")
		}
		g.SetAttr("_scale0", tensor.F32([]int{1}, 0.5))
		g.SetAttr("_zero_point0", tensor.MustFromData(tensor.Int32, []int{1}, []int32{0}))
		s, z := g.GetAttr("_scale0", nil), g.GetAttr("_zero_point0", nil)
		block := ops.List{int64(1), int64(4)}
		q := g.Call(qt, x, block, s, z, i8, lo, hi)
		dq = g.CallKw(dqt, []ops.Value{q, block, s, z, i8, lo, hi}, []ops.Kwarg{{Name: "output_dtype", Value: tensor.Float32}})
	case "dynamic:choose_qparams.tensor", "dynamic:choose_qparams_symmetric.tensor":
		cq := g.Call(ops.MustOverload("quantized_decomposed."+kind[len("dynamic:"):]), x, lo, hi, 1e-5, i8)
		s := g.Call(ops.GetItem, cq, int64(0))
		z := g.Call(ops.GetItem, cq, int64(1))
		q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor"), x, s, z, lo, hi, i8)
		dq = g.Call(ops.MustOverload("quantized_decomposed.dequantize_per_tensor.tensor"), q, s, z, lo, hi, i8)
	case "dynamic:choose_qparams_affine":
		block := ops.List{int64(1), int64(4)}
		cq := g.Call(ops.MustOverload("torchao.choose_qparams_affine.default"), x, "ASYMMETRIC", block, i8, lo, hi, 1e-5, tensor.Float32, tensor.Int32)
		s := g.Call(ops.GetItem, cq, int64(0))
		z := g.Call(ops.GetItem, cq, int64(1))
		q := g.Call(ops.MustOverload("torchao.quantize_affine.default"), x, block, s, z, i8, lo, hi)
		dq = g.Call(ops.MustOverload("torchao.dequantize_affine.default"), q, block, s, z, i8, lo, hi)
	default:
		t.Fatalf("unknown kind %q", kind)
	}
	u1, u2 := g.Call(relu, dq), g.Call(relu, dq)
	g.SetOutput(ops.Tuple{u1, u2})
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	return g, dq, []*fxgraph.Node{u1, u2}
}

func annotate(user, in *fxgraph.Node) {
	convert.AnnotateInput(user, in, &convert.QuantizationSpec{})
}

func TestDuplicateDQ(t *testing.T) {
	tests := []struct {
		name      string
		kind      string
		annotated []bool // per user
		// wantShared: both users still read the original dequantize
		wantShared bool
		wantDups   int
	}{
		{name: "two annotated users", kind: "per_tensor", annotated: []bool{true, true}, wantDups: 2},
		{name: "unannotated user keeps the original", kind: "per_tensor", annotated: []bool{true, false}, wantDups: 1},
		{name: "no annotated user", kind: "per_tensor", annotated: []bool{false, false}, wantShared: true},
		{name: "affine default", kind: "affine_default", annotated: []bool{true, true}, wantDups: 2},
		{name: "affine packet", kind: "affine_packet", annotated: []bool{true, true}, wantDups: 2},
		{name: "dynamic choose_qparams", kind: "dynamic:choose_qparams.tensor", annotated: []bool{true, true}, wantShared: true},
		{name: "dynamic choose_qparams_symmetric", kind: "dynamic:choose_qparams_symmetric.tensor", annotated: []bool{true, true}, wantShared: true},
		{name: "dynamic choose_qparams_affine", kind: "dynamic:choose_qparams_affine", annotated: []bool{true, true}, wantShared: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, dq, users := ddqGraph(t, tt.kind)
			for i, u := range users {
				if tt.annotated[i] {
					annotate(u, dq)
				}
			}
			dq.Meta.StackTrace = "dq trace"
			before := fxgraph.Format(g)
			res, err := convert.DuplicateDQ(g)
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			assert.Equal(t, tt.wantDups, res.Stats["duplicated"])
			if tt.wantShared {
				assert.False(t, res.Changed)
				assert.Equal(t, before, fxgraph.Format(g), "nothing changed: byte-identical")
				for _, u := range users {
					assert.Equal(t, dq, u.Arg(0))
				}
				return
			}
			for i, u := range users {
				in := u.Arg(0).(*fxgraph.Node)
				assert.Equal(t, dq.Target(), in.Target())
				assert.Equal(t, 1, in.NumUsers(), "user %d", i)
				if tt.annotated[i] {
					assert.NotSame(t, dq, in, "an annotated user gets its own copy")
					assert.Equal(t, "dq trace", in.Meta.StackTrace, "the copy keeps the metadata")
				} else {
					assert.Same(t, dq, in, "an unannotated user keeps the original")
				}
			}
			assert.Equal(t, tt.wantDups == 2, dq.Erased(), "the original is erased once no user is left")
		})
	}
}
