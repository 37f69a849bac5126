package kernels

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

func need2D(op, arg string, t *tensor.Tensor) error {
	if t == nil {
		return argErrf("%s: argument %q: want a 2-D tensor, got None", op, arg)
	}
	if t.Dim() != 2 {
		return shapeErrf("%s: argument %q: want a 2-D tensor, got shape %v", op, arg, t.Shape())
	}
	return nil
}

// sameFloatDType checks that every non-nil tensor has one float compute
// dtype (float32, float16 or bfloat16), naming the first argument that
// differs.
func sameFloatDType(op string, names []string, ts ...*tensor.Tensor) error {
	return sameDType(op, names, isFloatCompute, "a float32, float16 or bfloat16 tensor", ts...)
}

// sameDType checks that every non-nil tensor ts[i] (called names[i]) has a
// dtype accepted by ok (else it wants kind) and that all share one dtype.
func sameDType(op string, names []string, ok func(tensor.DType) bool, kind string, ts ...*tensor.Tensor) error {
	var first *tensor.Tensor
	for i, t := range ts {
		if t == nil {
			continue
		}
		if !ok(t.DType()) {
			return fmt.Errorf("%s: %w", op, dtypeErr(names[i], t.DType(), kind))
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
// Each element is summed as PyTorch 2.14's CPU build sums it through the
// reference BLAS sgemm: sequentially over the inner dim from zero, every
// product and partial sum rounded to float32 (see aten_gemm_exact.go), so
// float32 results are bit-identical to PyTorch's. float16 and bfloat16
// inputs are multiplied in float32 in the same order and rounded once at
// the end, which PyTorch's reduced-precision kernels need not match.
func Mm(a, b *tensor.Tensor) (*tensor.Tensor, error) {
	if err := need2D("mm", "self", a); err != nil {
		return nil, err
	}
	if err := need2D("mm", "mat2", b); err != nil {
		return nil, err
	}
	return Addmm(nil, a, b, 0, 1)
}

// Addmm returns beta·input + alpha·(a·b), where input broadcasts to the
// [n, p] result; a nil input means zeros, and beta = 0 ignores input (NaN
// included). The order of the sums follows the sgemm call PyTorch's addmm
// makes, which depends on mat2's strides: for a contiguous mat2 (the usual
// case) beta·input comes first and each product is added to it; for a
// transposed mat2 (mat2 = w.t(), as linear passes it) the products are
// summed from zero and beta·input is added last. See [Mm] for precision.
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
	hasC := false
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
		hasC = true
	}
	form, alphaOnMat1 := addmmForm(n, p, k, a.Strides(), b.Strides())
	gemmExact(form, alphaOnMat1, n, p, k, float32(alpha), float32(beta), ad, packCols(bd, k, p), out, hasC)
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
	// With beta = 0 and alpha = 1 every path of PyTorch's bmm and matmul
	// (the small-size loop, per-batch sgemm, folding into one mm) sums
	// each element sequentially from zero.
	for i := 0; i < nb; i++ {
		bt := packCols(bd[i*k*p:(i+1)*k*p], k, p)
		dotAccumulate(n, p, k, ad[i*n*k:(i+1)*n*k], bt, out[i*n*p:(i+1)*n*p], max(p, 1))
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
// and an optional bias [out] (nil for none), bit-identical to PyTorch
// 2.14's CPU float32 linear. Each element is the sequential sum of its
// products from zero, with the bias added last: at::linear calls addmm
// with mat2 = weight.t(), which reaches sgemm with TRANSA='T' (or, for
// inputs it does not flatten, matmul followed by add_, which gives the same
// bits). A weight whose strides make weight.t() contiguous would put the
// bias first, as PyTorch does. See [Mm] for float16 and bfloat16.
//
// NaN and infinities follow IEEE float32: NaN·w and inf·0 are NaN, and an
// inf - inf sum is NaN. An empty batch gives an empty result, zero input
// features the bias (or zeros).
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
	rows := tensor.Numel(input.Shape()[:input.Dim()-1])
	out := make([]float32, rows*nOut)
	form := formDot
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
		// at::linear takes addmm for a 2-D input and for a contiguous
		// input with a 1-D bias (flattened to 2-D); otherwise matmul and
		// add_, the dot form's order.
		if input.Dim() == 2 || input.IsContiguous() && bias.Dim() == 1 {
			s1 := input.Strides()
			if input.Dim() != 2 {
				s1 = tensor.ContiguousStrides([]int{rows, in})
			}
			ws := weight.Strides()
			form, _ = addmmForm(rows, nOut, in, s1, []int{ws[1], ws[0]})
		}
	}
	gemmExact(form, true, rows, nOut, in, 1, 1, xd, wd, out, bias != nil)
	shape := append(input.Shape()[:input.Dim()-1], nOut)
	return fromFloat32(input.DType(), shape, out), nil
}
