package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestOutDTypeKernelDTypes runs higher_order.out_dtype through the default
// registry with out_dtype values that have no kernel arithmetic: each is
// an error naming the dtype, never a panic, for the inner ops kernels.OutDType
// handles (mul) and for those run through their own kernel (relu).
func TestOutDTypeKernelDTypes(t *testing.T) {
	x := tensor.F32([]int{2}, 1, -2)
	tests := []struct {
		name    string
		op      ops.Overload
		args    []ops.Value
		dt      tensor.DType
		wantMsg string
	}{
		{"mul float8", ops.MustOverload("aten.mul.Tensor"), []ops.Value{x, x}, tensor.Float8E4M3FN, "float8_e4m3fn"},
		{"mul complex32", ops.MustOverload("aten.mul.Tensor"), []ops.Value{x, x}, tensor.Complex32, "complex32"},
		{"relu float8", ops.MustOverload("aten.relu.default"), []ops.Value{x}, tensor.Float8E5M2, "float8_e5m2"},
		{"relu complex32", ops.MustOverload("aten.relu.default"), []ops.Value{x}, tensor.Complex32, "complex32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]ops.Value{tc.op, tc.dt}, tc.args...)
			got, err := call(t, "higher_order.out_dtype.default", args)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, kernels.ErrUnsupportedDType)
			assert.ErrorContains(t, err, tc.wantMsg)
		})
	}
	t.Run("unknown dtype", func(t *testing.T) {
		got, err := call(t, "higher_order.out_dtype.default", []ops.Value{ops.MustOverload("aten.relu.default"), tensor.Unknown, x})
		require.Error(t, err)
		assert.Nil(t, got)
		assert.ErrorContains(t, err, `"out_dtype"`)
	})
}
