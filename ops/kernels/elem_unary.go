package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// How PyTorch's CPU kernels walk a float32 tensor. A unary kernel runs over
// the tensor's elements in memory order (TensorIterator sorts and
// coalesces the dimensions of a dense tensor); two loops exist:
//
//   - loopVec16 is cpu_kernel_vec's vectorized_loop: whole blocks of 16
//     elements (two AVX2 vectors) through the vector function, the rest
//     (n mod 16) through the scalar function;
//   - loopMap is vec::map, used by the VML kernels (exp, tanh, sqrt, erf):
//     every element, the last partial vector included, through the vector
//     function.
type elemLoop int

const (
	loopVec16 elemLoop = iota
	loopMap
)

// unaryF32 applies a vectorised kernel to x: vec computes one lane of the
// vector path, scalar the scalar tail. The result has x's shape and, when x
// is dense (a permutation of a contiguous layout), x's strides, as
// TensorIterator gives; a non-dense x is walked in runs of its coalesced
// unit-stride trailing dimensions. float16 and bfloat16 compute in float32
// and round back.
func unaryF32(name string, x *tensor.Tensor, loop elemLoop, vec, scalar func(float32) float32) (*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("%s: argument \"self\": want a tensor, got None", name)
	}
	if !isFloatCompute(x.DType()) {
		return nil, fmt.Errorf("%s: %w", name, dtypeErr("self", x.DType(), "a float32, float16 or bfloat16 tensor"))
	}
	perm, dense := denseOrder(x)
	src := x
	if dense {
		p, err := x.Permute(perm...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		src = p
	}
	d, err := floatArg("self", src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]float32, len(d))
	row := len(d)
	if !dense {
		row = innerRun(x)
	}
	if row == 0 {
		for i, v := range d {
			out[i] = scalar(v)
		}
	} else {
		for start := 0; start < len(d); start += row {
			applyLoop(out[start:start+row], d[start:start+row], loop, vec, scalar)
		}
	}
	res := fromFloat32(x.DType(), src.Shape(), out)
	if dense {
		return res.Permute(inversePerm(perm)...)
	}
	return res, nil
}

// innerRun is the length of the inner loop TensorIterator runs on a
// non-dense x: the trailing dimensions that coalesce into one unit-stride
// run (0 when the last dimension is not unit-stride: the scalar loop).
func innerRun(x *tensor.Tensor) int {
	sh, st := x.Shape(), x.Strides()
	run, want := 1, 1
	for i := len(sh) - 1; i >= 0; i-- {
		if sh[i] == 1 {
			continue
		}
		if st[i] != want {
			break
		}
		run *= sh[i]
		want *= sh[i]
	}
	if run == 1 && len(sh) > 0 {
		last := len(sh) - 1
		for last >= 0 && sh[last] == 1 {
			last--
		}
		if last >= 0 && st[last] != 1 {
			return 0
		}
	}
	return run
}

func applyLoop(out, in []float32, loop elemLoop, vec, scalar func(float32) float32) {
	body := len(in)
	if loop == loopVec16 {
		body -= len(in) % 16
	}
	for i := 0; i < body; i++ {
		out[i] = vec(in[i])
	}
	for i := body; i < len(in); i++ {
		out[i] = scalar(in[i])
	}
}

// denseOrder returns the permutation that lists x's dimensions from the
// largest stride to the smallest, and whether x is dense: that permutation
// of x is contiguous.
func denseOrder(x *tensor.Tensor) ([]int, bool) {
	n := x.Dim()
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	if x.IsContiguous() {
		return perm, true
	}
	st, sh := x.Strides(), x.Shape()
	slices.SortStableFunc(perm, func(a, b int) int {
		switch {
		case st[a] > st[b]:
			return -1
		case st[a] < st[b]:
			return 1
		}
		return 0
	})
	want := 1
	for i := n - 1; i >= 0; i-- {
		d := perm[i]
		if sh[d] != 1 && st[d] != want {
			return nil, false
		}
		want *= sh[d]
	}
	return perm, true
}

func inversePerm(p []int) []int {
	inv := make([]int, len(p))
	for i, d := range p {
		inv[d] = i
	}
	return inv
}

// Sigmoid returns 1/(1+exp(-x)) as PyTorch's sigmoid kernel computes it:
// the vector path (0 - x).exp() + 1 then a reciprocal, with Sleef's expf,
// and 1/(1+expf(-x)) with glibc's expf for the scalar tail. Bit-exact with
// PyTorch 2.14 (AVX2) for float32, bfloat16 and float16.
func Sigmoid(x *tensor.Tensor) (*tensor.Tensor, error) {
	return unaryF32("sigmoid", x, loopVec16,
		func(v float32) float32 { return 1 / (sleefExpf(0-v) + 1) },
		func(v float32) float32 { return 1 / (1 + glibcExpf(-v)) })
}

// Silu returns x/(1+exp(-x)) as PyTorch's silu kernel computes it (Sleef's
// expf in the vector path, glibc's expf in the scalar tail). Bit-exact with
// PyTorch 2.14 (AVX2) for float32, bfloat16 and float16.
func Silu(x *tensor.Tensor) (*tensor.Tensor, error) {
	return unaryF32("silu", x, loopVec16,
		func(v float32) float32 { return v / (1 + sleefExpf(-v)) },
		func(v float32) float32 { return v / (1 + glibcExpf(-v)) })
}

// Tanh returns tanh(x) through Sleef's tanhf (PyTorch's VML tanh kernel
// runs every element through Vectorized<float>::tanh). Bit-exact with
// PyTorch 2.14 (AVX2) for float32, bfloat16 and float16.
func Tanh(x *tensor.Tensor) (*tensor.Tensor, error) {
	return unaryF32("tanh", x, loopMap, sleefTanhf, sleefTanhf)
}

// Exp returns e^x through Sleef's expf (PyTorch's VML exp kernel runs every
// element through Vectorized<float>::exp). Bit-exact with PyTorch 2.14
// (AVX2) for float32, bfloat16 and float16.
func Exp(x *tensor.Tensor) (*tensor.Tensor, error) {
	return unaryF32("exp", x, loopMap, sleefExpf, sleefExpf)
}

// Erf returns erf(x) as PyTorch's VML erf kernel computes it: ATen's
// vectorised Abramowitz-Stegun polynomial with Sleef's expf on every
// element (absolute error up to about 1.5e-7, as in PyTorch). Bit-exact
// with PyTorch 2.14 (AVX2) for float32, bfloat16 and float16.
func Erf(x *tensor.Tensor) (*tensor.Tensor, error) {
	return unaryF32("erf", x, loopMap, atenErfVec, atenErfVec)
}

func sqrtf(v float32) float32 { return float32(math.Sqrt(float64(v))) }

// Sqrt returns the correctly rounded square root (NaN below 0). Exact.
func Sqrt(x *tensor.Tensor) (*tensor.Tensor, error) {
	return unaryF32("sqrt", x, loopMap, sqrtf, sqrtf)
}

// Rsqrt returns 1/sqrt(x), a rounded square root then a rounded division,
// as PyTorch computes it. For bfloat16 and float16 the scalar tail rounds
// the square root to the input's dtype before dividing (c10's sqrt of a
// reduced type returns that type), the vector part does not. Exact.
func Rsqrt(x *tensor.Tensor) (*tensor.Tensor, error) {
	f := func(v float32) float32 { return 1 / sqrtf(v) }
	tail := f
	if x != nil && (x.DType() == tensor.BFloat16 || x.DType() == tensor.Float16) {
		round := reducedRounder(x.DType())
		tail = func(v float32) float32 { return 1 / round(sqrtf(v)) }
	}
	return unaryF32("rsqrt", x, loopVec16, f, tail)
}

// Neg returns -x (the sign bit flipped, NaN included). Exact; integer
// tensors wrap as C negation does; bool is an error, as in PyTorch.
func Neg(x *tensor.Tensor) (*tensor.Tensor, error) {
	if x != nil && x.DType() == tensor.Bool {
		return nil, fmt.Errorf("neg: %w", dtypeErr("self", x.DType(), "a number tensor (negation of a bool tensor is not supported, as in PyTorch)"))
	}
	if x != nil && x.DType().IsInteger() {
		return Binary(OpMul, T(x), S(int64(-1)), nil)
	}
	f := func(v float32) float32 { return -v }
	return unaryF32("neg", x, loopVec16, f, f)
}

// Hardswish returns x·min(max(x+3, 0), 6)/6 in float32, in that order, as
// PyTorch's kernel does. Exact.
func Hardswish(x *tensor.Tensor) (*tensor.Tensor, error) {
	f := func(v float32) float32 { return v * clampNaN(v+3, 0, 6) / 6 }
	return unaryF32("hardswish", x, loopVec16, f, f)
}

// Hardsigmoid returns min(max(x+3, 0), 6)/6 in float32. Exact.
func Hardsigmoid(x *tensor.Tensor) (*tensor.Tensor, error) {
	f := func(v float32) float32 { return clampNaN(v+3, 0, 6) / 6 }
	return unaryF32("hardsigmoid", x, loopVec16, f, f)
}

// clampNaN is min(max(v, lo), hi) with NaN propagated.
func clampNaN(v, lo, hi float32) float32 {
	if v != v {
		return v
	}
	return min(max(v, lo), hi)
}

// Gelu is [GeluWith] on [ConvISAAVX512Core], the machine the zoo fixtures
// were recorded on.
func Gelu(x *tensor.Tensor, approximate string) (*tensor.Tensor, error) {
	return GeluWith(x, approximate, ConvISAAVX512Core)
}

// GeluWith returns x·Φ(x) as PyTorch 2.14 computes it on a CPU of the given
// oneDNN instruction set (ATen's AVX2 capability), bit for bit for
// float32, bfloat16 and float16:
//
//   - approximate "none", contiguous float32 x with more than one element:
//     PyTorch runs oneDNN's eltwise gelu_erf, whose kernel oneDNN picks by
//     the CPU, whatever ATEN_CPU_CAPABILITY says. On avx2 every element
//     goes through fma(x/2, erf(x/√2), x/2), with an Abramowitz-Stegun erf
//     around an exp_u20-like exp; on avx512_core through a piecewise
//     minimax polynomial ([geluErfAVX512]), which gives -0 for -0 and for
//     large negative x, and NaN for +Inf;
//   - approximate "none", any other x: cpu_kernel_vec's loop with
//     x·0.5·(1+erf(x/√2)), the same polynomial around Sleef's expf in the
//     vector part, erf in float64 rounded to float32 in the scalar part
//     (glibc's erff agreed on every probed input);
//   - approximate "tanh": 0.5·x·(1+tanh(√(2/π)·fma(0.044715, x³, x))) with
//     Sleef's tanhf in the vector part and tanh in float64 rounded to
//     float32 in the scalar tail.
//
// gelu(-0) is +0 on the first path with avx2 and -0 on the others, as in
// PyTorch.
func GeluWith(x *tensor.Tensor, approximate string, isa ConvISA) (*tensor.Tensor, error) {
	switch approximate {
	case "none", "":
		const alpha = float32(math.Sqrt2 / 2)
		if x != nil && x.DType() == tensor.Float32 && x.IsContiguous() && x.Numel() > 1 {
			if isa == ConvISAAVX512Core {
				return unaryF32("gelu", x, loopMap, geluErfAVX512, geluErfAVX512)
			}
			f := func(v float32) float32 {
				h := v * 0.5
				return fmaf(h, atenErfVecExp(v*alpha, atenExpU20), h)
			}
			return unaryF32("gelu", x, loopMap, f, f)
		}
		return unaryF32("gelu", x, loopVec16,
			func(v float32) float32 { return v * 0.5 * (1 + atenErfVec(v*alpha)) },
			func(v float32) float32 { return v * 0.5 * (1 + float32(math.Erf(float64(v*alpha)))) })
	case "tanh":
		const beta = float32(math.Sqrt2 * (2 / math.SqrtPi) * 0.5)
		const kappa = float32(0.044715)
		inner := func(v float32) float32 {
			cube := v * v * v
			return beta * fmaf(kappa, cube, v)
		}
		return unaryF32("gelu", x, loopVec16,
			func(v float32) float32 { return 0.5 * v * (1 + sleefTanhf(inner(v))) },
			func(v float32) float32 { return 0.5 * v * (1 + float32(math.Tanh(float64(inner(v))))) })
	}
	return nil, argErrf("gelu: argument \"approximate\": want \"none\" or \"tanh\", got %q", approximate)
}

// PowScalar is aten.pow.Tensor_Scalar for a float tensor, as PyTorch 2.14's
// AVX2 kernel computes it: exponent 0 gives ones, 1 a copy, 2 x·x, 3 x·x·x,
// 0.5 sqrt, -0.5 rsqrt, -1 1/x, -2 1/(x·x); any other exponent runs
// cpu_kernel_vec's loop with Sleef's powf (exponent rounded to float32) in
// the vector part and pow in float64 (glibc's pow with the exponent as a
// double) rounded to float32 in the scalar tail. Bit-exact on the stored
// vectors and on 1,024,000 probed elements (exponents 1.5, -1.5, 0.3, 2.5).
func PowScalar(x *tensor.Tensor, exponent float64) (*tensor.Tensor, error) {
	if x != nil && !isFloatCompute(x.DType()) {
		return nil, fmt.Errorf("pow: %w", dtypeErr("self", x.DType(), "a float32, float16 or bfloat16 tensor"))
	}
	e := float32(exponent)
	var f func(float32) float32
	loop := loopVec16
	switch exponent {
	case 0:
		f = func(float32) float32 { return 1 }
	case 1:
		f = func(v float32) float32 { return v }
	case 2:
		f = func(v float32) float32 { return v * v }
	case 3:
		f = func(v float32) float32 { return v * v * v }
	case 0.5:
		f, loop = sqrtf, loopMap
	case -0.5:
		f = func(v float32) float32 { return 1 / sqrtf(v) }
	case -1:
		f = func(v float32) float32 { return 1 / v }
	case -2:
		f = func(v float32) float32 { return 1 / (v * v) }
	default:
		f = func(v float32) float32 { return float32(math.Pow(float64(v), exponent)) }
		return unaryF32("pow", x, loop, func(v float32) float32 { return sleefPowf(v, e) }, f)
	}
	return unaryF32("pow", x, loop, f, f)
}

// InLayoutOf returns x (of like's shape) laid out with like's strides when
// like is dense but not contiguous (channels-last, transposed), as an
// in-place op's result keeps its self's layout; otherwise x itself.
func InLayoutOf(x, like *tensor.Tensor) (*tensor.Tensor, error) {
	if x == nil || like == nil || like.IsContiguous() || !slices.Equal(x.Shape(), like.Shape()) || slices.Equal(x.Strides(), like.Strides()) {
		return x, nil
	}
	perm, dense := denseOrder(like)
	if !dense {
		return x, nil
	}
	p, err := x.Permute(perm...)
	if err != nil {
		return nil, err
	}
	return p.Contiguous().Permute(inversePerm(perm)...)
}
