package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// The vector paths of pooling, layer_norm and softmax against the pure-Go
// loops (which the oracle vectors pin to PyTorch): the same bits on many
// shapes, with NaN, infinities, signed zeros and ties among the values.

// poolFloats returns n values with repeated values (ties in max), ±0,
// ±inf and NaN mixed in when special.
func poolFloats(r *rand.Rand, n int, special bool) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch k := r.IntN(20); {
		case special && k == 0:
			v[i] = float32(math.NaN())
		case special && k == 1:
			v[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case special && k == 2:
			v[i] = float32(math.Copysign(0, float64(1-2*r.IntN(2))))
		case k < 6:
			v[i] = float32(r.IntN(5) - 2) // ties
		default:
			v[i] = float32(r.NormFloat64() * 3)
		}
	}
	return v
}

// withoutAVX2 runs f with the pure-Go kernels and restores useAVX2.
func withoutAVX2(f func()) {
	saved := useAVX2
	useAVX2 = false
	defer func() { useAVX2 = saved }()
	f()
}

// requireSameBits compares bits; any NaN matches any NaN, since which
// operand's NaN a float addition returns follows the operand order the Go
// compiler picks for a commutative add (as in sameBits).
func requireSameBits(t *testing.T, what string, fast, slow []float32) {
	t.Helper()
	if len(fast) != len(slow) {
		t.Fatalf("%s: %d vs %d elements", what, len(fast), len(slow))
	}
	for i := range fast {
		if !bitsEqual32(fast[i], slow[i]) && !(fast[i] != fast[i] && slow[i] != slow[i]) {
			t.Fatalf("%s: element %d: vector %g (%#x), Go %g (%#x)", what, i, fast[i], math.Float32bits(fast[i]), slow[i], math.Float32bits(slow[i]))
		}
	}
}

func TestPoolVectorMatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(31, 32))
	cases := 0
	for trial := 0; trial < 400; trial++ {
		k := []int{1 + r.IntN(4), 1 + r.IntN(4)}
		s := []int{1 + r.IntN(3), 1 + r.IntN(3)}
		pd := []int{r.IntN(k[0]/2 + 1), r.IntN(k[1]/2 + 1)}
		dl := []int{1 + r.IntN(2), 1 + r.IntN(2)}
		if r.IntN(2) == 0 {
			dl = []int{1, 1}
		}
		ceil := r.IntN(3) == 0
		shape := []int{1 + r.IntN(2), 1 + r.IntN(3), 1 + r.IntN(20), 1 + r.IntN(70)}
		if r.IntN(4) == 0 {
			shape = shape[1:]
		}
		x := tensor.MustFromData(tensor.Float32, shape, poolFloats(r, tensor.Numel(shape), r.IntN(3) == 0))
		name := fmt.Sprintf("x%v k%v s%v p%v d%v ceil %v", shape, k, s, pd, dl, ceil)

		if _, err := newPool2d("max_pool2d", x, k, s, pd, dl, ceil); err == nil {
			cases++
			y, idx, err := MaxPool2d(x, k, s, pd, dl, ceil)
			if err != nil {
				t.Fatal(err)
			}
			var y0, idx0 *tensor.Tensor
			withoutAVX2(func() { y0, idx0, err = MaxPool2d(x, k, s, pd, dl, ceil) })
			if err != nil {
				t.Fatal(err)
			}
			requireSameBits(t, "max_pool2d "+name, must(tensor.Data[float32](y)), must(tensor.Data[float32](y0)))
			a, b := must(tensor.Data[int64](idx)), must(tensor.Data[int64](idx0))
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("max_pool2d %s: index %d: vector %d, Go %d", name, i, a[i], b[i])
				}
			}
		}
		if _, err := newPool2d("max_pool2d", x, k, s, pd, dl, ceil); err == nil {
			// int32 (the reference representation): vector path vs the
			// int64 loop
			iv := make([]int32, tensor.Numel(shape))
			for i := range iv {
				switch r.IntN(8) {
				case 0:
					iv[i] = math.MinInt32
				case 1:
					iv[i] = math.MaxInt32
				default:
					iv[i] = int32(r.IntN(7) - 3)
				}
			}
			xi := tensor.MustFromData(tensor.Int32, shape, iv)
			y, idx, err := MaxPool2d(xi, k, s, pd, dl, ceil)
			if err != nil {
				t.Fatal(err)
			}
			var y0, idx0 *tensor.Tensor
			withoutAVX2(func() { y0, idx0, err = MaxPool2d(xi, k, s, pd, dl, ceil) })
			if err != nil {
				t.Fatal(err)
			}
			if y.DType() != tensor.Int32 || y0.DType() != tensor.Int32 {
				t.Fatalf("int32 max_pool2d %s: dtypes %v, %v", name, y.DType(), y0.DType())
			}
			a, b := must(tensor.Data[int32](y)), must(tensor.Data[int32](y0))
			ia, ib := must(tensor.Data[int64](idx)), must(tensor.Data[int64](idx0))
			for i := range a {
				if a[i] != b[i] || ia[i] != ib[i] {
					t.Fatalf("int32 max_pool2d %s: output %d: vector (%d at %d), Go (%d at %d)", name, i, a[i], ia[i], b[i], ib[i])
				}
			}
		}
		if _, err := newPool2d("avg_pool2d", x, k, s, pd, []int{1}, ceil); err == nil {
			for _, cip := range []bool{false, true} {
				div := 0
				if r.IntN(4) == 0 {
					div = 1 + r.IntN(11)
				}
				y, err := AvgPool2d(x, k, s, pd, ceil, cip, div)
				if err != nil {
					t.Fatal(err)
				}
				var y0 *tensor.Tensor
				withoutAVX2(func() { y0, err = AvgPool2d(x, k, s, pd, ceil, cip, div) })
				if err != nil {
					t.Fatal(err)
				}
				requireSameBits(t, fmt.Sprintf("avg_pool2d %s include_pad %v divisor %d", name, cip, div),
					must(tensor.Data[float32](y)), must(tensor.Data[float32](y0)))
			}
		}
	}
	if cases < 200 {
		t.Fatalf("only %d valid max_pool2d cases", cases)
	}
	// the benchmark's shapes
	for _, sh := range [][]int{{2, 3, 112, 112}, {1, 2, 56, 57}} {
		x := tensor.MustFromData(tensor.Float32, sh, poolFloats(r, tensor.Numel(sh), true))
		y, idx, err := MaxPool2d(x, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, false)
		if err != nil {
			t.Fatal(err)
		}
		var y0, idx0 *tensor.Tensor
		withoutAVX2(func() { y0, idx0, _ = MaxPool2d(x, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, false) })
		requireSameBits(t, fmt.Sprint("max_pool2d ", sh), must(tensor.Data[float32](y)), must(tensor.Data[float32](y0)))
		a, b := must(tensor.Data[int64](idx)), must(tensor.Data[int64](idx0))
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("max_pool2d %v: index %d: vector %d, Go %d", sh, i, a[i], b[i])
			}
		}
	}
}

func TestAdaptiveMeanVectorMatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(33, 34))
	for trial := 0; trial < 200; trial++ {
		shape := []int{1 + r.IntN(3), 1 + r.IntN(9), 1 + r.IntN(24), 1 + r.IntN(24)}
		x := tensor.MustFromData(tensor.Float32, shape, poolFloats(r, tensor.Numel(shape), r.IntN(3) == 0))
		for _, os := range [][]int{{1, 1}, {2, 3}} {
			y, err := AdaptiveAvgPool2d(x, os)
			if err != nil {
				t.Fatal(err)
			}
			var y0 *tensor.Tensor
			withoutAVX2(func() { y0, err = AdaptiveAvgPool2d(x, os) })
			if err != nil {
				t.Fatal(err)
			}
			requireSameBits(t, fmt.Sprintf("adaptive_avg_pool2d %v -> %v", shape, os), must(tensor.Data[float32](y)), must(tensor.Data[float32](y0)))
		}
	}
}

// forNTMins runs f(nt) with ntMinFloats = nt, first its own value, then
// 0 (every output through the non-temporal stores), and restores it.
func forNTMins(f func(nt int)) {
	saved := ntMinFloats
	defer func() { ntMinFloats = saved }()
	for _, nt := range []int{saved, 0} {
		ntMinFloats = nt
		f(nt)
	}
}

func TestLayerNormVectorMatchesGo(t *testing.T) {
	needAVX2(t)
	forNTMins(func(nt int) { layerNormVectorMatchesGo(t, nt) })
}

func layerNormVectorMatchesGo(t *testing.T, nt int) {
	r := rand.New(rand.NewPCG(35, uint64(36+nt)))
	inners := []int{1, 7, 8, 9, 64, 127, 128, 129, 255, 256, 257, 384, 512, 515, 768, 1000, 1024, 2048, 3000, 4100, 9000}
	for trial := 0; trial < 120; trial++ {
		inner := inners[trial%len(inners)]
		if trial >= len(inners) {
			inner = 1 + r.IntN(3000)
		}
		rows := 1 + r.IntN(11)
		v := poolFloats(r, rows*inner, trial%5 == 0)
		scale := float32(math.Pow(10, float64(r.IntN(9)-4)))
		for i := range v {
			v[i] = v[i]*scale + scale*float32(r.IntN(3))
		}
		x := tensor.MustFromData(tensor.Float32, []int{rows, inner}, v)
		w := tensor.MustFromData(tensor.Float32, []int{inner}, poolFloats(r, inner, false))
		b := tensor.MustFromData(tensor.Float32, []int{inner}, poolFloats(r, inner, false))
		y, m, rs, err := LayerNorm(x, []int{inner}, w, b, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		var y0, m0, rs0 *tensor.Tensor
		withoutAVX2(func() { y0, m0, rs0, err = LayerNorm(x, []int{inner}, w, b, 1e-5) })
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("layer_norm [%d %d]", rows, inner)
		requireSameBits(t, name+" mean", must(tensor.Data[float32](m)), must(tensor.Data[float32](m0)))
		requireSameBits(t, name+" rstd", must(tensor.Data[float32](rs)), must(tensor.Data[float32](rs0)))
		requireSameBits(t, name+" out", must(tensor.Data[float32](y)), must(tensor.Data[float32](y0)))
	}
}

func TestSoftmaxVectorMatchesGo(t *testing.T) {
	needAVX2(t)
	forNTMins(func(nt int) { softmaxVectorMatchesGo(t, nt) })
}

func softmaxVectorMatchesGo(t *testing.T, nt int) {
	r := rand.New(rand.NewPCG(37, uint64(38+nt)))
	for trial := 0; trial < 150; trial++ {
		shape := []int{1 + r.IntN(5), 1 + r.IntN(600)}
		if trial%3 == 0 {
			shape = []int{1 + r.IntN(3), 1 + r.IntN(9), 1 + r.IntN(40)}
		}
		v := poolFloats(r, tensor.Numel(shape), trial%4 == 0)
		if trial%5 == 0 { // exp's cut-offs and overflow
			for i := range v {
				v[i] *= 40
			}
		}
		x := tensor.MustFromData(tensor.Float32, shape, v)
		for dim := range shape {
			for _, log := range []bool{false, true} {
				y, err := softmaxImpl("softmax", x, dim, log)
				if err != nil {
					t.Fatal(err)
				}
				var y0 *tensor.Tensor
				withoutAVX2(func() { y0, err = softmaxImpl("softmax", x, dim, log) })
				if err != nil {
					t.Fatal(err)
				}
				requireSameBits(t, fmt.Sprintf("softmax %v dim %d log %v", shape, dim, log), must(tensor.Data[float32](y)), must(tensor.Data[float32](y0)))
			}
		}
	}
}

func TestFinishMomentsAVX2MatchesGo(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(39, 40))
	for trial := 0; trial < 5000; trial++ {
		tail := specialFloats(r, r.IntN(8))
		if trial%3 != 0 {
			for i := range tail {
				tail[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
			}
		}
		n := r.IntN(3) * r.IntN(5000)
		var m1v, m2v lanes
		for l := range m1v {
			m1v[l] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
			m2v[l] = float32(r.Float64() * math.Pow(10, float64(r.IntN(12)-6)))
		}
		if trial%11 == 0 {
			m1v[r.IntN(8)] = specialFloats(r, 1)[0]
		}
		N := len(tail) + 8*n
		if N == 0 {
			N = 1
		}
		wm, wv := finishMoments(tail, n, &m1v, &m2v, N)
		var dummy float32
		p := &dummy
		if len(tail) > 0 {
			p = &tail[0]
		}
		gm, gv := finishMomentsAVX2(p, len(tail), n, &m1v, &m2v, N)
		requireSameBits(t, fmt.Sprintf("trial %d tail %v n %d lanes %v %v", trial, tail, n, m1v, m2v), []float32{gm, gv}, []float32{wm, wv})
	}
}
