package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// randFloats gives n values for the vector-path tests: mostly normal
// values of mixed magnitude, with some zeros of both signs, values near
// the float32 limits (so sums overflow) and subnormals mixed in.
func randFloats(r *rand.Rand, n int, special bool) []float32 {
	v := make([]float32, n)
	for i := range v {
		x := float32(r.NormFloat64())
		if special {
			switch r.IntN(40) {
			case 0:
				x = 0
			case 1:
				x = float32(math.Copysign(0, -1))
			case 2:
				x *= 1e37
			case 3:
				x *= 1e-40
			}
		}
		v[i] = x
	}
	return v
}

// sameBits reports the first index where got and want differ in their
// bits (two NaNs count as equal: their payloads are not part of the
// contract), or -1.
func sameBits(got, want []float32) int {
	if len(got) != len(want) {
		return 0
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			return i
		}
	}
	return -1
}

func needVector(t *testing.T) {
	t.Helper()
	if !haveFMA32x8 {
		t.Skip("this CPU or build has no assembly kernels (needs amd64 with AVX2 and FMA)")
	}
}

// randGeom draws a convolution geometry with odd sizes and borders.
func randGeom(r *rand.Rand, depthwise bool) conv2dGeom {
	for {
		g := conv2dGeom{B: 1 + r.IntN(2), kh: 1 + r.IntN(4), kw: 1 + r.IntN(5),
			sh: 1 + r.IntN(2), sw: 1 + r.IntN(3), dh: 1 + r.IntN(2), dw: 1 + r.IntN(2),
			H: 1 + r.IntN(13), W: 1 + r.IntN(17)}
		if depthwise {
			g.C = 1 + r.IntN(37)
			g.O, g.G = g.C, g.C
		} else {
			g.G = 1 + r.IntN(3)
			g.C = g.G * (1 + r.IntN(40))
			g.O = g.G * (1 + r.IntN(37))
			if r.IntN(4) == 0 {
				// Four or more 16-channel blocks a group.
				g.O = g.G * (49 + r.IntN(32))
			}
		}
		g.pt, g.pl = r.IntN(g.kh), r.IntN(g.kw)
		pb, pr := r.IntN(g.kh), r.IntN(g.kw)
		nh := g.H + g.pt + pb - g.dh*(g.kh-1) - 1
		nw := g.W + g.pl + pr - g.dw*(g.kw-1) - 1
		if nh < 0 || nw < 0 {
			continue
		}
		g.Ho, g.Wo = nh/g.sh+1, nw/g.sw+1
		return g
	}
}

// TestConvVectorMatchesGo runs the assembly paths of the jit, jit_1x1,
// jit_dw and gemm convolutions and the pure-Go convOneDNN on random shapes (odd
// sizes, channel counts that leave partial 16-lane and 8-lane vectors,
// strides, dilations, borders that skip taps) for both ISAs, and requires
// the same bits.
func TestConvVectorMatchesGo(t *testing.T) {
	needVector(t)
	r := rand.New(rand.NewPCG(15, 3))
	gemmRuns := 0
	for n := 0; n < 300; n++ {
		dw := n%3 == 2
		g := randGeom(r, dw)
		Cg := g.C / g.G
		x := randFloats(r, g.B*g.C*g.H*g.W, n%2 == 0)
		w := randFloats(r, g.O*Cg*g.kh*g.kw, n%4 == 0)
		var b []float32
		if n%5 != 0 {
			b = randFloats(r, g.O, n%2 == 1)
		}
		name := fmt.Sprintf("%+v bias=%v", g, b != nil)
		if dw {
			want := convOneDNN(ConvJitDW, ConvISAAVX512Core, g, x, w, b)
			if i := sameBits(convDWVec(g, x, w, b), want); i >= 0 {
				t.Fatalf("jit_dw %s: output %d differs", name, i)
			}
			if g.sw == 1 {
				if i := sameBits(convDWPlanes(g, x, w, b), want); i >= 0 {
					t.Fatalf("jit_dw planes %s: output %d differs", name, i)
				}
			}
			continue
		}
		for _, isa := range []ConvISA{ConvISAAVX512Core, ConvISAAVX2} {
			for _, impl := range []ConvImpl{ConvJit, ConvJit1x1, ConvGemm} {
				var got []float32
				if impl == ConvGemm {
					if got = convGemmVec(isa, g, x, w, b); got == nil {
						continue
					}
					gemmRuns++
				} else {
					got = convDirectVec(impl, isa, g, x, w, b)
				}
				want := convOneDNN(impl, isa, g, x, w, b)
				if i := sameBits(got, want); i >= 0 {
					t.Fatalf("%s:%s %s: output %d: got %g (%08x), want %g (%08x)", impl, isa, name, i,
						got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
	if gemmRuns < 100 {
		t.Fatalf("only %d gemm cases ran on the vector path", gemmRuns)
	}
}

// TestConvVectorLargeParallel checks the benchmark shapes, which split
// their rows over goroutines, against the pure-Go kernels.
func TestConvVectorLargeParallel(t *testing.T) {
	needVector(t)
	r := rand.New(rand.NewPCG(15, 4))
	g := conv2dGeom{B: 1, C: 64, O: 64, G: 1, H: 30, W: 31, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pl: 1, Ho: 30, Wo: 31}
	x := randFloats(r, g.C*g.H*g.W, false)
	w := randFloats(r, g.O*g.C*9, false)
	b := randFloats(r, g.O, false)
	for _, isa := range []ConvISA{ConvISAAVX512Core, ConvISAAVX2} {
		if i := sameBits(convDirectVec(ConvJit, isa, g, x, w, b), convOneDNN(ConvJit, isa, g, x, w, b)); i >= 0 {
			t.Fatalf("jit:%s: output %d differs", isa, i)
		}
	}
	g.G, g.O = 64, 64
	w = w[:64*9]
	want := convOneDNN(ConvJitDW, ConvISAAVX2, g, x, w, b)
	if i := sameBits(convDWVec(g, x, w, b), want); i >= 0 {
		t.Fatalf("jit_dw: output %d differs", i)
	}
	if i := sameBits(convDWPlanes(g, x, w, b), want); i >= 0 {
		t.Fatalf("jit_dw planes: output %d differs", i)
	}
}

// TestGemmVectorMatchesGo runs dotAccumulate with and without the
// assembly kernel on random sizes (rows and columns that leave partial
// 4×16 tiles, a leading dimension past n, non-zero starting sums) and
// requires the same bits.
func TestGemmVectorMatchesGo(t *testing.T) {
	needVector(t)
	defer func(v bool) { useVectorKernels = v }(useVectorKernels)
	r := rand.New(rand.NewPCG(15, 5))
	sizes := [][3]int{{64, 1024, 64}, {1, 4096, 3}, {37, 19, 33}, {5, 300, 17}, {130, 7, 9},
		// Packed a chunk of panels at a time (k past panelChunkFloats/16/3),
		// one panel at a time, and one panel with rows split.
		{6, 100, 5000}, {3, 40, 20000}, {40, 10, 30}}
	for n := 0; n < 60; n++ {
		sizes = append(sizes, [3]int{1 + r.IntN(70), 1 + r.IntN(70), 1 + r.IntN(200)})
	}
	for _, s := range sizes {
		m, n, k := s[0], s[1], s[2]
		ldc := n + r.IntN(3)
		a := randFloats(r, m*k, k%2 == 0)
		b := randFloats(r, n*k, k%3 == 0)
		c0 := randFloats(r, m*ldc, true)
		want := append([]float32(nil), c0...)
		got := append([]float32(nil), c0...)
		useVectorKernels = false
		dotAccumulate(m, n, k, a, b, want, ldc)
		useVectorKernels = true
		if m*n*k < minVectorGemmWork {
			dotAccumulateVec(m, n, k, a, b, got, ldc)
		} else {
			dotAccumulate(m, n, k, a, b, got, ldc)
		}
		if i := sameBits(got, want); i >= 0 {
			t.Fatalf("m=%d n=%d k=%d ldc=%d: element %d: got %g, want %g", m, n, k, ldc, i, got[i], want[i])
		}
	}
}

// TestConvNativeVectorMatchesGo runs convolutions that PyTorch gives to
// ATen's native slow_conv2d (small inputs at batch 1, 1×1 kernels) through
// ConvolutionWith with and without the assembly sgemm and requires the
// same bits.
func TestConvNativeVectorMatchesGo(t *testing.T) {
	needVector(t)
	defer func(v bool) { useVectorKernels = v }(useVectorKernels)
	r := rand.New(rand.NewPCG(15, 6))
	runs := 0
	for tries := 0; runs < 80 && tries < 5000; tries++ {
		g := randGeom(r, false)
		g.B = 1
		if r.IntN(2) == 0 {
			g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl = 1, 1, 1, 1, 1, 1, 0, 0
			g.Ho, g.Wo = g.H, g.W
		}
		pb := (g.Ho-1)*g.sh + g.dh*(g.kh-1) + 1 - g.H - g.pt
		pr := (g.Wo-1)*g.sw + g.dw*(g.kw-1) + 1 - g.W - g.pl
		s := ConvShape{N: 1, C: g.C, H: g.H, W: g.W, O: g.O, KH: g.kh, KW: g.kw, Groups: g.G,
			SH: g.sh, SW: g.sw, DH: g.dh, DW: g.dw, PT: g.pt, PB: max(pb, 0), PL: g.pl, PR: max(pr, 0)}
		if ConvBackend(s, ConvOptions{}) != ConvNative || pb < 0 || pr < 0 || pb > g.pt || pr > g.pl {
			continue
		}
		Cg := g.C / g.G
		x := tensor.F32([]int{1, g.C, g.H, g.W}, randFloats(r, g.C*g.H*g.W, runs%2 == 0)...)
		w := tensor.F32([]int{g.O, Cg, g.kh, g.kw}, randFloats(r, g.O*Cg*g.kh*g.kw, runs%3 == 0)...)
		var b *tensor.Tensor
		if runs%4 != 0 {
			b = tensor.F32([]int{g.O}, randFloats(r, g.O, true)...)
		}
		p := ConvParams{Stride: []int{g.sh, g.sw}, PadBefore: []int{g.pt, g.pl}, PadAfter: []int{pb, pr},
			Dilation: []int{g.dh, g.dw}, Groups: g.G}
		var outs [2][]float32
		for i, vec := range []bool{false, true} {
			useVectorKernels = vec
			y, err := ConvolutionWith(x, w, b, p, ConvOptions{})
			if err != nil {
				t.Fatalf("%+v: %v", g, err)
			}
			if outs[i], err = tensor.Data[float32](y); err != nil {
				t.Fatal(err)
			}
		}
		if i := sameBits(outs[1], outs[0]); i >= 0 {
			t.Fatalf("native %+v: output %d: vector %g, Go %g", g, i, outs[1][i], outs[0][i])
		}
		runs++
	}
	if runs < 80 {
		t.Fatalf("only %d native convolutions drawn", runs)
	}
}
