package observers

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"github.com/fxquant/fxquant/ops/tensor"
)

// histogramUpsample is HistogramObserver.upsample_rate, a fixed attribute.
const histogramUpsample = 16

// HistogramObserver keeps a histogram of everything it sees over the
// running [min, max] and picks the range that minimizes the L2
// quantization error (torchao.quantization.pt2e HistogramObserver, torch
// 2.14.1). The arithmetic follows spec section 2.5 step by step, bit for
// bit with PyTorch's AVX2/AVX512 kernels: float32 tensor ops, a fused
// multiply-add in linspace, float64 cumulative sums and ATen's summation
// order.
//
// Infinite elements are dropped, as in PyTorch. An input holding NaN is an
// error (PyTorch's histc raises); unlike PyTorch the state is then left
// unchanged.
type HistogramObserver struct {
	uniformBase
	bins     int
	dstNBins float64
	hist     []float32 // nil before the first data

	minVal, maxVal float32
}

var _ Observer = (*HistogramObserver)(nil)

// NewHistogramObserver returns the observer for c (c.Bins defaults to
// 2048). Per-channel qschemes and dynamic observers are not supported.
func NewHistogramObserver(c Config) (*HistogramObserver, error) {
	const class = "HistogramObserver"
	b, err := newUniformBase(class, c, PerTensorAffine)
	if err != nil {
		return nil, err
	}
	if b.qscheme.IsPerChannel() {
		return nil, fmt.Errorf("%s: %w: qscheme %s: per-channel is not supported", class, ErrConfig, b.qscheme)
	}
	if b.isDynamic {
		return nil, fmt.Errorf("%s: %w: dynamic quantization is not supported", class, ErrConfig)
	}
	nb, ok := b.dtype.bits()
	if !ok {
		return nil, fmt.Errorf("%s: %w: dtype %s has no integer bit width (dst_nbins = 2**bits)", class, ErrConfig, b.dtype)
	}
	bins := c.Bins
	if bins == 0 {
		bins = 2048
	}
	if bins < 1 || bins > 1<<24 {
		return nil, fmt.Errorf("%s: %w: bins %d: want 1..2**24", class, ErrConfig, bins)
	}
	return &HistogramObserver{uniformBase: b, bins: bins, dstNBins: math.Ldexp(1, nb),
		minVal: posInf32, maxVal: negInf32}, nil
}

// Class returns "HistogramObserver".
func (o *HistogramObserver) Class() string { return "HistogramObserver" }

// Bins returns the number of histogram bins.
func (o *HistogramObserver) Bins() int { return o.bins }

// Forward records the statistics of its one tensor argument and returns it.
func (o *HistogramObserver) Forward(args []any) (any, error) { return forward(o, args) }

// State returns a copy of the histogram and the running min and max.
func (o *HistogramObserver) State() (hist []float32, minVal, maxVal float32) {
	if o.hist == nil { // no data yet: all bins zero
		return make([]float32, o.bins), o.minVal, o.maxVal
	}
	return slices.Clone(o.hist), o.minVal, o.maxVal
}

// SetState replaces the histogram and range, e.g. with values recorded by
// PyTorch. hist must have Bins() elements.
func (o *HistogramObserver) SetState(hist []float32, minVal, maxVal float32) error {
	if len(hist) != o.bins {
		return fmt.Errorf("%s: %w: histogram has %d bins, want %d", o.Class(), ErrInput, len(hist), o.bins)
	}
	o.hist, o.minVal, o.maxVal = slices.Clone(hist), minVal, maxVal
	return nil
}

// Observe merges x into the histogram (spec 2.5, "State update").
func (o *HistogramObserver) Observe(x *tensor.Tensor) error {
	v, err := floatInput(o.Class(), x)
	if err != nil || len(v) == 0 {
		return err
	}
	xmin, xmax := aminmax(v)
	if xmin != xmin {
		return fmt.Errorf("%s: %w: input holds NaN (histc needs a finite range)", o.Class(), ErrInput)
	}
	if xmin == negInf32 || xmax == posInf32 {
		finite := make([]float32, 0, len(v))
		for _, e := range v {
			if !math.IsInf(float64(e), 0) {
				finite = append(finite, e)
			}
		}
		if len(finite) == 0 {
			return nil
		}
		v = finite
		xmin, xmax = aminmax(v)
	}
	B := o.bins
	u := getF32(B)
	if o.minVal == posInf32 || o.maxVal == negInf32 {
		if err := histc(u.v, v, xmin, xmax); err != nil {
			putF32(u)
			return fmt.Errorf("%s: %w", o.Class(), err)
		}
		o.swapHist(u, xmin, xmax)
		return nil
	}
	lo := minimum(xmin, o.minVal)
	hi := maximum(xmax, o.maxVal)
	if err := histc(u.v, v, lo, hi); err != nil {
		putF32(u)
		return fmt.Errorf("%s: %w", o.Class(), err)
	}
	uv := u.v
	switch {
	case lo == o.minVal && hi == o.maxVal:
		for i := range uv {
			uv[i] = o.hist[i] + uv[i]
		}
	case o.minVal == o.maxVal:
		one := getF32(B)
		defer putF32(one)
		if err := histc(one.v, []float32{o.minVal}, lo, hi); err != nil {
			putF32(u)
			return fmt.Errorf("%s: %w", o.Class(), err)
		}
		total := atenSum(o.hist)
		for i := range uv {
			p := float32(one.v[i] * total)
			uv[i] = p + uv[i]
		}
	default:
		r := getF32(B)
		rebin(r.v, o.hist, o.minVal, o.maxVal, lo, hi)
		for i := range uv {
			uv[i] = uv[i] + r.v[i]
		}
		putF32(r)
	}
	o.swapHist(u, lo, hi)
	return nil
}

// swapHist makes u's slice the histogram over [lo, hi] and returns the
// old one to the pool in u's holder.
func (o *HistogramObserver) swapHist(u *f32Buf, lo, hi float32) {
	o.hist, u.v = u.v, o.hist
	o.minVal, o.maxVal = lo, hi
	if u.v != nil {
		putF32(u)
	}
}

// CalculateQParams runs the non-linear range search and returns scale
// float32 [1] and zero point int32 [1] (affine) or int64 [1] (symmetric).
func (o *HistogramObserver) CalculateQParams() (QParams, error) {
	lo, hi, err := o.SearchRange()
	if err != nil {
		return QParams{}, err
	}
	return o.calcUniformQParams(o.Class(), []float32{lo}, []float32{hi}, true)
}

// SearchRange returns the range (new_min, new_max) that
// _non_linear_param_search picks.
func (o *HistogramObserver) SearchRange() (newMin, newMax float32, err error) {
	if o.minVal == posInf32 && o.maxVal == negInf32 {
		return 0, 0, fmt.Errorf("%s: %w: run the observer on a non-empty tensor before asking for qparams", o.Class(), ErrNoData)
	}
	if !(o.minVal <= o.maxVal) || math.IsInf(float64(o.minVal), 0) || math.IsInf(float64(o.maxVal), 0) {
		return 0, 0, fmt.Errorf("%s: %w: min %g and max %g: want finite min <= max", o.Class(), ErrInvalidStats, o.minVal, o.maxVal)
	}
	if len(o.hist) != o.bins {
		return 0, 0, fmt.Errorf("%s: %w: histogram has %d bins, want %d", o.Class(), ErrInvalidStats, len(o.hist), o.bins)
	}
	B := o.bins
	bw := (o.maxVal - o.minVal) / float32(B)
	total := float64(atenSum(o.hist))
	qe := newQuantErr(o.hist, o.minVal, o.maxVal, o.dstNBins)
	defer qe.release()
	c := qe.cum
	run := 0.0
	for i, h := range o.hist {
		run += float64(h)
		c[i] = float32(run)
	}
	alpha, beta := 0.0, 1.0
	start, end := 0, B-1
	best := math.Inf(1)
	for alpha < beta {
		na := alpha + 1e-5
		nb := beta - 1e-5
		l := start
		tl := float32(na * total)
		for l < end && c[l] < tl {
			l++
		}
		r := end
		tr := float32(nb * total)
		for r > start && c[r] > tr {
			r--
		}
		cs, ce := start, r
		if l-start > end-r {
			cs, ce = l, end
			alpha = na
		} else {
			beta = nb
		}
		if cs == start && ce == end {
			continue
		}
		e := qe.eval(cs, ce)
		if e > best {
			break
		}
		best = e
		start, end = cs, ce
	}
	p := float32(bw * float32(start))
	newMin = o.minVal + p
	q := float32(bw * float32(end+1))
	newMax = o.minVal + q
	return newMin, newMax, nil
}

// quantErr evaluates _compute_quantization_error(s, e) of spec 2.5 for
// one histogram, the way PyTorch does: whole-array operations over the
// bins, each element rounded to float32 after every step. What does not
// depend on (s, e) is computed once: the density hist / bin_width and the
// bin offsets (i - s) * bin_width, which depend on i - s only and so are
// windows of one table.
type quantErr struct {
	D        float64   // dst_nbins
	bw64     float64   // bin_width as Python computes it
	dens     []float32 // histogram / bin_width
	off, end []float32 // off[B-1+k] = float32(k) * bw, end = off + bw, k in -(B-1)..B-1
	kb, ke   []float32 // dst_bin_of_begin, dst_bin_of_end
	norm     []float32
	cum      []float32 // SearchRange's cumulative sums
	finite   bool      // every off and end is finite
	maxAbs   float64   // the largest |off| or |end|
}

// quantErrPool holds quantErr scratch between range searches, so that a
// calibration run's thousands of observers share a few sets of buffers.
var quantErrPool sync.Pool

// newQuantErr returns the evaluator for hist over [minVal, maxVal], its
// buffers taken from quantErrPool; release returns them.
func newQuantErr(hist []float32, minVal, maxVal float32, dstNBins float64) *quantErr {
	B := len(hist)
	bw64 := (float64(maxVal) - float64(minVal)) / float64(B)
	bw := float32(bw64) // ATen's float32 scalar
	q, _ := quantErrPool.Get().(*quantErr)
	if q == nil || cap(q.dens) < B {
		q = &quantErr{dens: make([]float32, B), off: make([]float32, 2*B-1), end: make([]float32, 2*B-1),
			kb: make([]float32, B), ke: make([]float32, B), norm: make([]float32, B), cum: make([]float32, B)}
	}
	q.D, q.bw64 = dstNBins, bw64
	q.dens, q.kb, q.ke, q.norm, q.cum = q.dens[:B], q.kb[:B], q.ke[:B], q.norm[:B], q.cum[:B]
	q.off, q.end = q.off[:2*B-1], q.end[:2*B-1]
	quantErrTables(q.dens, q.off, q.end, hist, bw, useAVX2)
	// For a finite bw >= 0 both tables are monotone in k (rounding is), so
	// they are finite when their ends are.
	last := len(q.off) - 1
	q.finite = isFinite32(bw) && bw >= 0 && isFinite32(q.off[0]) && isFinite32(q.off[last]) &&
		isFinite32(q.end[0]) && isFinite32(q.end[last])
	q.maxAbs = max(math.Abs(float64(q.off[0])), math.Abs(float64(q.off[last])),
		math.Abs(float64(q.end[0])), math.Abs(float64(q.end[last])))
	return q
}

// quantErrTables sets dens[i] = hist[i] / bw and the offsets off[k] =
// float32(k-(B-1)) * bw, end[k] = off[k] + bw; simd allows the AVX2 loops
// (int32 to float32 conversion is exact below 2**24, and B <= 2**24).
func quantErrTables(dens, off, end, hist []float32, bw float32, simd bool) {
	B := len(hist)
	i0, k0 := 0, 0
	if simd {
		if nv := B / 8; nv > 0 {
			divByAVX2(&dens[0], &hist[0], nv, bw)
			i0 = 8 * nv
		}
		if nv := len(off) / 8; nv > 0 {
			offsetsAVX2(&off[0], &end[0], nv, int32(-(B - 1)), bw)
			k0 = 8 * nv
		}
	}
	for i := i0; i < B; i++ {
		dens[i] = hist[i] / bw
	}
	for k := k0; k < len(off); k++ {
		sb := float32(float32(k-(B-1)) * bw)
		off[k] = sb
		end[k] = sb + bw
	}
}

// isFinite32 reports whether v is neither infinite nor NaN.
func isFinite32(v float32) bool { return v-v == 0 }

// release returns q's buffers to quantErrPool; q must not be used after.
func (q *quantErr) release() { quantErrPool.Put(q) }

// cube32 is v*v*v in float32, rounded after each product.
func cube32(v float32) float32 {
	sq := float32(v * v)
	return float32(sq * v)
}

// eval is _compute_quantization_error(s, e), on the AVX2 kernel where
// the CPU has it and the inputs are in its domain.
func (q *quantErr) eval(s, e int) float64 { return q.evalWith(s, e, useAVX2) }

// qeConsts are quantErrNormAVX2's constants, each in 8 float32 (or 4
// float64) lanes; the assembly knows the field offsets.
type qeConsts struct {
	dw, h, dmax, th, cubeH, cubeNegH, mid, half, one, three [8]float32
	dw64                                                    [4]float64
	skip0                                                   int64 // nonzero: +0 densities give +0 norms
}

func fill8(v *[8]float32, x float32) {
	for i := range v {
		v[i] = x
	}
}

// evalWith is eval; simd allows the AVX2 kernel (tests compare both).
// The kernel runs floorDivClamp's fast path only: a finite positive
// dst_bin_width, dst_nbins - 1 below 2**20 and finite bin offsets (so
// every lane is finite and no quotient reaches 2**28). The bins past the
// last multiple of 8 and every other case run the Go loop.
func (q *quantErr) evalWith(s, e int, simd bool) float64 {
	B := len(q.dens)
	dw := q.bw64 * float64(e-s+1) / q.D
	if dw == 0 {
		return 0
	}
	DW, H := float32(dw), float32(dw/2)
	dmax := float32(q.D - 1)
	sb := q.off[B-1-s : 2*B-1-s]
	se := q.end[B-1-s : 2*B-1-s]
	cubeH, cubeNegH := cube32(H), cube32(-H)
	// _get_norm(-dw/2, dw/2, density) = density * ((h^3 - (-h)^3) / 3)
	mid := float32(float32(cubeH-cubeNegH) / 3)
	n := q.norm[:B]
	n0 := 0
	if simd && q.finite && DW > 0 && !math.IsInf(float64(DW), 0) && dmax < 1<<20 {
		n0 = B &^ 7
	}
	if n0 > 0 {
		var k qeConsts
		// floorDivClamp's threshold, as the smallest float32 >= it
		th := float64(DW) * (float64(dmax) + 3) * (1 + 1.0/(1<<20))
		th32 := float32(th)
		if float64(th32) < th {
			th32 = math.Nextafter32(th32, posInf32)
		}
		fill8(&k.dw, DW)
		fill8(&k.h, H)
		fill8(&k.dmax, dmax)
		fill8(&k.th, th32)
		fill8(&k.cubeH, cubeH)
		fill8(&k.cubeNegH, cubeNegH)
		fill8(&k.mid, mid)
		fill8(&k.half, 0.5)
		fill8(&k.one, 1)
		fill8(&k.three, 3)
		for i := range k.dw64 {
			k.dw64[i] = float64(DW)
		}
		// With every offset and (dst_nbins)*dst_bin_width within 1e12,
		// |p| and |r| stay below 2e12 (so their cubes below 8e36) and every
		// term of a bin is finite: a zero density makes each ±0.
		if q.maxAbs <= 1e12 && (float64(dmax)+1)*float64(DW) <= 1e12 {
			k.skip0 = 1
		}
		quantErrNormAVX2(&n[0], &sb[0], &se[0], &q.dens[0], n0, &k)
	}
	if n0 < B {
		// dst_bin_of_begin / _end = clamp(div(src_bin_begin / _end, dst_bin_width, "floor"), 0, dst_nbins-1)
		floorDivClamp(q.kb[n0:B], sb[n0:B], DW, dmax)
		floorDivClamp(q.ke[n0:B], se[n0:B], DW, dmax)
		kb, ke, dens := q.kb[:B], q.ke[:B], q.dens[:B]
		sb, se = sb[:B], se[:B]
		for i := n0; i < B; i++ {
			d := dens[i]
			cb := float32(float32(kb[i]+0.5) * DW)
			ce := float32(ke[i]*DW) + H
			p := sb[i] - cb
			t1 := float32(d * float32(float32(cubeH-cube32(p))/3))
			k := (ke[i] - kb[i]) - 1
			t2 := float32(k * float32(d*mid))
			r := se[i] - ce
			t3 := float32(d * float32(float32(cube32(r)-cubeNegH)/3))
			var acc float32
			acc = acc + t1
			acc = acc + t2
			acc = acc + t3
			n[i] = acc
		}
	}
	return float64(atenSum(n))
}

// floorDivClamp sets dst[i] = clamp(torch.div(src[i], b, rounding_mode=
// "floor"), 0, hi) for float32 src and a float32 divisor b (NaN passes the
// clamp). A finite positive b takes the fast path of [fmod32]; anything
// else goes through [floorDiv32].
func floorDivClamp(dst, src []float32, b, hi float32) {
	dst = dst[:len(src)]
	if !(b > 0) || math.IsInf(float64(b), 0) {
		for i, a := range src {
			dst[i] = clamp0(floorDiv32(a, b), hi)
		}
		return
	}
	if !(hi < 1<<20) {
		for i, a := range src {
			dst[i] = clamp0(floorDivPos32(a, b), hi)
		}
		return
	}
	// Finite elements the clamp decides skip the division. a < 0 gives at most
	// -1 (fmod's remainder makes (a - m) / b <= 0, then 1 is subtracted or
	// the quotient is a negative integer), clamped to 0. a/b >= hi + 3
	// gives n = trunc(a/b) >= hi + 2 and d within n*2**-23 of n, so at
	// least min(n-1, 2**20-1) >= hi, clamped to hi; th over-estimates
	// b*(hi+3) by 2**-20 relative, more than its float64 rounding.
	th := float64(b) * (float64(hi) + 3) * (1 + 1.0/(1<<20))
	for i, a := range src {
		switch {
		case a < 0 && a >= -math.MaxFloat32:
			dst[i] = 0
		case float64(a) >= th && a <= math.MaxFloat32:
			dst[i] = hi
		default:
			dst[i] = clamp0(floorDivPos32(a, b), hi)
		}
	}
}

func clamp0(v, hi float32) float32 {
	if v != v {
		return v
	}
	return min(max(v, 0), hi)
}

// floorDivPos32 is [floorDiv32] for a finite b > 0: the same float32
// steps, with the exact remainder from [fmod32] instead of math.Mod.
func floorDivPos32(a, b float32) float32 { return floorDivRem32(a, b, fmod32(a, b)) }

// fmod32 is C's fmodf(a, b) for finite b > 0: the exact remainder a -
// trunc(a/b)*b, with a's sign. For |a/b| < 2**28 the float64 quotient
// truncates to the exact one (a non-integer quotient of float32s lies at
// least 2**-24 from an integer, further than float64's rounding error
// there), the product n*b fits float64's 53 bits and the difference is
// the representable exact remainder; larger quotients, infinities and
// NaN go to math.Mod.
func fmod32(a, b float32) float32 {
	q := float64(a) / float64(b)
	if !(math.Abs(q) < 1<<28) {
		return float32(math.Mod(float64(a), float64(b)))
	}
	n := math.Trunc(q)
	r := float64(a) - n*float64(b)
	if r == 0 {
		return float32(math.Copysign(0, float64(a)))
	}
	return float32(r)
}

// floorDiv32 is torch.div(a, b, rounding_mode="floor") on float32.
func floorDiv32(a, b float32) float32 {
	return floorDivRem32(a, b, float32(math.Mod(float64(a), float64(b))))
}

// floorDivRem32 is floorDiv32's steps after fmod: m is fmod(a, b).
func floorDivRem32(a, b, m float32) float32 {
	d := (a - m) / b
	if m != 0 && (b < 0) != (m < 0) {
		d = d - 1
	}
	if d == 0 {
		return float32(math.Copysign(0, float64(a/b)))
	}
	f := float32(math.Floor(float64(d)))
	if d-f > 0.5 {
		f = f + 1
	}
	return f
}

// histc sets h to torch.histc(x, len(h), lo, hi) on CPU (spec 2.5,
// "Primitives"). On error h holds no histogram. A range so wide that an
// element's bin index overflows float32 (data spanning about +-1.7e38 and
// more) is an error: PyTorch's index is undefined there.
func histc(h, x []float32, lo, hi float32) error {
	if lo == hi && len(x) > 0 {
		lo, hi = aminmax(x)
	}
	if lo == hi {
		lo = float32(float64(lo) - 1)
		hi = float32(float64(hi) + 1)
	}
	if math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) || lo != lo || hi != hi {
		return fmt.Errorf("%w: histc range [%g, %g] is not finite", ErrInput, lo, hi)
	}
	if lo > hi {
		return fmt.Errorf("%w: histc max %g must be larger than min %g", ErrInput, hi, lo)
	}
	clear(h)
	return histcCount(h, x, lo, hi, useAVX2)
}

// histcConsts are histcAVX2's constants in 8 lanes; the assembly knows
// the field offsets.
type histcConsts struct {
	lo, hi, fb, width, one [8]float32
	bmax                   [8]int32
}

// histcCount adds histc's counts of x over [lo, hi] to h; simd allows
// the AVX2 kernel (tests compare both). The kernel runs when the width
// and width*bins are finite and positive and bins < 2**22: then every
// in-range quotient (e-lo)*bins/width is at most bins (rounding included),
// so int32 truncation and a min with bins-1 are histc's k.
func histcCount(h, x []float32, lo, hi float32, simd bool) error {
	B := len(h)
	fb := float32(B)
	width := hi - lo
	if simd && len(x) >= 8 && B < 1<<22 && width > 0 && isFinite32(float32(width*fb)) {
		var k histcConsts
		fill8(&k.lo, lo)
		fill8(&k.hi, hi)
		fill8(&k.fb, fb)
		fill8(&k.width, width)
		fill8(&k.one, 1)
		for i := range k.bmax {
			k.bmax[i] = int32(B - 1)
		}
		for len(x) >= 8 {
			nv := len(x) / 8
			done := histcAVX2(&h[0], &x[0], nv, &k)
			x = x[8*done:]
			if done == nv {
				break
			}
			// a vector with an element outside [lo, hi]: count it here
			if err := histcGo(h, x[:8], lo, hi); err != nil {
				return err
			}
			x = x[8:]
		}
	}
	return histcGo(h, x, lo, hi)
}

// histcGo is histc's counting loop.
func histcGo(h, x []float32, lo, hi float32) error {
	B := len(h)
	fb := float32(B)
	width := hi - lo
	for _, e := range x {
		if !(e >= lo && e <= hi) {
			continue
		}
		p := float32((e - lo) * fb)
		q := float32(p / width) // >= 0 or NaN
		if !(float64(q) < float64(B)+1) {
			return fmt.Errorf("%w: histc: the bin of %g in [%g, %g] is %g: (max - min) * bins overflows float32", ErrInput, e, lo, hi, q)
		}
		k := int(q)
		if k == B {
			k = B - 1
		}
		h[k]++
	}
	return nil
}

// linspacer computes the elements of torch.linspace(a, b, n) in float32
// one at a time, with the fused multiply-add of ATen's vectorized kernel:
// element i is a + step*i (i < n/2) or b - step*(n-1-i), each rounded once.
type linspacer struct {
	a, b, step float64
	n, half    int
}

func newLinspace(a, b float32, n int) linspacer {
	l := linspacer{a: float64(a), b: float64(b), n: n, half: n / 2}
	if n > 1 {
		l.step = float64((b - a) / float32(n-1))
	}
	return l
}

// at is element i of torch.linspace(a, b, n).
func (l linspacer) at(i int) float32 {
	switch {
	case l.n == 1:
		return float32(l.a)
	case i < l.half:
		return fusedRound32(l.a, l.step*float64(i))
	default:
		return fusedRound32(l.b, -(l.step * float64(l.n-1-i)))
	}
}

// fusedRound32 rounds the exact sum a + p (both float64, p exact) once to
// float32. The float64 sum s is correct unless it lands exactly on a
// float32 midpoint; then the TwoSum error term decides the direction.
func fusedRound32(a, p float64) float32 {
	s := a + p
	if f, ok := roundNoMid32(s); ok {
		return f
	}
	return fusedRound32Slow(a, p, s)
}

// roundNoMid32 returns float32(s) and true when s is not a float32
// midpoint, so that it rounds as the exact sum it stands for does. In
// float32's normal range (biased float64 exponent 897..1150) a midpoint
// has the low 29 mantissa bits 1<<28; outside that range ok is false.
func roundNoMid32(s float64) (float32, bool) {
	sb := math.Float64bits(s)
	return float32(s), sb&(1<<29-1) != 1<<28 && (sb>>52&0x7ff)-(1023-126) <= 253
}

// fusedRound32Slow is fusedRound32 for an s = a + p that may lie on a
// float32 midpoint.
func fusedRound32Slow(a, p, s float64) float32 {
	bb := s - a
	errTerm := (a - (s - bb)) + (p - bb)
	f := float32(s)
	if errTerm == 0 || float64(f) == s || math.IsInf(s, 0) {
		return f
	}
	var other float32
	if float64(f) < s {
		other = math.Nextafter32(f, float32(math.Inf(1)))
	} else {
		other = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	if (float64(f)+float64(other))/2 != s {
		return f
	}
	lower, upper := f, other
	if other < f {
		lower, upper = other, f
	}
	if errTerm > 0 {
		return upper
	}
	return lower
}

// rebin sets r to the histogram h over [a, b] spread into len(r) == len(h)
// bins over [lo, hi] through 16 sub-bins per bin (spec 2.5, "rebin"). The
// sub-bin start points linspace(a, b, 16*B+1) are computed as they are
// used; only the B+1 edges are stored (in a pooled buffer).
func rebin(r, h []float32, a, b, lo, hi float32) {
	B := len(h)
	n := B * histogramUpsample
	w := (b - a) / float32(n)
	half := float32(0.5 * w)
	ls := newLinspace(a, b, n+1)
	eb := getF32(B + 1)
	defer putF32(eb)
	edges := eb.v
	el := newLinspace(lo, hi, B+1)
	for i := range edges {
		edges[i] = el.at(i)
	}
	clear(r)
	// bucketize(c, edges, right=True) - 1 is the number of edges <= c,
	// minus one. For sorted edges a cursor that moves from the previous
	// midpoint's answer finds the same count as a binary search, in
	// O(1) steps for increasing midpoints. The bin being added to stays
	// in a register while consecutive sub-bins land in it: the same adds
	// in the same order as r[k] = r[k] + sub each time.
	sorted := slices.IsSorted(edges)
	e := 0 // edges[:e] <= c < edges[e:] for the current midpoint
	cur, acc := 0, r[0]
	for i, hv := range h {
		sub := hv / histogramUpsample
		for j := i * histogramUpsample; j < (i+1)*histogramUpsample; j++ {
			// c = linspace(a, b, n+1)[j] + half (linspacer.at, inlined)
			// (the products are exact; float64() keeps them unfused anyway)
			x, p := ls.a, float64(ls.step*float64(j))
			if j >= ls.half {
				x, p = ls.b, -float64(ls.step*float64(ls.n-1-j))
			}
			c, ok := roundNoMid32(x + p)
			if !ok {
				c = fusedRound32Slow(x, p, x+p)
			}
			c = c + half
			var k int
			if sorted && c == c {
				for e < len(edges) && edges[e] <= c {
					e++
				}
				for e > 0 && edges[e-1] > c {
					e--
				}
				k = e - 1
			} else {
				k = sort.Search(len(edges), func(i int) bool { return edges[i] > c }) - 1
			}
			k = max(0, min(B-1, k))
			if k != cur {
				r[cur] = acc
				cur, acc = k, r[k]
			}
			acc = acc + sub
		}
	}
	r[cur] = acc
}

// f32Buf holds a pooled float32 buffer.
type f32Buf struct{ v []float32 }

// f32Pool recycles histogram-sized buffers between observations.
var f32Pool sync.Pool

// getF32 returns a buffer of n elements with arbitrary contents.
func getF32(n int) *f32Buf {
	if b, _ := f32Pool.Get().(*f32Buf); b != nil && cap(b.v) >= n {
		b.v = b.v[:n]
		return b
	}
	return &f32Buf{v: make([]float32, n)}
}

// putF32 returns b to the pool; b must not be used after.
func putF32(b *f32Buf) { f32Pool.Put(b) }

// atenSum is torch.sum of a contiguous float32 vector in ATen's CPU order
// (8-lane vectors, four rows, the multi-level cascade of multi_row_sum;
// spec 2.5, "Primitives"). The level-0 row sums run on sumRows4AVX2 where
// the CPU has it.
func atenSum(v []float32) float32 { return atenSumWith(v, useAVX2) }

// atenSumWith is atenSum; simd allows the AVX2 row sums (tests compare).
func atenSumWith(v []float32, simd bool) float32 {
	const lanes, nrows, levels = 8, 4, 4
	n := len(v)
	V := n / lanes
	R := V / nrows
	P := 4
	if R > 1 {
		if c := bits.Len(uint(R-1)) / levels; c > P {
			P = c
		}
	}
	S := 1 << P
	mask := S - 1
	var acc [levels][nrows][lanes]float32
	addVec := func(dst *[lanes]float32, k int) {
		for l := 0; l < lanes; l++ {
			dst[l] = dst[l] + v[k*lanes+l]
		}
	}
	addAcc := func(dst, src *[lanes]float32) {
		for l := 0; l < lanes; l++ {
			dst[l] = dst[l] + src[l]
		}
	}
	// rows adds the row groups i0 <= i < i1 into acc[0], group by group.
	rows := func(i0, i1 int) {
		if simd && i1 > i0 {
			sumRows4AVX2(&v[i0*nrows*lanes], i1-i0, &acc[0])
			return
		}
		for i := i0; i < i1; i++ {
			for k := 0; k < nrows; k++ {
				addVec(&acc[0][k], nrows*i+k)
			}
		}
	}
	i := 0
	for i+S <= R {
		rows(i, i+S)
		i += S
		for j := 1; j < levels; j++ {
			for k := 0; k < nrows; k++ {
				addAcc(&acc[j][k], &acc[j-1][k])
				acc[j-1][k] = [lanes]float32{}
			}
			if i&(mask<<(j*P)) != 0 {
				break
			}
		}
	}
	rows(i, R)
	for j := 1; j < levels; j++ {
		for k := 0; k < nrows; k++ {
			addAcc(&acc[0][k], &acc[j][k])
		}
	}
	sums := acc[0]
	for k := nrows * R; k < V; k++ {
		addVec(&sums[0], k)
	}
	for k := 1; k < nrows; k++ {
		addAcc(&sums[0], &sums[k])
	}
	var t float32
	for k := lanes * V; k < n; k++ {
		t = t + v[k]
	}
	for l := 0; l < lanes; l++ {
		t = t + sums[0][l]
	}
	return 0 + t
}

// Plan describes the convert replacement (spec section 2.4): a
// PlanPerTensor with the searched qparams.
func (o *HistogramObserver) Plan() (ConvertPlan, error) { return uniformPlan(o, &o.uniformBase) }
