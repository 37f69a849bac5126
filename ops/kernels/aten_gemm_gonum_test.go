package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats/scalar"

	"github.com/fxquant/fxquant/ops/tensor"
)

// gemmTol bounds the difference between fxquant's float32 products (summed
// in PyTorch's order) and gonum's float64 BLAS on the same inputs: only the
// float32 rounding of K products and sums separates them.
const gemmTol = 1e-4

// TestMatrixProductsAgainstGonum cross-checks Mm, Linear and Bmm with an
// independent implementation, gonum's float64 BLAS (blas64.Gemm), over
// random shapes including ones that take the blocked and parallel paths.
func TestMatrixProductsAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	randMat := func(r, c int) []float32 {
		v := make([]float32, r*c)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	ref := func(a []float32, m, k int, b []float32, n int, transB bool) []float64 {
		g := func(x []float32, r, c int) blas64.General {
			d := make([]float64, len(x))
			for i, v := range x {
				d[i] = float64(v)
			}
			return blas64.General{Rows: r, Cols: c, Stride: c, Data: d}
		}
		out := blas64.General{Rows: m, Cols: n, Stride: n, Data: make([]float64, m*n)}
		tb := blas.NoTrans
		bm := g(b, k, n)
		if transB {
			tb, bm = blas.Trans, g(b, n, k)
		}
		blas64.Gemm(blas.NoTrans, tb, 1, g(a, m, k), bm, 0, out)
		return out.Data
	}
	check := func(name string, want []float64, got *tensor.Tensor) {
		t.Helper()
		g, err := got.Float64s()
		require.NoError(t, err)
		require.Len(t, g, len(want), name)
		for i := range want {
			if !scalar.EqualWithinAbsOrRel(g[i], want[i], gemmTol, gemmTol) {
				t.Fatalf("%s: element %d: gonum %g, fxquant %g", name, i, want[i], g[i])
			}
		}
	}
	for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {64, 128, 96}, {130, 70, 257}} {
		m, k, n := sz[0], sz[1], sz[2]
		a, b := randMat(m, k), randMat(k, n)
		got, err := Mm(tensor.MustFromData(tensor.Float32, []int{m, k}, a), tensor.MustFromData(tensor.Float32, []int{k, n}, b))
		require.NoError(t, err)
		check("mm", ref(a, m, k, b, n, false), got)

		w := randMat(n, k)
		lin, err := Linear(tensor.MustFromData(tensor.Float32, []int{m, k}, a), tensor.MustFromData(tensor.Float32, []int{n, k}, w), nil)
		require.NoError(t, err)
		check("linear", ref(a, m, k, w, n, true), lin)

		a2 := append(append([]float32{}, a...), a...)
		b2 := append(append([]float32{}, b...), b...)
		bmm, err := Bmm(tensor.MustFromData(tensor.Float32, []int{2, m, k}, a2), tensor.MustFromData(tensor.Float32, []int{2, k, n}, b2))
		require.NoError(t, err)
		one := ref(a, m, k, b, n, false)
		check("bmm", append(append([]float64{}, one...), one...), bmm)
	}
}
