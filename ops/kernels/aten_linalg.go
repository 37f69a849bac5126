package kernels

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/fxquant/fxquant/ops/tensor"
)

// sgemm computes c = alpha·op(a)·op(b) + beta·c for row-major matrices with
// op(a) m×k and op(b) k×n, through gonum's BLAS. It checks every size
// before calling gonum, which panics on bad sizes.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if m < 0 || n < 0 || k < 0 {
		return shapeErrf("gemm: negative size m=%d n=%d k=%d", m, n, k)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				c[i*ldc+j] *= beta
			}
		}
		return nil
	}
	ar, ac := m, k
	ta := blas.NoTrans
	if transA {
		ar, ac, ta = k, m, blas.Trans
	}
	br, bc := k, n
	tb := blas.NoTrans
	if transB {
		br, bc, tb = n, k, blas.Trans
	}
	if lda < max(1, ac) || len(a) < (ar-1)*lda+ac || ldb < max(1, bc) || len(b) < (br-1)*ldb+bc || ldc < max(1, n) || len(c) < (m-1)*ldc+n {
		return shapeErrf("gemm: buffers too small for m=%d n=%d k=%d", m, n, k)
	}
	blas32.Implementation().Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return nil
}

func need2D(op, arg string, t *tensor.Tensor) error {
	if t == nil {
		return argErrf("%s: argument %q: want a 2-D tensor, got None", op, arg)
	}
	if t.Dim() != 2 {
		return shapeErrf("%s: argument %q: want a 2-D tensor, got shape %v", op, arg, t.Shape())
	}
	return nil
}

func sameFloatDType(op string, names []string, ts ...*tensor.Tensor) error {
	var first *tensor.Tensor
	for i, t := range ts {
		if t == nil {
			continue
		}
		if !isFloatCompute(t.DType()) {
			return fmt.Errorf("%s: %w", op, dtypeErr(names[i], t.DType(), "a float32, float16 or bfloat16 tensor"))
		}
		if first == nil {
			first = t
		} else if t.DType() != first.DType() {
			return fmt.Errorf("%s: %w", op, dtypeErr(names[i], t.DType(), first.DType().String()+" like the other operands"))
		}
	}
	return nil
}

// Mm returns the matrix product a·b of a [n, m] and b [m, p] float tensor.
// Products run through gonum's Sgemm: its blocked summation order differs
// from MKL's or OpenBLAS's, so results can differ from PyTorch's in the
// last bits (float16/bfloat16 inputs are multiplied in float32 and rounded
// once at the end).
func Mm(a, b *tensor.Tensor) (*tensor.Tensor, error) {
	if err := need2D("mm", "self", a); err != nil {
		return nil, err
	}
	if err := need2D("mm", "mat2", b); err != nil {
		return nil, err
	}
	return Addmm(nil, a, b, 1, 1)
}

// Addmm returns beta·input + alpha·(a·b), where input broadcasts to the
// [n, p] result; a nil input means zeros. See [Mm] for precision.
func Addmm(input, a, b *tensor.Tensor, beta, alpha float64) (*tensor.Tensor, error) {
	if err := need2D("addmm", "mat1", a); err != nil {
		return nil, err
	}
	if err := need2D("addmm", "mat2", b); err != nil {
		return nil, err
	}
	if err := sameFloatDType("addmm", []string{"self", "mat1", "mat2"}, input, a, b); err != nil {
		return nil, err
	}
	n, k, k2, p := a.Size(0), a.Size(1), b.Size(0), b.Size(1)
	if k != k2 {
		return nil, shapeErrf("addmm: mat1 %v and mat2 %v cannot be multiplied (want mat2 of shape [%d, *])", a.Shape(), b.Shape(), k)
	}
	ad, err := floatArg("mat1", a)
	if err != nil {
		return nil, err
	}
	bd, err := floatArg("mat2", b)
	if err != nil {
		return nil, err
	}
	out := make([]float32, n*p)
	bt := float32(0)
	if input != nil && beta != 0 {
		bi, err := input.Expand(n, p)
		if err != nil {
			return nil, fmt.Errorf("addmm: argument \"self\" of shape %v does not broadcast to [%d, %d]: %w", input.Shape(), n, p, err)
		}
		id, err := floatArg("self", bi)
		if err != nil {
			return nil, err
		}
		copy(out, id)
		bt = float32(beta)
	}
	if err := sgemm(false, false, n, p, k, float32(alpha), ad, max(k, 1), bd, max(p, 1), bt, out, max(p, 1)); err != nil {
		return nil, fmt.Errorf("addmm: %w", err)
	}
	return fromFloat32(a.DType(), []int{n, p}, out), nil
}

// Bmm returns the batched product of a [b, n, m] and b [b, m, p].
func Bmm(a, b *tensor.Tensor) (*tensor.Tensor, error) {
	if a == nil || b == nil || a.Dim() != 3 || b.Dim() != 3 {
		return nil, shapeErrf("bmm: want 3-D tensors, got self %v and mat2 %v", shapeOf(a), shapeOf(b))
	}
	if a.Size(0) != b.Size(0) || a.Size(2) != b.Size(1) {
		return nil, shapeErrf("bmm: self %v and mat2 %v: want mat2 of shape [%d, %d, *]", a.Shape(), b.Shape(), a.Size(0), a.Size(2))
	}
	return batchedMatmul("bmm", a, b, a.Shape()[:1])
}

func shapeOf(t *tensor.Tensor) any {
	if t == nil {
		return "None"
	}
	return t.Shape()
}

// batchedMatmul multiplies a [batch..., n, k] by b [batch..., k, p], both
// already of the given batch shape.
func batchedMatmul(op string, a, b *tensor.Tensor, batch []int) (*tensor.Tensor, error) {
	if err := sameFloatDType(op, []string{"self", "other"}, a, b); err != nil {
		return nil, err
	}
	ad, err := floatArg("self", a)
	if err != nil {
		return nil, err
	}
	bd, err := floatArg("other", b)
	if err != nil {
		return nil, err
	}
	n, k, p := a.Size(-2), a.Size(-1), b.Size(-1)
	nb := tensor.Numel(batch)
	out := make([]float32, nb*n*p)
	for i := 0; i < nb; i++ {
		if err := sgemm(false, false, n, p, k, 1, ad[i*n*k:(i+1)*n*k], max(k, 1), bd[i*k*p:(i+1)*k*p], max(p, 1), 0, out[i*n*p:(i+1)*n*p], max(p, 1)); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	shape := append(append([]int(nil), batch...), n, p)
	return fromFloat32(a.DType(), shape, out), nil
}

// Matmul is torch.matmul: dot product for two 1-D tensors, matrix-vector
// and vector-matrix products (the 1-D side gets a dim added then removed),
// and batched products with broadcast batch dims otherwise.
func Matmul(a, b *tensor.Tensor) (*tensor.Tensor, error) {
	if a == nil || b == nil || a.Dim() == 0 || b.Dim() == 0 {
		return nil, shapeErrf("matmul: both arguments need at least 1 dim, got self %v and other %v", shapeOf(a), shapeOf(b))
	}
	da, db := a.Dim(), b.Dim()
	var err error
	aa, bb := a, b
	if da == 1 {
		if aa, err = a.Unsqueeze(0); err != nil {
			return nil, err
		}
	}
	if db == 1 {
		if bb, err = b.Unsqueeze(1); err != nil {
			return nil, err
		}
	}
	n, k := aa.Size(-2), aa.Size(-1)
	k2, p := bb.Size(-2), bb.Size(-1)
	if k != k2 {
		return nil, shapeErrf("matmul: self %v and other %v: inner dims %d and %d differ", a.Shape(), b.Shape(), k, k2)
	}
	as, bs := aa.Shape(), bb.Shape()
	batch, err := BroadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return nil, fmt.Errorf("matmul: batch dims of self %v and other %v: %w", a.Shape(), b.Shape(), err)
	}
	ae, err := aa.Expand(append(append([]int(nil), batch...), n, k)...)
	if err != nil {
		return nil, err
	}
	be, err := bb.Expand(append(append([]int(nil), batch...), k, p)...)
	if err != nil {
		return nil, err
	}
	out, err := batchedMatmul("matmul", ae, be, batch)
	if err != nil {
		return nil, err
	}
	shape := append([]int(nil), batch...)
	if da > 1 {
		shape = append(shape, n)
	}
	if db > 1 {
		shape = append(shape, p)
	}
	return out.Reshape(shape...)
}

// Linear returns input·weightᵀ + bias for input [..., in], weight [out, in]
// and an optional bias [out] (nil for none), through one Sgemm call over
// the flattened leading dims. See [Mm] for precision.
func Linear(input, weight, bias *tensor.Tensor) (*tensor.Tensor, error) {
	if input == nil || input.Dim() < 1 {
		return nil, shapeErrf("linear: argument \"input\": want at least 1 dim, got %v", shapeOf(input))
	}
	if err := need2D("linear", "weight", weight); err != nil {
		return nil, err
	}
	if err := sameFloatDType("linear", []string{"input", "weight", "bias"}, input, weight, bias); err != nil {
		return nil, err
	}
	in := input.Size(-1)
	nOut := weight.Size(0)
	if weight.Size(1) != in {
		return nil, shapeErrf("linear: argument \"weight\": want shape [*, %d] to match input %v, got %v", in, input.Shape(), weight.Shape())
	}
	if bias != nil && (bias.Dim() > 1 || bias.Numel() != nOut && bias.Numel() != 1) {
		return nil, shapeErrf("linear: argument \"bias\": want shape [%d], got %v", nOut, bias.Shape())
	}
	xd, err := floatArg("input", input)
	if err != nil {
		return nil, err
	}
	wd, err := floatArg("weight", weight)
	if err != nil {
		return nil, err
	}
	rows := input.Numel() / max(in, 1)
	if in == 0 {
		rows = tensor.Numel(input.Shape()[:input.Dim()-1])
	}
	out := make([]float32, rows*nOut)
	beta := float32(0)
	if bias != nil {
		bd, err := floatArg("bias", bias)
		if err != nil {
			return nil, err
		}
		for r := 0; r < rows; r++ {
			row := out[r*nOut : (r+1)*nOut]
			if len(bd) == 1 {
				for j := range row {
					row[j] = bd[0]
				}
			} else {
				copy(row, bd)
			}
		}
		beta = 1
	}
	if err := sgemm(false, true, rows, nOut, in, 1, xd, max(in, 1), wd, max(in, 1), beta, out, max(nOut, 1)); err != nil {
		return nil, fmt.Errorf("linear: %w", err)
	}
	shape := append(input.Shape()[:input.Dim()-1], nOut)
	return fromFloat32(input.DType(), shape, out), nil
}
