package ops_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestWrappedNumberResultTypes checks the result-type rules of the .Tensor
// arithmetic overloads when an operand is a Python number (a wrapped
// number). The dtypes are PyTorch's promotion rules worked by hand: a
// wrapped number never raises the result above the tensors' category
// (int8 + 12 stays int8), except that a float number with an integer or
// bool tensor gives the default float32, and an int number with a bool
// tensor gives int64; two numbers give a 0-dim tensor.
func TestWrappedNumberResultTypes(t *testing.T) {
	pl := ops.Plain
	tests := []struct {
		name, op string
		args     []ops.Value
		want     ops.Type
	}{
		{"int8 tensor + 12", "aten.add.Tensor", []ops.Value{pl(tensor.Int8, 4, 32), int64(12)}, pl(tensor.Int8, 4, 32)},
		{"int32 tensor + 12", "aten.add.Tensor", []ops.Value{pl(tensor.Int32, 4), int64(12)}, pl(tensor.Int32, 4)},
		{"uint8 tensor - 300 stays uint8", "aten.sub.Tensor", []ops.Value{pl(tensor.UInt8, 2), int64(300)}, pl(tensor.UInt8, 2)},
		{"int32 tensor / 0.5", "aten.div.Tensor", []ops.Value{pl(tensor.Int32, 3), 0.5}, pl(tensor.Float32, 3)},
		{"int32 tensor / 2 is true division", "aten.div.Tensor", []ops.Value{pl(tensor.Int32, 3), int64(2)}, pl(tensor.Float32, 3)},
		{"float32 tensor * 0.1", "aten.mul.Tensor", []ops.Value{pl(tensor.Float32, 2, 2), 0.1}, pl(tensor.Float32, 2, 2)},
		{"float16 tensor * 0.1 stays float16", "aten.mul.Tensor", []ops.Value{pl(tensor.Float16, 2), 0.1}, pl(tensor.Float16, 2)},
		{"float32 tensor - 12", "aten.sub.Tensor", []ops.Value{pl(tensor.Float32, 5), int64(12)}, pl(tensor.Float32, 5)},
		{"number first: 0.5 * int8 tensor", "aten.mul.Tensor", []ops.Value{0.5, pl(tensor.Int8, 3)}, pl(tensor.Float32, 3)},
		{"bool tensor + True", "aten.add.Tensor", []ops.Value{pl(tensor.Bool, 3), true}, pl(tensor.Bool, 3)},
		{"bool tensor + 1", "aten.add.Tensor", []ops.Value{pl(tensor.Bool, 3), int64(1)}, pl(tensor.Int64, 3)},
		{"bool tensor * 2.5", "aten.mul.Tensor", []ops.Value{pl(tensor.Bool, 3), 2.5}, pl(tensor.Float32, 3)},
		{"int8 tensor * True", "aten.mul.Tensor", []ops.Value{pl(tensor.Int8, 3), true}, pl(tensor.Int8, 3)},
		{"0-dim int64 tensor + 2.5", "aten.add.Tensor", []ops.Value{pl(tensor.Int64), 2.5}, pl(tensor.Float32)},
		{"two floats: 0-dim float32", "aten.div.Tensor", []ops.Value{0.008250712417066097, 0.01946624554693699}, pl(tensor.Float32)},
		{"two ints: 0-dim int64", "aten.add.Tensor", []ops.Value{int64(3), int64(4)}, pl(tensor.Int64)},
		{"two ints divided: 0-dim float32", "aten.div.Tensor", []ops.Value{int64(7), int64(2)}, pl(tensor.Float32)},
		{"two bools: 0-dim bool", "aten.mul.Tensor", []ops.Value{true, false}, pl(tensor.Bool)},
		// The 0-dim float32 quotient above times an int32 tensor: the 0-dim
		// tensor's float category wins over the int32 tensor's.
		{"0-dim float32 * int32 tensor", "aten.mul.Tensor", []ops.Value{pl(tensor.Float32), pl(tensor.Int32, 1, 8, 16, 16)}, pl(tensor.Float32, 1, 8, 16, 16)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, ok := ops.Default().Op(ops.MustOverload(tt.op))
			require.True(t, ok)
			full, err := def.Schema.Normalize(tt.args, nil)
			require.NoError(t, err)
			got, err := def.Result(full)
			require.NoError(t, err)
			assert.True(t, ops.TypesEqual(tt.want, got), "want %s, got %s", tt.want, got)
		})
	}
}

// TestWrappedNumberKernels runs the .Tensor kernels with Python numbers:
// dtypes as above, values computed by hand (float32 arithmetic after
// casting the number to float32, integer arithmetic in the tensor's
// dtype).
func TestWrappedNumberKernels(t *testing.T) {
	i8 := tensor.MustFromData(tensor.Int8, []int{3}, []int8{-128, 0, 115})
	i32 := tensor.MustFromData(tensor.Int32, []int{2}, []int32{3, -7})
	b := tensor.MustFromData(tensor.Bool, []int{2}, []bool{true, false})
	f := tensor.F32([]int{2}, 1, 0.25)
	tests := []struct {
		name, op string
		args     []ops.Value
		dtype    tensor.DType
		shape    []int
		want     []float64
	}{
		// int8 wraps like C: 115 + 12 = 127, -128 + 12 = -116.
		{"int8 + 12", "aten.add.Tensor", []ops.Value{i8, int64(12)}, tensor.Int8, []int{3}, []float64{-116, 12, 127}},
		{"int32 / 0.5", "aten.div.Tensor", []ops.Value{i32, 0.5}, tensor.Float32, []int{2}, []float64{6, -14}},
		{"int32 - 12", "aten.sub.Tensor", []ops.Value{i32, int64(12)}, tensor.Int32, []int{2}, []float64{-9, -19}},
		{"float32 * 0.1", "aten.mul.Tensor", []ops.Value{f, 0.1}, tensor.Float32, []int{2}, []float64{float64(float32(0.1)), float64(float32(0.25) * float32(0.1))}},
		{"bool + True stays bool", "aten.add.Tensor", []ops.Value{b, true}, tensor.Bool, []int{2}, []float64{1, 1}},
		{"bool + 1 is int64", "aten.add.Tensor", []ops.Value{b, int64(1)}, tensor.Int64, []int{2}, []float64{2, 1}},
		{"2.5 * bool", "aten.mul.Tensor", []ops.Value{2.5, b}, tensor.Float32, []int{2}, []float64{2.5, 0}},
		// Both numbers are cast to float32 before dividing.
		{"two floats", "aten.div.Tensor", []ops.Value{0.008250712417066097, 0.01946624554693699}, tensor.Float32, []int{}, []float64{float64(float32(0.008250712417066097) / float32(0.01946624554693699))}},
		{"two ints", "aten.sub.Tensor", []ops.Value{int64(3), int64(10)}, tensor.Int64, []int{}, []float64{-7}},
		{"7 / 2", "aten.div.Tensor", []ops.Value{int64(7), int64(2)}, tensor.Float32, []int{}, []float64{3.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := call(t, tt.op, tt.args)
			require.NoError(t, err)
			out, ok := v.(*tensor.Tensor)
			require.True(t, ok, "result is %T", v)
			assert.Equal(t, tt.dtype, out.DType())
			assert.Equal(t, len(tt.shape), out.Dim())
			if len(tt.shape) > 0 {
				assert.Equal(t, tt.shape, out.Shape())
			}
			got, err := out.Float64s()
			require.NoError(t, err)
			require.Len(t, got, len(tt.want))
			for i := range got {
				if tt.dtype == tensor.Float32 {
					assert.Equal(t, math.Float32bits(float32(tt.want[i])), math.Float32bits(float32(got[i])), "element %d: want %v, got %v", i, tt.want[i], got[i])
				} else {
					assert.Equal(t, tt.want[i], got[i], "element %d", i)
				}
			}
		})
	}
}

// TestWrappedNumberKernelErrors: a string is no number, and the .Scalar
// overloads still want a tensor self.
func TestWrappedNumberKernelErrors(t *testing.T) {
	_, err := call(t, "aten.add.Tensor", []ops.Value{tensor.F32([]int{1}, 1), "12"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"other"`)
	_, err = call(t, "aten.add.Scalar", []ops.Value{1.5, int64(2)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"self"`)
}
