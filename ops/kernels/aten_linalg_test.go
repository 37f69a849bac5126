package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func TestMatrixProducts(t *testing.T) {
	a := tensor.F32([]int{2, 2}, 1, 2, 3, 4)
	b := tensor.F32([]int{2, 2}, 5, 6, 7, 8)
	tests := []struct {
		name  string
		f     func() (*tensor.Tensor, error)
		shape []int
		want  []float32
	}{
		// [[1,2],[3,4]]·[[5,6],[7,8]] = [[19,22],[43,50]].
		{"mm", func() (*tensor.Tensor, error) { return kernels.Mm(a, b) }, []int{2, 2}, []float32{19, 22, 43, 50}},
		// 0.5·[1,1] + 2·mm.
		{"addmm", func() (*tensor.Tensor, error) { return kernels.Addmm(tensor.F32([]int{2}, 1, 1), a, b, 0.5, 2) }, []int{2, 2}, []float32{38.5, 44.5, 86.5, 100.5}},
		// linear: x·wᵀ + b with w = b's rows: [1,2]·[5,6] = 17, [1,2]·[7,8] = 23.
		{"linear", func() (*tensor.Tensor, error) { return kernels.Linear(a, b, tensor.F32([]int{2}, 1, -1)) }, []int{2, 2}, []float32{18, 22, 40, 52}},
		{"linear no bias 3-D", func() (*tensor.Tensor, error) {
			x, _ := a.Reshape(1, 2, 2)
			return kernels.Linear(x, b, nil)
		}, []int{1, 2, 2}, []float32{17, 23, 39, 53}},
		{"matmul dot", func() (*tensor.Tensor, error) {
			return kernels.Matmul(tensor.F32([]int{3}, 1, 2, 3), tensor.F32([]int{3}, 4, 5, 6))
		}, nil, []float32{32}},
		{"matmul matrix-vector", func() (*tensor.Tensor, error) { return kernels.Matmul(a, tensor.F32([]int{2}, 1, 1)) }, []int{2}, []float32{3, 7}},
		{"matmul vector-matrix", func() (*tensor.Tensor, error) { return kernels.Matmul(tensor.F32([]int{2}, 1, 1), a) }, []int{2}, []float32{4, 6}},
		{"matmul broadcast batch", func() (*tensor.Tensor, error) {
			x := tensor.F32([]int{2, 1, 2}, 1, 0, 0, 1)
			return kernels.Matmul(x, a)
		}, []int{2, 1, 2}, []float32{1, 2, 3, 4}},
		{"bmm", func() (*tensor.Tensor, error) {
			x := tensor.F32([]int{2, 1, 2}, 1, 0, 0, 1)
			y := tensor.F32([]int{2, 2, 1}, 1, 2, 3, 4)
			return kernels.Bmm(x, y)
		}, []int{2, 1, 1}, []float32{1, 4}},
		{"linear transposed input view", func() (*tensor.Tensor, error) {
			xt, _ := a.Transpose(0, 1) // [[1,3],[2,4]]
			return kernels.Linear(xt, b, nil)
		}, []int{2, 2}, []float32{23, 31, 34, 46}},
		{"linear empty batch", func() (*tensor.Tensor, error) {
			return kernels.Linear(tensor.F32([]int{0, 2}), b, tensor.F32([]int{2}, 1, 1))
		}, []int{0, 2}, []float32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f()
			require.NoError(t, err)
			assert.Equal(t, tt.shape, got.Shape())
			requireBits(t, tt.want, got)
		})
	}
}

func TestMatrixProductErrors(t *testing.T) {
	a := tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	tests := []struct {
		name     string
		f        func() (*tensor.Tensor, error)
		sentinel error
		mention  string
	}{
		{"linear weight shape", func() (*tensor.Tensor, error) {
			return kernels.Linear(a, tensor.F32([]int{4, 2}, make([]float32, 8)...), nil)
		}, tensor.ErrShape, `"weight"`},
		{"linear bias shape", func() (*tensor.Tensor, error) {
			return kernels.Linear(a, tensor.F32([]int{4, 3}, make([]float32, 12)...), tensor.F32([]int{3}, 0, 0, 0))
		}, tensor.ErrShape, `"bias"`},
		{"linear int input", func() (*tensor.Tensor, error) {
			return kernels.Linear(tensor.MustFromData(tensor.Int8, []int{1, 3}, []int8{1, 2, 3}), tensor.F32([]int{1, 3}, 1, 1, 1), nil)
		}, kernels.ErrUnsupportedDType, `"input"`},
		{"mm inner dims", func() (*tensor.Tensor, error) { return kernels.Mm(a, a) }, tensor.ErrShape, "mat2"},
		{"matmul inner dims", func() (*tensor.Tensor, error) { return kernels.Matmul(a, a) }, tensor.ErrShape, "inner dims"},
		{"bmm rank", func() (*tensor.Tensor, error) { return kernels.Bmm(a, a) }, tensor.ErrShape, "3-D"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.f()
			require.ErrorIs(t, err, tt.sentinel)
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

func BenchmarkLinear(b *testing.B) {
	x := tensor.F32([]int{64, 1024}, lcg(64*1024, 1)...)
	w := tensor.F32([]int{1024, 1024}, lcg(1024*1024, 2)...)
	bias := tensor.F32([]int{1024}, lcg(1024, 3)...)
	b.ReportAllocs()
	b.SetBytes(4 * (64*1024 + 1024*1024 + 64*1024))
	for b.Loop() {
		if _, err := kernels.Linear(x, w, bias); err != nil {
			b.Fatal(err)
		}
	}
	// 2·M·K·N floating-point operations per call.
	b.ReportMetric(2*64*1024*1024*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
