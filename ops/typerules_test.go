package ops

import (
	"errors"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f32(shape ...int64) TensorType { return Plain(tensor.Float32, shape...) }
func i8(shape ...int64) TensorType  { return Plain(tensor.Int8, shape...) }
func i32(shape ...int64) TensorType { return Plain(tensor.Int32, shape...) }
func i64(shape ...int64) TensorType { return Plain(tensor.Int64, shape...) }
func ints(v ...int64) List {
	l := make(List, len(v))
	for i, x := range v {
		l[i] = x
	}
	return l
}

// resultOf normalises positional args against the default registry's
// schema of target and runs its result-type rule.
func resultOf(t *testing.T, target string, args []Value, kwargs ...Kwarg) (Type, error) {
	t.Helper()
	def, ok := Default().Op(MustOverload(target))
	require.True(t, ok, "%s not registered", target)
	full, err := def.Schema.Normalize(args, kwargs)
	require.NoError(t, err)
	return def.Result(full)
}

// The expected shapes below are hand-computed from each op's definition.
func TestResultTypes(t *testing.T) {
	tests := []struct {
		name   string
		target string
		args   []Value
		kwargs []Kwarg
		want   Type
	}{
		{"linear [2,16]x[8,16]", "aten.linear.default", []Value{f32(2, 16), f32(8, 16), f32(8)}, nil, f32(2, 8)},
		{"linear batched no bias", "aten.linear.default", []Value{f32(3, 5, 16), f32(4, 16)}, nil, f32(3, 5, 4)},
		// (32 + 2*1 - 1*(3-1) - 1)/1 + 1 = 32
		{"conv2d same-size", "aten.conv2d.default", []Value{f32(1, 3, 32, 32), f32(16, 3, 3, 3), f32(16), ints(1, 1), ints(1, 1)}, nil, f32(1, 16, 32, 32)},
		// (32 + 0 - 2 - 1)/2 + 1 = 15
		{"conv2d stride 2", "aten.conv2d.default", []Value{f32(2, 3, 32, 32), f32(8, 3, 3, 3), nil, ints(2)}, nil, f32(2, 8, 15, 15)},
		// groups 2: weight [8, 2, 3, 3] over 4 channels; (10 - 2*(3-1) - 1)/1 + 1 = 6
		{"conv2d grouped dilated", "aten.conv2d.default", []Value{f32(1, 4, 10, 10), f32(8, 2, 3, 3), nil, ints(1), ints(0), ints(2), int64(2)}, nil, f32(1, 8, 6, 6)},
		// (20 + 2*2 - 5 - 1)/3 + 1 = 7
		{"conv1d", "aten.conv1d.default", []Value{f32(4, 2, 20), f32(6, 2, 5), nil, ints(3), ints(2)}, nil, f32(4, 6, 7)},
		// transposed: (5-1)*2 - 2*1 + 1*(3-1) + 1 + 1 = 10; out channels = weight[1]*groups = 4
		{"convolution transposed", "aten.convolution.default", []Value{f32(1, 8, 5, 5), f32(8, 4, 3, 3), nil, ints(2, 2), ints(1, 1), ints(1, 1), true, ints(1, 1), int64(1)}, nil, f32(1, 4, 10, 10)},
		{"conv2d padding same", "aten.conv2d.padding", []Value{f32(1, 3, 9, 9), f32(5, 3, 3, 3), nil, ints(1), "same"}, nil, f32(1, 5, 9, 9)},
		// (9 - 2 - 1)/2 + 1 = 4 with floor; ceil: ceil(6/2)+1 = 4 as well; use 10: floor (10-3)/2+1=4, ceil 5 -> 5? (10-2-1)=7: floor 7/2+1=4, ceil (7+1)/2+1=5, (5-1)*2=8 < 10 keeps 5
		{"max_pool2d floor", "aten.max_pool2d.default", []Value{f32(1, 3, 10, 10), ints(2, 2)}, nil, f32(1, 3, 5, 5)},
		{"max_pool2d k3 s2", "aten.max_pool2d.default", []Value{f32(1, 3, 10, 10), ints(3, 3), ints(2, 2)}, nil, f32(1, 3, 4, 4)},
		{"max_pool2d k3 s2 ceil", "aten.max_pool2d.default", []Value{f32(1, 3, 10, 10), ints(3, 3), ints(2, 2), ints(0, 0), ints(1, 1), true}, nil, f32(1, 3, 5, 5)},
		{"max_pool2d_with_indices", "aten.max_pool2d_with_indices.default", []Value{f32(2, 3, 8, 8), ints(2, 2)}, nil, TupleType{Elems: []Type{f32(2, 3, 4, 4), i64(2, 3, 4, 4)}}},
		// (7 + 2*1 - 3)/2 + 1 = 4
		{"avg_pool2d padded", "aten.avg_pool2d.default", []Value{f32(1, 2, 7, 7), ints(3, 3), ints(2, 2), ints(1, 1)}, nil, f32(1, 2, 4, 4)},
		{"adaptive_avg_pool2d", "aten.adaptive_avg_pool2d.default", []Value{f32(1, 16, 7, 7), ints(1, 1)}, nil, f32(1, 16, 1, 1)},
		{"add broadcast", "aten.add.Tensor", []Value{f32(4, 1, 3), f32(5, 1)}, nil, f32(4, 5, 3)},
		{"add int tensor + float scalar", "aten.add.Scalar", []Value{i32(2), 1.5}, nil, f32(2)},
		{"mul int8 by 0-dim float", "aten.mul.Tensor", []Value{i8(3), f32()}, nil, f32(3)},
		{"mul float by 0-dim double", "aten.mul.Tensor", []Value{f32(3), Plain(tensor.Float64)}, nil, f32(3)},
		{"sub int32 - int8", "aten.sub.Tensor", []Value{i32(2, 2), i8(2)}, nil, i32(2, 2)},
		{"div int is true division", "aten.div.Tensor", []Value{i32(2), i32(2)}, nil, f32(2)},
		{"clamp with Python ints keeps int32", "aten.clamp.default", []Value{i32(4), int64(-128), int64(127)}, nil, i32(4)},
		{"clamp.Tensor broadcasts", "aten.clamp.Tensor", []Value{f32(4, 1), f32(3)}, nil, f32(4, 3)},
		{"to.dtype", "aten.to.dtype", []Value{f32(2, 3), tensor.Int32}, nil, i32(2, 3)},
		{"round keeps dtype", "aten.round.default", []Value{f32(5)}, nil, f32(5)},
		{"mm", "aten.mm.default", []Value{f32(2, 3), f32(3, 4)}, nil, f32(2, 4)},
		{"bmm", "aten.bmm.default", []Value{f32(5, 2, 3), f32(5, 3, 4)}, nil, f32(5, 2, 4)},
		{"matmul 1-D x 3-D", "aten.matmul.default", []Value{f32(3), f32(7, 3, 4)}, nil, f32(7, 4)},
		{"matmul broadcast batch", "aten.matmul.default", []Value{f32(2, 1, 4, 3), f32(5, 3, 6)}, nil, f32(2, 5, 4, 6)},
		{"addmm", "aten.addmm.default", []Value{f32(4), f32(2, 3), f32(3, 4)}, nil, f32(2, 4)},
		{"t", "aten.t.default", []Value{f32(2, 3)}, nil, f32(3, 2)},
		{"transpose", "aten.transpose.int", []Value{f32(2, 3, 4), int64(0), int64(-1)}, nil, f32(4, 3, 2)},
		{"permute", "aten.permute.default", []Value{f32(2, 3, 4), ints(2, 0, 1)}, nil, f32(4, 2, 3)},
		{"view infers -1", "aten.view.default", []Value{f32(2, 3, 4), ints(-1, 4)}, nil, f32(6, 4)},
		{"reshape", "aten.reshape.default", []Value{f32(24), ints(2, 3, 4)}, nil, f32(2, 3, 4)},
		{"flatten from 1", "aten.flatten.using_ints", []Value{f32(2, 3, 4, 5), int64(1)}, nil, f32(2, 60)},
		{"unsqueeze -1", "aten.unsqueeze.default", []Value{f32(2, 3), int64(-1)}, nil, f32(2, 3, 1)},
		{"squeeze all", "aten.squeeze.default", []Value{f32(1, 3, 1, 2)}, nil, f32(3, 2)},
		{"squeeze.dim non-1 is a no-op", "aten.squeeze.dim", []Value{f32(2, 3), int64(0)}, nil, f32(2, 3)},
		{"squeeze.dims", "aten.squeeze.dims", []Value{f32(1, 3, 1), ints(0, 2)}, nil, f32(3)},
		{"expand", "aten.expand.default", []Value{f32(3, 1), ints(2, -1, 4)}, nil, f32(2, 3, 4)},
		{"cat", "aten.cat.default", []Value{List{f32(2, 3), f32(5, 3)}}, nil, f32(7, 3)},
		{"cat dim 1 promotes", "aten.cat.default", []Value{List{f32(2, 3), Plain(tensor.Float64, 2, 1)}, int64(1)}, nil, Plain(tensor.Float64, 2, 4)},
		// ceil((10 - 1)/3) = 3 elements: 1, 4, 7
		{"slice step", "aten.slice.Tensor", []Value{f32(4, 10), int64(1), int64(1), int64(-1), int64(3)}, nil, f32(4, 3)},
		{"slice end past size", "aten.slice.Tensor", []Value{f32(4, 10), int64(0), int64(2), int64(9223372036854775807)}, nil, f32(2, 10)},
		{"select", "aten.select.int", []Value{f32(4, 10, 3), int64(1), int64(-2)}, nil, f32(4, 3)},
		{"softmax", "aten.softmax.int", []Value{f32(2, 5), int64(-1)}, nil, f32(2, 5)},
		{"_softmax half to float", "aten._softmax.default", []Value{Plain(tensor.Float16, 2), int64(0), true}, nil, f32(2)},
		{"gelu of int is float", "aten.gelu.default", []Value{i32(3)}, nil, f32(3)},
		{"layer_norm", "aten.layer_norm.default", []Value{f32(2, 5, 8), ints(8)}, nil, f32(2, 5, 8)},
		{"native_layer_norm", "aten.native_layer_norm.default", []Value{f32(2, 5, 8), ints(5, 8), nil, nil, 1e-5}, nil,
			TupleType{Elems: []Type{f32(2, 5, 8), f32(2, 1, 1), f32(2, 1, 1)}}},
		{"group_norm", "aten.group_norm.default", []Value{f32(1, 10, 4, 4), int64(5), f32(10), f32(10)}, nil, f32(1, 10, 4, 4)},
		{"batch_norm no training", "aten._native_batch_norm_legit_no_training.default", []Value{f32(1, 3, 4, 4), f32(3), f32(3), f32(3), f32(3), 0.1, 1e-5}, nil,
			TupleType{Elems: []Type{f32(1, 3, 4, 4), f32(0), f32(0)}}},
		{"mean.dim keepdim", "aten.mean.dim", []Value{f32(2, 3, 4, 5), ints(-1, -2), true}, nil, f32(2, 3, 1, 1)},
		{"mean.dim None reduces all", "aten.mean.dim", []Value{f32(2, 3), nil}, nil, f32()},
		{"sum int accumulates in int64", "aten.sum.dim_IntList", []Value{i32(2, 3), ints(0)}, nil, i64(3)},
		{"sum with dtype", "aten.sum.dim_IntList", []Value{i32(2, 3), ints(1)}, []Kwarg{{Name: "dtype", Value: tensor.Float32}}, f32(2)},
		{"sdpa", "aten.scaled_dot_product_attention.default", []Value{f32(2, 4, 10, 16), f32(2, 4, 12, 16), f32(2, 4, 12, 8)}, nil, f32(2, 4, 10, 8)},
		{"embedding", "aten.embedding.default", []Value{f32(100, 16), i64(2, 7)}, nil, f32(2, 7, 16)},
		{"amax keepdim", "aten.amax.default", []Value{f32(2, 3), ints(1), true}, nil, f32(2, 1)},

		{"quantize_per_tensor", "quantized_decomposed.quantize_per_tensor.default", []Value{f32(1, 16), 0.02, int64(3), int64(-128), int64(127), tensor.Int8}, nil, i8(1, 16)},
		{"quantize_per_tensor.tensor", "quantized_decomposed.quantize_per_tensor.tensor", []Value{f32(4), f32(1), i64(1), int64(0), int64(255), tensor.UInt8}, nil, Plain(tensor.UInt8, 4)},
		{"dequantize_per_tensor default out", "quantized_decomposed.dequantize_per_tensor.default", []Value{i8(1, 16), 0.02, int64(3), int64(-128), int64(127), tensor.Int8}, nil, f32(1, 16)},
		{"dequantize_per_tensor out_dtype", "quantized_decomposed.dequantize_per_tensor.default", []Value{i8(2), 0.02, int64(3), int64(-128), int64(127), tensor.Int8}, []Kwarg{{Name: "out_dtype", Value: tensor.BFloat16}}, Plain(tensor.BFloat16, 2)},
		{"dequantize of a quantized-element tensor", "quantized_decomposed.dequantize_per_tensor.default",
			[]Value{TensorType{Shape: []int64{3}, Elem: mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.5, 0)}, 0.5, int64(0), int64(-128), int64(127), tensor.Int8}, nil, f32(3)},
		{"choose_qparams", "quantized_decomposed.choose_qparams.tensor", []Value{f32(4, 4), int64(-128), int64(127), 1e-5, tensor.Int8}, nil,
			TupleType{Elems: []Type{Plain(tensor.Float64, 1), i64(1)}}},
		{"quantize_per_channel", "quantized_decomposed.quantize_per_channel.default", []Value{f32(8, 3), f32(8), i64(8), int64(0), int64(-128), int64(127), tensor.Int8}, nil, i8(8, 3)},
		{"dequantize_per_channel no zp", "quantized_decomposed.dequantize_per_channel.default", []Value{i8(8, 3), f32(3), nil, int64(1), int64(-127), int64(127), tensor.Int8}, nil, f32(8, 3)},
		{"choose_qparams_per_token_asymmetric", "quantized_decomposed.choose_qparams_per_token_asymmetric.default", []Value{f32(2, 5, 16), tensor.Int8}, nil,
			TupleType{Elems: []Type{Plain(tensor.Float64, 2, 5, 1), i64(2, 5, 1)}}},
		{"dequantize_per_token", "quantized_decomposed.dequantize_per_token.default", []Value{i8(2, 16), f32(2, 1), i64(2, 1), int64(-128), int64(127), tensor.Int8, tensor.Float16}, nil, Plain(tensor.Float16, 2, 16)},
		{"quantize_per_channel_group", "quantized_decomposed.quantize_per_channel_group.default", []Value{f32(4, 32), f32(4, 4), i32(4, 4), int64(-8), int64(7), tensor.Int8, int64(8)}, nil, i8(4, 32)},
		{"convert_element_type", "quantized_decomposed.convert_element_type.no_fuse", []Value{f32(2), tensor.Float16}, nil, Plain(tensor.Float16, 2)},
		{"quantize_affine group 8", "torchao.quantize_affine.default", []Value{f32(4, 32), ints(1, 8), f32(4, 4), i32(4, 4), tensor.Int8, int64(-8), int64(7)}, nil, i8(4, 32)},
		{"dequantize_affine default float32", "torchao.dequantize_affine.default", []Value{i8(4, 32), ints(1, 32), f32(4), i32(4), tensor.Int8, int64(-128), int64(127)}, nil, f32(4, 32)},
		{"dequantize_affine output_dtype kw", "torchao.dequantize_affine.default", []Value{i8(4, 32), ints(1, 32), f32(4), i32(4), tensor.Int8}, []Kwarg{{Name: "output_dtype", Value: tensor.BFloat16}}, Plain(tensor.BFloat16, 4, 32)},
		// The fixture call: x [1, 32], block [1, 32] -> qparams [1].
		{"choose_qparams_affine fixture call", "torchao.choose_qparams_affine.default", []Value{f32(1, 32), "ASYMMETRIC", ints(1, 32), tensor.Int8, int64(-128), int64(127), 1.1920928955078125e-07, tensor.Float32, tensor.Int32}, nil,
			TupleType{Elems: []Type{f32(1), i32(1)}}},
		// [6, 32] with block [1, 8]: qparams [6, 4]; keepdim the same here.
		{"choose_qparams_affine groupwise", "torchao.choose_qparams_affine.default", []Value{f32(6, 32), "ASYMMETRIC", ints(1, 8), tensor.Int8}, nil,
			TupleType{Elems: []Type{f32(6, 4), i32(6, 4)}}},
		// Symmetric: zero point keeps the scale dtype; per-tensor block reduces everything.
		{"choose_qparams_affine symmetric per-tensor", "torchao.choose_qparams_affine.default", []Value{f32(6, 32), "SYMMETRIC", ints(6, 32), tensor.Int8}, nil,
			TupleType{Elems: []Type{f32(), f32()}}},
		{"choose_qparams_affine keepdim", "torchao.choose_qparams_affine.default", []Value{f32(6, 32), "SYMMETRIC", ints(6, 32), tensor.Int8}, []Kwarg{{Name: "keepdim", Value: true}},
			TupleType{Elems: []Type{f32(1, 1), f32(1, 1)}}},
		{"reference_dqlinear_int4", "torchao.reference_dqlinear_int4.default", []Value{f32(3, 32), 1e-7, i8(16, 32), f32(16, 4), i32(16, 4), f32(16), ints(1, 8)}, nil, f32(3, 16)},
		{"out_dtype of mm", "higher_order.out_dtype.default", []Value{MustOverload("aten.mm.default"), tensor.Int32, i8(2, 3), i8(3, 5)}, nil, i32(2, 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Type
			var err error
			if tt.target == "higher_order.out_dtype.default" {
				// Normalize drops variadic arguments, so call the rule directly.
				got, err = ruleOutDType(tt.args)
			} else {
				got, err = resultOf(t, tt.target, tt.args, tt.kwargs...)
			}
			require.NoError(t, err)
			assert.True(t, TypesEqual(tt.want, got), "want %v, got %v", tt.want, got)
		})
	}
}

func TestResultTypeErrors(t *testing.T) {
	tests := []struct {
		name     string
		target   string
		args     []Value
		sentinel error
		mention  string
	}{
		{"linear inner mismatch", "aten.linear.default", []Value{f32(2, 16), f32(8, 15)}, ErrShape, `"weight"`},
		{"conv channels", "aten.conv2d.default", []Value{f32(1, 3, 8, 8), f32(4, 2, 3, 3)}, ErrShape, `"weight"`},
		{"add no broadcast", "aten.add.Tensor", []Value{f32(3), f32(4)}, ErrShape, `"other"`},
		{"view wrong count", "aten.view.default", []Value{f32(2, 3), ints(4, 2)}, ErrShape, `"size"`},
		{"transpose dim range", "aten.transpose.int", []Value{f32(2, 3), int64(0), int64(2)}, ErrArgType, `"dim1"`},
		{"cat rank mismatch", "aten.cat.default", []Value{List{f32(2, 3), f32(2)}}, ErrShape, `"tensors"`},
		{"mean of int", "aten.mean.dim", []Value{i32(2, 3), ints(0)}, ErrArgType, `"self"`},
		{"quantize int input", "quantized_decomposed.quantize_per_tensor.default", []Value{i32(2), 0.1, int64(0), int64(-128), int64(127), tensor.Int8}, ErrArgType, `"input"`},
		{"quantize range beyond dtype", "quantized_decomposed.quantize_per_tensor.default", []Value{f32(2), 0.1, int64(0), int64(-129), int64(127), tensor.Int8}, ErrArgType, `"quant_min"`},
		{"dequantize dtype mismatch", "quantized_decomposed.dequantize_per_tensor.default", []Value{Plain(tensor.UInt8, 2), 0.1, int64(0), int64(-128), int64(127), tensor.Int8}, ErrArgType, `"input"`},
		{"per-channel scale count", "quantized_decomposed.quantize_per_channel.default", []Value{f32(8, 3), f32(3), i64(3), int64(0), int64(-128), int64(127), tensor.Int8}, ErrShape, `"scales"`},
		{"per-channel axis", "quantized_decomposed.quantize_per_channel.default", []Value{f32(8, 3), f32(8), i64(8), int64(2), int64(-128), int64(127), tensor.Int8}, ErrArgType, `"axis"`},
		{"affine block rank", "torchao.quantize_affine.default", []Value{f32(4, 32), ints(8), f32(4, 4), i32(4, 4), tensor.Int8}, ErrArgType, `"block_size"`},
		{"affine block divides", "torchao.quantize_affine.default", []Value{f32(4, 30), ints(1, 8), f32(4, 4), i32(4, 4), tensor.Int8}, ErrArgType, `"block_size"`},
		{"affine scale count", "torchao.dequantize_affine.default", []Value{i8(4, 32), ints(1, 8), f32(4), i32(4), tensor.Int8}, ErrShape, `"scale"`},
		{"affine mapping type", "torchao.choose_qparams_affine.default", []Value{f32(4, 32), "SYMMETRICAL", ints(1, 32), tensor.Int8}, ErrArgType, `"mapping_type"`},
		{"not a tensor", "aten.relu.default", []Value{int64(3)}, ErrArgType, `"self"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resultOf(t, tt.target, tt.args)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.sentinel), "got %v", err)
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

// Views keep a quantized element type and remap a per-axis axis; compute
// ops produce plain element types.
func TestResultTypesKeepQuantizedThroughViews(t *testing.T) {
	q := mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.5, 1)
	x := TensorType{Shape: []int64{2, 3, 4}, Elem: q}
	got, err := resultOf(t, "aten.view.default", []Value{x, ints(6, 4)})
	require.NoError(t, err)
	assert.True(t, TypesEqual(TensorType{Shape: []int64{6, 4}, Elem: q}, got), "got %v", got)

	pa := mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 0, []float64{0.1, 0.2}, []int64{0, 0})
	w := TensorType{Shape: []int64{2, 5}, Elem: pa}
	got, err = resultOf(t, "aten.t.default", []Value{w})
	require.NoError(t, err)
	wantAxis := pa
	wantAxis.Axis = 1
	assert.True(t, TypesEqual(TensorType{Shape: []int64{5, 2}, Elem: wantAxis}, got), "got %v", got)

	_, err = resultOf(t, "aten.flatten.using_ints", []Value{w})
	require.Error(t, err, "flattening the quantized axis into another is refused")
	assert.True(t, errors.Is(err, ErrBadAxis))

	got, err = resultOf(t, "aten.relu.default", []Value{x})
	require.NoError(t, err)
	assert.True(t, TypesEqual(i8(2, 3, 4), got), "a compute op's result is plain, got %v", got)
}
