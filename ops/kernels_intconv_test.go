package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestOutDTypeConvolutionInt32 runs out_dtype(convolution, int32, ...) as
// the reference representation's static conv2d entry emits it: int16
// operands (x - zp, w - zp) promoted to int32 and convolved exactly.
func TestOutDTypeConvolutionInt32(t *testing.T) {
	// x = 1..9 (3x3) minus zero point 5: -4..4; w = [[1, -1], [2, 0]], so
	// each output is top-left - top-right + 2·bottom-left:
	// (0,0): -4 - (-3) + 2·(-1) = -3    (0,1): -3 - (-2) + 2·0 = -1
	// (1,0): -1 - 0 + 2·2 = 3           (1,1): 0 - 1 + 2·3 = 5
	x := tensor.MustFromData(tensor.Int16, []int{1, 1, 3, 3}, []int16{-4, -3, -2, -1, 0, 1, 2, 3, 4})
	w := tensor.MustFromData(tensor.Int16, []int{1, 1, 2, 2}, []int16{1, -1, 2, 0})
	pair := func(a, b int64) ops.List { return ops.List{a, b} }
	tests := []struct {
		name    string
		op      ops.Value
		wantErr string // empty: the call succeeds
	}{
		{"overload", ops.MustOverload("aten.convolution.default"), ""},
		// out_dtype takes the OpOverload object, never its name or packet.
		{"op name string", "aten.convolution.default", `argument 0 "op": want an op overload`},
		{"packet", ops.MustPacket("aten.convolution"), `argument 0 "op": want an op overload`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := call(t, "higher_order.out_dtype.default", []ops.Value{tt.op, tensor.Int32, x, w, nil,
				pair(1, 1), pair(0, 0), pair(1, 1), false, pair(0, 0), int64(1)})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			y, ok := out.(*tensor.Tensor)
			require.True(t, ok, "got %T", out)
			assert.Equal(t, tensor.Int32, y.DType())
			assert.Equal(t, []int{1, 1, 2, 2}, y.Shape())
			got, err := y.Int64s()
			require.NoError(t, err)
			assert.Equal(t, []int64{-3, -1, 3, 5}, got)
		})
	}
}

// TestMaxPoolWithIndicesInt32 runs aten.max_pool2d_with_indices.default on
// int32 input through the default registry, as the reference max_pool2d
// entry does.
func TestMaxPoolWithIndicesInt32(t *testing.T) {
	x := tensor.MustFromData(tensor.Int32, []int{1, 1, 2, 4}, []int32{-3, 7, 2, 2, -9, 0, 5, -1})
	two := ops.List{int64(2), int64(2)}
	out, err := call(t, "aten.max_pool2d_with_indices.default", []ops.Value{x, two, two, ops.List{int64(0), int64(0)}, ops.List{int64(1), int64(1)}, false})
	require.NoError(t, err)
	tup, ok := out.(ops.Tuple)
	require.True(t, ok, "got %T", out)
	require.Len(t, tup, 2)
	y, idx := tup[0].(*tensor.Tensor), tup[1].(*tensor.Tensor)
	assert.Equal(t, tensor.Int32, y.DType())
	// Windows {-3, 7, -9, 0} and {2, 2, 5, -1}: 7 at flat 1, 5 at flat 6.
	vals, err := y.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{7, 5}, vals)
	ids, err := idx.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 6}, ids)
}
