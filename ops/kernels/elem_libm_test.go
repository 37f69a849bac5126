package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 computes a*b+c exactly with math/big and rounds once to
// float32 (nearest even), an oracle independent of fmaf's round-to-odd.
func exactFMA32(a, b, c float32) float32 {
	p := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	p.Mul(p, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	f, _ := p.Float32()
	return f
}

func TestFMAF(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rnd := func() float32 {
		// Mixed magnitudes so that sums cancel and round at ties.
		return float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(40)-20))
	}
	for i := 0; i < 200000; i++ {
		a, b, c := rnd(), rnd(), rnd()
		if i%3 == 0 {
			c = -a * b // near-total cancellation
		}
		if got, want := fmaf(a, b, c), exactFMA32(a, b, c); math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("fmaf(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
}

// TestLibmSpecials: special values of the emulated functions, from their
// definitions (exp(-inf) = 0, exp(+inf) = inf, tanh(±inf) = ±1, log(0) =
// -inf, log(-1) = NaN, pow(x, 0) = 1).
func TestLibmSpecials(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	check := func(name string, got, want float32) {
		t.Helper()
		if !(got == want || (got != got && want != want)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("sleefExpf(-inf)", sleefExpf(-inf), 0)
	check("sleefExpf(inf)", sleefExpf(inf), inf)
	check("sleefExpf(NaN)", sleefExpf(nan), nan)
	check("sleefExpf(0)", sleefExpf(0), 1)
	check("glibcExpf(-inf)", glibcExpf(-inf), 0)
	check("glibcExpf(inf)", glibcExpf(inf), inf)
	check("glibcExpf(0)", glibcExpf(0), 1)
	check("glibcExpf(89)", glibcExpf(89), inf)
	check("atenExpU20(0)", atenExpU20(0), 1)
	check("atenExpU20(-inf)", atenExpU20(-inf), 0)
	check("sleefTanhf(inf)", sleefTanhf(inf), 1)
	check("sleefTanhf(-inf)", sleefTanhf(-inf), -1)
	check("sleefTanhf(0)", sleefTanhf(0), 0)
	check("sleefLogf(0)", sleefLogf(0), float32(math.Inf(-1)))
	check("sleefLogf(-1)", sleefLogf(-1), nan)
	check("sleefLogf(1)", sleefLogf(1), 0)
	check("sleefLogf(inf)", sleefLogf(inf), inf)
	check("sleefPowf(nan, 0)", sleefPowf(nan, 0), 1)
	check("sleefPowf(0, -1.5)", sleefPowf(0, -1.5), inf)
	check("sleefPowf(-8, 1.5)", sleefPowf(-8, 1.5), nan)
	check("sleefPowf(4, 1.5)", sleefPowf(4, 1.5), 8)
	check("atenErfVec(0)", atenErfVec(0), 0)
	check("atenErfVec(inf)", atenErfVec(inf), 1)
	check("atenErfVec(-inf)", atenErfVec(-inf), -1)
}
