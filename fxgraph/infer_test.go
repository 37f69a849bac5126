package fxgraph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

func TestInferMissingTypes(t *testing.T) {
	g := New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 2, 3))
	// quantize_per_tensor returns its dtype argument's type with x's shape.
	q := g.Call(ops.MustOverload("quantized_decomposed.quantize_per_tensor.default"), x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	// A packet resolves like an eager call: aten.add with a tensor and a
	// Python int picks add.Tensor's rule or add.Scalar's, both i8 here.
	d := g.Call(ops.MustPacket("quantized_decomposed.dequantize_per_tensor"), q, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	r := g.Call(ops.MustOverload("aten.reshape.default"), d, ops.List{int64(3), int64(2)})
	keep := g.Call(ops.MustOverload("aten.relu.default"), r)
	keep.SetType(ops.Plain(tensor.Float64, 9)) // an existing type is never touched
	g.SetOutput(ops.Tuple{keep})

	filled, left := InferMissingTypes(g, nil)
	assert.Equal(t, 3, filled)
	assert.Equal(t, 0, left)
	assert.Equal(t, "i8[2, 3]", q.Type().String())
	assert.Equal(t, "f32[2, 3]", d.Type().String())
	assert.Equal(t, "f32[3, 2]", r.Type().String())
	assert.Equal(t, "f64[9]", keep.Type().String())
}

func TestInferTypeErrors(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	n := g.Call(ops.MustOverload("aten.relu.default"), x)
	_, err := InferType(n, nil)
	require.ErrorIs(t, err, ErrNoTypeRule)
	assert.Contains(t, err.Error(), "%x has no type")

	bad := g.Call(ops.MustOverload("aten.linear.default"), g.Placeholder("a", ops.Plain(tensor.Float32, 2, 3)), g.Placeholder("w", ops.Plain(tensor.Float32, 4, 5)))
	_, err = InferType(bad, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "linear")

	gi := g.Call(ops.GetItem, x, int64(0))
	_, err = InferType(gi, nil)
	require.ErrorIs(t, err, ErrNoTypeRule)
}

// TestInferTypeWithoutRule: an op without a result-type rule gets the type
// of the argument its schema says it writes and returns (in-place and out=
// forms); any other such op has no type to infer.
func TestInferTypeWithoutRule(t *testing.T) {
	g := New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 2, 3))
	o := g.Placeholder("o", ops.Plain(tensor.Float64, 6))
	hs := g.Call(ops.MustOverload("aten.hardswish_.default"), x)
	neg := g.CallKw(ops.MustOverload("aten.neg.out"), []ops.Value{x}, []Kwarg{{Name: "out", Value: o}})
	hsig := g.Call(ops.MustOverload("aten.sinh.default"), x)
	got, err := InferType(hs, nil)
	require.NoError(t, err)
	assert.Equal(t, "f32[2, 3]", got.String())
	got, err = InferType(neg, nil)
	require.NoError(t, err)
	assert.Equal(t, "f64[6]", got.String(), "an out= form has its out argument's type")
	_, err = InferType(hsig, nil)
	require.ErrorIs(t, err, ErrNoTypeRule)
	assert.Contains(t, err.Error(), "aten.sinh.default")
}
