package typed_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/typed"
)

var linearT = ops.MustOverload("aten.linear.default")

// affineQuantizer annotates linear(x, w) with torchao affine observers:
// x with act, w with weight, the output with a per-tensor spec.
type affineQuantizer struct {
	act, weight observers.Granularity
	intZP       bool // integer (int32) zero points; float otherwise
}

func (affineQuantizer) TransformForAnnotation(*fxgraph.Graph) error { return nil }
func (affineQuantizer) Validate(*fxgraph.Graph) error               { return nil }

func (q affineQuantizer) spec(gr observers.Granularity, m observers.MappingType) *convert.QuantizationSpec {
	c := observers.AffineConfig{MappingType: m, TargetDType: tensor.Int8, Granularity: gr, ScaleDType: tensor.Float32}
	if q.intZP {
		c.ZeroPointDType = tensor.Int32
	}
	return &convert.QuantizationSpec{DType: observers.Int8, QuantMin: observers.Int(-128), QuantMax: observers.Int(127),
		Observer: convert.AffineQuantizedMinMaxObserverCtor(c)}
}

func (q affineQuantizer) Annotate(g *fxgraph.Graph) error {
	for _, n := range g.FindNodes(fxgraph.CallFunction, linearT) {
		a := &convert.QuantizationAnnotation{Annotated: true}
		a.SetInput(n.Arg(0).(*fxgraph.Node), q.spec(q.act, observers.Asymmetric))
		a.SetInput(n.Arg(1).(*fxgraph.Node), q.spec(q.weight, observers.Symmetric))
		a.OutputQSpec = q.spec(observers.PerTensor{}, observers.Asymmetric)
		convert.SetAnnotation(n, a)
	}
	return nil
}

// affineConverted quantizes linear(x [4, 6], w [5, 6]) with q and returns
// the converted graph, typed.
func affineConverted(t *testing.T, q affineQuantizer, packets bool) *fxgraph.Graph {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 5))
	w := make([]float32, 30)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	g := fxgraph.New()
	g.SetAttr("w", tensor.MustFromData(tensor.Float32, []int{5, 6}, w))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 4, 6))
	lin := g.Call(linearT, x, g.GetAttr("w", nil))
	g.SetOutput(ops.Tuple{lin})
	require.NoError(t, typed.InferTypes(g, nil))
	require.NoError(t, convert.Prepare(g, q))
	var batches [][]*tensor.Tensor
	for range 3 {
		v := make([]float32, 24)
		for i := range v {
			v[i] = float32(r.NormFloat64()*float64(1+i%6)) + 0.3
		}
		batches = append(batches, []*tensor.Tensor{tensor.MustFromData(tensor.Float32, []int{4, 6}, v)})
	}
	require.NoError(t, convert.Calibrate(g, batches, nil))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{PacketAffineOps: packets}))
	require.NoError(t, typed.InferTypes(g, nil))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true}))
	return g
}

// TestLiftAffine lifts torchao quantize_affine/dequantize_affine from a
// real convert run, in the .default and packet forms: per-tensor and
// per-axis block sizes with integer zero points become quantized element
// types (checked field by field against the graph's own qparam
// constants), per-group blocks and float zero points stay explicit with a
// note saying why; in every case the lifted graph verifies, computes the
// converted graph's output bit for bit (lowered), and Lower gives back a
// graph Equiv to the converted one.
func TestLiftAffine(t *testing.T) {
	cases := []struct {
		name      string
		q         affineQuantizer
		typed     int    // values that take a quantized type
		perAxis   string // node (by op) expected to be per-axis: "x" or "w"
		wantNotes []string
	}{
		{name: "per_tensor_act_per_axis_weight", q: affineQuantizer{act: observers.PerTensor{}, weight: observers.PerAxis{Axis: 0}, intZP: true}, typed: 3, perAxis: "w"},
		{name: "per_axis_act", q: affineQuantizer{act: observers.PerAxis{Axis: 1}, weight: observers.PerTensor{}, intZP: true}, typed: 3, perAxis: "x"},
		{name: "per_group_weight_stays", q: affineQuantizer{act: observers.PerTensor{}, weight: observers.PerGroup{GroupSize: 3}, intZP: true}, typed: 2,
			wantNotes: []string{"per-group or blocked"}},
		{name: "float_zero_points_stay", q: affineQuantizer{act: observers.PerTensor{}, weight: observers.PerTensor{}}, typed: 0,
			wantNotes: []string{"float zero points"}},
	}
	for _, tc := range cases {
		for _, packets := range []bool{false, true} {
			name := tc.name + "/default"
			if packets {
				name = tc.name + "/packet"
			}
			t.Run(name, func(t *testing.T) {
				conv := affineConverted(t, tc.q, packets)
				require.NotEmpty(t, g2affine(conv), "convert inserted affine ops")
				g, _ := conv.Clone()
				res, err := typed.Lift(g, nil)
				require.NoError(t, err)
				assert.Equal(t, tc.typed, res.Stats["values_typed"], "%v", res.Notes)
				for _, w := range tc.wantNotes {
					found := false
					for _, n := range res.Notes {
						found = found || strings.Contains(n, w)
					}
					assert.True(t, found, "a note says %q: %v", w, res.Notes)
				}
				if tc.wantNotes == nil {
					assert.Empty(t, res.Notes)
				}
				require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)), fxgraph.Format(g))
				checkAffineTypes(t, conv, g, tc.perAxis)

				x := seededInput(11, 4, 6)
				want, err := interp.Run(conv, []*tensor.Tensor{x}, interp.Options{})
				require.NoError(t, err)
				got, err := runTyped(t, g, []*tensor.Tensor{x}, interp.Options{})
				require.NoError(t, err)
				requireSameTensors(t, want, got)

				_, err = typed.Lower(g, nil)
				require.NoError(t, err)
				require.NoError(t, typed.Equiv(conv, g))
				require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true}))
			})
		}
	}
}

// g2affine returns the affine q/dq nodes of g (either form).
func g2affine(g *fxgraph.Graph) []*fxgraph.Node {
	var out []*fxgraph.Node
	for _, n := range g.Nodes() {
		if p, ok := ops.PacketOf(n.Target()); ok && n.Op() == fxgraph.CallFunction && p.NS == "torchao" &&
			(p.Name == "quantize_affine" || p.Name == "dequantize_affine") {
			out = append(out, n)
		}
	}
	return out
}

// checkAffineTypes compares each quantized type in the lifted graph with
// the qparams of the converted graph's dequantize_affine reading the
// same value: the scale and zero-point constants it names, its dtype and
// range, element by element.
func checkAffineTypes(t *testing.T, conv, lifted *fxgraph.Graph, perAxis string) {
	t.Helper()
	sawPerAxis := false
	for _, n := range lifted.Nodes() {
		tt, ok := n.TensorType()
		if !ok || !tt.IsQuantized() {
			continue
		}
		// The converted graph's dequantize of this value: for a kept
		// quantize or a constant, its user by name; for a retyped
		// producer, the dequantize after the producer's quantize.
		var dq *fxgraph.Node
		if src, ok := conv.NodeByName(n.Name()); ok {
			for _, u := range src.Users() {
				if p, _ := ops.PacketOf(u.Target()); p.Name == "dequantize_affine" {
					dq = u
				}
				if p, _ := ops.PacketOf(u.Target()); p.Name == "quantize_affine" {
					for _, uu := range u.Users() {
						dq = uu
					}
				}
			}
		}
		require.NotNil(t, dq, "dequantize of %q in the converted graph", n.Name())
		scale := attrFloats(t, conv, dq.Arg(2))
		zp := attrFloats(t, conv, dq.Arg(3))
		switch e := tt.Elem.(type) {
		case ops.UniformQuantized:
			require.Len(t, scale, 1)
			assert.Equal(t, scale[0], e.Scale, "%q scale", n.Name())
			assert.Equal(t, int64(zp[0]), e.ZeroPoint, "%q zero point", n.Name())
			assert.Equal(t, tensor.Int8, e.StorageType)
			assert.Equal(t, [2]int64{-128, 127}, [2]int64{e.StorageMin, e.StorageMax})
		case ops.UniformQuantizedPerAxis:
			sawPerAxis = true
			in := dq.Arg(0).(*fxgraph.Node)
			if perAxis == "w" {
				assert.Equal(t, fxgraph.GetAttr, n.Op(), "the per-axis value is the weight constant")
				assert.Equal(t, 0, e.Axis)
			} else {
				assert.Equal(t, 1, e.Axis, "x per axis 1: block [4, 1]")
			}
			it, _ := in.TensorType()
			require.Len(t, e.Scales, int(it.Shape[e.Axis]))
			assert.Equal(t, scale, e.Scales)
			for i := range zp {
				assert.Equal(t, int64(zp[i]), e.ZeroPoints[i], "%q zero point %d", n.Name(), i)
			}
		}
	}
	assert.Equal(t, perAxis != "", sawPerAxis, "per-axis type present")
}

func attrFloats(t *testing.T, g *fxgraph.Graph, v ops.Value) []float64 {
	t.Helper()
	n, ok := v.(*fxgraph.Node)
	require.True(t, ok, "qparam %v is a node", v)
	a, ok := g.Attr(n.TargetName())
	require.True(t, ok)
	f, err := a.(*tensor.Tensor).Contiguous().Float64s()
	require.NoError(t, err)
	return f
}

// seededInput is normal data of the given shape from a fixed seed.
func seededInput(seed uint64, shape ...int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 2))
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * 2)
	}
	return tensor.MustFromData(tensor.Float32, shape, v)
}

// TestLiftAffineDynamicStays: the int4 groupwise quantizer's per-token
// dynamic activation (qparams from choose_qparams_affine at run time) and
// per-group int4 weight have no quantized element type: Lift changes
// nothing, names each affine node it left with the reason, and the graph
// is byte-identical.
func TestLiftAffineDynamicStays(t *testing.T) {
	for _, packets := range []bool{false, true} {
		name := map[bool]string{false: "default", true: "packet"}[packets]
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(8, 8))
			w := make([]float32, 30)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			g := fxgraph.New()
			g.SetAttr("w", tensor.MustFromData(tensor.Float32, []int{5, 6}, w))
			x := g.Placeholder("x", ops.Plain(tensor.Float32, 4, 6))
			g.SetOutput(ops.Tuple{g.Call(linearT, x, g.GetAttr("w", nil))})
			require.NoError(t, typed.InferTypes(g, nil))
			require.NoError(t, convert.Prepare(g, convert.Int4GroupwiseQuantizer{GroupSize: 3}))
			require.NoError(t, convert.Calibrate(g, [][]*tensor.Tensor{{seededInput(1, 4, 6)}}, nil))
			require.NoError(t, convert.Convert(g, convert.ConvertOptions{PacketAffineOps: packets}))
			require.NoError(t, typed.InferTypes(g, nil))
			before := fxgraph.Format(g)
			res, err := typed.Lift(g, nil)
			require.NoError(t, err)
			assert.False(t, res.Changed)
			assert.Equal(t, before, fxgraph.Format(g))
			all := strings.Join(res.Notes, "\n")
			assert.Contains(t, all, "dynamic qparams")
			assert.Contains(t, all, "per-group or blocked")
			for _, n := range g2affine(g) {
				assert.Contains(t, all, `left "`+n.Name()+`"`, "every affine node is named")
			}
		})
	}
}
