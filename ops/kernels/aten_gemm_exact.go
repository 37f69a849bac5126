package kernels

import (
	"runtime"
	"sync"
)

// This file holds the float32 matrix-product core behind [Linear], [Mm],
// [Addmm], [Bmm], [Matmul] and [Convolution]. It reproduces, bit for bit,
// the summation order of the reference BLAS sgemm (netlib) that PyTorch
// 2.14's CPU build on Debian calls through at::native::cpublas::gemm:
//
//   - every output element is its own sequential sum over k = 0, 1, ...,
//     K-1, each product rounded to float32 and then added (no fused
//     multiply-add, no partial sums, no lanes);
//   - with TRANSA='T' (the "dot" form) the sum starts from zero and the
//     existing C is added last: C = alpha·sum + beta·C;
//   - with TRANSA='N' (the "axpy" form) C is scaled by beta first (zeroed
//     for beta = 0, untouched for beta = 1) and the products are added to
//     it: C = ((beta·C + (alpha·b₀)·a₀) + (alpha·b₁)·a₁) + ...
//
// Which form PyTorch's addmm picks depends on the operands' strides (see
// [addmmForm]); with beta = 0 and alpha = 1 both forms give the same bits.
// Go's compiler may fuse x*y + z into one FMA instruction on some targets;
// every product below is wrapped in an explicit float32 conversion, which
// the Go specification says prevents fusion.

// gemmForm names the order in which the reference sgemm builds one output
// element from the existing C, alpha, beta and the products.
type gemmForm uint8

const (
	// formDot is sgemm with TRANSA='T': sum from zero, then alpha·sum + beta·C.
	formDot gemmForm = iota
	// formAxpy is sgemm with TRANSA='N': beta·C first, then each (alpha·x)·y added.
	formAxpy
)

// dotAccumulate adds to c[i*ldc+j], for every i < m and j < n, the
// products a[i*k+l]·b[j*k+l] for l = 0, 1, ..., k-1 in that order, each
// product and each sum rounded to float32 on its own. a holds m packed
// rows of length k, b holds n packed rows of length k. c's initial values
// are the starting sums. Large problems are split over goroutines by
// blocks of outputs; every output is still summed by one goroutine in the
// same order, so the result does not depend on the split.
func dotAccumulate(m, n, k int, a, b, c []float32, ldc int) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	if useVectorKernels && m*n*k >= minVectorGemmWork {
		dotAccumulateVec(m, n, k, a, b, c, ldc)
		return
	}
	workers := runtime.GOMAXPROCS(0)
	work := m * n * k
	const minWorkPerGoroutine = 1 << 18
	if workers > 1 && work >= 2*minWorkPerGoroutine {
		workers = min(workers, work/minWorkPerGoroutine)
		var wg sync.WaitGroup
		if m >= 4*workers || m >= n {
			// Split rows in multiples of the 4-row block.
			step := ((m+workers-1)/workers + 3) &^ 3
			for i0 := 0; i0 < m; i0 += step {
				i1 := min(i0+step, m)
				wg.Add(1)
				go func() {
					defer wg.Done()
					dotRange(i0, i1, 0, n, k, a, b, c, ldc)
				}()
			}
		} else {
			step := ((n+workers-1)/workers + 3) &^ 3
			for j0 := 0; j0 < n; j0 += step {
				j1 := min(j0+step, n)
				wg.Add(1)
				go func() {
					defer wg.Done()
					dotRange(0, m, j0, j1, k, a, b, c, ldc)
				}()
			}
		}
		wg.Wait()
		return
	}
	dotRange(0, m, 0, n, k, a, b, c, ldc)
}

// dotRange is dotAccumulate over rows [i0, i1) and columns [j0, j1),
// blocked 4×4 over outputs with a column-block loop of jBlock columns so
// the b rows stay in cache.
func dotRange(i0, i1, j0, j1, k int, a, b, c []float32, ldc int) {
	const jBlock = 64
	for jb := j0; jb < j1; jb += jBlock {
		je := min(jb+jBlock, j1)
		i := i0
		for ; i+4 <= i1; i += 4 {
			j := jb
			for ; j+4 <= je; j += 4 {
				dot4x4(a[i*k:(i+4)*k], b[j*k:(j+4)*k], k, c[i*ldc+j:], ldc)
			}
			for ; j < je; j++ {
				for r := i; r < i+4; r++ {
					c[r*ldc+j] = dot1(a[r*k:(r+1)*k], b[j*k:(j+1)*k], c[r*ldc+j])
				}
			}
		}
		for ; i < i1; i++ {
			ar := a[i*k : (i+1)*k]
			for j := jb; j < je; j++ {
				c[i*ldc+j] = dot1(ar, b[j*k:(j+1)*k], c[i*ldc+j])
			}
		}
	}
}

// dot1 returns acc + x₀y₀ + x₁y₁ + ... summed left to right, each product
// and sum rounded to float32. len(y) must be at least len(x).
func dot1(x, y []float32, acc float32) float32 {
	y = y[:len(x)]
	for l, xv := range x {
		acc = acc + float32(xv*y[l])
	}
	return acc
}

// dot4x4 accumulates the 4×4 block of outputs c[r*ldc+s] (r, s < 4) from
// rows a[r*k:] and b[s*k:], each output in sequential k order.
func dot4x4(a, b []float32, k int, c []float32, ldc int) {
	a0, a1, a2, a3 := a[:k], a[k:2*k], a[2*k:3*k], a[3*k:4*k]
	b0, b1, b2, b3 := b[:k], b[k:2*k], b[2*k:3*k], b[3*k:4*k]
	_ = c[3*ldc+3]
	c00, c01, c02, c03 := c[0], c[1], c[2], c[3]
	c10, c11, c12, c13 := c[ldc], c[ldc+1], c[ldc+2], c[ldc+3]
	c20, c21, c22, c23 := c[2*ldc], c[2*ldc+1], c[2*ldc+2], c[2*ldc+3]
	c30, c31, c32, c33 := c[3*ldc], c[3*ldc+1], c[3*ldc+2], c[3*ldc+3]
	for l := 0; l < k; l++ {
		y0, y1, y2, y3 := b0[l], b1[l], b2[l], b3[l]
		x := a0[l]
		c00 = c00 + float32(x*y0)
		c01 = c01 + float32(x*y1)
		c02 = c02 + float32(x*y2)
		c03 = c03 + float32(x*y3)
		x = a1[l]
		c10 = c10 + float32(x*y0)
		c11 = c11 + float32(x*y1)
		c12 = c12 + float32(x*y2)
		c13 = c13 + float32(x*y3)
		x = a2[l]
		c20 = c20 + float32(x*y0)
		c21 = c21 + float32(x*y1)
		c22 = c22 + float32(x*y2)
		c23 = c23 + float32(x*y3)
		x = a3[l]
		c30 = c30 + float32(x*y0)
		c31 = c31 + float32(x*y1)
		c32 = c32 + float32(x*y2)
		c33 = c33 + float32(x*y3)
	}
	c[0], c[1], c[2], c[3] = c00, c01, c02, c03
	c[ldc], c[ldc+1], c[ldc+2], c[ldc+3] = c10, c11, c12, c13
	c[2*ldc], c[2*ldc+1], c[2*ldc+2], c[2*ldc+3] = c20, c21, c22, c23
	c[3*ldc], c[3*ldc+1], c[3*ldc+2], c[3*ldc+3] = c30, c31, c32, c33
}

// gemmExact computes the [m, n] result of alpha·(a·b) + beta·c in the
// order of the reference sgemm's given form. a holds mat1 as m packed rows
// of length k; bt holds mat2 as n packed columns of length k (bt[j*k+l] =
// mat2[l, j]). out holds c on entry when hasC is set (already broadcast to
// [m, n], row-major) and receives the result. In the axpy form alpha
// scales the mat1 element of each product when alphaOnMat1 is set and the
// mat2 element otherwise, as TEMP = ALPHA*B(L,J) does. a and bt are not
// modified.
func gemmExact(form gemmForm, alphaOnMat1 bool, m, n, k int, alpha, beta float32, a, bt, out []float32, hasC bool) {
	out = out[:m*n]
	if !hasC || beta == 0 {
		clear(out)
		hasC = false
	}
	if k == 0 || alpha == 0 {
		// Nothing to add: sgemm only scales C (PyTorch's k = 0 branch
		// multiplies self by beta the same way).
		if hasC && beta != 1 {
			for i, v := range out {
				out[i] = beta * v
			}
		}
		return
	}
	switch form {
	case formAxpy:
		if hasC && beta != 1 {
			for i, v := range out {
				out[i] = beta * v
			}
		}
		if alpha != 1 {
			if alphaOnMat1 {
				a = scaled(a[:m*k], alpha)
			} else {
				bt = scaled(bt[:n*k], alpha)
			}
		}
		dotAccumulate(m, n, k, a, bt, out, n)
	default: // formDot
		var c []float32
		if hasC {
			c = append([]float32(nil), out...)
			clear(out)
		}
		dotAccumulate(m, n, k, a, bt, out, n)
		if alpha != 1 {
			for i, v := range out {
				out[i] = alpha * v
			}
		}
		if hasC {
			for i, v := range out {
				out[i] = v + float32(beta*c[i])
			}
		}
	}
}

// scaled returns a new slice holding alpha·v for every v, each rounded to
// float32.
func scaled(x []float32, alpha float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = alpha * v
	}
	return out
}

// addmmForm returns the form of the sgemm call PyTorch's addmm_impl_cpu_
// makes for a fresh contiguous [m, n] result from mat1 [m, k] with strides
// s1 and mat2 [k, n] with strides s2, and whether the axpy form's alpha
// lands on mat1. The result is transposed for BLAS's column-major view
// (mat1 and mat2 swapped) unless n = 1; then the operand in BLAS's A slot
// is passed untransposed (axpy form) when its strides already give a
// column-major matrix of the needed leading dimension, transposed (dot
// form) when they give a row-major one, and otherwise copied contiguous,
// which is the dot form exactly when the result was not transposed.
func addmmForm(m, n, k int, s1, s2 []int) (form gemmForm, alphaOnMat1 bool) {
	transposeC := n != 1
	// The BLAS A operand: mat2 viewed as n×k column-major when the result
	// is transposed, else mat1 viewed as m×k.
	sa, lead := s1, m
	if transposeC {
		sa, lead = []int{s2[1], s2[0]}, n
	}
	switch {
	case sa[0] == 1 && sa[1] >= max(1, lead):
		form = formAxpy
	case sa[1] == 1 && sa[0] >= max(1, k):
		form = formDot
	case transposeC:
		form = formAxpy
	default:
		form = formDot
	}
	// In the axpy form TEMP = ALPHA*B(L,J): B is mat1 when the result was
	// transposed, mat2 otherwise.
	return form, transposeC
}

// packCols returns the [r, c] row-major matrix x as c packed columns of
// length r: out[j*r+i] = x[i*c+j].
func packCols(x []float32, r, c int) []float32 {
	out := make([]float32, r*c)
	for i := 0; i < r; i++ {
		row := x[i*c : (i+1)*c]
		for j, v := range row {
			out[j*r+i] = v
		}
	}
	return out
}
