package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Cat is aten.cat: the tensors joined along dim. All must have the same
// dtype and rank and agree on every other dim; 1-D empty tensors are
// skipped, as PyTorch's legacy rule allows.
//
// Values, NaN payloads, infinities and -0.0 included, are copied bit for
// bit; non-contiguous inputs are read through their strides.
func Cat(ts []*tensor.Tensor, dim int) (*tensor.Tensor, error) {
	var parts []*tensor.Tensor
	for i, t := range ts {
		if t == nil {
			return nil, argErrf("cat: argument \"tensors\"[%d] is None", i)
		}
		if t.Dim() == 1 && t.Numel() == 0 {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		if len(ts) == 0 {
			return nil, argErrf("cat: argument \"tensors\": want at least one tensor")
		}
		return ts[0].Clone(), nil
	}
	ref := parts[0]
	if ref.Dim() == 0 {
		return nil, shapeErrf("cat: zero-dimensional tensor cannot be concatenated")
	}
	d, err := tensor.NormDim(dim, ref.Dim())
	if err != nil {
		return nil, fmt.Errorf("cat: argument \"dim\": %w", err)
	}
	shape := ref.Shape()
	total := 0
	for i, t := range parts {
		if t.DType() != ref.DType() {
			return nil, fmt.Errorf("cat: %w", dtypeErr(fmt.Sprintf("tensors[%d]", i), t.DType(), ref.DType().String()))
		}
		s := t.Shape()
		if len(s) != len(shape) {
			return nil, shapeErrf("cat: tensors[%d] has shape %v, want rank %d like %v", i, s, len(shape), shape)
		}
		for j := range s {
			if j != d && s[j] != shape[j] {
				return nil, shapeErrf("cat: tensors[%d] has shape %v, want size %d at dim %d like %v", i, s, shape[j], j, shape)
			}
		}
		total += s[d]
	}
	shape[d] = total
	out, err := tensor.Zeros(ref.DType(), shape...)
	if err != nil {
		return nil, err
	}
	outer := tensor.Numel(shape[:d])
	inner := tensor.Numel(shape[d+1:])
	off := 0
	for _, t := range parts {
		c := t.Contiguous()
		chunk := t.Size(d) * inner
		if err := copyBlocks(out.Storage(), c.Storage(), outer, chunk, total*inner, off*inner); err != nil {
			return nil, err
		}
		off += t.Size(d)
	}
	return out, nil
}

func copyBlocks(dst, src any, outer, chunk, dstRow, dstOff int) error {
	switch d := dst.(type) {
	case []float32:
		blockCopy(d, src.([]float32), outer, chunk, dstRow, dstOff)
	case []float64:
		blockCopy(d, src.([]float64), outer, chunk, dstRow, dstOff)
	case []int8:
		blockCopy(d, src.([]int8), outer, chunk, dstRow, dstOff)
	case []uint8:
		blockCopy(d, src.([]uint8), outer, chunk, dstRow, dstOff)
	case []int16:
		blockCopy(d, src.([]int16), outer, chunk, dstRow, dstOff)
	case []uint16:
		blockCopy(d, src.([]uint16), outer, chunk, dstRow, dstOff)
	case []int32:
		blockCopy(d, src.([]int32), outer, chunk, dstRow, dstOff)
	case []uint32:
		blockCopy(d, src.([]uint32), outer, chunk, dstRow, dstOff)
	case []int64:
		blockCopy(d, src.([]int64), outer, chunk, dstRow, dstOff)
	case []uint64:
		blockCopy(d, src.([]uint64), outer, chunk, dstRow, dstOff)
	case []bool:
		blockCopy(d, src.([]bool), outer, chunk, dstRow, dstOff)
	default:
		return fmt.Errorf("%w: cat of storage %T", ErrUnsupportedDType, dst)
	}
	return nil
}

func blockCopy[E any](dst, src []E, outer, chunk, dstRow, dstOff int) {
	for o := 0; o < outer; o++ {
		copy(dst[o*dstRow+dstOff:o*dstRow+dstOff+chunk], src[o*chunk:(o+1)*chunk])
	}
}

// Dropout is aten.dropout in inference: the input itself when train is
// false or p is 0. Training-mode dropout is random and is refused.
func Dropout(x *tensor.Tensor, p float64, train bool) (*tensor.Tensor, error) {
	if p < 0 || p > 1 {
		return nil, argErrf("dropout: argument \"p\": want a probability in [0, 1], got %v", p)
	}
	if train && p > 0 {
		return nil, argErrf("dropout: training-mode dropout (train=True, p=%v) is random; only inference is supported", p)
	}
	return x, nil
}

// Embedding is aten.embedding: rows of weight [V, D] picked by the integer
// indices, giving indices.shape + [D]. An index outside [0, V) is an error
// naming it.
//
// Rows are copied bit for bit (NaN, infinities and -0.0 included); empty
// indices give an empty [*, D] result.
func Embedding(weight, indices *tensor.Tensor) (*tensor.Tensor, error) {
	if weight == nil || weight.Dim() != 2 {
		return nil, shapeErrf("embedding: argument \"weight\": want a 2-D tensor, got %v", shapeOf(weight))
	}
	if indices == nil {
		return nil, argErrf("embedding: argument \"indices\" is required")
	}
	if indices.DType() != tensor.Int64 && indices.DType() != tensor.Int32 {
		return nil, fmt.Errorf("embedding: %w", dtypeErr("indices", indices.DType(), "int64 or int32"))
	}
	idx, err := toInt64s("indices", indices)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	V, D := weight.Size(0), weight.Size(1)
	rows := make([]*tensor.Tensor, len(idx))
	for i, v := range idx {
		if v < 0 || v >= int64(V) {
			return nil, argErrf("embedding: argument \"indices\": index %d at position %d is out of range [0, %d)", v, i, V)
		}
		r, err := weight.Select(0, int(v))
		if err != nil {
			return nil, err
		}
		if rows[i], err = r.Unsqueeze(0); err != nil {
			return nil, err
		}
	}
	shape := append(indices.Shape(), D)
	if len(rows) == 0 {
		return tensor.Zeros(weight.DType(), shape...)
	}
	out, err := Cat(rows, 0)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	return out.Reshape(shape...)
}

// ScaledDotProductAttention is aten.scaled_dot_product_attention in its
// math form: softmax(q·kᵀ·scale + mask)·v for query [..., L, E], key
// [..., S, E] and value [..., S, Ev], with broadcast batch dims. scale ≤ 0
// or NaN means 1/sqrt(E). A bool mask keeps the positions where it is
// true; a float mask is added; isCausal keeps j ≤ i (and excludes a mask).
// With enableGQA, key and value heads (dim -3) are repeated to match the
// query's. Dropout is not supported.
//
// The math form follows ATen's: q and kᵀ are each multiplied by
// sqrt(scale), multiplied, the mask added, softmax taken (fully masked
// rows give 0) and multiplied by v. It is not bit-exact (softmax and
// batched-product orders): on the oracle's cases (value head size other
// than the query's, 5-D) the largest difference is 3 ULP of the largest
// |output|, and the vectors test holds it to 6.
//
// Float32 inputs that PyTorch 2.14's CPU dispatcher sends to its flash
// kernel (4-D, equal batch, heads and head sizes, unit last stride; see
// flashEligible) are computed as that kernel computes them, block by
// block with an online softmax (aten_flash.go), and the result has the
// query's strides when the query is dense, as PyTorch allocates it. Other
// inputs take the math form below (a contiguous result), which is not
// bit-exact with PyTorch's math path.
//
// A row whose scores are all -inf (every key masked out, by the mask or by
// -inf products) gets probabilities 0 and an output row of 0, as ATen's
// _safe_softmax gives; a NaN anywhere in a row's scores (a NaN in q or k,
// or inf·0) makes that row NaN, and a NaN or inf in v reaches every output
// row that gives its position a non-zero weight (0·inf is NaN). No keys
// (S = 0) gives zeros; no queries or an empty batch gives an empty result.
func ScaledDotProductAttention(q, k, v, mask *tensor.Tensor, dropoutP float64, isCausal bool, scale float64, enableGQA bool) (*tensor.Tensor, error) {
	const op = "scaled_dot_product_attention"
	if q == nil || k == nil || v == nil || q.Dim() < 2 || k.Dim() < 2 || v.Dim() < 2 {
		return nil, shapeErrf("%s: query, key and value need at least 2 dims, got %v, %v, %v", op, shapeOf(q), shapeOf(k), shapeOf(v))
	}
	if dropoutP != 0 {
		return nil, argErrf("%s: argument \"dropout_p\": only 0 is supported, got %v", op, dropoutP)
	}
	if isCausal && mask != nil {
		return nil, argErrf("%s: is_causal=True excludes an explicit attn_mask", op)
	}
	E := q.Size(-1)
	if k.Size(-1) != E {
		return nil, shapeErrf("%s: argument \"key\" %v: want last dim %d like query %v", op, k.Shape(), E, q.Shape())
	}
	if k.Size(-2) != v.Size(-2) {
		return nil, shapeErrf("%s: argument \"value\" %v: want %d positions like key %v", op, v.Shape(), k.Size(-2), k.Shape())
	}
	var err error
	if enableGQA && q.Dim() >= 3 && k.Dim() >= 3 && q.Size(-3) != k.Size(-3) {
		if k, err = repeatHeads(k, q.Size(-3)); err != nil {
			return nil, fmt.Errorf("%s: argument \"key\": %w", op, err)
		}
		if v, err = repeatHeads(v, q.Size(-3)); err != nil {
			return nil, fmt.Errorf("%s: argument \"value\": %w", op, err)
		}
	}
	if scale <= 0 || scale != scale {
		scale = 1 / math.Sqrt(float64(E))
	}
	if q.Dim() == 3 && k.Dim() == 3 && v.Dim() == 3 && (mask == nil || mask.Dim() == 2 || mask.Dim() == 3) {
		// PyTorch 2.14 runs 3-D inputs through the flash kernel as one
		// batch of heads.
		q4, k4, v4, m4, err := unsqueeze0(q, k, v, mask)
		if err == nil && flashEligible(q4, k4, v4, m4, dropoutP) {
			out, err := flashAttention(q4, k4, v4, m4, isCausal, float32(scale))
			if err != nil {
				return nil, err
			}
			return out.Squeeze(0)
		}
	}
	if flashEligible(q, k, v, mask, dropoutP) {
		return flashAttention(q, k, v, mask, isCausal, float32(scale))
	}
	kt, err := k.Transpose(-2, -1)
	if err != nil {
		return nil, err
	}
	// ATen's math form scales q and kᵀ by sqrt(scale) each before the
	// product (_scaled_dot_product_attention_math).
	sqrtScale := math.Sqrt(scale)
	qs, err := Binary(OpMul, T(q), S(sqrtScale), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	kts, err := Binary(OpMul, T(kt), S(sqrtScale), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	scores, err := Matmul(qs, kts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	sd, err := floatArg("scores", scores)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	sd = append([]float32(nil), sd...)
	shape := scores.Shape()
	L, S := shape[len(shape)-2], shape[len(shape)-1]
	ninf := float32(math.Inf(-1))
	switch {
	case isCausal && L*S > 0:
		for b := 0; b < len(sd)/(L*S); b++ {
			for i := 0; i < L; i++ {
				for j := i + 1; j < S; j++ {
					sd[(b*L+i)*S+j] = ninf
				}
			}
		}
	case mask != nil:
		me, err := mask.Expand(shape...)
		if err != nil {
			return nil, fmt.Errorf("%s: argument \"attn_mask\" %v does not broadcast to the scores %v: %w", op, mask.Shape(), shape, err)
		}
		if mask.DType() == tensor.Bool {
			keep, err := tensor.Data[bool](me)
			if err != nil {
				return nil, err
			}
			for i, k := range keep {
				if !k {
					sd[i] = ninf
				}
			}
		} else {
			md, err := floatArg("attn_mask", me)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
			for i := range sd {
				sd[i] += md[i]
			}
		}
	}
	st, err := tensor.FromData(tensor.Float32, shape, sd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	p, err := Softmax(st, -1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if p, err = zeroMaskedRows(p, sd, S); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if q.DType() != tensor.Float32 {
		pd, _ := floatArg("p", p)
		p = fromFloat32(q.DType(), shape, pd)
	}
	out, err := Matmul(p, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// unsqueeze0 adds a leading dimension to q, k, v and a 3-D mask.
func unsqueeze0(q, k, v, mask *tensor.Tensor) (q4, k4, v4, m4 *tensor.Tensor, err error) {
	if q4, err = q.Unsqueeze(0); err != nil {
		return
	}
	if k4, err = k.Unsqueeze(0); err != nil {
		return
	}
	if v4, err = v.Unsqueeze(0); err != nil {
		return
	}
	m4 = mask
	if mask != nil && mask.Dim() == 3 {
		m4, err = mask.Unsqueeze(0)
	}
	return
}

// zeroMaskedRows is the fix-up of ATen's _safe_softmax, which the math
// SDPA calls since PyTorch 2.5: a row whose scores (mask included) are all
// -inf attends to nothing and its probabilities become 0 instead of the
// softmax's NaN. p is the softmax of the float32 scores sd, rows of
// length S; a row holding a NaN is not fully masked and stays NaN.
func zeroMaskedRows(p *tensor.Tensor, sd []float32, S int) (*tensor.Tensor, error) {
	if S == 0 {
		return p, nil
	}
	pd, err := floatArg("p", p)
	if err != nil {
		return nil, err
	}
	var out []float32
	ninf := float32(math.Inf(-1))
	for r := 0; r < len(sd)/S; r++ {
		row := sd[r*S : (r+1)*S]
		if slices.ContainsFunc(row, func(v float32) bool { return v != ninf }) {
			continue
		}
		if out == nil {
			out = append([]float32(nil), pd...)
		}
		clear(out[r*S : (r+1)*S])
	}
	if out == nil {
		return p, nil
	}
	return tensor.FromData(tensor.Float32, p.Shape(), out)
}

// repeatHeads repeats each head of t [..., H, S, E] so it has h heads
// (repeat_interleave along dim -3).
func repeatHeads(t *tensor.Tensor, h int) (*tensor.Tensor, error) {
	hk := t.Size(-3)
	if hk == 0 || h%hk != 0 {
		return nil, shapeErrf("%d query heads are not a multiple of %d key/value heads", h, hk)
	}
	u, err := t.Unsqueeze(-3)
	if err != nil {
		return nil, err
	}
	s := u.Shape()
	s[len(s)-3] = h / hk
	e, err := u.Expand(s...)
	if err != nil {
		return nil, err
	}
	ns := t.Shape()
	ns[len(ns)-3] = h
	return e.Reshape(ns...)
}
