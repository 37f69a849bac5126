package ops

import (
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func schemaOf(t *testing.T, target string) *Schema {
	t.Helper()
	s, ok := Default().Schema(MustOverload(target))
	require.True(t, ok, target)
	return s
}

func TestNormalize(t *testing.T) {
	x := &ref{"x"}
	tests := []struct {
		name   string
		target string
		args   []Value
		kwargs []Kwarg
		want   []Value
	}{
		{"defaults filled", "aten.conv2d.default", []Value{x, x}, nil,
			[]Value{x, x, nil, List{int64(1), int64(1)}, List{int64(0), int64(0)}, List{int64(1), int64(1)}, int64(1)}},
		{"keyword for a positional argument", "aten.conv2d.default", []Value{x, x}, []Kwarg{{Name: "groups", Value: int64(2)}, {Name: "padding", Value: List{int64(1), int64(1)}}},
			[]Value{x, x, nil, List{int64(1), int64(1)}, List{int64(1), int64(1)}, List{int64(1), int64(1)}, int64(2)}},
		{"kwarg-only", "quantized_decomposed.dequantize_per_tensor.default", []Value{x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8}, []Kwarg{{Name: "out_dtype", Value: tensor.Float16}},
			[]Value{x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8, tensor.Float16}},
		{"dequantize_affine output_dtype positional", "torchao.dequantize_affine.default", []Value{x, List{int64(1), int64(8)}, x, x, tensor.Int8, int64(-8), int64(7), tensor.BFloat16}, nil,
			[]Value{x, List{int64(1), int64(8)}, x, x, tensor.Int8, int64(-8), int64(7), tensor.BFloat16}},
		{"dequantize_affine output_dtype default", "torchao.dequantize_affine.default", []Value{x, List{int64(1), int64(8)}, x, x, tensor.Int8}, nil,
			[]Value{x, List{int64(1), int64(8)}, x, x, tensor.Int8, nil, nil, tensor.Float32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := schemaOf(t, tt.target).Normalize(tt.args, tt.kwargs)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNormalizeErrors(t *testing.T) {
	x := &ref{"x"}
	tests := []struct {
		name    string
		target  string
		args    []Value
		kwargs  []Kwarg
		mention string
	}{
		{"too many positional", "aten.relu.default", []Value{x, x}, nil, "positional"},
		{"kwarg-only passed positionally", "aten.add.Tensor", []Value{x, x, int64(2)}, nil, `"alpha"`},
		{"unknown keyword", "aten.relu.default", []Value{x}, []Kwarg{{Name: "inplace", Value: true}}, `"inplace"`},
		{"given twice", "aten.relu.default", []Value{x}, []Kwarg{{Name: "self", Value: x}}, `"self"`},
		{"missing required", "aten.linear.default", []Value{x}, nil, `"weight"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schemaOf(t, tt.target).Normalize(tt.args, tt.kwargs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

func TestSplit(t *testing.T) {
	x := &ref{"x"}
	tests := []struct {
		name       string
		target     string
		full       []Value
		wantArgs   []Value
		wantKwargs []Kwarg
	}{
		// The fixture's conv2d call: (%x, %w, %b, [1, 1], [1, 1]); dilation and groups are defaults.
		{"trailing defaults dropped", "aten.conv2d.default",
			[]Value{x, x, x, List{int64(1), int64(1)}, List{int64(1), int64(1)}, List{int64(1), int64(1)}, int64(1)},
			[]Value{x, x, x, List{int64(1), int64(1)}, List{int64(1), int64(1)}}, nil},
		{"kwarg-only becomes a keyword", "quantized_decomposed.dequantize_per_tensor.default",
			[]Value{x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8, tensor.Float16},
			[]Value{x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8}, []Kwarg{{Name: "out_dtype", Value: tensor.Float16}}},
		{"kwarg-only at default dropped", "quantized_decomposed.dequantize_per_tensor.default",
			[]Value{x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8, nil},
			[]Value{x, 0.5, int64(0), int64(-128), int64(127), tensor.Int8}, nil},
		{"a default before a non-default stays", "aten.conv2d.default",
			[]Value{x, x, nil, List{int64(1), int64(1)}, List{int64(0), int64(0)}, List{int64(1), int64(1)}, int64(2)},
			[]Value{x, x, nil, List{int64(1), int64(1)}, List{int64(0), int64(0)}, List{int64(1), int64(1)}, int64(2)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := schemaOf(t, tt.target)
			args, kwargs := s.Split(tt.full)
			assert.Equal(t, tt.wantArgs, args)
			assert.Equal(t, tt.wantKwargs, kwargs)
			back, err := s.Normalize(args, kwargs)
			require.NoError(t, err)
			assert.Equal(t, tt.full, back, "Split then Normalize is the identity")
		})
	}
}
