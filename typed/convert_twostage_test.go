package typed_test

import (
	"math"
	"math/rand/v2"
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

// normQuantizer is the test's quantizer: int8 per-tensor affine specs on
// the chain x → reshape → instance_norm → reshape [→ mul → add]. The
// top reshape's input gets spec A (MinMax), the instance_norm's input
// shares it (a reshape keeps its input's qparams, as XNNPACK's
// quantizer shares them), and the chain's last value gets spec B
// (moving-average MinMax: a different observer, and a different range,
// so the input and output scales differ). Intermediate values stay float.
type normQuantizer struct {
	last string
	// affine uses torchao's AffineQuantizedMinMaxObserver (per tensor,
	// int32 zero points) for both specs, so convert inserts
	// quantize_affine/dequantize_affine.
	affine bool
}

func (normQuantizer) TransformForAnnotation(*fxgraph.Graph) error { return nil }
func (normQuantizer) Validate(*fxgraph.Graph) error               { return nil }

func (q normQuantizer) Annotate(g *fxgraph.Graph) error {
	in := g.FindNodes(fxgraph.CallFunction, instNorm)
	if len(in) != 1 {
		return nil
	}
	top := in[0].Arg(0).(*fxgraph.Node)
	x := top.Arg(0).(*fxgraph.Node)
	last, ok := g.NodeByName(q.last)
	if !ok {
		return nil
	}
	specA := &convert.QuantizationSpec{DType: observers.Int8, QScheme: observers.PerTensorAffine,
		QuantMin: observers.Int(-128), QuantMax: observers.Int(127), Observer: convert.MinMaxObserverCtor(observers.Config{})}
	specB := &convert.QuantizationSpec{DType: observers.Int8, QScheme: observers.PerTensorAffine,
		QuantMin: observers.Int(-128), QuantMax: observers.Int(127), Observer: convert.MovingAverageMinMaxObserverCtor(observers.Config{})}
	if q.affine {
		for i, m := range []observers.MappingType{observers.Asymmetric, observers.Symmetric} {
			c := observers.AffineConfig{MappingType: m, TargetDType: tensor.Int8, Granularity: observers.PerTensor{},
				ScaleDType: tensor.Float32, ZeroPointDType: tensor.Int32}
			spec := &convert.QuantizationSpec{DType: observers.Int8, QuantMin: observers.Int(-128), QuantMax: observers.Int(127),
				Observer: convert.AffineQuantizedMinMaxObserverCtor(c)}
			if i == 0 {
				specA = spec
			} else {
				specB = spec
			}
		}
	}
	convert.AnnotateInput(top, x, specA)
	if q.affine {
		// An affine observer's block size follows the first shape it
		// sees, so the two reshape edges ([2, 12, 5, 7] and [2, 3, 140])
		// get observers of their own: same config, same data, same
		// qparams.
		a := *specA
		convert.AnnotateInput(in[0], top, &a)
	} else {
		convert.AnnotateInput(in[0], top, &convert.SharedQuantizationSpec{EdgeOrNode: convert.Edge(x, top)})
	}
	convert.AnnotateOutput(last, specB)
	convert.MarkAnnotated(top, in[0], last)
	return nil
}

// floatNormModel builds the float model with the Go API: x [2, 12, 5, 7]
// → reshape [2, 3, -1] → instance_norm(s, b) → reshape back, and in the
// trailing form → mul(g_c [12, 1, 1]) → add(h_c [12, 1, 1]) with
// instance_norm's own affine left at None. It returns the graph and the
// name of its last compute node.
func floatNormModel(t *testing.T, trailing bool) (*fxgraph.Graph, string) {
	t.Helper()
	g := fxgraph.New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 2, 12, 5, 7))
	var w, b ops.Value
	if !trailing {
		g.SetAttr("in_weight", tensor.F32([]int{3}, 0.5, 1.5, -2))
		g.SetAttr("in_bias", tensor.F32([]int{3}, 0.1, -0.2, 0.3))
		w, b = g.GetAttr("in_weight", nil), g.GetAttr("in_bias", nil)
	}
	top := g.Call(reshape, x, ops.List{int64(2), int64(3), int64(-1)})
	in := g.Call(instNorm, top, w, b, nil, nil, true, 0.1, 1e-5, false)
	last := g.Call(reshape, in, ops.List{int64(2), int64(12), int64(5), int64(7)})
	if trailing {
		g.SetAttr("gc", tensor.F32([]int{12, 1, 1}, 0.5, 1, -1, 2, 0.25, 3, -0.5, 1.5, 0.75, -2, 1.25, 0.1))
		g.SetAttr("hc", tensor.F32([]int{12, 1, 1}, 0.1, 0, -0.1, 0.2, 0.3, -0.3, 0.4, -0.4, 0.5, -0.5, 0.05, 1))
		last = g.Call(mulT, last, g.GetAttr("gc", nil))
		last = g.Call(addT, last, g.GetAttr("hc", nil))
	}
	g.SetOutput(ops.Tuple{last})
	require.NoError(t, typed.InferTypes(g, nil))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true}))
	return g, last.Name()
}

// seededBatches returns n calibration batches for x [2, 12, 5, 7] from a
// fixed seed: normal data with a per-channel offset and spread, so the
// groups have different statistics.
func seededBatches(n int, seed uint64) [][]*tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 1))
	var out [][]*tensor.Tensor
	for range n {
		v := make([]float32, 2*12*5*7)
		for i := range v {
			c := (i / 35) % 12
			v[i] = float32(r.NormFloat64()*(0.3+0.1*float64(c%4)) + 0.2*float64(c%3-1))
		}
		out = append(out, []*tensor.Tensor{tensor.MustFromData(tensor.Float32, []int{2, 12, 5, 7}, v)})
	}
	return out
}

// TestTwoStageFromConvert quantizes a Go-built float model with the real
// Prepare, Calibrate and Convert, then lifts the converted graph and
// canonicalises it in a verifying pipeline, for both forms of the fold.
// The result verifies, its return type equals the converted graph's
// exactly, and the folded graph (run lowered) gives the converted graph's
// output within 1 LSB of the output type on fresh seeded data.
func TestTwoStageFromConvert(t *testing.T) {
	for _, tc := range []struct {
		name             string
		trailing, affine bool
	}{
		{"reshape_in_reshape", false, false},
		{"trailing_affine", true, false},
		{"reshape_in_reshape_torchao_affine_ops", false, true},
		{"trailing_affine_torchao_affine_ops", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, last := floatNormModel(t, tc.trailing)
			require.NoError(t, convert.Prepare(g, normQuantizer{last: last, affine: tc.affine}))
			require.NoError(t, convert.Calibrate(g, seededBatches(4, 7), nil))
			require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
			require.NoError(t, typed.InferTypes(g, nil))
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true}))
			conv, _ := g.Clone()
			sig := returnType(t, g)

			// The scales the observers chose: three quantize nodes (A for
			// both reshape edges) and B at the end, with A's scale ≠ B's.
			scales := map[float64]bool{}
			var outScale float64
			qs := g.FindNodes(fxgraph.CallFunction, qpt)
			if tc.affine {
				qs = g.FindNodes(fxgraph.CallFunction, ops.MustOverload("torchao.quantize_affine.default"))
			}
			require.Len(t, qs, 3, fxgraph.Format(g))
			for _, n := range qs {
				e, err := typed.ElementOf(n, nil)
				require.NoError(t, err)
				outScale = e.(ops.UniformQuantized).Scale
				scales[outScale] = true
			}
			require.Len(t, scales, 2, fxgraph.Format(g))

			runs := runLiftCanonicalize(t, g)
			assert.Empty(t, runs[0].Result.Notes)
			require.Equal(t, 1, runs[1].Result.Stats["groupnorm_fold"], runs[1].Result.Notes)

			gn := groupNormNode(t, g)
			assert.Empty(t, g.FindNodes(fxgraph.CallFunction, instNorm))
			assert.True(t, ops.TypesEqual(sig, returnType(t, g)), "return type: %s", ops.TypeDiff(sig, returnType(t, g)))
			gt := gn.Type().(ops.TensorType)
			q, ok := gt.Elem.(ops.UniformQuantized)
			require.True(t, ok, "the group_norm is typed: %s", gt)
			assert.Equal(t, math.Float64bits(outScale), math.Float64bits(q.Scale), "the group_norm carries the output's scale")
			in := gn.Arg(0).(*fxgraph.Node)
			it := in.Type().(ops.TensorType)
			assert.NotEqual(t, math.Float64bits(q.Scale), math.Float64bits(it.Elem.(ops.UniformQuantized).Scale), "input and output scales differ")

			for i, batch := range seededBatches(3, 99) {
				want, err := interp.Run(conv, batch, interp.Options{})
				require.NoError(t, err)
				wv, err := tensor.Data[float32](want[0].(*tensor.Tensor).Contiguous())
				require.NoError(t, err)
				got := runOne(t, g, batch[0])
				require.Len(t, got, len(wv))
				for j := range wv {
					require.LessOrEqual(t, math.Abs(float64(got[j]-wv[j])), float64(float32(q.Scale))*(1+1e-6),
						"batch %d element %d: %g vs %g", i, j, got[j], wv[j])
				}
			}
		})
	}
}
