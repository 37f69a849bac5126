package kernels

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file holds the machinery shared by the quantize, dequantize and
// choose_qparams kernels: reading float inputs, mapping elements to their
// quantization parameters through a block size, and the tight per-chunk
// loops. Unexported names start with q to stay clear of the aten kernels
// that share the package.

// qint is the set of storage types a quantized tensor may have.
type qint interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~int64
}

// qfloats holds a float input in row-major order: f32 for float32, float16
// and bfloat16 inputs (the latter two widened exactly), f64 for float64.
type qfloats struct {
	f32 []float32
	f64 []float64
}

func (q qfloats) len() int {
	if q.f64 != nil {
		return len(q.f64)
	}
	return len(q.f32)
}

// as64 returns the values as float64 (exact widening).
func (q qfloats) as64() []float64 {
	if q.f64 != nil {
		return q.f64
	}
	out := make([]float64, len(q.f32))
	for i, v := range q.f32 {
		out[i] = float64(v)
	}
	return out
}

// qFloatInput reads a float tensor argument. float16 and bfloat16 are
// widened to float32 (PyTorch upcasts them before quantizing); float64 is
// kept when allow64 is set and is an error otherwise.
func qFloatInput(name string, t *tensor.Tensor, allow64 bool) (qfloats, error) {
	if t == nil {
		return qfloats{}, argErrf("argument %q: want a float tensor, got None", name)
	}
	switch t.DType() {
	case tensor.Float32:
		d, err := tensor.Data[float32](t)
		return qfloats{f32: d}, err
	case tensor.Float16, tensor.BFloat16:
		raw, err := tensor.Data[uint16](t)
		if err != nil {
			return qfloats{}, err
		}
		out := make([]float32, len(raw))
		conv := tensor.BFloat16ToFloat32
		if t.DType() == tensor.Float16 {
			conv = tensor.Float16ToFloat32
		}
		for i, h := range raw {
			out[i] = conv(h)
		}
		return qfloats{f32: out}, nil
	case tensor.Float64:
		if allow64 {
			d, err := tensor.Data[float64](t)
			return qfloats{f64: d}, err
		}
	}
	want := "float32, float16 or bfloat16"
	if allow64 {
		want = "float32, float64, float16 or bfloat16"
	}
	return qfloats{}, dtypeErr(name, t.DType(), want)
}

// qParamFloats reads a scale-like tensor as float64 values and reports
// whether it is float64 (which makes PyTorch compute in float64).
func qParamFloats(name string, t *tensor.Tensor) ([]float64, bool, error) {
	if t == nil {
		return nil, false, argErrf("argument %q: want a float tensor, got None", name)
	}
	if !t.DType().IsFloat() {
		return nil, false, dtypeErr(name, t.DType(), "a float tensor")
	}
	v, err := t.Float64s()
	if err != nil {
		return nil, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return v, t.DType() == tensor.Float64, nil
}

// qParamInts reads an integer (or bool) tensor as int64 values.
func qParamInts(name string, t *tensor.Tensor) ([]int64, error) {
	if t == nil {
		return nil, argErrf("argument %q: want an integer tensor, got None", name)
	}
	v, err := t.Int64s()
	if err != nil {
		return nil, dtypeErr(name, t.DType(), "an integer tensor")
	}
	return v, nil
}

// qZeroPoints reads a zero-point tensor of any real dtype as float64 plus a
// flag telling whether it is integer-valued storage. nil gives nil.
func qZeroPoints(name string, t *tensor.Tensor) ([]float64, bool, error) {
	if t == nil {
		return nil, true, nil
	}
	if t.DType().IsInteger() || t.DType() == tensor.Bool {
		iv, err := qParamInts(name, t)
		if err != nil {
			return nil, false, err
		}
		out := make([]float64, len(iv))
		for i, v := range iv {
			out[i] = float64(v)
		}
		return out, true, nil
	}
	v, err := t.Float64s()
	if err != nil {
		return nil, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return v, false, nil
}

// QuantBounds returns the value range of a quantized dtype as PyTorch's
// bounds tables give it: the full integer range of int8, uint8, int16,
// uint16, int32 and int64, -8..7 for Int4 and 0..15 for UInt4. It fails for
// non-integer dtypes.
func QuantBounds(d tensor.DType) (lo, hi int64, err error) {
	switch d {
	case tensor.Int8, tensor.UInt8, tensor.Int16, tensor.UInt16, tensor.Int32, tensor.Int64, tensor.Int4, tensor.UInt4:
		lo, hi, _ := d.IntRange()
		return lo, hi, nil
	}
	return 0, 0, fmt.Errorf("%w: quantized dtype: want int8, uint8, int16, uint16, int32, int64, int4 or uint4, got %s", ErrUnsupportedDType, d)
}

// qCheckRange validates quant_min/quant_max against dtype's bounds as
// _quant_min_max_bounds_check does, and quant_min <= quant_max.
func qCheckRange(dtype tensor.DType, qmin, qmax int64) error {
	lo, hi, err := QuantBounds(dtype)
	if err != nil {
		return err
	}
	if qmin < lo || qmax > hi {
		return argErrf("quant_min, quant_max = %d, %d: want within the %s range %d..%d", qmin, qmax, dtype, lo, hi)
	}
	if qmin > qmax {
		return argErrf("quant_min %d is greater than quant_max %d", qmin, qmax)
	}
	return nil
}

// qOutput allocates a contiguous output tensor.
func qOutput(d tensor.DType, shape []int) (*tensor.Tensor, error) {
	out, err := tensor.Zeros(d, shape...)
	if err != nil {
		return nil, fmt.Errorf("%w: output: %v", ErrUnsupportedDType, err)
	}
	return out, nil
}

// qLayout maps the row-major elements of a tensor to the qparam that
// covers them, for a block size in torchao's sense: dimension i is cut
// into blocks of block[i] elements, and the qparams are laid out row-major
// over the block grid (shape[i] / block[i] per dim).
type qLayout struct {
	shape  []int // the input shape (a 0-dim input counts as [1])
	block  []int
	grid   []int // shape[i] / block[i]
	stride []int // row-major strides of grid
	n      int   // number of qparams
}

// qBlockParams are a dequantize call's layout and per-block qparams as
// qParamFloats and qZeroPoints read them.
type qBlockParams struct {
	lay     *qLayout
	scale   []float64
	scale64 bool      // the scales are float64
	zp      []float64 // nil when zeroPoints is nil
	zpInt   bool      // the zero points are integers
}

// readQBlockParams lays shape out in blocks and reads the scales (named
// scaleName) and the optional zero points (zpName), each of which must
// hold one value per block.
func readQBlockParams(shape, block []int, scales, zeroPoints *tensor.Tensor, scaleName, zpName string) (qBlockParams, error) {
	p, err := readQBlockScales(shape, block, scales, scaleName)
	if err != nil {
		return p, err
	}
	if p.zp, p.zpInt, err = qZeroPoints(zpName, zeroPoints); err != nil {
		return p, err
	}
	if p.zp != nil {
		if err := qCheckNumel(zpName, len(p.zp), p.lay); err != nil {
			return p, err
		}
	}
	return p, nil
}

// readQBlockScales is the first half of [readQBlockParams]: it lays shape
// out in blocks and reads the scales (named scaleName), one per block,
// leaving the zero points to the caller.
func readQBlockScales(shape, block []int, scales *tensor.Tensor, scaleName string) (qBlockParams, error) {
	var p qBlockParams
	var err error
	if p.lay, err = newQLayout(shape, block); err != nil {
		return p, err
	}
	if p.scale, p.scale64, err = qParamFloats(scaleName, scales); err != nil {
		return p, err
	}
	if err := qCheckNumel(scaleName, len(p.scale), p.lay); err != nil {
		return p, err
	}
	return p, nil
}

// clampQuantized clamps a rounded quantized value to [lo, hi]; NaN gives 0 (see
// the quantize chunks).
func clampQuantized[F float32 | float64](v, lo, hi F) F {
	if v < lo {
		return lo
	} else if v > hi {
		return hi
	} else if v != v {
		return 0
	}
	return v
}

// newQLayout checks block against shape: same rank, each block between 1
// and its dimension and dividing it.
func newQLayout(shape, block []int) (*qLayout, error) {
	if len(shape) == 0 {
		shape = []int{1}
		if len(block) == 0 {
			block = []int{1}
		}
	}
	if len(block) != len(shape) {
		return nil, argErrf("block_size %v: want %d entries for input shape %v", block, len(shape), shape)
	}
	l := &qLayout{shape: shape, block: append([]int(nil), block...), grid: make([]int, len(shape))}
	for i, b := range block {
		s := shape[i]
		if b == s || (s == 0 && b <= 1) {
			if s == 0 {
				l.block[i] = 1
			}
			l.grid[i] = 1
			if s == 0 {
				l.grid[i] = 0
			}
			continue
		}
		if b < 1 || b > s || s%b != 0 {
			return nil, argErrf("block_size %v: entry %d (%d) must divide dimension %d of size %d of input shape %v", block, i, b, i, s, shape)
		}
		l.grid[i] = s / b
	}
	l.stride = tensor.ContiguousStrides(l.grid)
	l.n = tensor.Numel(l.grid)
	return l, nil
}

// chunks calls fn(start, end, q) for consecutive runs [start, end) of the
// row-major elements that share qparam q, in order.
func (l *qLayout) chunks(fn func(start, end, q int)) {
	nd := len(l.shape)
	last := l.shape[nd-1]
	lb := l.block[nd-1]
	if tensor.Numel(l.shape) == 0 {
		return
	}
	if l.n == 1 {
		fn(0, tensor.Numel(l.shape), 0)
		return
	}
	rows := tensor.Numel(l.shape[:nd-1])
	idx := make([]int, nd-1)
	pos := 0
	for r := 0; r < rows; r++ {
		base := 0
		for d, i := range idx {
			base += (i / l.block[d]) * l.stride[d]
		}
		for k := 0; k < last; k += lb {
			fn(pos+k, pos+k+lb, base+k/lb)
		}
		pos += last
		for d := nd - 2; d >= 0; d-- {
			idx[d]++
			if idx[d] < l.shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// qNaNToZero is the documented result of quantizing NaN: PyTorch's
// float->int cast of NaN is undefined behaviour in C++ (x86 gives INT_MIN,
// whose low 8 and 16 bits are 0); fxquant defines it as 0, not clamped.

// quantChunk32 quantizes src into dst with one reciprocal scale and zero
// point, all in float32: round_half_even(x*inv) + zp (or round(x*inv + zp)
// when zpBefore), clamped to [lo, hi]. NaN gives 0.
func quantChunk32[T qint](dst []T, src []float32, inv, zp, lo, hi float32, zpBefore bool) {
	dst = dst[:len(src)]
	if useAVX2 && !zpBefore && len(src) >= 8 {
		n8 := quantChunkAVX2(dst, src, inv, zp, lo, hi)
		dst, src = dst[n8:], src[n8:]
	}
	if zpBefore {
		for i, x := range src {
			dst[i] = T(clampQuantizedBranchless(float32(math.RoundToEven(float64(float32(x*inv)+zp))), lo, hi))
		}
		return
	}
	for i, x := range src {
		dst[i] = T(clampQuantizedBranchless(float32(math.RoundToEven(float64(x*inv)))+zp, lo, hi))
	}
}

// clampQuantizedBranchless is clampQuantized for float32 with the min and
// max instructions instead of compare-and-branch (values beyond the range
// are common with narrow ranges such as int4, and mispredicted branches
// cost more than the arithmetic); only NaN takes a branch.
func clampQuantizedBranchless(v, lo, hi float32) float32 {
	c := min(max(v, lo), hi)
	if c != c {
		return 0
	}
	return c
}

// quantChunk64 is quantChunk32 in float64.
func quantChunk64[T qint](dst []T, src []float64, inv, zp, lo, hi float64, zpBefore bool) {
	dst = dst[:len(src)]
	for i, x := range src {
		var v float64
		if zpBefore {
			v = math.RoundToEven(float64(x*inv) + zp)
		} else {
			v = math.RoundToEven(x*inv) + zp
		}
		dst[i] = T(clampQuantized(v, lo, hi))
	}
}

// qQuant describes one quantize call: per-qparam reciprocal scales and zero
// points as the compute type sees them.
type qQuant struct {
	lay      *qLayout
	inv, zp  []float64 // per qparam; float32 values when !f64
	f64      bool      // compute in float64
	zpBefore bool      // add the zero point before rounding
	lo, hi   int64
}

// run quantizes x into a new tensor of dtype (storage of Int4/UInt4 is
// Int8/UInt8).
func (q *qQuant) run(x qfloats, shape []int, dtype tensor.DType) (*tensor.Tensor, error) {
	out, err := qOutput(dtype, shape)
	if err != nil {
		return nil, err
	}
	switch s := out.Storage().(type) {
	case []int8:
		qRunInto(q, s, x)
	case []uint8:
		qRunInto(q, s, x)
	case []int16:
		qRunInto(q, s, x)
	case []uint16:
		qRunInto(q, s, x)
	case []int32:
		qRunInto(q, s, x)
	case []int64:
		qRunInto(q, s, x)
	default:
		return nil, fmt.Errorf("%w: quantize output dtype %s", ErrUnsupportedDType, dtype)
	}
	return out, nil
}

func qRunInto[T qint](q *qQuant, dst []T, x qfloats) {
	if q.f64 {
		src := x.as64()
		lo, hi := float64(q.lo), float64(q.hi)
		q.lay.chunks(func(a, b, k int) {
			quantChunk64(dst[a:b], src[a:b], q.inv[k], q.zp[k], lo, hi, q.zpBefore)
			if float64(int64(hi)) != hi || hi >= 1<<63 {
				for i := a; i < b; i++ { // int64 range: restore the exact bound
					if src[i]*q.inv[k] >= hi {
						dst[i] = T(q.hi)
					}
				}
			}
		})
		return
	}
	src := x.f32
	lo, hi := float32(q.lo), float32(q.hi)
	if int64(lo) != q.lo || int64(hi) != q.hi || float64(hi) > math.MaxInt32 {
		// bounds float32 cannot hold exactly (wide int32/int64 ranges):
		// clamp again in the integer domain so quant_max stays quant_max.
		q.lay.chunks(func(a, b, k int) {
			quantChunk32Wide(dst[a:b], src[a:b], float32(q.inv[k]), float32(q.zp[k]), q.lo, q.hi, q.zpBefore)
		})
		return
	}
	inv32, zp32 := convertFloats[float32](q.inv), convertFloats[float32](q.zp)
	q.lay.forRuns(func(a, b, k int) {
		quantChunk32(dst[a:b], src[a:b], inv32[k], zp32[k], lo, hi, q.zpBefore)
	}, func(a, b, k int) {
		quantVec32(dst[a:b], src[a:b], inv32[k:k+b-a], zp32[k:k+b-a], lo, hi, q.zpBefore)
	})
}

// quantChunk32Wide is quantChunk32 for ranges whose ends float32 cannot
// hold: the float clamp saturates, then an int64 clamp restores the exact
// bounds (float32(2147483647) is 2**31).
func quantChunk32Wide[T qint](dst []T, src []float32, inv, zp float32, lo, hi int64, zpBefore bool) {
	dst = dst[:len(src)]
	flo, fhi := float32(lo), float32(hi)
	for i, x := range src {
		var v float32
		if zpBefore {
			v = float32(math.RoundToEven(float64(float32(x*inv) + zp)))
		} else {
			v = float32(math.RoundToEven(float64(x*inv))) + zp
		}
		var iv int64
		switch {
		case v != v:
			iv = 0
		case v <= flo:
			iv = lo
		case v >= fhi:
			iv = hi
		default:
			iv = min(max(int64(v), lo), hi)
		}
		dst[i] = T(iv)
	}
}

// qDequant describes one dequantize call: (q - zp) * scale per qparam.
type qDequant struct {
	lay     *qLayout
	scale   []float64 // per qparam; float32 values when !f64
	zp      []float64 // nil: no zero point
	intDiff bool      // q - zp is exact integer arithmetic (else in the compute float type)
	f64     bool      // compute in float64
}

// run dequantizes q (any integer storage) into a tensor of dtype out
// (float32, float64, float16 or bfloat16; rounded once at the end).
func (d *qDequant) run(q *tensor.Tensor, out tensor.DType) (*tensor.Tensor, error) {
	shape := q.Shape()
	n := q.Numel()
	var r32 []float32
	var r64 []float64
	if d.f64 {
		r64 = make([]float64, n)
	} else {
		r32 = make([]float32, n)
	}
	c := q.Contiguous()
	switch s := c.Storage().(type) {
	case []int8:
		dqRun(d, s, r32, r64)
	case []uint8:
		dqRun(d, s, r32, r64)
	case []int16:
		dqRun(d, s, r32, r64)
	case []uint16:
		dqRun(d, s, r32, r64)
	case []int32:
		dqRun(d, s, r32, r64)
	case []int64:
		dqRun(d, s, r32, r64)
	default:
		return nil, dtypeErr("input", q.DType(), "an integer tensor")
	}
	return qFloatResult(out, shape, r32, r64)
}

func dqRun[T qint](d *qDequant, src []T, r32 []float32, r64 []float64) {
	if !d.f64 {
		s32 := convertFloats[float32](d.scale)
		zp := d.zp
		if zp == nil {
			zp = make([]float64, len(s32))
		}
		d.lay.forRuns(func(a, b, k int) {
			dequantChunk32(r32[a:b], src[a:b], zp[k], s32[k], d.intDiff)
		}, func(a, b, k int) {
			dequantVec32(r32[a:b], src[a:b], zp[k:k+b-a], s32[k:k+b-a], d.intDiff)
		})
		return
	}
	d.lay.chunks(func(a, b, k int) {
		zp := 0.0
		if d.zp != nil {
			zp = d.zp[k]
		}
		if d.f64 {
			dequantChunk64(r64[a:b], src[a:b], zp, d.scale[k], d.intDiff)
		} else {
			dequantChunk32(r32[a:b], src[a:b], zp, float32(d.scale[k]), d.intDiff)
		}
	})
}

// dequantChunk32 computes (q - zp) * scale in float32. With intDiff the
// difference is taken in int64 and then rounded to float32, as PyTorch does
// for integer zero points in the per-channel/per-token ops; otherwise
// float32(q) - float32(zp). Both are identical whenever |q|, |zp| < 2**24.
func dequantChunk32[T qint](dst []float32, src []T, zp float64, scale float32, intDiff bool) {
	dst = dst[:len(src)]
	if useAVX2 && len(src) >= 8 {
		n8 := dequantChunkAVX2(dst, src, zp, scale, intDiff)
		dst, src = dst[n8:], src[n8:]
	}
	if intDiff {
		z := int64(zp)
		for i, q := range src {
			dst[i] = float32(int64(q)-z) * scale
		}
		return
	}
	z := float32(zp)
	for i, q := range src {
		dst[i] = float32(float32(q)-z) * scale
	}
}

// dequantChunk64 is dequantChunk32 in float64.
func dequantChunk64[T qint](dst []float64, src []T, zp, scale float64, intDiff bool) {
	dst = dst[:len(src)]
	if intDiff {
		z := int64(zp)
		for i, q := range src {
			dst[i] = float64(int64(q)-z) * scale
		}
		return
	}
	for i, q := range src {
		dst[i] = float64(float64(q)-zp) * scale
	}
}

// qFloatResult builds a float tensor of dtype out from float32 or float64
// values, rounding once (float64 -> float32 and float32 -> float16/bfloat16
// round to nearest even; float64 -> float16/bfloat16 goes through float32,
// which may double-round, as PyTorch's own casts do).
func qFloatResult(out tensor.DType, shape []int, r32 []float32, r64 []float64) (*tensor.Tensor, error) {
	switch out {
	case tensor.Float32:
		if r32 == nil {
			r32 = convertFloats[float32](r64)
		}
		return tensor.FromData(tensor.Float32, shape, r32)
	case tensor.Float64:
		if r64 == nil {
			r64 = convertFloats[float64](r32)
		}
		return tensor.FromData(tensor.Float64, shape, r64)
	case tensor.Float16, tensor.BFloat16:
		if r32 == nil {
			r32 = convertFloats[float32](r64)
		}
		h := make([]uint16, len(r32))
		conv := tensor.Float32ToBFloat16
		if out == tensor.Float16 {
			conv = tensor.Float32ToFloat16
		}
		for i, v := range r32 {
			h[i] = conv(v)
		}
		return tensor.FromData(out, shape, h)
	}
	return nil, fmt.Errorf("%w: output dtype: want float32, float64, float16 or bfloat16, got %s", ErrUnsupportedDType, out)
}

// convertFloats returns src converted element by element to D (a
// float64 -> float32 conversion rounds to nearest even).
func convertFloats[D, S float32 | float64](src []S) []D {
	dst := make([]D, len(src))
	for i, v := range src {
		dst[i] = D(v)
	}
	return dst
}

// qCheckNumel checks that a qparam tensor has the count the layout needs.
func qCheckNumel(name string, got int, l *qLayout) error {
	if got != l.n {
		return shapeErrf("argument %q: want %d values (one per block of %v over shape %v), got %d", name, l.n, l.block, l.shape, got)
	}
	return nil
}

// qBlockPerAxis returns the block size of per-channel quantization along
// axis: the shape with axis set to 1.
func qBlockPerAxis(shape []int, axis int) []int {
	b := append([]int(nil), shape...)
	b[axis] = 1
	return b
}

// qBlockLastDim returns the block size (1, ..., 1, g).
func qBlockLastDim(shape []int, g int) []int {
	b := make([]int, len(shape))
	for i := range b {
		b[i] = 1
	}
	if len(b) > 0 {
		b[len(b)-1] = g
	}
	return b
}
