package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func TestCat(t *testing.T) {
	a := tensor.F32([]int{2, 1}, 1, 2)
	b := tensor.F32([]int{2, 2}, 3, 4, 5, 6)
	got, err := kernels.Cat([]*tensor.Tensor{a, b, tensor.F32([]int{0})}, 1)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, got.Shape())
	requireBits(t, []float32{1, 3, 4, 2, 5, 6}, got)

	bt, _ := b.Transpose(0, 1) // [[3,5],[4,6]]
	got, err = kernels.Cat([]*tensor.Tensor{bt, b}, 0)
	require.NoError(t, err)
	requireBits(t, []float32{3, 5, 4, 6, 3, 4, 5, 6}, got)

	_, err = kernels.Cat([]*tensor.Tensor{a, b}, 0)
	require.ErrorIs(t, err, tensor.ErrShape)
	assert.Contains(t, err.Error(), "tensors[1]")
	_, err = kernels.Cat([]*tensor.Tensor{a, tensor.MustFromData(tensor.Int32, []int{2, 1}, []int32{1, 2})}, 1)
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
}

func TestEmbeddingAndDropout(t *testing.T) {
	w := tensor.F32([]int{3, 2}, 0, 1, 10, 11, 20, 21)
	idx := tensor.MustFromData(tensor.Int64, []int{2, 2}, []int64{2, 0, 1, 2})
	got, err := kernels.Embedding(w, idx)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 2}, got.Shape())
	requireBits(t, []float32{20, 21, 0, 1, 10, 11, 20, 21}, got)

	_, err = kernels.Embedding(w, tensor.MustFromData(tensor.Int64, []int{1}, []int64{3}))
	require.ErrorIs(t, err, kernels.ErrBadArgument)
	assert.Contains(t, err.Error(), "index 3")

	same, err := kernels.Dropout(w, 0.5, false)
	require.NoError(t, err)
	assert.Same(t, w, same)
	_, err = kernels.Dropout(w, 0.5, true)
	require.ErrorIs(t, err, kernels.ErrBadArgument)
}

func TestScaledDotProductAttention(t *testing.T) {
	// L=1, S=2, E=1, q = k = 0: equal scores, so the output is the mean
	// of the values, (1+3)/2.
	q := tensor.F32([]int{1, 1}, 0)
	k := tensor.F32([]int{2, 1}, 0, 0)
	v := tensor.F32([]int{2, 1}, 1, 3)
	got, err := kernels.ScaledDotProductAttention(q, k, v, nil, 0, false, 0, false)
	require.NoError(t, err)
	requireBits(t, []float32{2}, got)

	// Causal with L = S = 2: row 0 sees only v0, row 1 averages.
	q2 := tensor.F32([]int{2, 1}, 0, 0)
	got, err = kernels.ScaledDotProductAttention(q2, k, v, nil, 0, true, 0, false)
	require.NoError(t, err)
	requireBits(t, []float32{1, 2}, got)

	// A bool mask hiding position 0 selects v1; an additive float mask of
	// ln 3 on position 1 weights it 3:1, giving (1 + 3·3)/4.
	got, err = kernels.ScaledDotProductAttention(q, k, v, tensor.MustFromData(tensor.Bool, []int{1, 2}, []bool{false, true}), 0, false, 0, false)
	require.NoError(t, err)
	requireBits(t, []float32{3}, got)
	got, err = kernels.ScaledDotProductAttention(q, k, v, tensor.F32([]int{2}, 0, float32(math.Log(3))), 0, false, 0, false)
	require.NoError(t, err)
	requireClose(t, []float64{2.5}, f32s(t, got), 1e-6)

	// Scores scale by 1/sqrt(E): with E = 4 and every q element ln(3)/2,
	// q·k1 = 2 ln 3 and the default scale 1/2 turns it into ln 3, so the
	// weights are 1:3 again.
	e := float32(math.Log(3)) / 2
	q4 := tensor.F32([]int{1, 4}, e, e, e, e)
	k4 := tensor.F32([]int{2, 4}, 0, 0, 0, 0, 1, 1, 1, 1)
	got, err = kernels.ScaledDotProductAttention(q4, k4, v, nil, 0, false, 0, false)
	require.NoError(t, err)
	requireClose(t, []float64{2.5}, f32s(t, got), 1e-6)

	// GQA: 2 query heads share 1 key/value head.
	qh := tensor.F32([]int{2, 1, 1}, 0, 0)
	kh := tensor.F32([]int{1, 2, 1}, 0, 0)
	vh := tensor.F32([]int{1, 2, 1}, 1, 3)
	got, err = kernels.ScaledDotProductAttention(qh, kh, vh, nil, 0, false, 0, true)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1, 1}, got.Shape())
	requireBits(t, []float32{2, 2}, got)

	_, err = kernels.ScaledDotProductAttention(q, tensor.F32([]int{2, 2}, 0, 0, 0, 0), v, nil, 0, false, 0, false)
	require.ErrorIs(t, err, tensor.ErrShape)
	assert.Contains(t, err.Error(), `"key"`)
}
