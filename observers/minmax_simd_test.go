package observers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// minMaxTestSlice returns n elements of one of several kinds: normal
// numbers, ReLU output (many +0), signed zeros only, numbers with a NaN
// or an infinity at a random place, constants.
func minMaxTestSlice(r *rand.Rand, n, kind int) []float32 {
	v := make([]float32, n)
	negZero := float32(math.Copysign(0, -1))
	for i := range v {
		f := float32(r.NormFloat64())
		switch kind {
		case 1:
			f = max(f, 0)
		case 2:
			f = []float32{0, negZero}[r.IntN(2)]
		case 3:
			if r.IntN(3) == 0 {
				f = []float32{0, negZero}[r.IntN(2)]
			} else {
				f = -float32(r.IntN(3))
			}
		case 6:
			f = 1.5
		}
		v[i] = f
	}
	if n > 0 {
		switch kind {
		case 4:
			v[r.IntN(n)] = float32(math.NaN())
		case 5:
			v[r.IntN(n)] = []float32{posInf32, negInf32}[r.IntN(2)]
		case 7:
			v[n-1] = float32(math.Float32frombits(0x7fc00123)) // a NaN with a payload, last
		case 8:
			v[0] = float32(math.Float32frombits(0xffc00456)) // first
		}
	}
	return v
}

func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

func TestAminmaxSIMDMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU (or -tags purego)")
	}
	r := rand.New(rand.NewPCG(51, 52))
	for _, n := range []int{1, 7, 8, 9, 63, 64, 65, 100, 1000, 4099} {
		for kind := range 9 {
			for range 20 {
				v := minMaxTestSlice(r, n, kind)
				l, h := aminmax(v)
				wl, wh := aminmaxGo(v)
				if !sameBits(l, wl) || !sameBits(h, wh) {
					t.Fatalf("n=%d kind %d: aminmax (%v, %v), want (%v, %v)", n, kind, l, h, wl, wh)
				}
			}
		}
	}
}

// TestMinMaxObserversSIMDMatchesGo observes the same batches with the
// AVX2 kernel on and off: every min/max observer must end in the same
// state, bit for bit.
func TestMinMaxObserversSIMDMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU (or -tags purego)")
	}
	defer func(u bool) { useAVX2 = u }(useAVX2)
	r := rand.New(rand.NewPCG(53, 54))
	type state struct{ lo, hi []float32 }
	run := func(simd bool, shape []int, axis int, batches [][]float32) []state {
		useAVX2 = simd
		mm, _ := NewMinMaxObserver(Config{})
		ma, _ := NewMovingAverageMinMaxObserver(Config{})
		pc, err := NewPerChannelMinMaxObserver(Config{QScheme: PerChannelAffine, ChAxis: axis})
		if err != nil {
			t.Fatal(err)
		}
		pa, _ := NewMovingAveragePerChannelMinMaxObserver(Config{QScheme: PerChannelAffine, ChAxis: axis})
		for _, b := range batches {
			x := tensor.F32(shape, b...)
			for _, o := range []Observer{mm, ma, pc, pa} {
				if err := o.Observe(x); err != nil {
					t.Fatal(err)
				}
			}
		}
		l1, h1 := mm.MinMax()
		l2, h2 := ma.MinMax()
		l3, h3 := pc.MinMax()
		l4, h4 := pa.MinMax()
		return []state{{[]float32{l1}, []float32{h1}}, {[]float32{l2}, []float32{h2}}, {l3, h3}, {l4, h4}}
	}
	for _, shape := range [][]int{{4, 100}, {64, 64}, {3, 5, 70}, {2, 130}, {1000}} {
		n := tensor.Numel(shape)
		for axis := range shape {
			for trial := range 12 {
				batches := make([][]float32, 3)
				for k := range batches {
					batches[k] = minMaxTestSlice(r, n, (trial+k)%9)
				}
				batches = append(batches, batches[0]) // the same data again
				got, want := run(true, shape, axis, batches), run(false, shape, axis, batches)
				for i := range want {
					for c := range want[i].lo {
						if !sameBits(got[i].lo[c], want[i].lo[c]) || !sameBits(got[i].hi[c], want[i].hi[c]) {
							t.Fatalf("shape %v axis %d trial %d observer %d channel %d: (%v, %v), want (%v, %v)",
								shape, axis, trial, i, c, got[i].lo[c], got[i].hi[c], want[i].lo[c], want[i].hi[c])
						}
					}
				}
			}
		}
	}
}

// TestPerChannelZeroSignAcrossBlocks: channel 0's elements, walked in
// index order, are 70 times +0 then 70 times -0 (two outer blocks); the
// first zero, +0, is both min and max, as the element-by-element walk keeps
// the first of equal values.
func TestPerChannelZeroSignAcrossBlocks(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	v := make([]float32, 2*70)
	for i := 70; i < 140; i++ {
		v[i] = negZero
	}
	for _, simd := range []bool{false, useAVX2} {
		func() {
			defer func(u bool) { useAVX2 = u }(useAVX2)
			useAVX2 = simd
			o, err := NewPerChannelMinMaxObserver(Config{QScheme: PerChannelAffine, ChAxis: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Observe(tensor.F32([]int{2, 1, 70}, v...)); err != nil {
				t.Fatal(err)
			}
			lo, hi := o.MinMax()
			if math.Float32bits(lo[0]) != 0 || math.Float32bits(hi[0]) != 0 {
				t.Fatalf("simd %v: min %v max %v (bits %#x %#x), want +0 and +0", simd, lo[0], hi[0], math.Float32bits(lo[0]), math.Float32bits(hi[0]))
			}
		}()
	}
}
