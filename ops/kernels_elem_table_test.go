package ops_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func f32s(t *testing.T, v ops.Value) []float32 {
	t.Helper()
	x, ok := v.(*tensor.Tensor)
	require.True(t, ok, "result is %T", v)
	d, err := tensor.Data[float32](x)
	require.NoError(t, err)
	return d
}

// TestElemRowsAreInPlaceWhereTorchSaysSo: the in-place rows write their
// first argument and the functional ones write nothing, as their schemas
// in torch-2.14.1-ops.json say.
func TestElemRowsAreInPlaceWhereTorchSaysSo(t *testing.T) {
	reg := ops.Default()
	for name, inPlace := range map[string]bool{
		"aten.hardswish_.default": true, "aten.add_.Tensor": true, "aten.clamp_.default": true, "aten.dropout_.default": true,
		"aten.hardswish.default": false, "aten.pow.Tensor_Scalar": false, "aten.native_dropout.default": false,
	} {
		o := ops.MustOverload(name)
		def, ok := reg.Op(o)
		require.True(t, ok, name)
		assert.Equal(t, inPlace, def.Schema.IsMutable(), name)
		if inPlace {
			assert.True(t, def.Schema.Args[0].Type.Write, name)
		}
	}
}

func TestElemAdapters(t *testing.T) {
	x := tensor.F32([]int{3}, -4, 1, 5)

	// Dropout variants: the input in inference, an error naming the op in training.
	for _, op := range []string{"aten.dropout_.default", "aten.feature_dropout.default", "aten.alpha_dropout_.default"} {
		v, err := call(t, op, []ops.Value{x, 0.5, false})
		require.NoError(t, err, op)
		assert.Equal(t, []float32{-4, 1, 5}, f32s(t, v), op)
		_, err = call(t, op, []ops.Value{x, 0.5, true})
		require.ErrorIs(t, err, kernels.ErrBadArgument, op)
		assert.Contains(t, err.Error(), op[len("aten."):len(op)-len(".default")], op)
	}
	v, err := call(t, "aten.native_dropout.default", []ops.Value{x, 0.2, false})
	require.NoError(t, err)
	tup, ok := v.(ops.Tuple)
	require.True(t, ok)
	require.Len(t, tup, 2)
	assert.Equal(t, []float32{-4, 1, 5}, f32s(t, tup[0]))
	mask := tup[1].(*tensor.Tensor)
	assert.Equal(t, tensor.Bool, mask.DType())
	mb, _ := tensor.Data[bool](mask)
	assert.Equal(t, []bool{true, true, true}, mb)
	_, err = call(t, "aten.native_dropout.default", []ops.Value{x, 0.2, nil}) // None means training
	require.ErrorIs(t, err, kernels.ErrBadArgument)

	// In-place arithmetic keeps self's shape and dtype.
	v, err = call(t, "aten.add_.Tensor", []ops.Value{x, tensor.F32([]int{3}, 1, 1, 1)}, ops.Kwarg{Name: "alpha", Value: int64(2)})
	require.NoError(t, err)
	assert.Equal(t, []float32{-2, 3, 7}, f32s(t, v))
	_, err = call(t, "aten.mul_.Tensor", []ops.Value{tensor.F32([]int{1}, 2), tensor.F32([]int{2}, 1, 2)})
	require.ErrorIs(t, err, tensor.ErrShape, "self does not broadcast in place")
	i32 := tensor.MustFromData(tensor.Int32, []int{2}, []int32{3, -4})
	_, err = call(t, "aten.mul_.Scalar", []ops.Value{i32, 0.5})
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType, "float result into an int self")
	v, err = call(t, "aten.add_.Scalar", []ops.Value{i32, int64(1)})
	require.NoError(t, err)
	assert.Equal(t, tensor.Int32, v.(*tensor.Tensor).DType())
	v, err = call(t, "aten.clamp_.default", []ops.Value{x, nil, 2.0})
	require.NoError(t, err)
	assert.Equal(t, []float32{-4, 1, 2}, f32s(t, v))

	// pow: exponent 0 is 1 even for NaN, 1 is the input; neg of ints wraps, of bool fails.
	nan := float32(math.NaN())
	v, err = call(t, "aten.pow.Tensor_Scalar", []ops.Value{tensor.F32([]int{2}, nan, -3), int64(0)})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 1}, f32s(t, v))
	v, err = call(t, "aten.pow.Tensor_Scalar", []ops.Value{x, 1.0})
	require.NoError(t, err)
	assert.Equal(t, []float32{-4, 1, 5}, f32s(t, v))
	v, err = call(t, "aten.neg.default", []ops.Value{tensor.MustFromData(tensor.Int8, []int{2}, []int8{-128, 5})})
	require.NoError(t, err)
	i8, _ := tensor.Data[int8](v.(*tensor.Tensor))
	assert.Equal(t, []int8{-128, -5}, i8)
	_, err = call(t, "aten.neg.default", []ops.Value{tensor.MustFromData(tensor.Bool, []int{1}, []bool{true})})
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)

	// alias and detach return the tensor itself; _to_copy copies and casts.
	v, err = call(t, "aten.alias.default", []ops.Value{x})
	require.NoError(t, err)
	assert.Same(t, x, v)
	v, err = call(t, "aten._to_copy.default", []ops.Value{x}, ops.Kwarg{Name: "dtype", Value: tensor.Int64})
	require.NoError(t, err)
	i64, _ := tensor.Data[int64](v.(*tensor.Tensor))
	assert.Equal(t, []int64{-4, 1, 5}, i64)
	v, err = call(t, "aten._to_copy.default", []ops.Value{x})
	require.NoError(t, err)
	assert.NotSame(t, x, v)
	assert.Equal(t, []float32{-4, 1, 5}, f32s(t, v))

	// hardswish(3)=3, hardswish(-4)=0 (−4·0/6 = −0), hardswish(1)=1·4/6.
	v, err = call(t, "aten.hardswish_.default", []ops.Value{tensor.F32([]int{3}, 3, -4, 1)})
	require.NoError(t, err)
	got := f32s(t, v)
	assert.Equal(t, []float32{3, 0, float32(4) / 6}, got)
	assert.True(t, math.Signbit(float64(got[1])), "hardswish(-4) is -0")
}

// TestElemRules: the result-type rules of the new rows.
func TestElemRules(t *testing.T) {
	reg := ops.Default()
	f := ops.TensorType{Shape: []int64{2, 3}, Elem: ops.Scalar{DType: tensor.Float32}}
	i := ops.TensorType{Shape: []int64{4}, Elem: ops.Scalar{DType: tensor.Int64}}
	for _, tc := range []struct {
		op   string
		args []ops.Value
		want string
	}{
		{"aten.hardswish_.default", []ops.Value{f}, "f32[2, 3]"},
		{"aten.pow.Tensor_Scalar", []ops.Value{i, 0.5}, "f32[4]"},
		{"aten.pow.Tensor_Scalar", []ops.Value{i, int64(2)}, "i64[4]"},
		{"aten._to_copy.default", []ops.Value{f, nil, nil, nil, nil, false, nil}, "f32[2, 3]"},
		{"aten.native_dropout.default", []ops.Value{f, 0.1, false}, "(f32[2, 3], b8[2, 3])"},
	} {
		def, ok := reg.Op(ops.MustOverload(tc.op))
		require.True(t, ok, tc.op)
		typ, err := def.Result(tc.args)
		require.NoError(t, err, tc.op)
		assert.Equal(t, tc.want, typ.String(), tc.op)
	}
}

// TestInPlaceKeepsSelfLayout: an in-place op's result has self's strides
// (a transposed self stays transposed), with the values of the functional
// op: [[1,2,3],[4,5,6]].T + 10.
func TestInPlaceKeepsSelfLayout(t *testing.T) {
	base := tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	self, err := base.Transpose(0, 1) // shape [3, 2], strides [1, 3]
	require.NoError(t, err)
	v, err := call(t, "aten.add_.Scalar", []ops.Value{self, 10.0})
	require.NoError(t, err)
	out := v.(*tensor.Tensor)
	assert.Equal(t, []int{3, 2}, out.Shape())
	assert.Equal(t, []int{1, 3}, out.Strides())
	vals, err := out.Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{11, 14, 12, 15, 13, 16}, vals)
}
