package kernels

// This file reproduces, element by element, the float32 math that PyTorch
// 2.14's CPU kernels call on an AVX2 build, so that the activations are bit
// exact:
//
//   - sleefExpf, sleefTanhf, sleefLogf and sleefPowf: lanes of Sleef's
//     Sleef_expf8_u10, Sleef_tanhf8_u10, Sleef_logf8_u10 and
//     Sleef_powf8_u10 (sleefsimdsp.c xexpf, xtanhf, xlogf_u1 and xpowf,
//     AVX2 with FMA), the Vectorized<float> exp, tanh, log and pow of ATen;
//   - atenExpU20: Vectorized<float>::exp_u20, ATen's own degree-5 polynomial;
//   - atenErfVecExp: Vectorized<float>::erf, ATen's Abramowitz-Stegun
//     polynomial around an exp (Sleef's for torch.erf, exp_u20 inside gelu);
//   - glibcExpf: glibc's expf (the ARM optimized-routines algorithm, the FMA
//     variant x86-64 glibc selects), the std::exp of the kernels' scalar
//     loops.
//
// Every float32 operation rounds once, as the hardware does; fmaf rounds the
// exact a*b+c once. A product that feeds an addition is written with an
// explicit conversion (float32(a*b) + c), which the Go spec forbids fusing
// into an FMA on platforms that fuse (arm64, ppc64, s390x).

import "math"

// fmaf is [FMA32] (a*b+c rounded once to float32) under the name of C's
// float fma, which the libm ports below follow.
func fmaf(a, b, c float32) float32 { return FMA32(a, b, c) }

// cvtps2dq is _mm256_cvtps_epi32: round to nearest even, INT_MIN when out
// of range or NaN.
func cvtps2dq(f float32) int32 {
	r := math.RoundToEven(float64(f))
	if r != r || r >= 2147483648 || r < -2147483648 {
		return math.MinInt32
	}
	return int32(r)
}

// pow2i is Sleef's vpow2i_vf_vi2: the float with exponent field q+127.
func pow2i(q int32) float32 { return math.Float32frombits(uint32(q+0x7f) << 23) }

// ldexp2 is Sleef's vldexp2_vf_vf_vi2: d * 2^(q>>1) * 2^(q-(q>>1)).
func ldexp2(d float32, q int32) float32 {
	return d * pow2i(q>>1) * pow2i(q-(q>>1))
}

const (
	sleefRLn2f = float32(1.442695040888963407359924681001892137426645954152985934135449406931)
	sleefL2Uf  = float32(0.693145751953125)
	sleefL2Lf  = float32(1.428606765330187045e-06)
)

// sleefExpf is one lane of Sleef_expf8_u10 (AVX2).
func sleefExpf(d float32) float32 {
	q := cvtps2dq(d * sleefRLn2f)
	qf := float32(q)
	s := fmaf(qf, -sleefL2Uf, d)
	s = fmaf(qf, -sleefL2Lf, s)
	u := float32(0.000198527617612853646278381)
	u = fmaf(u, s, 0.00139304355252534151077271)
	u = fmaf(u, s, 0.00833336077630519866943359)
	u = fmaf(u, s, 0.0416664853692054748535156)
	u = fmaf(u, s, 0.166666671633720397949219)
	u = fmaf(u, s, 0.5)
	u = 1 + fmaf(s*s, u, s)
	u = ldexp2(u, q)
	if d < -104 {
		u = 0
	}
	if 100 < d {
		u = float32(math.Inf(1))
	}
	if d != d {
		return d
	}
	return u
}

// df is a Sleef double-float: the unevaluated sum x + y.
type df struct{ x, y float32 }

func dfAdd2FF(x df, y float32) df { // dfadd2_vf2_vf2_vf
	s := x.x + y
	v := s - x.x
	t := (x.x - (s - v)) + (y - v)
	return df{s, t + x.y}
}

func dfAddFDF(x float32, y df) df { // dfadd_vf2_vf_vf2
	s := x + y.x
	return df{s, ((x - s) + y.x) + y.y}
}

func dfAddDD(x, y df) df { // dfadd_vf2_vf2_vf2
	s := x.x + y.x
	return df{s, (((x.x - s) + y.x) + x.y) + y.y}
}

func dfAdd2DD(x, y df) df { // dfadd2_vf2_vf2_vf2
	s := x.x + y.x
	v := s - x.x
	t := (x.x - (s - v)) + (y.x - v)
	return df{s, t + (x.y + y.y)}
}

func dfMulDF(x df, y float32) df { // dfmul_vf2_vf2_vf (FMA)
	s := float32(x.x * y)
	return df{s, fmaf(x.y, y, fmaf(x.x, y, -s))}
}

func dfMulDD(x, y df) df { // dfmul_vf2_vf2_vf2 (FMA)
	s := float32(x.x * y.x)
	return df{s, fmaf(x.x, y.y, fmaf(x.y, y.x, fmaf(x.x, y.x, -s)))}
}

func dfSqu(x df) df { // dfsqu_vf2_vf2 (FMA)
	s := float32(x.x * x.x)
	return df{s, fmaf(x.x+x.x, x.y, fmaf(x.x, x.x, -s))}
}

func dfRec(d df) df { // dfrec_vf2_vf2 (FMA)
	s := 1 / d.x
	return df{s, s * fmaf(-d.y, s, fmaf(-d.x, s, 1))}
}

func dfDiv(n, d df) df { // dfdiv_vf2_vf2_vf2 (FMA)
	t := 1 / d.x
	s := float32(n.x * t)
	u := fmaf(t, n.x, -s)
	v := fmaf(-d.y, t, fmaf(-d.x, t, 1))
	return df{s, fmaf(s, v, fmaf(n.y, t, u))}
}

// sleefExpk2f is Sleef's expk2f: exp of a double-float, as a double-float.
func sleefExpk2f(d df) df {
	u := (d.x + d.y) * sleefRLn2f
	q := cvtps2dq(u)
	qf := float32(q)
	s := dfAdd2FF(d, float32(qf*-sleefL2Uf))
	s = dfAdd2FF(s, float32(qf*-sleefL2Lf))
	u = float32(+0.1980960224e-3)
	u = fmaf(u, s.x, +0.1394256484e-2)
	u = fmaf(u, s.x, +0.8333456703e-2)
	u = fmaf(u, s.x, +0.4166637361e-1)
	t := dfAdd2FF(dfMulDF(s, u), +0.166666659414234244790680580464e+0)
	t = dfAdd2FF(dfMulDD(s, t), 0.5)
	t = dfAdd2DD(s, dfMulDD(dfSqu(s), t))
	t = dfAddFDF(1, t)
	t.x = ldexp2(t.x, q)
	t.y = ldexp2(t.y, q)
	if d.x < -104 {
		t = df{0, 0}
	}
	return t
}

// sleefTanhf is one lane of Sleef_tanhf8_u10 (AVX2).
func sleefTanhf(x float32) float32 {
	y := float32(math.Abs(float64(x)))
	d := sleefExpk2f(df{y, 0})
	e := dfRec(d)
	d = dfDiv(dfAddDD(d, df{-e.x, -e.y}), dfAddDD(d, e))
	y = d.x + d.y
	if float32(math.Abs(float64(x))) > 8.664339742 || y != y {
		y = 1
	}
	y = math.Float32frombits(math.Float32bits(y) ^ (math.Float32bits(x) & 0x80000000))
	if x != x {
		return x
	}
	return y
}

// atenExpU20 is one lane of Vectorized<float>::exp_u20 (AVX2).
func atenExpU20(x float32) float32 {
	lnFltMin := math.Float32frombits(0xc2aeac50)
	lnFltMax := math.Float32frombits(0x42b17218)
	log2e := math.Float32frombits(0x3fb8aa3b)
	ln2 := math.Float32frombits(0x3f317218)
	less := x < lnFltMin
	// _mm256_min_ps(values, max) then _mm256_max_ps(src, min): the second
	// operand is returned when either is NaN.
	src := x
	if !(src < lnFltMax) {
		src = lnFltMax
	}
	if !(src > lnFltMin) {
		src = lnFltMin
	}
	fx := float32(math.Floor(float64(fmaf(src, log2e, 0.5))))
	p := fmaf(-fx, ln2, src)
	r := fmaf(p, 0.00828929059, 0.0418978221)
	r = fmaf(p, r, 0.166676521)
	r = fmaf(p, r, 0.499991506)
	r = fmaf(p, r, 0.999999701)
	r = fmaf(p, r, 1)
	n := cvtps2dq(fx - 1)
	two := math.Float32frombits(uint32(n+127) << 23)
	if less {
		two = 0
	}
	return r * two * 2
}

// atenErfVec is one lane of Vectorized<float>::erf (AVX2), as torch.erf
// runs it.
func atenErfVec(x float32) float32 { return atenErfVecExp(x, sleefExpf) }

// atenErfVecExp is Vectorized<float>::erf with exp as its exponential.
func atenErfVecExp(x float32, exp func(float32) float32) float32 {
	sign := math.Float32bits(x) & 0x80000000
	abs := math.Float32frombits(math.Float32bits(x) &^ 0x80000000)
	t := 1 / fmaf(0.3275911, abs, 1)
	r := fmaf(1.061405429, t, -1.453152027)
	r = fmaf(r, t, 1.421413741)
	r = fmaf(r, t, -0.284496736)
	r = fmaf(r, t, 0.254829592)
	e := exp(-(x * x))
	v := fmaf(-e*t, r, 1)
	return math.Float32frombits(math.Float32bits(v) ^ sign)
}

// glibc's expf data (sysdeps/ieee754/flt-32/e_exp2f_data.c): tab[i] =
// bits(2^(i/32)) - (i << 47).
var exp2fTab = [32]uint64{
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
}

// glibcExpf is glibc's expf as x86-64 glibc runs it on an FMA machine.
func glibcExpf(x float32) float32 {
	const (
		n       = 32
		invLn2N = 0x1.71547652b82fep+0 * n
		shift   = 0x1.8p+52
		c0      = 0x1.c6af84b912394p-5 / n / n / n
		c1      = 0x1.ebfce50fac4f3p-3 / n / n
		c2      = 0x1.62e42ff0c52d6p-1 / n
	)
	bits := math.Float32bits(x)
	abstop := (bits >> 20) & 0x7ff
	if abstop >= 0x42b { // |x| >= 88 or NaN
		switch {
		case bits == 0xff800000:
			return 0
		case abstop >= 0x7f8:
			return x + x
		case x > 0x1.62e42ep6:
			return float32(math.Inf(1))
		case x < -0x1.9fe368p6:
			return 0
		}
	}
	xd := float64(x)
	z := float64(invLn2N * xd)
	kd := z + shift
	ki := math.Float64bits(kd)
	kd -= shift
	r := z - kd
	t := exp2fTab[ki%n]
	t += ki << (52 - 5)
	s := math.Float64frombits(t)
	zz := math.FMA(c0, r, c1)
	r2 := float64(r * r)
	y := math.FMA(c2, r, 1)
	y = math.FMA(zz, r2, y)
	y = y * s
	return float32(y)
}

func dfAdd2F(x, y float32) df { // dfadd2_vf2_vf_vf
	s := x + y
	v := s - x
	return df{s, (x - (s - v)) + (y - v)}
}

func dfAddDF(x df, y float32) df { // dfadd_vf2_vf2_vf
	s := x.x + y
	return df{s, ((x.x - s) + y) + x.y}
}

// sleefLogReduce is the argument reduction of Sleef's logf and logkf:
// d = m·2^e with m in [0.75, 1.5), d scaled by 2^64 first when below
// FLT_MIN.
func sleefLogReduce(d float32) (m float32, e int32) {
	o := d < math.Float32frombits(0x00800000) // FLT_MIN
	if o {
		d *= float32(1<<32) * float32(1<<32)
	}
	e = int32((math.Float32bits(d*(1.0/0.75))>>23)&0xff) - 0x7f
	m = math.Float32frombits(uint32(int32(math.Float32bits(d)) + (-e << 23)))
	if o {
		e -= 64
	}
	return m, e
}

// sleefLogf is one lane of Sleef_logf8_u10 (sleefsimdsp.c xlogf_u1, AVX2),
// the Vectorized<float>::log of ATen.
func sleefLogf(d float32) float32 {
	m, e := sleefLogReduce(d)
	s := dfMulDF(df{0.69314718246459960938, -1.904654323148236017e-09}, float32(e))
	x := dfDiv(dfAdd2F(-1, m), dfAdd2F(1, m))
	x2 := x.x * x.x
	t := float32(+0.3027294874e+0)
	t = fmaf(t, x2, +0.3996108174e+0)
	t = fmaf(t, x2, +0.6666694880e+0)
	s = dfAddDD(s, df{x.x * 2, x.y * 2})
	s = dfAddDF(s, float32(x2*x.x*t))
	r := s.x + s.y
	switch {
	case math.IsInf(float64(d), 1):
		r = float32(math.Inf(1))
	case d < 0 || d != d:
		r = float32(math.NaN())
	case d == 0:
		r = float32(math.Inf(-1))
	}
	return r
}

func dfNormalize(t df) df { // dfnormalize_vf2_vf2
	s := t.x + t.y
	return df{s, (t.x - s) + t.y}
}

// sleefLogk is Sleef's logkf: log of a float as a double-float.
func sleefLogk(d float32) df {
	m, e := sleefLogReduce(d)
	x := dfDiv(dfAdd2F(-1, m), dfAdd2F(1, m))
	x2 := dfSqu(x)
	t := float32(0.240320354700088500976562)
	t = fmaf(t, x2.x, 0.285112679004669189453125)
	t = fmaf(t, x2.x, 0.400007992982864379882812)
	c := df{0.66666662693023681640625, 3.69183861259614332084311e-09}
	s := dfMulDF(df{0.69314718246459960938, -1.904654323148236017e-09}, float32(e))
	s = dfAddDD(s, df{x.x * 2, x.y * 2})
	s = dfAddDD(s, dfMulDD(dfMulDD(x2, x), dfAdd2DD(dfMulDF(x2, t), c)))
	return s
}

// ldexpSleef is Sleef's vldexp_vf_vf_vi2.
func ldexpSleef(x float32, q int32) float32 {
	m := q >> 31
	m = (((m + q) >> 6) - m) << 4
	q -= m << 2
	m += 0x7f
	if m < 0 {
		m = 0
	}
	if m > 0xff {
		m = 0xff
	}
	u := math.Float32frombits(uint32(m) << 23)
	x = x * u * u * u * u
	return x * math.Float32frombits(uint32(q+0x7f)<<23)
}

// sleefExpk is Sleef's expkf: exp of a double-float, as a float.
func sleefExpk(d df) float32 {
	u := (d.x + d.y) * sleefRLn2f
	q := cvtps2dq(u)
	qf := float32(q)
	s := dfAdd2FF(d, float32(qf*-sleefL2Uf))
	s = dfAdd2FF(s, float32(qf*-sleefL2Lf))
	s = dfNormalize(s)
	u = float32(0.00136324646882712841033936)
	u = fmaf(u, s.x, 0.00836596917361021041870117)
	u = fmaf(u, s.x, 0.0416710823774337768554688)
	u = fmaf(u, s.x, 0.166665524244308471679688)
	u = fmaf(u, s.x, 0.499999850988388061523438)
	t := dfAddDD(s, dfMulDF(dfSqu(s), u))
	t = dfAddFDF(1, t)
	u = ldexpSleef(t.x+t.y, q)
	if d.x < -104 {
		u = 0
	}
	return u
}

// sleefPowf is one lane of Sleef_powf8_u10 (sleefsimdsp.c xpowf, AVX2).
func sleefPowf(x, y float32) float32 {
	ay := float32(math.Abs(float64(y)))
	yisint := float32(math.Trunc(float64(y))) == y || ay > 1<<24
	yisodd := ay < 1<<24 && yisint && int32(math.Trunc(float64(y)))&1 == 1
	ax := float32(math.Abs(float64(x)))
	result := sleefExpk(dfMulDF(sleefLogk(ax), y))
	if result != result {
		result = float32(math.Inf(1))
	}
	switch {
	case x > 0:
	case !yisint:
		result *= float32(math.NaN())
	case yisodd:
		result *= -1
	}
	efx := mulsign(ax-1, y)
	if math.IsInf(float64(y), 0) {
		switch {
		case efx < 0:
			result = 0
		case efx == 0:
			result = 1
		default:
			result = float32(math.Inf(1))
		}
	}
	if math.IsInf(float64(x), 0) || x == 0 {
		r := float32(math.Inf(1))
		if math.Signbit(float64(y)) != (x == 0) {
			r = 0
		}
		sign := float32(1)
		if yisodd {
			sign = x
		}
		result = mulsign(r, sign)
	}
	if x != x || y != y {
		result = float32(math.NaN())
	}
	if y == 0 || x == 1 {
		result = 1
	}
	return result
}

// mulsign is Sleef's vmulsign_vf_vf_vf: x with its sign flipped where y is
// negative.
func mulsign(x, y float32) float32 {
	return math.Float32frombits(math.Float32bits(x) ^ (math.Float32bits(y) & 0x80000000))
}
