package ops

import (
	"errors"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustQ(t testing.TB, st tensor.DType, lo, hi int64, ex tensor.DType, s float64, zp int64) UniformQuantized {
	q, err := NewUniformQuantized(st, lo, hi, ex, s, zp)
	require.NoError(t, err)
	return q
}

func mustQA(t testing.TB, st tensor.DType, lo, hi int64, ex tensor.DType, axis int, s []float64, zp []int64) UniformQuantizedPerAxis {
	q, err := NewUniformQuantizedPerAxis(st, lo, hi, ex, axis, s, zp)
	require.NoError(t, err)
	return q
}

func TestParseTypeRoundTrip(t *testing.T) {
	tests := []struct {
		text string
		want Type
	}{
		{"f32[4, 32]", Plain(tensor.Float32, 4, 32)},
		{"f32[]", Plain(tensor.Float32)},
		{"i8[64, 32]", Plain(tensor.Int8, 64, 32)},
		{"b8[3]", Plain(tensor.Bool, 3)},
		{"bf16[0]", Plain(tensor.BFloat16, 0)},
		{"?[2]", TensorType{Shape: []int64{2}}},
		{"f32[s0, 8]", TensorType{Shape: []int64{DynamicDim, 8}, Elem: Scalar{tensor.Float32}, Syms: []string{"s0", ""}}},
		{"f32[?, 8]", TensorType{Shape: []int64{DynamicDim, 8}, Elem: Scalar{tensor.Float32}}},
		{"(f32[1], i32[1])", TupleType{Elems: []Type{Plain(tensor.Float32, 1), Plain(tensor.Int32, 1)}}},
		{"(f32[1],)", TupleType{Elems: []Type{Plain(tensor.Float32, 1)}}},
		{"()", TupleType{}},
		{"(?, i64[2])", TupleType{Elems: []Type{nil, Plain(tensor.Int64, 2)}}},
		{"((f32[1], f32[2]), int)", TupleType{Elems: []Type{TupleType{Elems: []Type{Plain(tensor.Float32, 1), Plain(tensor.Float32, 2)}}, PyType{"int"}}}},
		{"SymInt", PyType{"SymInt"}},
		{"None", PyType{"None"}},
		{"!quant.uniform<i8:f32, 0.02:-3>[1, 16]", TensorType{Shape: []int64{1, 16}, Elem: mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.02, -3)}},
		{"!quant.uniform<i8<-127:127>:f32, 0.5>[2]", TensorType{Shape: []int64{2}, Elem: mustQ(t, tensor.Int8, -127, 127, tensor.Float32, 0.5, 0)}},
		{"!quant.uniform<u8:f32, 1e-05:128>[]", TensorType{Shape: []int64{}, Elem: mustQ(t, tensor.UInt8, 0, 255, tensor.Float32, 1e-05, 128)}},
		{"!quant.uniform<i4:bf16, 1.1920928955078125e-07>[8]", TensorType{Shape: []int64{8}, Elem: mustQ(t, tensor.Int4, -8, 7, tensor.BFloat16, 1.1920928955078125e-07, 0)}},
		{"!quant.uniform<i8:f32:1, {0.1,0.2:3}>[4, 2]", TensorType{Shape: []int64{4, 2}, Elem: mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 1, []float64{0.1, 0.2}, []int64{0, 3})}},
		{"!quant.uniform<i8<-127:127>:f16:0, {0.25}>[1, ?]", TensorType{Shape: []int64{1, DynamicDim}, Elem: mustQA(t, tensor.Int8, -127, 127, tensor.Float16, 0, []float64{0.25}, []int64{0})}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := ParseType(tt.text)
			require.NoError(t, err)
			assert.True(t, TypesEqual(tt.want, got), "want %v, got %v", tt.want, got)
			assert.Equal(t, tt.text, tt.want.String(), "the text is what the type prints")
			again, err := ParseType(got.String())
			require.NoError(t, err)
			assert.True(t, TypesEqual(got, again))
		})
	}
}

func TestParseElement(t *testing.T) {
	e, err := ParseElement("!quant.uniform<i8:f32, 0.02:-3>")
	require.NoError(t, err)
	assert.True(t, e.Equal(mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.02, -3)))
	e, err = ParseElement("u4")
	require.NoError(t, err)
	assert.Equal(t, Scalar{tensor.UInt4}, e)
	for _, bad := range []string{"?", "", "float32", "!quant.uniform<i8:f32, 0.02", "f32[1]"} {
		_, err := ParseElement(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestParseTypeErrors(t *testing.T) {
	tests := []struct {
		name, text string
		cause      error // a wrapped constructor error, when the text is well-formed but invalid
	}{
		{"empty", "", nil},
		{"bare question mark", "?", nil},
		{"unknown dtype", "q9[1]", nil},
		{"unclosed shape", "f32[1, 2", nil},
		{"negative dim", "f32[-1]", nil},
		{"junk after type", "f32[1] x", nil},
		{"unclosed tuple", "(f32[1], i8[2]", nil},
		{"zero scale", "!quant.uniform<i8:f32, 0>[1]", nil},
		{"nan scale", "!quant.uniform<i8:f32, NaN>[1]", nil},
		{"zero point out of range", "!quant.uniform<i8:f32, 0.5:200>[1]", nil},
		{"float storage", "!quant.uniform<f32:f32, 0.5>[1]", nil},
		{"int expressed", "!quant.uniform<i8:i32, 0.5>[1]", nil},
		{"range outside storage", "!quant.uniform<i8<-200:127>:f32, 0.5>[1]", nil},
		{"axis beyond rank", "!quant.uniform<i8:f32:2, {0.1,0.2}>[2, 2]", nil},
		{"scale count mismatch", "!quant.uniform<i8:f32:0, {0.1,0.2}>[3]", nil},
		{"empty scales", "!quant.uniform<i8:f32:0, {}>[0]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseType(tt.text)
			require.Error(t, err)
			var se *TypeSyntaxError
			assert.True(t, errors.As(err, &se), "want *TypeSyntaxError, got %T: %v", err, err)
		})
	}
}

func FuzzParseType(f *testing.F) {
	for _, s := range []string{
		"f32[4, 32]", "(f32[1], i32[1])", "(f32[1],)", "()", "SymInt", "?[2]", "f32[s0, ?]",
		"!quant.uniform<i8:f32, 0.02:-3>[1, 16]", "!quant.uniform<i8<-127:127>:f32, 0.5>[2]",
		"!quant.uniform<i8:f32:1, {0.1,0.2:3}>[4, 2]", "((f32[1], ?), int)", "!quant.uniform<u4:f16, 1e-05:15>[]",
		"f32[2*s77 + 2, Mod(s0, 2)]", "f32[s27*s77, 8]", "f32[(s0)//2]", "f32[Min(8, 8*s27), 1]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ty, err := ParseType(s)
		if err != nil {
			return
		}
		out := ty.String()
		again, err := ParseType(out)
		require.NoError(t, err, "re-parse of %q printed from %q", out, s)
		require.True(t, TypesEqual(ty, again), "%q -> %q -> %v", s, out, again)
		require.Equal(t, out, again.String())
	})
}
