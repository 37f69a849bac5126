package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestEveryAtenRowHasAKernel lists the hand-written aten rows (the ops
// with a result-type rule) of the default registry that cannot run.
func TestEveryAtenRowHasAKernel(t *testing.T) {
	reg := ops.Default()
	n := 0
	for _, o := range reg.All() {
		def, _ := reg.Op(o)
		if o.Packet.NS != "aten" || def.Result == nil {
			continue
		}
		n++
		assert.NotNil(t, def.Kernel, "%s has no kernel", o)
	}
	assert.Greater(t, n, 50)
}

// call runs an overload of the default registry on positional and
// keyword arguments, normalised by its schema.
func call(t *testing.T, name string, args []ops.Value, kwargs ...ops.Kwarg) (ops.Value, error) {
	t.Helper()
	o, ok := ops.MustParseTarget(name).(ops.Overload)
	require.True(t, ok)
	def, ok := ops.Default().Op(o)
	require.True(t, ok, "%s is not registered", name)
	full, err := def.Schema.Normalize(args, kwargs)
	require.NoError(t, err)
	return def.Kernel(full)
}

func TestAtenAdapters(t *testing.T) {
	x33 := tensor.F32([]int{1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	row := tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	tests := []struct {
		name   string
		op     string
		args   []ops.Value
		kwargs []ops.Kwarg
		shape  []int
		want   []float64
	}{
		// Defaults from the schema: stride=[] means the kernel size.
		{"max_pool2d defaults", "aten.max_pool2d.default", []ops.Value{x33, ops.List{int64(2), int64(2)}}, nil, []int{1, 1, 1, 1}, []float64{5}},
		{"avg_pool2d divisor_override", "aten.avg_pool2d.default", []ops.Value{x33, ops.List{int64(2), int64(2)}, ops.List{int64(1), int64(1)}, ops.List{int64(0), int64(0)}, false, true, int64(2)}, nil, []int{1, 1, 2, 2}, []float64{6, 8, 12, 14}},
		// padding="same": 3x3 ones kernel sums each 3x3 neighbourhood.
		{"conv2d same", "aten.conv2d.padding", []ops.Value{x33, tensor.F32([]int{1, 1, 3, 3}, 1, 1, 1, 1, 1, 1, 1, 1, 1), nil, ops.List{int64(1), int64(1)}, "same"}, nil, []int{1, 1, 3, 3}, []float64{12, 21, 16, 27, 45, 33, 24, 39, 28}},
		{"slice None bounds", "aten.slice.Tensor", []ops.Value{row, int64(1), nil, nil, int64(2)}, nil, []int{2, 2}, []float64{1, 3, 4, 6}},
		{"slice negative start", "aten.slice.Tensor", []ops.Value{row, int64(1), int64(-1)}, nil, []int{2, 1}, []float64{3, 6}},
		{"add alpha kwarg", "aten.add.Tensor", []ops.Value{row, tensor.F32([]int{3}, 1, 1, 1)}, []ops.Kwarg{{Name: "alpha", Value: int64(3)}}, []int{2, 3}, []float64{4, 5, 6, 7, 8, 9}},
		{"sub scalar", "aten.sub.Scalar", []ops.Value{row, 0.5}, nil, []int{2, 3}, []float64{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}},
		{"mean dim keepdim", "aten.mean.dim", []ops.Value{row, ops.List{int64(1)}, true}, nil, []int{2, 1}, []float64{2, 5}},
		{"view -1", "aten.view.default", []ops.Value{row, ops.List{int64(-1)}}, nil, []int{6}, []float64{1, 2, 3, 4, 5, 6}},
		{"t", "aten.t.default", []ops.Value{row}, nil, []int{3, 2}, []float64{1, 4, 2, 5, 3, 6}},
		{"cat", "aten.cat.default", []ops.Value{ops.List{row, row}, int64(0)}, nil, []int{4, 3}, []float64{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}},
		{"hardtanh int bounds", "aten.hardtanh.default", []ops.Value{row, int64(2), int64(4)}, nil, []int{2, 3}, []float64{2, 2, 3, 4, 4, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := call(t, tt.op, tt.args, tt.kwargs...)
			require.NoError(t, err)
			out, ok := v.(*tensor.Tensor)
			require.True(t, ok, "result is %T", v)
			assert.Equal(t, tt.shape, out.Shape())
			got, err := out.Float64s()
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestAtenAdapterTuplesAndErrors(t *testing.T) {
	x := tensor.F32([]int{1, 2, 1, 2}, 3, 5, 2, 4)
	v, err := call(t, "aten._native_batch_norm_legit_no_training.default", []ops.Value{x, nil, nil, tensor.F32([]int{2}, 1, 2), tensor.F32([]int{2}, 4, 1), 0.1, 0.0})
	require.NoError(t, err)
	tup, ok := v.(ops.Tuple)
	require.True(t, ok)
	require.Len(t, tup, 3)
	got, _ := tup[0].(*tensor.Tensor).Float64s()
	assert.Equal(t, []float64{1, 2, 0, 2}, got)

	_, err = call(t, "aten.transpose.int", []ops.Value{x, 0.5, int64(1)})
	require.ErrorIs(t, err, kernels.ErrBadArgument)
	assert.Contains(t, err.Error(), `"dim0"`)

	_, err = call(t, "aten.linear.default", []ops.Value{x, int64(3)})
	require.ErrorIs(t, err, kernels.ErrBadArgument)
	assert.Contains(t, err.Error(), `"weight"`)

	_, err = call(t, "aten.convolution.default", []ops.Value{x, tensor.F32([]int{2}, 1, 1), nil, ops.List{int64(1)}, ops.List{int64(0)}, ops.List{int64(1)}, false, ops.List{int64(0)}, int64(1)})
	require.ErrorIs(t, err, tensor.ErrShape)

	_, err = call(t, "aten._assert_tensor_metadata.default", []ops.Value{x}, ops.Kwarg{Name: "dtype", Value: tensor.Int8})
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
	v, err = call(t, "aten._assert_tensor_metadata.default", []ops.Value{x, ops.List{int64(1), int64(2), int64(1), int64(2)}})
	require.NoError(t, err)
	assert.Nil(t, v)
}
