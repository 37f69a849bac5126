package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/tensor"
)

// ApplyRule carries symbols through the registry's rules: transpose swaps
// them, linear keeps the batch, flatten's product is left open, and a
// static input is the rule's own answer.
func TestApplyRuleSymbols(t *testing.T) {
	f32 := Scalar{DType: tensor.Float32}
	sym := func(shape []int64, syms ...string) TensorType {
		return TensorType{Shape: shape, Elem: f32, Syms: syms}
	}
	rule := func(op string) TypeFunc {
		def, ok := Default().Op(MustOverload(op))
		require.True(t, ok, op)
		return def.Result
	}
	x := sym([]int64{DynamicDim, DynamicDim, 8}, "s0", "s1", "")
	cases := []struct {
		op   string
		args []Value
		want string
	}{
		{"aten.transpose.int", []Value{x, int64(0), int64(1)}, "f32[s1, s0, 8]"},
		{"aten.linear.default", []Value{x, Plain(tensor.Float32, 4, 8), nil}, "f32[s0, s1, 4]"},
		{"aten.flatten.using_ints", []Value{x, int64(0), int64(1)}, "f32[?, 8]"},
		{"aten.relu.default", []Value{sym([]int64{DynamicDim, 3}, "2*s0 + 2", "")}, "f32[2*s0 + 2, 3]"},
		{"aten.add.Tensor", []Value{x, sym([]int64{DynamicDim, 1, 8}, "s0", ""), int64(1)}, "f32[s0, s1, 8]"},
		{"aten.relu.default", []Value{Plain(tensor.Float32, 2, 3)}, "f32[2, 3]"},
	}
	for _, c := range cases {
		got, err := ApplyRule(rule(c.op), c.args)
		require.NoError(t, err, c.op)
		require.Equal(t, c.want, got.String(), c.op)
	}
	// What the rule leaves open accepts the recorded size or symbol; a
	// known one must match.
	open, _ := ApplyRule(rule("aten.flatten.using_ints"), []Value{x, int64(0), int64(1)})
	require.True(t, TypeAccepts(open, sym([]int64{DynamicDim, 8}, "s0*s1", "")))
	require.True(t, TypeAccepts(open, Plain(tensor.Float32, 6, 8)))
	require.False(t, TypeAccepts(open, Plain(tensor.Float32, 6, 9)))
	require.False(t, TypeAccepts(sym([]int64{DynamicDim, 8}, "s0", ""), sym([]int64{DynamicDim, 8}, "s1", "")))

	// Tuples compare element by element.
	pair := func(a, b Type) TupleType { return TupleType{Elems: []Type{a, b}} }
	require.True(t, TypeAccepts(pair(open, Plain(tensor.Float32, 2)), pair(Plain(tensor.Float32, 6, 8), Plain(tensor.Float32, 2))))
	require.False(t, TypeAccepts(pair(open, Plain(tensor.Float32, 2)), pair(Plain(tensor.Float32, 6, 9), Plain(tensor.Float32, 2))))
}
