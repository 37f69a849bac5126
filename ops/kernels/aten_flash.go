package kernels

import (
	"math"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file reproduces the float32 CPU flash-attention kernel that PyTorch
// 2.14 picks for scaled_dot_product_attention (FlashAttentionKernel.cpp,
// cpu_flash_attention without packing, AVX2 capability, one thread):
//
//   - queries are taken in blocks of qSplit rows (256 from 768 queries,
//     64 from 192, else 32) and keys in blocks of 512;
//   - each score block is q·kᵀ summed by the reference sgemm (dot form:
//     sequential over the head dimension from zero), then scaled: with no
//     mask as a separate product, with a mask as fma(s, scale, mask);
//   - a causal mask writes -inf past the diagonal of the last key block;
//   - the row maximum is kept across key blocks; exp(s - max) is ATen's
//     Vectorized<float>::exp_u20 on whole 8-float vectors (lanes summed,
//     then reduced by the AVX2 shuffle tree) and glibc's expf on the tail;
//   - the running sum is fma(exp(oldmax - max), oldsum, blocksum) and the
//     partial output is scaled by exp(oldmax - max) before the block's
//     p·v is added by the reference sgemm (axpy form, sequential over the
//     keys);
//   - the output row is multiplied by 1/sum; a row with no key left gets 0.
//
// The scalar exp is float32(math.Exp(float64(x))), the correctly rounded
// value; glibc's expf agrees with it except in rare cases (the measured
// bound is in ScaledDotProductAttention's doc).

// flashEligible reports whether PyTorch 2.14's CPU dispatcher sends these
// float32 inputs to the flash kernel (sdp_utils_cpp.cpp use_flash_attention_cpp):
// 4-D query, key and value with equal batch, heads and head size, a last
// dimension of stride 1, non-empty sequences, and a mask (if any) that is
// bool or float32 and 2-D or 4-D.
func flashEligible(q, k, v, mask *tensor.Tensor, dropoutP float64) bool {
	if dropoutP != 0 || q.DType() != tensor.Float32 || k.DType() != tensor.Float32 || v.DType() != tensor.Float32 {
		return false
	}
	if q.Dim() != 4 || k.Dim() != 4 || v.Dim() != 4 {
		return false
	}
	for i := 0; i < 2; i++ {
		if q.Size(i) != k.Size(i) || q.Size(i) != v.Size(i) {
			return false
		}
	}
	if q.Size(3) != k.Size(3) || q.Size(3) != v.Size(3) || k.Size(2) != v.Size(2) {
		return false
	}
	if q.Size(2) == 0 || k.Size(2) == 0 || q.Size(3) == 0 {
		return false
	}
	for _, t := range []*tensor.Tensor{q, k, v} {
		if t.Strides()[3] != 1 && t.Size(3) != 1 {
			return false
		}
	}
	if mask != nil {
		if mask.DType() != tensor.Bool && mask.DType() != tensor.Float32 {
			return false
		}
		if mask.Dim() != 2 && mask.Dim() != 4 {
			return false
		}
	}
	return true
}

// flashSplit returns the query block size PyTorch picks for qSize queries.
func flashSplit(qSize int) int {
	switch {
	case qSize >= 768:
		return 256
	case qSize >= 192:
		return 64
	}
	return 32
}

// flashAttention runs the flash kernel on eligible inputs (see
// [flashEligible]); scale is the float32 scaling factor. The result has
// query's strides when query is dense (PyTorch allocates the output like
// the query), contiguous ones otherwise.
func flashAttention(q, k, v, mask *tensor.Tensor, isCausal bool, scale float32) (*tensor.Tensor, error) {
	const op = "scaled_dot_product_attention"
	B, H, L, E := q.Size(0), q.Size(1), q.Size(2), q.Size(3)
	S := k.Size(2)
	qd, err := floatArg("query", q.Contiguous())
	if err != nil {
		return nil, err
	}
	kd, err := floatArg("key", k.Contiguous())
	if err != nil {
		return nil, err
	}
	vd, err := floatArg("value", v.Contiguous())
	if err != nil {
		return nil, err
	}
	// The mask as float32 [B or 1, H or 1, L, S] (a bool mask becomes 0 /
	// -inf, as convert_boolean_attn_mask does).
	var md []float32
	var mB, mH int
	if mask != nil {
		m4 := mask
		if mask.Dim() == 2 {
			if m4, err = mask.Reshape(1, 1, mask.Size(0), mask.Size(1)); err != nil {
				return nil, err
			}
		}
		mB, mH = 1, 1
		if m4.Size(0) == B {
			mB = B
		}
		if m4.Size(1) == H {
			mH = H
		}
		me, err := m4.Expand(mB, mH, L, S)
		if err != nil {
			return nil, shapeErrf("%s: argument \"attn_mask\" %v does not broadcast to [%d, %d, %d, %d]", op, mask.Shape(), B, H, L, S)
		}
		me = me.Contiguous()
		if mask.DType() == tensor.Bool {
			keep, err := tensor.Data[bool](me)
			if err != nil {
				return nil, err
			}
			md = make([]float32, len(keep))
			for i, k := range keep {
				if !k {
					md[i] = float32(math.Inf(-1))
				}
			}
		} else if md, err = floatArg("attn_mask", me); err != nil {
			return nil, err
		}
	}
	out := make([]float32, B*H*L*E)
	qSplit := min(flashSplit(L), L)
	kvSplit := min(512, S)
	qk := make([]float32, qSplit*kvSplit)
	qkMax := make([]float32, qSplit)
	qkSum := make([]float32, qSplit)
	dst := make([]float32, qSplit*E)
	ninf := float32(math.Inf(-1))
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			qh := qd[(b*H+h)*L*E:]
			kh := kd[(b*H+h)*S*E:]
			vh := vd[(b*H+h)*S*E:]
			var mh []float32
			if md != nil {
				mh = md[((b%mB)*mH+h%mH)*L*S:]
			}
			for m := 0; m < L; m += qSplit {
				qBlock := min(qSplit, L-m)
				for r := 0; r < qBlock; r++ {
					qkMax[r], qkSum[r] = ninf, 0
				}
				numKeys := S
				if isCausal {
					numKeys = min(m+qBlock, S)
				}
				for n := 0; n < numKeys; n += kvSplit {
					kvBlock := min(kvSplit, S-n)
					// qk[r][c] = sum_e q[m+r][e]·k[n+c][e] (sgemm, TRANSA='T').
					for r := 0; r < qBlock; r++ {
						qr := qh[(m+r)*E : (m+r+1)*E]
						for c := 0; c < kvBlock; c++ {
							kr := kh[(n+c)*E : (n+c+1)*E]
							var s float32
							for e, x := range qr {
								s += float32(kr[e] * x)
							}
							qk[r*kvBlock+c] = s
						}
					}
					if isCausal && numKeys-n <= kvSplit {
						for r := 0; r < qBlock; r++ {
							last := m + r - n
							for c := max(last+1, 0); c < kvBlock; c++ {
								qk[r*kvBlock+c] = ninf
							}
						}
					}
					for r := 0; r < qBlock; r++ {
						row := qk[r*kvBlock : (r+1)*kvBlock]
						var rowMax float32
						if mh != nil {
							mrow := mh[(m+r)*S+n:]
							for c := range row {
								row[c] = FMA32(row[c], scale, mrow[c])
							}
							rowMax = reduceMax(row)
						} else {
							rowMax = mulReduceMax(row, scale)
						}
						if qkMax[r] > rowMax {
							rowMax = qkMax[r]
						}
						if rowMax == ninf {
							clear(row)
						} else {
							sum := expReduceSum(row, rowMax)
							expTmp := expf(qkMax[r] - rowMax)
							qkSum[r] = FMA32(expTmp, qkSum[r], sum)
							qkMax[r] = rowMax
							if n > 0 {
								d := dst[r*E : (r+1)*E]
								for e := range d {
									d[e] *= expTmp
								}
							}
						}
					}
					// dst[r][e] (+)= sum_c p[r][c]·v[n+c][e] (sgemm, TRANSA='N').
					for r := 0; r < qBlock; r++ {
						d := dst[r*E : (r+1)*E]
						if n == 0 {
							clear(d)
						}
						for c := 0; c < kvBlock; c++ {
							p := qk[r*kvBlock+c]
							vr := vh[(n+c)*E : (n+c+1)*E]
							for e := range d {
								d[e] += float32(p * vr[e])
							}
						}
					}
				}
				for r := 0; r < qBlock; r++ {
					if numKeys <= 0 {
						clear(dst[r*E : (r+1)*E])
					}
					s := qkSum[r]
					if s == 0 {
						s = 1
					}
					rec := 1 / s
					o := out[((b*H+h)*L+m+r)*E:]
					for e, x := range dst[r*E : (r+1)*E] {
						o[e] = x * rec
					}
				}
			}
		}
	}
	res := tensor.MustFromData(tensor.Float32, []int{B, H, L, E}, out)
	if st, ok := DenseStrides(q); ok {
		return restride(res, st)
	}
	return res, nil
}

// mulReduceMax is _mul_reduce_max_fusion_kernel: row[i] *= scale and the
// maximum of the products (NaN-propagating on the vector part).
func mulReduceMax(row []float32, scale float32) float32 {
	for i := range row {
		row[i] *= scale
	}
	return reduceMax(row)
}

// reduceMax is the maximum of row as ATen's vectorised maximum gives it: a
// NaN anywhere makes it NaN.
func reduceMax(row []float32) float32 {
	m := float32(math.Inf(-1))
	for _, x := range row {
		if x != x {
			return x
		}
		if x > m {
			m = x
		}
	}
	return m
}

// expReduceSum is _exp_reduce_sum_fusion_kernel: row[i] = exp(row[i] -
// max), exp_u20 on whole 8-float vectors and expf on the tail, and the sum
// of the results: the vectors summed per lane, the lanes reduced by the
// AVX2 shuffle tree, then the tail added in order.
func expReduceSum(row []float32, max float32) float32 {
	var acc [8]float32
	nv := len(row) / 8 * 8
	for i := 0; i < nv; i += 8 {
		for l := 0; l < 8; l++ {
			e := atenExpU20(row[i+l] - max)
			row[i+l] = e
			acc[l] += e
		}
	}
	sum := reduceLanes(acc, vecAdd)
	for i := nv; i < len(row); i++ {
		e := expf(row[i] - max)
		row[i] = e
		sum += e
	}
	return sum
}

// expf is the float32 exponential of the scalar paths (glibc's expf),
// taken as the correctly rounded value.
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }
