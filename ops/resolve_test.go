package ops

import (
	"errors"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ref stands for a tensor-valued argument: any non-literal Value.
type ref struct{ name string }

func TestResolve(t *testing.T) {
	r := Default()
	x, y := &ref{"x"}, &ref{"y"}
	tests := []struct {
		name   string
		packet string
		args   []Value
		kwargs []Kwarg
		want   string
	}{
		{"add tensor", "aten.add", []Value{x, y}, nil, "aten.add.Tensor"},
		// add/sub/mul/div take Python numbers as tensors (wrapped numbers),
		// so the first overload, .Tensor, wins as in torch.ops.aten.add(x, 1).
		{"add Python int", "aten.add", []Value{x, int64(1)}, nil, "aten.add.Tensor"},
		{"add Python float with alpha kw", "aten.add", []Value{x, 2.5}, []Kwarg{{Name: "alpha", Value: int64(2)}}, "aten.add.Tensor"},
		{"add Python alpha positional", "aten.add", []Value{x, 2.5, int64(2)}, nil, "aten.add.Scalar"},
		{"sub Python number first", "aten.sub", []Value{0.5, x}, nil, "aten.sub.Tensor"},
		{"div two Python numbers", "aten.div", []Value{0.5, 0.25}, nil, "aten.div.Tensor"},
		{"mul tensor", "aten.mul", []Value{x, y}, nil, "aten.mul.Tensor"},
		{"div Python float", "aten.div", []Value{x, 0.5}, nil, "aten.div.Tensor"},
		{"mul Python bool", "aten.mul", []Value{x, true}, nil, "aten.mul.Tensor"},
		{"sub type reference", "aten.sub", []Value{f32(2), f32(2)}, nil, "aten.sub.Tensor"},
		// The reference rewrite's packet clamp: Python bounds vs tensor bounds.
		{"clamp Python bounds", "aten.clamp", []Value{x, int64(-128), int64(127)}, nil, "aten.clamp.default"},
		{"clamp tensor bounds", "aten.clamp", []Value{x, y, y}, nil, "aten.clamp.Tensor"},
		{"clamp tensor min only", "aten.clamp", []Value{x}, []Kwarg{{Name: "min", Value: y}}, "aten.clamp.Tensor"},
		{"clamp None and Python max", "aten.clamp", []Value{x, nil, 6.0}, nil, "aten.clamp.default"},
		{"quantize_per_tensor Python qparams", "quantized_decomposed.quantize_per_tensor", []Value{x, 0.02, int64(3), int64(-128), int64(127), tensor.Int8}, nil, "quantized_decomposed.quantize_per_tensor.default"},
		{"quantize_per_tensor tensor qparams", "quantized_decomposed.quantize_per_tensor", []Value{x, y, y, int64(-128), int64(127), tensor.Int8}, nil, "quantized_decomposed.quantize_per_tensor.tensor"},
		{"quantize_per_tensor tensor bounds", "quantized_decomposed.quantize_per_tensor", []Value{x, y, y, y, y, tensor.Int8}, nil, "quantized_decomposed.quantize_per_tensor.tensor2"},
		{"dequantize_affine packet with kw", "torchao.dequantize_affine", []Value{x, Tuple{int64(1), int64(8)}, y, y, tensor.Int8, int64(-8), int64(7)}, []Kwarg{{Name: "output_dtype", Value: tensor.Float32}}, "torchao.dequantize_affine.default"},
		{"squeeze no dim", "aten.squeeze", []Value{x}, nil, "aten.squeeze.default"},
		{"squeeze int dim", "aten.squeeze", []Value{x, int64(1)}, nil, "aten.squeeze.dim"},
		{"squeeze dim list", "aten.squeeze", []Value{x, List{int64(0), int64(1)}}, nil, "aten.squeeze.dims"},
		{"conv2d int padding", "aten.conv2d", []Value{x, y, nil, List{int64(1), int64(1)}, List{int64(1), int64(1)}}, nil, "aten.conv2d.default"},
		{"conv2d string padding", "aten.conv2d", []Value{x, y, nil, int64(1), "same"}, nil, "aten.conv2d.padding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Resolve(MustPacket(tt.packet), tt.args, tt.kwargs)
			require.NoError(t, err)
			assert.Equal(t, MustOverload(tt.want), got)
		})
	}
}

func TestResolveErrors(t *testing.T) {
	r := Default()
	x := &ref{"x"}
	tests := []struct {
		name    string
		packet  string
		args    []Value
		mention []string
	}{
		{"unknown packet", "aten.nosuch", []Value{x}, []string{"no registered overloads"}},
		{"string for a tensor", "aten.add", []Value{"x", x}, []string{"Tensor:", "Scalar:"}},
		{"too many args", "aten.relu", []Value{x, x}, []string{"default:"}},
		{"float for an int", "quantized_decomposed.quantize_per_tensor", []Value{x, 0.5, 1.5, int64(0), int64(255), tensor.UInt8}, []string{`"zero_point"`}},
		{"bool is not an int", "aten.squeeze", []Value{x, true}, []string{"dim:", "dims:"}},
		// relu does not take numbers as tensors.
		{"number for relu's tensor", "aten.relu", []Value{1.5}, []string{"want Tensor"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Resolve(MustPacket(tt.packet), tt.args, nil)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrNoOverload))
			for _, m := range tt.mention {
				assert.Contains(t, err.Error(), m)
			}
		})
	}
}

func TestAllowsNumbersAsTensors(t *testing.T) {
	tests := []struct {
		packet string
		want   bool
	}{
		{"aten.add", true}, {"aten.sub", true}, {"aten.mul", true}, {"aten.div", true},
		{"aten.true_divide", true}, {"aten.to", true}, {"prims.mul", true},
		{"aten.clamp", false}, {"aten.relu", false}, {"aten.linear", false},
		{"quantized_decomposed.add", false}, {"torchao.quantize_affine", false},
	}
	for _, tt := range tests {
		t.Run(tt.packet, func(t *testing.T) {
			assert.Equal(t, tt.want, AllowsNumbersAsTensors(MustPacket(tt.packet)))
		})
	}
}

// TestAcceptsWrappedNumbers: a Python number fits a Tensor argument of
// add/sub/mul/div (a wrapped number) but not of other ops, nor a Tensor
// list or a string anywhere.
func TestAcceptsWrappedNumbers(t *testing.T) {
	r := Default()
	x := &ref{"x"}
	tests := []struct {
		name    string
		op      string
		args    []Value
		wantErr string
	}{
		{"div.Tensor tensor and float", "aten.div.Tensor", []Value{x, 0.0243646502494812}, ""},
		{"add.Tensor tensor and int", "aten.add.Tensor", []Value{x, int64(12)}, ""},
		{"div.Tensor two floats", "aten.div.Tensor", []Value{0.008250712417066097, 0.01946624554693699}, ""},
		{"mul.Tensor bool", "aten.mul.Tensor", []Value{true, x}, ""},
		{"sub.Tensor string", "aten.sub.Tensor", []Value{x, "12"}, `"other"`},
		{"clamp.Tensor int bounds", "aten.clamp.Tensor", []Value{x, int64(-128), int64(127)}, `"min"`},
		{"relu number", "aten.relu.default", []Value{1.5}, `"self"`},
		{"cat numbers", "aten.cat.default", []Value{List{int64(1), int64(2)}}, `"tensors"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := r.Schema(MustOverload(tt.op))
			require.True(t, ok)
			err := s.Accepts(tt.args, nil)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}
