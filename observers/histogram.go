package observers

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

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
	bins           int
	dstNBins       float64
	hist           []float32
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
		hist: make([]float32, bins), minVal: posInf32, maxVal: negInf32}, nil
}

// Class returns "HistogramObserver".
func (o *HistogramObserver) Class() string { return "HistogramObserver" }

// Bins returns the number of histogram bins.
func (o *HistogramObserver) Bins() int { return o.bins }

// Forward records the statistics of its one tensor argument and returns it.
func (o *HistogramObserver) Forward(args []any) (any, error) { return forward(o, args) }

// State returns a copy of the histogram and the running min and max.
func (o *HistogramObserver) State() (hist []float32, minVal, maxVal float32) {
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
	if o.minVal == posInf32 || o.maxVal == negInf32 {
		h, err := histc(v, B, xmin, xmax)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Class(), err)
		}
		o.hist, o.minVal, o.maxVal = h, xmin, xmax
		return nil
	}
	lo := minimum(xmin, o.minVal)
	hi := maximum(xmax, o.maxVal)
	u, err := histc(v, B, lo, hi)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Class(), err)
	}
	switch {
	case lo == o.minVal && hi == o.maxVal:
		for i := range u {
			u[i] = o.hist[i] + u[i]
		}
	case o.minVal == o.maxVal:
		one, err := histc([]float32{o.minVal}, B, lo, hi)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Class(), err)
		}
		total := atenSum(o.hist)
		for i := range u {
			p := float32(one[i] * total)
			u[i] = p + u[i]
		}
	default:
		r := rebin(o.hist, o.minVal, o.maxVal, lo, hi)
		for i := range u {
			u[i] = u[i] + r[i]
		}
	}
	o.hist, o.minVal, o.maxVal = u, lo, hi
	return nil
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
	c := make([]float32, B)
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
		e := o.quantError(cs, ce)
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

// quantError is _compute_quantization_error(s, e) of spec 2.5.
func (o *HistogramObserver) quantError(s, e int) float64 {
	B := o.bins
	D := o.dstNBins
	bw64 := (float64(o.maxVal) - float64(o.minVal)) / float64(B)
	dw := bw64 * float64(e-s+1) / D
	if dw == 0 {
		return 0
	}
	BW, DW, H := float32(bw64), float32(dw), float32(dw/2)
	dmax := float32(D - 1)
	clamp := func(v float32) float32 {
		if v != v {
			return v
		}
		return min(max(v, 0), dmax)
	}
	cube := func(v float32) float32 {
		sq := float32(v * v)
		return float32(sq * v)
	}
	g := func(dens, p, q float32) float32 {
		d := cube(q) - cube(p)
		return float32(dens * float32(d/3))
	}
	n := make([]float32, B)
	gMid := func(dens float32) float32 { return g(dens, -H, H) }
	for i := 0; i < B; i++ {
		sb := float32(float32(i-s) * BW)
		se := sb + BW
		kb := clamp(floorDiv32(sb, DW))
		ke := clamp(floorDiv32(se, DW))
		cb := float32((kb + 0.5) * DW)
		ce := float32(ke*DW) + H
		dens := o.hist[i] / BW
		var acc float32
		acc = acc + g(dens, sb-cb, H)
		k := (ke - kb) - 1
		acc = acc + float32(k*gMid(dens))
		acc = acc + g(dens, -H, se-ce)
		n[i] = acc
	}
	return float64(atenSum(n))
}

// floorDiv32 is torch.div(a, b, rounding_mode="floor") on float32.
func floorDiv32(a, b float32) float32 {
	m := float32(math.Mod(float64(a), float64(b)))
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

// histc is torch.histc(x, B, lo, hi) on CPU (spec 2.5, "Primitives").
func histc(x []float32, B int, lo, hi float32) ([]float32, error) {
	if lo == hi && len(x) > 0 {
		lo, hi = aminmax(x)
	}
	if lo == hi {
		lo = float32(float64(lo) - 1)
		hi = float32(float64(hi) + 1)
	}
	if math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) || lo != lo || hi != hi {
		return nil, fmt.Errorf("%w: histc range [%g, %g] is not finite", ErrInput, lo, hi)
	}
	if lo > hi {
		return nil, fmt.Errorf("%w: histc max %g must be larger than min %g", ErrInput, hi, lo)
	}
	h := make([]float32, B)
	fb := float32(B)
	width := hi - lo
	for _, e := range x {
		if !(e >= lo && e <= hi) {
			continue
		}
		p := float32((e - lo) * fb)
		k := int(float32(p / width))
		if k == B {
			k = B - 1
		}
		h[k]++
	}
	return h, nil
}

// linspace is torch.linspace(a, b, n) in float32 with the fused
// multiply-add of ATen's vectorized kernel: element i is a + step*i (i <
// n/2) or b - step*(n-1-i), each rounded once.
func linspace(a, b float32, n int) []float32 {
	out := make([]float32, n)
	if n == 1 {
		out[0] = a
		return out
	}
	step := (b - a) / float32(n-1)
	half := n / 2
	for i := 0; i < n; i++ {
		if i < half {
			out[i] = fusedRound32(float64(a), float64(step)*float64(i))
		} else {
			out[i] = fusedRound32(float64(b), -(float64(step) * float64(n-1-i)))
		}
	}
	return out
}

// fusedRound32 rounds the exact sum a + p (both float64, p exact) once to
// float32. The float64 sum s is correct unless it lands exactly on a
// float32 midpoint; then the TwoSum error term decides the direction.
func fusedRound32(a, p float64) float32 {
	s := a + p
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

// rebin spreads a histogram over [a, b] into B bins over [lo, hi] through
// 16 sub-bins per bin (spec 2.5, "rebin").
func rebin(h []float32, a, b, lo, hi float32) []float32 {
	B := len(h)
	n := B * histogramUpsample
	w := (b - a) / float32(n)
	half := float32(0.5 * w)
	ls := linspace(a, b, n+1)
	edges := linspace(lo, hi, B+1)
	r := make([]float32, B)
	for j := 0; j < n; j++ {
		c := ls[j] + half
		k := sort.Search(len(edges), func(i int) bool { return edges[i] > c }) - 1
		k = max(0, min(B-1, k))
		sub := h[j/histogramUpsample] / histogramUpsample
		r[k] = r[k] + sub
	}
	return r
}

// atenSum is torch.sum of a contiguous float32 vector in ATen's CPU order
// (8-lane vectors, four rows, the multi-level cascade of multi_row_sum;
// spec 2.5, "Primitives").
func atenSum(v []float32) float32 {
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
	i := 0
	for i+S <= R {
		for j := 0; j < S; j, i = j+1, i+1 {
			for k := 0; k < nrows; k++ {
				addVec(&acc[0][k], nrows*i+k)
			}
		}
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
	for ; i < R; i++ {
		for k := 0; k < nrows; k++ {
			addVec(&acc[0][k], nrows*i+k)
		}
	}
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
