package observers

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// testHistograms returns histograms of many kinds: random counts, a few
// spikes, all zeros, dense normal-like shapes, huge counts, fractional
// (rebinned) counts.
func testHistograms(r *rand.Rand, B int) [][]float32 {
	var hs [][]float32
	add := func(f func(i int) float32) {
		h := make([]float32, B)
		for i := range h {
			h[i] = f(i)
		}
		hs = append(hs, h)
	}
	add(func(int) float32 { return float32(r.IntN(1000)) })
	add(func(i int) float32 {
		if r.IntN(50) == 0 {
			return float32(r.IntN(100000))
		}
		return 0
	})
	add(func(int) float32 { return 0 })
	add(func(i int) float32 {
		x := (float64(i) - float64(B)/2) / (float64(B) / 8)
		return float32(math.Round(1e5 * math.Exp(-x*x/2)))
	})
	add(func(int) float32 { return float32(r.Float64() * 3e38) })
	add(func(int) float32 { return float32(r.IntN(1<<12)) / 4096 })
	return hs
}

// TestQuantErrSIMDMatchesGo requires the AVX2 kernel and the Go loop to
// give the same bits for every (start, end) the search can ask for.
func TestQuantErrSIMDMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU (or -tags purego)")
	}
	r := rand.New(rand.NewPCG(41, 42))
	ranges := [][2]float32{{0, 1}, {-3.5, 7.25}, {1e-30, 1.0001e-30}, {-1e30, 1e30}, {-3e38, 3e38},
		{5, math.Nextafter32(5, 6)}, {-1, 0}, {0, 6.1}, {-1e-3, 2e-3}}
	checked := 0
	for _, B := range []int{8, 9, 64, 100, 257, 2048} {
		for hi, hist := range testHistograms(r, B) {
			for ri, rg := range append(ranges, [2]float32{float32(r.NormFloat64()), float32(r.NormFloat64()*10 + 20)}) {
				for _, D := range []float64{256, 16, 65536, 1 << 20} {
					q := newQuantErr(hist, rg[0], rg[1], D)
					pairs := [][2]int{{0, B - 1}, {B / 2, B / 2}, {0, 0}, {B - 1, B - 1}}
					for range 40 {
						s := r.IntN(B)
						pairs = append(pairs, [2]int{s, s + r.IntN(B-s)})
					}
					for _, p := range pairs {
						got, want := q.evalWith(p[0], p[1], true), q.evalWith(p[0], p[1], false)
						if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
							t.Fatalf("B=%d hist %d range %d [%g, %g] D=%g s=%d e=%d: AVX2 %v, Go %v",
								B, hi, ri, rg[0], rg[1], D, p[0], p[1], got, want)
						}
						checked++
					}
					q.release()
				}
			}
		}
	}
	t.Logf("%d evaluations agree", checked)
}

// TestSearchRangeSIMDMatchesGo runs the whole search both ways.
func TestSearchRangeSIMDMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU (or -tags purego)")
	}
	r := rand.New(rand.NewPCG(43, 44))
	defer func(u bool) { useAVX2 = u }(useAVX2)
	for _, B := range []int{16, 2048, 2047} {
		for hi, hist := range testHistograms(r, B) {
			for _, dt := range []DType{QUInt8, QInt8} {
				o, err := NewHistogramObserver(Config{DType: dt, Bins: B})
				if err != nil {
					t.Fatal(err)
				}
				lo := float32(r.NormFloat64())
				if err := o.SetState(hist, lo, lo+float32(r.Float64()*10)); err != nil {
					t.Fatal(err)
				}
				useAVX2 = true
				a0, a1, errA := o.SearchRange()
				useAVX2 = false
				b0, b1, errB := o.SearchRange()
				if (errA == nil) != (errB == nil) || math.Float32bits(a0) != math.Float32bits(b0) || math.Float32bits(a1) != math.Float32bits(b1) {
					t.Fatalf("B=%d hist %d %s: AVX2 [%g, %g] %v, Go [%g, %g] %v", B, hi, dt, a0, a1, errA, b0, b1, errB)
				}
			}
		}
	}
}

func TestAtenSumSIMDMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU (or -tags purego)")
	}
	r := rand.New(rand.NewPCG(45, 46))
	lens := []int{0, 1, 7, 8, 31, 32, 33, 511, 512, 513, 2047, 2048, 2049, 16384, 1 << 17, 1<<20 + 37}
	for range 30 {
		lens = append(lens, r.IntN(70000))
	}
	for _, n := range lens {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
		}
		got, want := atenSumWith(v, true), atenSumWith(v, false)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: AVX2 %v, Go %v", n, got, want)
		}
	}
}

// TestQuantErrFiniteFlag checks the end-point test of newQuantErr against
// a scan of both tables.
func TestQuantErrFiniteFlag(t *testing.T) {
	for _, rg := range [][2]float32{{0, 1}, {-3e38, 3e38}, {-1e38, 3e38}, {0, 3e38}, {1, 1}, {-2e38, -1e38}} {
		for _, B := range []int{1, 2, 7, 2048} {
			q := newQuantErr(make([]float32, B), rg[0], rg[1], 256)
			want := true
			for k := range q.off {
				want = want && isFinite32(q.off[k]) && isFinite32(q.end[k])
			}
			if q.finite != want {
				t.Fatalf("B=%d range %v: finite = %v, want %v", B, rg, q.finite, want)
			}
			q.release()
		}
	}
}

func TestHistcSIMDMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU (or -tags purego)")
	}
	r := rand.New(rand.NewPCG(47, 48))
	for trial := range 400 {
		B := []int{1, 7, 8, 100, 2048, 65536, 1 << 21}[trial%7]
		n := r.IntN(3000)
		lo := float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10)))
		hi := lo + float32(r.Float64()*math.Pow(10, float64(r.IntN(20)-10)))
		switch trial % 5 {
		case 1:
			hi = math.Nextafter32(lo, posInf32)
		case 2:
			lo, hi = -1e34, 1e34
		case 3:
			lo, hi = -1e30, 1e29
		}
		if !(hi > lo) {
			hi = math.Nextafter32(lo, posInf32)
		}
		if !isFinite32((hi - lo) * float32(B)) {
			// histc's bin indices may overflow here (an error, and the
			// reason the kernel is not used): nothing to compare.
			continue
		}
		x := make([]float32, n)
		for i := range x {
			switch r.IntN(10) {
			case 0:
				x[i] = lo
			case 1:
				x[i] = hi
			case 2: // outside, or NaN
				x[i] = []float32{math.Nextafter32(lo, negInf32), math.Nextafter32(hi, posInf32), float32(math.NaN()), posInf32}[r.IntN(4)]
			default:
				x[i] = lo + float32(r.Float64())*(hi-lo)
				if x[i] > hi || x[i] != x[i] {
					x[i] = hi
				}
			}
		}
		if trial%3 == 0 { // all in range
			for i := range x {
				if !(x[i] >= lo && x[i] <= hi) {
					x[i] = lo
				}
			}
		}
		got, want := make([]float32, B), make([]float32, B)
		got[0], want[0] = 5, 5 // counts add to what is there
		if err := histcCount(got, x, lo, hi, true); err != nil {
			t.Fatal(err)
		}
		if err := histcCount(want, x, lo, hi, false); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d B=%d [%g, %g] n=%d: bin %d = %v, want %v", trial, B, lo, hi, n, i, got[i], want[i])
			}
		}
	}
}

// TestHistogramHugeRangeIsError: data spanning -3e38..3e38 makes
// (x - min) * 2048 / (max - min) = inf / inf for the maximum: an ErrInput
// naming histc, and the observer keeps its state.
func TestHistogramHugeRangeIsError(t *testing.T) {
	o, err := NewHistogramObserver(Config{DType: QUInt8})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Observe(tensor.F32([]int{2}, 1, 2)); err != nil {
		t.Fatal(err)
	}
	err = o.Observe(tensor.F32([]int{2}, -3e38, 3e38))
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "histc") {
		t.Fatalf("got error %v, want ErrInput from histc", err)
	}
	if _, lo, hi := o.State(); lo != 1 || hi != 2 {
		t.Fatalf("state range [%g, %g] after the error, want [1, 2]", lo, hi)
	}
}

func TestQuantErrTablesSIMDMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU (or -tags purego)")
	}
	r := rand.New(rand.NewPCG(49, 50))
	for _, B := range []int{1, 7, 8, 9, 100, 2048, 1 << 16} {
		for _, bw := range []float32{0, 1, 0.1, 3e-38, 1e-45, 7.5e33, 3e38, posInf32, float32(r.Float64())} {
			hist := make([]float32, B)
			for i := range hist {
				hist[i] = float32(r.IntN(100)) * []float32{1, 0.3, 1e30}[i%3]
			}
			var tabs [2][3][]float32
			for v, simd := range []bool{true, false} {
				tabs[v] = [3][]float32{make([]float32, B), make([]float32, 2*B-1), make([]float32, 2*B-1)}
				quantErrTables(tabs[v][0], tabs[v][1], tabs[v][2], hist, bw, simd)
			}
			for j, name := range []string{"dens", "off", "end"} {
				for i := range tabs[1][j] {
					g, w := tabs[0][j][i], tabs[1][j][i]
					if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
						t.Fatalf("B=%d bw=%g: %s[%d] = %v, want %v", B, bw, name, i, g, w)
					}
				}
			}
		}
	}
}
