package ops

import (
	"errors"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestViewType(t *testing.T) {
	q := mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.25, -1)
	pa := mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 1, []float64{0.1, 0.2, 0.3}, []int64{0, 0, 0})
	withAxis := func(a int) UniformQuantizedPerAxis { c := pa; c.Axis = a; return c }
	tests := []struct {
		name    string
		src     TensorType
		shape   []int64
		axisMap []int
		want    TensorType
		err     error
	}{
		{"per-tensor keeps element", TensorType{Shape: []int64{2, 6}, Elem: q}, []int64{3, 4}, nil, TensorType{Shape: []int64{3, 4}, Elem: q}, nil},
		{"element count mismatch", TensorType{Shape: []int64{2, 6}, Elem: q}, []int64{5}, nil, TensorType{}, ErrShape},
		// [4, 3, 5] -> [4, 3, 5, 1]: axis 1 (size 3, 4 elements before) survives at 1.
		{"reshape keeps per-axis dim", TensorType{Shape: []int64{4, 3, 5}, Elem: pa}, []int64{4, 3, 5, 1}, nil, TensorType{Shape: []int64{4, 3, 5, 1}, Elem: pa}, nil},
		// [4, 3, 5] -> [1, 4, 3, 5]: the quantized dim moves to index 2.
		{"reshape moves per-axis dim", TensorType{Shape: []int64{4, 3, 5}, Elem: pa}, []int64{1, 4, 3, 5}, nil, TensorType{Shape: []int64{1, 4, 3, 5}, Elem: withAxis(2)}, nil},
		{"reshape merging the axis is refused", TensorType{Shape: []int64{4, 3, 5}, Elem: pa}, []int64{12, 5}, nil, TensorType{}, ErrBadAxis},
		{"transpose remaps by axis map", TensorType{Shape: []int64{4, 3}, Elem: pa}, []int64{3, 4}, []int{1, 0}, TensorType{Shape: []int64{3, 4}, Elem: withAxis(0)}, nil},
		{"axis map dropping the axis is refused", TensorType{Shape: []int64{4, 3}, Elem: pa}, []int64{12}, []int{0, -1}, TensorType{}, ErrBadAxis},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ViewType(tt.src, tt.shape, tt.axisMap...)
			if tt.err != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tt.err), "got %v", err)
				return
			}
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(got), "want %v, got %v", tt.want, got)
		})
	}
}

func TestContractAndMakeType(t *testing.T) {
	q := mustQ(t, tensor.UInt8, 0, 255, tensor.Float32, 0.1, 128)
	replaced := TensorType{Shape: []int64{1, 8, 4, 4}, Elem: q}
	got, err := ContractType(replaced, []int64{1, 8, 4, 4})
	require.NoError(t, err)
	assert.True(t, replaced.Equal(got))
	got.Shape[0] = 9
	assert.Equal(t, int64(1), replaced.Shape[0], "the result owns its shape")

	pa := mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 1, []float64{0.1, 0.2}, []int64{0, 0})
	_, err = MakeType([]int64{3, 4}, pa)
	assert.True(t, errors.Is(err, ErrBadAxis), "2 scales on a dim of size 4: %v", err)
	_, err = MakeType([]int64{3}, pa)
	assert.True(t, errors.Is(err, ErrBadAxis), "axis 1 on rank 1: %v", err)
	tt, err := MakeType([]int64{3, DynamicDim}, pa)
	require.NoError(t, err, "a dynamic dim at the axis is accepted")
	assert.Equal(t, "!quant.uniform<i8:f32:1, {0.1,0.2}>[3, ?]", tt.String())
	_, err = MakeType([]int64{3}, nil)
	assert.Error(t, err)
	_, err = MakePlainType([]int64{3}, tensor.Unknown)
	assert.Error(t, err)
	w, err := WithElement(Plain(tensor.Float32, 2, 2), q)
	require.NoError(t, err)
	assert.True(t, TensorType{Shape: []int64{2, 2}, Elem: q}.Equal(w))
}
