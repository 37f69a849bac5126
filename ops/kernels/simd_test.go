package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// The AVX2 kernels must give the bits of the Go loops they replace (which
// the oracle vectors pin to PyTorch); these tests run both on the same
// inputs, special values included. Without AVX2+FMA they skip.

func needAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2+FMA on this CPU (or -tags purego)")
	}
}

// specialFloats returns n values: normal, huge, tiny, subnormal, signed
// zeros, infinities, NaN, and values near exp's cut-offs.
func specialFloats(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	sp := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		-104, 100, -103.99, 100.01, 88.7, -87.3, 1e-45, -1e-40, math.MaxFloat32, -math.MaxFloat32}
	for i := range v {
		switch r.IntN(6) {
		case 0:
			v[i] = sp[r.IntN(len(sp))]
		case 1:
			v[i] = float32(r.Float64()*240 - 120)
		case 2:
			v[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(60)-30)))
		default:
			v[i] = float32(r.NormFloat64() * 4)
		}
	}
	return v
}

func bitsEqual32(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

func TestExpSumAVX2MatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(1, 2))
	x := specialFloats(r, 1<<16)
	y := make([]float32, len(x))
	for _, m := range []float32{0, 3.5, -2.25, 50, float32(math.Inf(1)), float32(math.NaN())} {
		var acc lanes
		expSumAVX2(&y[0], &x[0], len(x), m, &acc)
		for i, v := range x {
			if want := sleefExpf(v - m); !bitsEqual32(y[i], want) {
				t.Fatalf("exp(%g - %g): AVX2 %g (%#x), Go %g (%#x)", v, m, y[i], math.Float32bits(y[i]), want, math.Float32bits(want))
			}
		}
	}
}

func TestWelfordAVX2MatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(3, 4))
	var cvec [16]float32
	for j := range cvec {
		cvec[j] = 1 / float32(j+1)
	}
	for trial := 0; trial < 2000; trial++ {
		cnt := 1 + r.IntN(16)
		v := make([]float32, cnt*8)
		for i := range v {
			v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-4)))
			if trial%50 == 0 && r.IntN(20) == 0 {
				v[i] = specialFloats(r, 1)[0]
			}
		}
		var a1, a2, g1, g2 lanes
		for l := range a1 {
			a1[l] = float32(r.NormFloat64())
			a2[l] = float32(r.Float64())
		}
		g1, g2 = a1, a2
		welfordAVX2(&v[0], cnt, &cvec[0], &a1, &a2)
		for j := 0; j < cnt; j++ {
			for l := 0; l < 8; l++ {
				d := v[j*8+l] - g1[l]
				g1[l] = FMA32(d, cvec[j], g1[l])
				g2[l] = FMA32(d, v[j*8+l]-g1[l], g2[l])
			}
		}
		for l := range a1 {
			if !bitsEqual32(a1[l], g1[l]) || !bitsEqual32(a2[l], g2[l]) {
				t.Fatalf("trial %d lane %d: AVX2 (%g, %g), Go (%g, %g)", trial, l, a1[l], a2[l], g1[l], g2[l])
			}
		}
	}
}

func TestLayerNormOutAVX2MatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(5, 6))
	n := 4096
	x, w, b := specialFloats(r, n), specialFloats(r, n), specialFloats(r, n)
	y := make([]float32, n)
	for _, mr := range [][2]float32{{0.1, 1.7}, {-3, 0.01}, {0, float32(math.Inf(1))}} {
		m, rstd := mr[0], mr[1]
		layerNormOutAVX2(&y[0], &x[0], &w[0], &b[0], n, m, rstd)
		for i := range x {
			want := FMA32(float32((x[i]-m)*rstd), w[i], b[i])
			if !bitsEqual32(y[i], want) && !(y[i] != y[i] && want != want) {
				t.Fatalf("element %d: AVX2 %g, Go %g", i, y[i], want)
			}
		}
	}
}

// Whole kernels with and without the assembly: same bits.
func TestKernelsSameBitsWithoutAVX2(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(7, 8))
	for _, shape := range [][]int{{3, 517}, {64, 512}, {2, 3, 1000}, {5, 7}, {1, 8}} {
		v := make([]float32, tensor.Numel(shape))
		for i := range v {
			v[i] = float32(r.NormFloat64() * 3)
		}
		x := tensor.MustFromData(tensor.Float32, shape, v)
		last := shape[len(shape)-1]
		wv, bv := make([]float32, last), make([]float32, last)
		for i := range wv {
			wv[i], bv[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		w, b := tensor.F32([]int{last}, wv...), tensor.F32([]int{last}, bv...)
		run := func() [][]float32 {
			var out [][]float32
			for _, log := range []bool{false, true} {
				s, err := softmaxImpl("softmax", x, -1, log)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, must(tensor.Data[float32](s)))
			}
			y, m, rs, err := LayerNorm(x, []int{last}, w, b, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range []*tensor.Tensor{y, m, rs} {
				out = append(out, must(tensor.Data[float32](o)))
			}
			return out
		}
		fast := run()
		useAVX2 = false
		slow := run()
		useAVX2 = true
		for k := range fast {
			for i := range fast[k] {
				if !bitsEqual32(fast[k][i], slow[k][i]) {
					t.Fatalf("shape %v output %d element %d: AVX2 %g, Go %g", shape, k, i, fast[k][i], slow[k][i])
				}
			}
		}
	}
}

func TestQuantizeAVX2MatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(9, 10))
	src := specialFloats(r, 4099)
	params := []struct{ inv, zp, lo, hi float32 }{
		{50, 3, -128, 127}, {1 / 0.013, 0, -8, 7}, {7.5, -4, -128, 127}, {0.5, 0, -128, 127},
		{float32(math.Inf(1)), 0, -128, 127}, {1e30, 2, -1, 1}, {3, 128, 0, 255}, {100, 0, 0, 15},
	}
	for _, p := range params {
		for _, u8 := range []bool{false, true} {
			lo, hi := p.lo, p.hi
			if u8 && lo < 0 {
				lo, hi = 0, 255
			}
			useAVX2 = true
			a8, au := make([]int8, len(src)), make([]uint8, len(src))
			quantChunk32(a8, src, p.inv, p.zp, lo, hi, false)
			quantChunk32(au, src, p.inv, p.zp, lo, hi, false)
			useAVX2 = false
			g8, gu := make([]int8, len(src)), make([]uint8, len(src))
			quantChunk32(g8, src, p.inv, p.zp, lo, hi, false)
			quantChunk32(gu, src, p.inv, p.zp, lo, hi, false)
			useAVX2 = true
			for i := range src {
				if (!u8 && a8[i] != g8[i]) || (u8 && au[i] != gu[i]) {
					t.Fatalf("quantize %g (inv %g zp %g [%g, %g]): AVX2 %d/%d, Go %d/%d", src[i], p.inv, p.zp, lo, hi, a8[i], au[i], g8[i], gu[i])
				}
			}
		}
	}
}

func TestDequantizeAVX2MatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(11, 12))
	n := 1029
	q8, qu := make([]int8, n), make([]uint8, n)
	for i := range q8 {
		q8[i], qu[i] = int8(r.IntN(256)-128), uint8(r.IntN(256))
	}
	for _, zp := range []float64{0, 3, -128, 255, 1 << 23, -(1 << 23), 1<<23 + 1, 2.5} {
		for _, scale := range []float32{0.02, 1.5e-7, float32(math.Inf(1)), 3} {
			for _, intDiff := range []bool{false, true} {
				if intDiff && zp != math.Trunc(zp) {
					continue
				}
				var got [2][]float32
				for k, avx := range []bool{true, false} {
					useAVX2 = avx
					a, b := make([]float32, n), make([]float32, n)
					dequantChunk32(a, q8, zp, scale, intDiff)
					dequantChunk32(b, qu, zp, scale, intDiff)
					got[k] = append(a, b...)
				}
				useAVX2 = true
				for i := range got[0] {
					if !bitsEqual32(got[0][i], got[1][i]) && !(got[0][i] != got[0][i] && got[1][i] != got[1][i]) {
						t.Fatalf("dequantize element %d (zp %g scale %g intDiff %v): AVX2 %g, Go %g", i, zp, scale, intDiff, got[0][i], got[1][i])
					}
				}
			}
		}
	}
}

func TestReduceAVX2MatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(13, 14))
	negZero := float32(math.Copysign(0, -1))
	for trial := 0; trial < 3000; trial++ {
		n := 8 + r.IntN(90)
		x := make([]float32, n)
		for i := range x {
			switch r.IntN(4) {
			case 0: // signed zeros decide max's sign of zero
				x[i] = []float32{0, negZero}[r.IntN(2)]
			case 1:
				if trial%7 == 0 {
					x[i] = specialFloats(r, 1)[0]
					break
				}
				fallthrough
			default:
				x[i] = float32(r.NormFloat64())
			}
		}
		var got, want []float32
		for k, avx := range []bool{true, false} {
			useAVX2 = avx
			res := []float32{reduceAllMax(x), reduceAllSum(x)}
			for _, log := range []bool{false, true} {
				y := make([]float32, n)
				softmaxLastDim(y, x, log)
				res = append(res, y...)
			}
			if k == 0 {
				got = res
			} else {
				want = res
			}
		}
		useAVX2 = true
		for k := range got {
			if !bitsEqual32(got[k], want[k]) {
				t.Fatalf("trial %d result %d (max, sum, softmax, log_softmax) of %v: AVX2 %g (%#x), Go %g (%#x)", trial, k, x, got[k], math.Float32bits(got[k]), want[k], math.Float32bits(want[k]))
			}
		}
	}
}

// rowSumSmall8 must be rowSum's order for every size it takes.
func TestRowSumSmall8MatchesRowSum(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	negZero := float32(math.Copysign(0, -1))
	for trial := 0; trial < 2000; trial++ {
		size := 1 + trial%63
		x := make([]float32, size*8)
		for i := range x {
			switch r.IntN(5) {
			case 0:
				x[i] = negZero
			case 1:
				x[i] = float32(r.NormFloat64() * 1e6)
			default:
				x[i] = float32(r.NormFloat64())
			}
		}
		got, want := rowSumSmall8(x, size), rowSum(x, size, 8)
		for l := range got {
			if !bitsEqual32(got[l], want[l]) {
				t.Fatalf("size %d lane %d: %g, want %g", size, l, got[l], want[l])
			}
		}
	}
}
