package ops

import (
	"errors"
	"math"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSchema(t *testing.T) {
	tensorT := ArgType{Base: "Tensor"}
	tests := []struct {
		name string
		text string
		want Schema
	}{
		{
			name: "quantize_per_tensor",
			text: "quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
			want: Schema{Name: "quantize_per_tensor", Overload: "default", Args: []Argument{
				{Name: "input", Type: tensorT},
				{Name: "scale", Type: ArgType{Base: "float"}},
				{Name: "zero_point", Type: ArgType{Base: "int"}},
				{Name: "quant_min", Type: ArgType{Base: "int"}},
				{Name: "quant_max", Type: ArgType{Base: "int"}},
				{Name: "dtype", Type: ArgType{Base: "ScalarType"}},
			}, Returns: []Argument{{Type: tensorT}}},
		},
		{
			name: "kwarg-only optional with default",
			text: "dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
			want: Schema{Name: "dequantize_per_tensor", Overload: "tensor", Args: []Argument{
				{Name: "input", Type: tensorT},
				{Name: "scale", Type: tensorT},
				{Name: "zero_point", Type: tensorT},
				{Name: "quant_min", Type: ArgType{Base: "int"}},
				{Name: "quant_max", Type: ArgType{Base: "int"}},
				{Name: "dtype", Type: ArgType{Base: "ScalarType"}},
				{Name: "out_dtype", Type: ArgType{Base: "ScalarType", Optional: true}, HasDefault: true, Default: nil, KwargOnly: true},
			}, Returns: []Argument{{Type: tensorT}}},
		},
		{
			name: "fixed-length list defaults expand",
			text: "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
			want: Schema{Name: "max_pool2d", Overload: "default", Args: []Argument{
				{Name: "self", Type: tensorT},
				{Name: "kernel_size", Type: ArgType{Base: "int", List: true, ListLen: 2}},
				{Name: "stride", Type: ArgType{Base: "int", List: true, ListLen: 2}, HasDefault: true, Default: List{}},
				{Name: "padding", Type: ArgType{Base: "int", List: true, ListLen: 2}, HasDefault: true, Default: List{int64(0), int64(0)}},
				{Name: "dilation", Type: ArgType{Base: "int", List: true, ListLen: 2}, HasDefault: true, Default: List{int64(1), int64(1)}},
				{Name: "ceil_mode", Type: ArgType{Base: "bool"}, HasDefault: true, Default: false},
			}, Returns: []Argument{{Type: tensorT}}},
		},
		{
			name: "alias annotations and mutation",
			text: "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
			want: Schema{Name: "copy_", Overload: "default", Args: []Argument{
				{Name: "self", Type: ArgType{Base: "Tensor", Alias: "a", Write: true}},
				{Name: "src", Type: tensorT},
				{Name: "non_blocking", Type: ArgType{Base: "bool"}, HasDefault: true, Default: false},
			}, Returns: []Argument{{Type: ArgType{Base: "Tensor", Alias: "a", Write: true}}}},
		},
		{
			name: "dtype, memory format, string and float defaults",
			text: "f.x(Tensor(a) self, ScalarType dtype=float32, MemoryFormat memory_format=contiguous_format, str approximate='none', str padding=\"valid\", float eps=1e-05, float p=1, Scalar alpha=1, int reduction=Mean) -> Tensor(a)",
			want: Schema{Name: "f", Overload: "x", Args: []Argument{
				{Name: "self", Type: ArgType{Base: "Tensor", Alias: "a"}},
				{Name: "dtype", Type: ArgType{Base: "ScalarType"}, HasDefault: true, Default: tensor.Float32},
				{Name: "memory_format", Type: ArgType{Base: "MemoryFormat"}, HasDefault: true, Default: ContiguousFormat},
				{Name: "approximate", Type: ArgType{Base: "str"}, HasDefault: true, Default: "none"},
				{Name: "padding", Type: ArgType{Base: "str"}, HasDefault: true, Default: "valid"},
				{Name: "eps", Type: ArgType{Base: "float"}, HasDefault: true, Default: 1e-05},
				{Name: "p", Type: ArgType{Base: "float"}, HasDefault: true, Default: float64(1)},
				{Name: "alpha", Type: ArgType{Base: "Scalar"}, HasDefault: true, Default: int64(1)},
				{Name: "reduction", Type: ArgType{Base: "int"}, HasDefault: true, Default: int64(1)},
			}, Returns: []Argument{{Type: ArgType{Base: "Tensor", Alias: "a"}}}},
		},
		{
			name: "optional list, list of optionals, negative default",
			text: "g(Tensor?[] indices, int[1]? dim, SymInt[]? size=None, int end_dim=-1, Scalar min_val=-1) -> (Tensor, Tensor)",
			want: Schema{Name: "g", Overload: "default", Args: []Argument{
				{Name: "indices", Type: ArgType{Base: "Tensor", List: true, ElemOptional: true}},
				{Name: "dim", Type: ArgType{Base: "int", List: true, ListLen: 1, Optional: true}},
				{Name: "size", Type: ArgType{Base: "SymInt", List: true, Optional: true}, HasDefault: true, Default: nil},
				{Name: "end_dim", Type: ArgType{Base: "int"}, HasDefault: true, Default: int64(-1)},
				{Name: "min_val", Type: ArgType{Base: "Scalar"}, HasDefault: true, Default: int64(-1)},
			}, Returns: []Argument{{Type: tensorT}, {Type: tensorT}}},
		},
		{
			name: "named returns and empty returns",
			text: "_unpack_dual(Tensor(a) dual, int level) -> (Tensor(a) primal, Tensor tangent)",
			want: Schema{Name: "_unpack_dual", Overload: "default", Args: []Argument{
				{Name: "dual", Type: ArgType{Base: "Tensor", Alias: "a"}},
				{Name: "level", Type: ArgType{Base: "int"}},
			}, Returns: []Argument{{Name: "primal", Type: ArgType{Base: "Tensor", Alias: "a"}}, {Name: "tangent", Type: tensorT}}},
		},
		{
			name: "no result",
			text: "_assert_async.msg(Tensor self, str assert_msg) -> ()",
			want: Schema{Name: "_assert_async", Overload: "msg", Args: []Argument{
				{Name: "self", Type: tensorT},
				{Name: "assert_msg", Type: ArgType{Base: "str"}},
			}, Returns: []Argument{}},
		},
		{
			name: "variadic",
			text: "out_dtype(Any op, ScalarType out_dtype, ...) -> Tensor",
			want: Schema{Name: "out_dtype", Overload: "default", Args: []Argument{
				{Name: "op", Type: ArgType{Base: "Any"}},
				{Name: "out_dtype", Type: ArgType{Base: "ScalarType"}},
			}, VarArgs: true, Returns: []Argument{{Type: tensorT}}},
		},
		{
			name: "list return",
			text: "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
			want: Schema{Name: "unbind", Overload: "int", Args: []Argument{
				{Name: "self", Type: ArgType{Base: "Tensor", Alias: "a", AliasAfter: "*"}},
				{Name: "dim", Type: ArgType{Base: "int"}, HasDefault: true, Default: int64(0)},
			}, Returns: []Argument{{Type: ArgType{Base: "Tensor", Alias: "a", List: true}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchema(tt.text)
			require.NoError(t, err)
			tt.want.Text = tt.text
			assert.Equal(t, &tt.want, s)
		})
	}
}

func TestParseSchemaFloatDefaults(t *testing.T) {
	s, err := ParseSchema("h(float a=inf, float b=-inf, float c=0.0, float? d=None) -> Tensor")
	require.NoError(t, err)
	assert.True(t, math.IsInf(s.Args[0].Default.(float64), 1))
	assert.True(t, math.IsInf(s.Args[1].Default.(float64), -1))
	assert.Equal(t, 0.0, s.Args[2].Default)
	assert.Nil(t, s.Args[3].Default)
	assert.True(t, s.Args[3].HasDefault)
}

func TestParseQualifiedSchema(t *testing.T) {
	ns, s, err := ParseQualifiedSchema("torchao::dequantize_affine(Tensor input, SymInt[] block_size, Tensor scale, Tensor? zero_point, ScalarType input_dtype, Scalar? quant_min=None, Scalar? quant_max=None, ScalarType output_dtype=float32) -> Tensor")
	require.NoError(t, err)
	assert.Equal(t, "torchao", ns)
	assert.Equal(t, "dequantize_affine", s.Name)
	assert.Equal(t, "default", s.Overload)
	require.Len(t, s.Args, 8)
	assert.Equal(t, tensor.Float32, s.Args[7].Default)
	assert.Equal(t, ArgType{Base: "SymInt", List: true}, s.Args[1].Type)
	assert.Equal(t, 8, s.NumPositional())

	_, _, err = ParseQualifiedSchema("add.Tensor(Tensor self) -> Tensor")
	require.Error(t, err, "a qualified schema needs its namespace")
}

func TestParseSchemaErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		pos  int
	}{
		{"empty", "", 0},
		{"no parens", "relu -> Tensor", 5},
		{"no arrow", "relu(Tensor self)", 17},
		{"missing name", "relu(Tensor) -> Tensor", 11},
		{"bad default", "f(int x=banana) -> Tensor", 8},
		{"duplicate arg", "f(int x, int x) -> Tensor", 14},
		{"two stars", "f(*, int x, *, int y) -> Tensor", 12},
		{"arg after ellipsis", "f(int x, ..., int y) -> Tensor", 14},
		{"unterminated list type", "f(int[2 x) -> Tensor", 7},
		{"unterminated string", "f(str x='abc) -> Tensor", 8},
		{"trailing garbage after a named return", "f(int x) -> Tensor junk junk", 24},
		{"scalar default for open list", "f(int[] x=0) -> Tensor", 10},
		{"overload dot without name", "f.(int x) -> Tensor", 2},
		{"bad alias", "f(Tensor(a b) x) -> Tensor", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSchema(tt.text)
			require.Error(t, err)
			var se *SchemaError
			require.True(t, errors.As(err, &se), "want *SchemaError, got %T", err)
			assert.Equal(t, tt.pos, se.Pos, "error: %v", err)
		})
	}
}

func TestArgTypeString(t *testing.T) {
	for _, s := range []string{"Tensor(a!)", "int[2]", "Tensor?[]", "int[1]?", "ScalarType?", "SymInt[]"} {
		t.Run(s, func(t *testing.T) {
			sc, err := ParseSchema("f(" + s + " x) -> Tensor")
			require.NoError(t, err)
			assert.Equal(t, s, sc.Args[0].Type.String())
		})
	}
}

func TestSchemaMutable(t *testing.T) {
	s, err := ParseSchema("relu_(Tensor(a!) self) -> Tensor(a!)")
	require.NoError(t, err)
	assert.True(t, s.IsMutable())
	s, err = ParseSchema("t(Tensor(a) self) -> Tensor(a)")
	require.NoError(t, err)
	assert.False(t, s.IsMutable())
}
