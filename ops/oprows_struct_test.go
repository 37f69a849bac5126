package ops

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func tuple(ts ...TensorType) TupleType {
	out := TupleType{}
	for _, t := range ts {
		out.Elems = append(out.Elems, t)
	}
	return out
}

// The expected types are hand-computed from each op's definition:
// chunk takes pieces of ceil(size / chunks), split pieces of split_size
// with a smaller last one, unflatten infers one -1, stack inserts a
// dimension of the list's length.
func TestStructResultTypes(t *testing.T) {
	tests := []struct {
		name   string
		target string
		args   []Value
		want   Type
	}{
		// ceil(6 / 4) = 2: three pieces of 2, not four.
		{"chunk 6 by 4", "aten.chunk.default", []Value{f32(2, 6, 5), int64(4), int64(1)}, tuple(f32(2, 2, 5), f32(2, 2, 5), f32(2, 2, 5))},
		{"chunk last dim", "aten.chunk.default", []Value{f32(2, 6, 5), int64(2), int64(-1)}, tuple(f32(2, 6, 3), f32(2, 6, 2))},
		{"chunk empty dim", "aten.chunk.default", []Value{f32(0, 3), int64(2)}, tuple(f32(0, 3), f32(0, 3))},
		{"split 6 by 4", "aten.split.Tensor", []Value{f32(2, 6, 5), int64(4), int64(1)}, tuple(f32(2, 4, 5), f32(2, 2, 5))},
		{"split_with_sizes", "aten.split_with_sizes.default", []Value{f32(2, 6, 5), ints(1, 0, 5), int64(1)}, tuple(f32(2, 1, 5), f32(2, 0, 5), f32(2, 5, 5))},
		{"unbind", "aten.unbind.int", []Value{f32(2, 3), int64(1)}, tuple(f32(2), f32(2), f32(2))},
		{"unflatten infer", "aten.unflatten.int", []Value{f32(1, 16, 96), int64(-1), ints(3, -1)}, f32(1, 16, 3, 32)},
		{"stack middle", "aten.stack.default", []Value{List{f32(2, 5), f32(2, 5), f32(2, 5)}, int64(1)}, f32(2, 3, 5)},
		{"stack end", "aten.stack.default", []Value{List{f32(2, 5), f32(2, 5)}, int64(-1)}, f32(2, 5, 2)},
		// (5-1)*2 - 2*1 + 1*(3-1) + 1 + 1 = 10; out channels = weight[1]*groups = 4
		{"conv_transpose2d", "aten.conv_transpose2d.input", []Value{f32(1, 8, 5, 5), f32(8, 4, 3, 3), nil, ints(2, 2), ints(1, 1), ints(1, 1)}, f32(1, 4, 10, 10)},
		{"dropout_", "aten.dropout_.default", []Value{f32(2, 3), 0.1, false}, f32(2, 3)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resultOf(t, tc.target, tc.args)
			require.NoError(t, err)
			require.True(t, tc.want.Equal(got), "want %v, got %v", tc.want, got)
		})
	}
}

func TestStructResultTypeErrors(t *testing.T) {
	tests := []struct {
		name   string
		target string
		args   []Value
	}{
		{"chunk 0", "aten.chunk.default", []Value{f32(2, 6), int64(0)}},
		{"split 0 of non-empty", "aten.split.Tensor", []Value{f32(2, 6), int64(0)}},
		{"split sizes do not add up", "aten.split_with_sizes.default", []Value{f32(2, 6), ints(1, 2), int64(1)}},
		{"split negative size", "aten.split_with_sizes.default", []Value{f32(2, 6), ints(7, -1), int64(1)}},
		{"unflatten wrong product", "aten.unflatten.int", []Value{f32(2, 6), int64(1), ints(4, -1)}},
		{"unflatten empty sizes", "aten.unflatten.int", []Value{f32(2, 6), int64(1), List{}}},
		{"stack shapes differ", "aten.stack.default", []Value{List{f32(2, 5), f32(2, 4)}, int64(0)}},
		{"unbind 0-dim", "aten.unbind.int", []Value{f32()}},
		{"dim out of range", "aten.chunk.default", []Value{f32(2, 6), int64(2), int64(2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resultOf(t, tc.target, tc.args)
			require.Error(t, err)
		})
	}
}

// TestSpanMap checks the axis maps of the views that replace a span of
// axes, worked by hand for a rank-4 input.
func TestSpanMap(t *testing.T) {
	// flatten(1, 2): axes 0 | 1 2 -> 1 | 3 -> 2.
	require.Equal(t, []int{0, -1, -1, 2}, spanMap(4, 1, 2, 1))
	// flatten(2, 2) keeps every axis.
	require.Equal(t, []int{0, 1, 2, 3}, spanMap(4, 2, 2, 1))
	// unflatten(1, [2, 3, 4]): axis 1 becomes 1..3, axes 2, 3 move to 4, 5.
	require.Equal(t, []int{0, -1, 4, 5}, spanMap(4, 1, 1, 3))
	// select / unbind dim 2: axis 2 is gone, axis 3 moves to 2.
	require.Equal(t, []int{0, 1, -1, 2}, spanMap(4, 2, 2, 0))
}
