package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestQDQKeepInputLayout: PyTorch 2.14.1's quantized_decomposed ops keep
// their input's layout (run with the oracle: a [1, 16, 4, 16] tensor
// transposed to [1, 4, 16, 16] has strides (1024, 16, 64, 1), and so do its
// quantize_per_tensor and that one's dequantize_per_tensor, for the
// .default and .tensor forms; a channels-last [8, 4, 3, 3] weight, strides
// (36, 1, 12, 4), keeps them through quantize_per_channel and
// dequantize_per_channel). The values are those of the same op on a
// contiguous copy.
func TestQDQKeepInputLayout(t *testing.T) {
	vals := make([]float32, 1024)
	for i := range vals {
		vals[i] = float32(i%37-18) / 8
	}
	x, err := tensor.F32([]int{1, 16, 4, 16}, vals...).Transpose(1, 2)
	require.NoError(t, err)
	require.Equal(t, []int{1024, 16, 64, 1}, x.Strides())
	sameValues := func(a, b *tensor.Tensor) {
		t.Helper()
		av, err := a.Float64s()
		require.NoError(t, err)
		bv, err := b.Float64s()
		require.NoError(t, err)
		assert.Equal(t, av, bv)
	}
	run := func(name string, in *tensor.Tensor, rest ...ops.Value) *tensor.Tensor {
		t.Helper()
		v, err := call(t, name, append([]ops.Value{in}, rest...))
		require.NoError(t, err)
		return v.(*tensor.Tensor)
	}
	qargs := []ops.Value{0.1, int64(3), int64(-128), int64(127), tensor.Int8}
	q := run("quantized_decomposed.quantize_per_tensor.default", x, qargs...)
	assert.Equal(t, []int{1024, 16, 64, 1}, q.Strides())
	sameValues(q, run("quantized_decomposed.quantize_per_tensor.default", x.Contiguous(), qargs...))
	d := run("quantized_decomposed.dequantize_per_tensor.default", q, qargs...)
	assert.Equal(t, []int{1024, 16, 64, 1}, d.Strides())
	sameValues(d, run("quantized_decomposed.dequantize_per_tensor.default", q.Contiguous(), qargs...))

	s, err := tensor.FromData(tensor.Float32, []int{}, []float32{0.1})
	require.NoError(t, err)
	z, err := tensor.FromData(tensor.Int64, []int{}, []int64{3})
	require.NoError(t, err)
	q2 := run("quantized_decomposed.quantize_per_tensor.tensor", x, s, z, int64(-128), int64(127), tensor.Int8)
	assert.Equal(t, []int{1024, 16, 64, 1}, q2.Strides())

	// A channels-last weight: [8, 3, 3, 4] permuted to [8, 4, 3, 3].
	w, err := tensor.F32([]int{8, 3, 3, 4}, vals[:288]...).Permute(0, 3, 1, 2)
	require.NoError(t, err)
	require.Equal(t, []int{36, 1, 12, 4}, w.Strides())
	scales := make([]float32, 8)
	for i := range scales {
		scales[i] = 0.05 + float32(i)/100
	}
	sc, err := tensor.FromData(tensor.Float32, []int{8}, scales)
	require.NoError(t, err)
	zp, err := tensor.FromData(tensor.Int64, []int{8}, make([]int64, 8))
	require.NoError(t, err)
	cargs := []ops.Value{sc, zp, int64(0), int64(-127), int64(127), tensor.Int8}
	qc := run("quantized_decomposed.quantize_per_channel.default", w, cargs...)
	assert.Equal(t, []int{36, 1, 12, 4}, qc.Strides())
	sameValues(qc, run("quantized_decomposed.quantize_per_channel.default", w.Contiguous(), cargs...))
	dc := run("quantized_decomposed.dequantize_per_channel.default", qc, cargs...)
	assert.Equal(t, []int{36, 1, 12, 4}, dc.Strides())
}
