package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Operators passed as arguments (torch.fx holds the OpOverload object in
// higher_order.out_dtype(aten.linear.default, ...)) are literals.

func TestOperatorValuesAreLiterals(t *testing.T) {
	tests := []struct {
		name string
		v    Value
	}{
		{"overload", MustOverload("aten.linear.default")},
		{"packet", MustPacket("aten.linear")},
		{"callable", GetItem},
		{"nested in a list", List{MustOverload("aten.mm.default"), int64(1)}},
		{"in a dict", Dict{Keys: []string{"op"}, Values: []Value{MustPacket("aten.add")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, CheckLiteral(tt.v, nil))
			called := false
			got, err := MapValue(tt.v, func(x Value) (Value, error) {
				called = true
				return x, nil
			})
			require.NoError(t, err)
			assert.False(t, called, "MapValue passed an operator to the reference callback")
			assert.True(t, LiteralEqual(tt.v, got))
		})
	}
}

func TestLiteralEqualOperators(t *testing.T) {
	linear := MustOverload("aten.linear.default")
	tests := []struct {
		name string
		a, b Value
		want bool
	}{
		{"same overload", linear, MustOverload("aten.linear.default"), true},
		{"other overload name", MustOverload("aten.add.Tensor"), MustOverload("aten.add.Scalar"), false},
		{"other op", linear, MustOverload("aten.mm.default"), false},
		{"same packet", MustPacket("aten.linear"), MustPacket("aten.linear"), true},
		// OpOverloadPacket and OpOverload are different objects.
		{"packet vs its default overload", MustPacket("aten.linear"), linear, false},
		{"overload vs packet", linear, MustPacket("aten.linear"), false},
		{"overload vs its name", linear, "aten.linear.default", false},
		{"name vs overload", "aten.linear.default", linear, false},
		{"same callable", GetItem, Callable{Module: "operator", Name: "getitem"}, true},
		{"callable vs other callable", GetItem, Callable{Module: "operator", Name: "mul"}, false},
		{"overload vs None", linear, nil, false},
		{"in tuples", Tuple{linear, tensor.Int32}, List{MustOverload("aten.linear.default"), tensor.Int32}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, LiteralEqual(tt.a, tt.b))
		})
	}
}

// TestOperatorArgumentTypes: only an "Any" schema argument (such as
// out_dtype's op) takes an operator; no other type does.
func TestOperatorArgumentTypes(t *testing.T) {
	linear := MustOverload("aten.linear.default")
	tests := []struct {
		name string
		typ  ArgType
		v    Value
		ok   bool
	}{
		{"Any takes an overload", ArgType{Base: "Any"}, linear, true},
		{"Any takes a packet", ArgType{Base: "Any"}, MustPacket("aten.linear"), true},
		{"Tensor rejects an overload", ArgType{Base: "Tensor"}, linear, false},
		{"str rejects an overload", ArgType{Base: "str"}, linear, false},
		{"int rejects a packet", ArgType{Base: "int"}, MustPacket("aten.linear"), false},
		{"Generator rejects an overload", ArgType{Base: "Generator", Optional: true}, linear, false},
		{"Tensor list rejects overloads", ArgType{Base: "Tensor", List: true}, List{linear}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fits(tt.typ, tt.v, false)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// TestOutDTypeOpArgument: out_dtype's schema binds an operator for op, and
// its result-type rule takes only an overload.
func TestOutDTypeOpArgument(t *testing.T) {
	s := schemaOf(t, "higher_order.out_dtype.default")
	x := &ref{"x"}
	require.NoError(t, s.Accepts([]Value{MustOverload("aten.mm.default"), tensor.Int32, x, x}, nil))

	i8 := func(shape ...int64) TensorType { return Plain(tensor.Int8, shape...) }
	tests := []struct {
		name    string
		op      Value
		wantErr string
	}{
		{"overload", MustOverload("aten.mm.default"), ""},
		{"packet", MustPacket("aten.mm"), `argument 0 "op": `},
		{"name string", "aten.mm.default", `argument 0 "op": `},
		{"callable", GetItem, `argument 0 "op": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ruleOutDType([]Value{tt.op, tensor.Int32, i8(2, 3), i8(3, 5)})
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrArgType)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.True(t, TypesEqual(Plain(tensor.Int32, 2, 5), got), "got %v", got)
		})
	}
}
