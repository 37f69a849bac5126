package observers

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// The fast paths of the range search must give the bits of the plain
// per-element formulas of spec 2.5 (which the fixtures pin to PyTorch's).

// refQuantError is _compute_quantization_error(s, e) element by element
// with math.Mod-based floor division, as SearchRange computed it before
// the whole-array version.
func refQuantError(hist []float32, minVal, maxVal float32, D float64, s, e int) float64 {
	B := len(hist)
	bw64 := (float64(maxVal) - float64(minVal)) / float64(B)
	dw := bw64 * float64(e-s+1) / D
	if dw == 0 {
		return 0
	}
	BW, DW, H := float32(bw64), float32(dw), float32(dw/2)
	dmax := float32(D - 1)
	g := func(dens, p, q float32) float32 {
		d := cube32(q) - cube32(p)
		return float32(dens * float32(d/3))
	}
	n := make([]float32, B)
	for i := 0; i < B; i++ {
		sb := float32(float32(i-s) * BW)
		se := sb + BW
		kb := clamp0(floorDiv32(sb, DW), dmax)
		ke := clamp0(floorDiv32(se, DW), dmax)
		cb := float32((kb + 0.5) * DW)
		ce := float32(ke*DW) + H
		dens := hist[i] / BW
		var acc float32
		acc = acc + g(dens, sb-cb, H)
		k := (ke - kb) - 1
		acc = acc + float32(k*g(dens, -H, H))
		acc = acc + g(dens, -H, se-ce)
		n[i] = acc
	}
	return float64(atenSum(n))
}

func TestQuantErrMatchesPerElement(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for trial := 0; trial < 12; trial++ {
		B := []int{1, 7, 64, 257, 2048}[trial%5]
		hist := make([]float32, B)
		for i := range hist {
			hist[i] = float32(r.IntN(1000))
		}
		lo := float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(6)-3)))
		hi := lo + float32(r.Float64()*math.Pow(10, float64(r.IntN(6)-3)))
		if hi == lo {
			hi = math.Nextafter32(lo, posInf32)
		}
		for _, D := range []float64{256, 16, 65536} {
			q := newQuantErr(hist, lo, hi, D)
			for k := 0; k < 60; k++ {
				s := r.IntN(B)
				e := s + r.IntN(B-s)
				got, want := q.eval(s, e), refQuantError(hist, lo, hi, D, s, e)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("B=%d range [%g, %g] D=%g s=%d e=%d: got %v, want %v", B, lo, hi, D, s, e, got, want)
				}
			}
		}
	}
}

func TestFloorDivClampMatchesFloorDiv32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float32, 4096)
	dst := make([]float32, len(src))
	for trial := 0; trial < 200; trial++ {
		b := float32(r.Float64() * math.Pow(2, float64(r.IntN(60)-30)))
		switch trial {
		case 0:
			b = 0
		case 1:
			b = -0.37
		case 2:
			b = posInf32
		case 3:
			b = math.SmallestNonzeroFloat32
		}
		hi := []float32{255, 15, 65535, 4294967295}[trial%4]
		for i := range src {
			switch r.IntN(5) {
			case 0: // near a multiple of b, either side
				k := float32(r.IntN(600) - 300)
				src[i] = math.Nextafter32(k*b, float32(r.NormFloat64()))
			case 1: // near the clamp threshold
				src[i] = b * (hi + float32(r.Float64()*6-2))
			case 2:
				src[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(80)-40)))
			case 3:
				src[i] = float32(r.IntN(600)-300) * b
			default:
				src[i] = []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), posInf32, negInf32, 1e38, -1e38}[r.IntN(7)]
			}
		}
		floorDivClamp(dst, src, b, hi)
		for i, a := range src {
			want := clamp0(floorDiv32(a, b), hi)
			if math.Float32bits(dst[i]) != math.Float32bits(want) && !(want != want && dst[i] != dst[i]) {
				t.Fatalf("floor(%g / %g) clamped to [0, %g]: got %g, want %g", a, b, hi, dst[i], want)
			}
		}
	}
}

func TestFmod32MatchesMathMod(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 200000; i++ {
		a := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(100)-50)))
		b := float32(r.Float64() * math.Pow(2, float64(r.IntN(100)-50)))
		if b == 0 {
			continue
		}
		if i%3 == 0 {
			a = math.Nextafter32(float32(r.IntN(1<<20))*b, float32(r.NormFloat64()))
		}
		got, want := fmod32(a, b), float32(math.Mod(float64(a), float64(b)))
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fmod32(%g, %g) = %g, want %g", a, b, got, want)
		}
	}
}

// linspace is torch.linspace(a, b, n), all elements at once.
func linspace(a, b float32, n int) []float32 {
	out := make([]float32, n)
	l := newLinspace(a, b, n)
	for i := range out {
		out[i] = l.at(i)
	}
	return out
}

// refRebin is rebin with a binary search per sub-bin midpoint
// (torch.bucketize), as it was written before the cursor.
func refRebin(h []float32, a, b, lo, hi float32) []float32 {
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
		r[k] = r[k] + h[j/histogramUpsample]/histogramUpsample
	}
	return r
}

func TestRebinMatchesBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 40; trial++ {
		B := []int{1, 3, 100, 2048}[trial%4]
		h := make([]float32, B)
		for i := range h {
			h[i] = float32(r.IntN(50))
		}
		a := float32(r.NormFloat64())
		b := a + float32(r.Float64()*3) + 1e-3
		lo := a - float32(r.Float64()*2)
		hi := b + float32(r.Float64()*2)
		if trial%5 == 0 {
			lo, hi = a, b+float32(r.Float64()) // the old range at one end
		}
		got := make([]float32, B)
		rebin(got, h, a, b, lo, hi)
		want := refRebin(h, a, b, lo, hi)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("B=%d [%g, %g] -> [%g, %g]: bin %d = %g, want %g", B, a, b, lo, hi, i, got[i], want[i])
			}
		}
	}
}

// refFusedRound32 is fusedRound32 as written before the midpoint bit test:
// the TwoSum error term for every sum (fusedRound32's slow path).
func refFusedRound32(a, p float64) float32 { return fusedRound32Slow(a, p, a+p) }

func TestFusedRound32MidpointTest(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	check := func(a, p float64) {
		t.Helper()
		got, want := fusedRound32(a, p), refFusedRound32(a, p)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fusedRound32(%v, %v) = %v, want %v", a, p, got, want)
		}
	}
	for i := 0; i < 300000; i++ {
		e := r.IntN(300) - 150
		a := float64(float32(r.NormFloat64() * math.Ldexp(1, e)))
		f := float32(r.NormFloat64() * math.Ldexp(1, e))
		switch i % 4 {
		case 0: // p puts the sum near a float32 midpoint next to a
			g := math.Nextafter32(float32(a), float32(r.NormFloat64()))
			mid := (a + float64(g)) / 2
			p := mid - a + float64(r.IntN(3)-1)*math.Ldexp(1, e-60)
			check(a, p)
		case 1: // a product step*i as linspace makes
			check(a, float64(f)*float64(r.IntN(1<<15)))
		case 2: // near the top of float32's range
			check(float64(math.MaxFloat32)*r.Float64(), float64(f)*math.Ldexp(1, 100))
		default:
			check(a, float64(f))
		}
	}
	for _, c := range [][2]float64{{math.MaxFloat32, math.Ldexp(1, 103)}, {math.Ldexp(1, -126), math.Ldexp(1, -150)},
		{0, math.Ldexp(1, -150)}, {math.Ldexp(1, -149), math.Ldexp(1, -151)}, {1, math.Ldexp(1, -24)}, {1, -math.Ldexp(1, -25)}} {
		check(c[0], c[1])
		check(-c[0], -c[1])
	}
}

// TestHistogramPoolNoAliasing runs two observers interleaved (they share
// the buffer pools) and each alone: the states must agree bit for bit.
func TestHistogramPoolNoAliasing(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	batches := make([][]float32, 12)
	for k := range batches {
		batches[k] = make([]float32, 300)
		for i := range batches[k] {
			batches[k][i] = float32(r.NormFloat64() * float64(1+k%5))
		}
	}
	batches[3] = []float32{2.5} // a single point, then widening
	run := func(o *HistogramObserver, k int) {
		if err := o.Observe(tensor.F32([]int{len(batches[k])}, batches[k]...)); err != nil {
			t.Fatal(err)
		}
	}
	newObs := func() *HistogramObserver {
		o, err := NewHistogramObserver(Config{DType: QUInt8, Bins: 257})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	a, b, a1, b1 := newObs(), newObs(), newObs(), newObs()
	for k := range 6 {
		run(a, 2*k)
		run(b, 2*k+1)
		if _, err := a.CalculateQParams(); err != nil {
			t.Fatal(err)
		}
	}
	for k := range 6 {
		run(a1, 2*k)
	}
	for k := range 6 {
		run(b1, 2*k+1)
	}
	for _, p := range [][2]*HistogramObserver{{a, a1}, {b, b1}} {
		h, lo, hi := p[0].State()
		h1, lo1, hi1 := p[1].State()
		if lo != lo1 || hi != hi1 {
			t.Fatalf("range [%g, %g], want [%g, %g]", lo, hi, lo1, hi1)
		}
		for i := range h {
			if math.Float32bits(h[i]) != math.Float32bits(h1[i]) {
				t.Fatalf("bin %d = %g, want %g", i, h[i], h1[i])
			}
		}
	}
}
