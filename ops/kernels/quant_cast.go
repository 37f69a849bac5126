package kernels

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file holds the small ops the reference representation rewrites emit
// (torchao-pt2e.md 1.4 and 6.2): dtype casts, round, clamp and out_dtype.

// castFloatToInt is the C++ float->integer cast PyTorch uses for .to(int):
// truncation toward zero. Values the target cannot hold are undefined
// behaviour in C++; fxquant reproduces x86-64: targets narrower than 64 bits
// convert through int32 (NaN and values outside int32 give INT32_MIN) and
// keep the low bits, 64-bit targets give INT64_MIN for NaN and values
// outside int64.
func castFloatToInt(v float64, dst tensor.DType) int64 {
	t := math.Trunc(v)
	var i int64
	if dst == tensor.Int64 || dst == tensor.UInt64 {
		if v != v || t < -9.223372036854775808e18 || t >= 9.223372036854775808e18 {
			i = math.MinInt64
		} else {
			i = int64(t)
		}
		return i
	}
	if v != v || t < -2147483648 || t > 2147483647 {
		i = math.MinInt32
	} else {
		i = int64(t)
	}
	return qWrap(i, dst)
}

// qWrap reduces an integer to dst's width as a C cast does (two's
// complement; Int4/UInt4 wrap in their 8-bit storage; bool is i != 0).
func qWrap(i int64, dst tensor.DType) int64 {
	switch dst {
	case tensor.Int8, tensor.Int4:
		return int64(int8(i))
	case tensor.UInt8, tensor.UInt4:
		return int64(uint8(i))
	case tensor.Int16:
		return int64(int16(i))
	case tensor.UInt16:
		return int64(uint16(i))
	case tensor.Int32:
		return int64(int32(i))
	case tensor.UInt32:
		return int64(uint32(i))
	case tensor.Bool:
		if i != 0 {
			return 1
		}
		return 0
	}
	return i
}

// qIntTensor stores int64 values (already in range, or wrapped as a C cast
// would) in a new tensor of an integer or bool dtype.
func qIntTensor(d tensor.DType, shape []int, v []int64) (*tensor.Tensor, error) {
	out, err := qOutput(d, shape)
	if err != nil {
		return nil, err
	}
	switch s := out.Storage().(type) {
	case []int8:
		for i, x := range v {
			s[i] = int8(x)
		}
	case []uint8:
		for i, x := range v {
			s[i] = uint8(x)
		}
	case []int16:
		for i, x := range v {
			s[i] = int16(x)
		}
	case []uint16:
		for i, x := range v {
			s[i] = uint16(x)
		}
	case []int32:
		for i, x := range v {
			s[i] = int32(x)
		}
	case []uint32:
		for i, x := range v {
			s[i] = uint32(x)
		}
	case []int64:
		copy(s, v)
	case []uint64:
		for i, x := range v {
			s[i] = uint64(x)
		}
	case []bool:
		for i, x := range v {
			s[i] = x != 0
		}
	default:
		return nil, fmt.Errorf("%w: %s is not an integer dtype", ErrUnsupportedDType, d)
	}
	return out, nil
}

// qIsRealFloat reports the float dtypes the cast kernels read and write.
func qIsRealFloat(d tensor.DType) bool {
	return d == tensor.Float32 || d == tensor.Float64 || d == tensor.Float16 || d == tensor.BFloat16
}

// ToDType is aten.to.dtype (and prims.convert_element_type): a new tensor
// of dtype holding x's values.
//   - float -> float rounds to nearest even (float64 -> float16/bfloat16
//     goes through float32, as c10 does); NaN, inf and -0.0 are kept.
//   - float -> integer truncates toward zero; NaN and out-of-range values
//     follow x86-64 (see castFloatToInt): NaN -> 0 for 8/16-bit targets.
//   - integer -> integer wraps (two's complement); integer -> float rounds
//     to nearest even.
//   - anything -> bool is value != 0 (NaN -> true); bool -> number is 0/1.
//
// When x already has dtype, x itself is returned (tensors are immutable by
// convention). Complex and float8 dtypes are an error.
func ToDType(x *tensor.Tensor, dtype tensor.DType) (*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "self")
	}
	if x.DType() == dtype {
		return x, nil
	}
	src := x.DType()
	shape := x.Shape()
	okSrc := qIsRealFloat(src) || src.IsInteger() || src == tensor.Bool
	okDst := qIsRealFloat(dtype) || dtype.IsInteger() || dtype == tensor.Bool
	if !okSrc {
		return nil, dtypeErr("self", src, "a real float, integer or bool tensor")
	}
	if !okDst {
		return nil, argErrf("argument %q: cannot cast to %s", "dtype", dtype)
	}
	if qIsRealFloat(src) {
		vals, err := x.Float64s()
		if err != nil {
			return nil, err
		}
		if qIsRealFloat(dtype) {
			if dtype == tensor.Float64 {
				return tensor.FromData(tensor.Float64, shape, vals)
			}
			r := make([]float32, len(vals))
			for i, v := range vals {
				r[i] = float32(v)
			}
			return qFloatResult(dtype, shape, r, nil)
		}
		iv := make([]int64, len(vals))
		for i, v := range vals {
			if dtype == tensor.Bool {
				if v != 0 {
					iv[i] = 1
				}
				continue
			}
			iv[i] = castFloatToInt(v, dtype)
		}
		return qIntTensor(dtype, shape, iv)
	}
	iv, err := x.Int64s()
	if err != nil {
		return nil, err
	}
	if qIsRealFloat(dtype) {
		if dtype == tensor.Float64 {
			r := make([]float64, len(iv))
			for i, v := range iv {
				r[i] = qIntToFloat64(v, src)
			}
			return tensor.FromData(tensor.Float64, shape, r)
		}
		r := make([]float32, len(iv))
		for i, v := range iv {
			if src == tensor.UInt64 {
				r[i] = float32(uint64(v))
			} else {
				r[i] = float32(v)
			}
		}
		return qFloatResult(dtype, shape, r, nil)
	}
	for i, v := range iv {
		iv[i] = qWrap(v, dtype)
	}
	return qIntTensor(dtype, shape, iv)
}

func qIntToFloat64(v int64, src tensor.DType) float64 {
	if src == tensor.UInt64 {
		return float64(uint64(v))
	}
	return float64(v)
}

// Round is aten.round.default: round half to even (torch.round), elementwise
// in the input's float dtype; NaN, +-inf and -0.0 are returned unchanged
// (and -0.4 rounds to -0.0). Integer and bool inputs are returned as they
// are.
func Round(x *tensor.Tensor) (*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "self")
	}
	d := x.DType()
	if d.IsInteger() || d == tensor.Bool {
		return x, nil
	}
	switch d {
	case tensor.Float64:
		v, err := x.Float64s()
		if err != nil {
			return nil, err
		}
		for i := range v {
			v[i] = math.RoundToEven(v[i])
		}
		return tensor.FromData(tensor.Float64, x.Shape(), v)
	case tensor.Float32, tensor.Float16, tensor.BFloat16:
		in, err := qFloatInput("self", x, false)
		if err != nil {
			return nil, err
		}
		r := make([]float32, len(in.f32))
		for i, v := range in.f32 {
			r[i] = float32(math.RoundToEven(float64(v)))
		}
		return qFloatResult(d, x.Shape(), r, nil)
	}
	return nil, dtypeErr("self", d, "a real float, integer or bool tensor")
}

// Clamp is aten.clamp.default: min(max(x, lo), hi) elementwise, each bound
// a Python scalar (int64 or float64) or nil for none. The result dtype is
// torch.result_type(x, lo, hi): an integer tensor with a float bound gives
// float32. NaN in x propagates; when lo > hi every element becomes hi, as
// in PyTorch. Integer results are computed exactly in int64. Both bounds
// nil is an error, as in PyTorch.
func Clamp(x *tensor.Tensor, lo, hi any) (*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "self")
	}
	if lo == nil && hi == nil {
		return nil, argErrf("clamp: at least one of min and max must not be None")
	}
	ops := []Operand{T(x)}
	for _, b := range []any{lo, hi} {
		if b != nil {
			ops = append(ops, S(b))
		}
	}
	dt, err := ResultType(ops...)
	if err != nil {
		return nil, fmt.Errorf("clamp: %w", err)
	}
	var loT, hiT *tensor.Tensor
	if lo != nil {
		if loT, err = qScalarTensor("min", lo); err != nil {
			return nil, err
		}
	}
	if hi != nil {
		if hiT, err = qScalarTensor("max", hi); err != nil {
			return nil, err
		}
	}
	return qClamp(x, loT, hiT, dt)
}

func qScalarTensor(name string, v any) (*tensor.Tensor, error) {
	switch s := v.(type) {
	case int64:
		return tensor.MustFromData(tensor.Int64, nil, []int64{s}), nil
	case float64:
		return tensor.MustFromData(tensor.Float64, nil, []float64{s}), nil
	case bool:
		return tensor.MustFromData(tensor.Bool, nil, []bool{s}), nil
	}
	return nil, argErrf("argument %q: want an int or float scalar, got %T", name, v)
}

// ClampTensor is aten.clamp.Tensor: min(max(x, lo), hi) with tensor
// bounds (either may be nil) broadcast against x. The result dtype is
// torch.result_type of the three (0-dim bounds do not widen x's dtype
// within a category). NaN in x or a bound propagates.
func ClampTensor(x, lo, hi *tensor.Tensor) (*tensor.Tensor, error) {
	if x == nil {
		return nil, argErrf("argument %q: want a tensor, got None", "self")
	}
	if lo == nil && hi == nil {
		return nil, argErrf("clamp: at least one of min and max must not be None")
	}
	ops := []Operand{T(x)}
	for _, b := range []*tensor.Tensor{lo, hi} {
		if b != nil {
			ops = append(ops, T(b))
		}
	}
	dt, err := ResultType(ops...)
	if err != nil {
		return nil, fmt.Errorf("clamp: %w", err)
	}
	return qClamp(x, lo, hi, dt)
}

// qClamp broadcasts x, lo, hi and clamps in dt (int64 arithmetic for
// integer dt, float64 otherwise, rounded to dt once: exact, since clamp
// only selects values).
func qClamp(x, lo, hi *tensor.Tensor, dt tensor.DType) (*tensor.Tensor, error) {
	shape := x.Shape()
	var err error
	for i, b := range []*tensor.Tensor{lo, hi} {
		if b == nil {
			continue
		}
		if shape, err = BroadcastShapes(shape, b.Shape()); err != nil {
			return nil, fmt.Errorf("clamp: argument %q: %w", []string{"min", "max"}[i], err)
		}
	}
	expand := func(t *tensor.Tensor) (*tensor.Tensor, error) {
		if t == nil {
			return nil, nil
		}
		c, err := ToDType(t, dt)
		if err != nil {
			return nil, err
		}
		return c.Expand(shape...)
	}
	xe, err := expand(x)
	if err != nil {
		return nil, fmt.Errorf("clamp: %w", err)
	}
	le, err := expand(lo)
	if err != nil {
		return nil, fmt.Errorf("clamp: %w", err)
	}
	he, err := expand(hi)
	if err != nil {
		return nil, fmt.Errorf("clamp: %w", err)
	}
	if dt.IsInteger() || dt == tensor.Bool {
		xv, err := xe.Int64s()
		if err != nil {
			return nil, err
		}
		if le != nil {
			lv, _ := le.Int64s()
			for i := range xv {
				xv[i] = max(xv[i], lv[i])
			}
		}
		if he != nil {
			hv, _ := he.Int64s()
			for i := range xv {
				xv[i] = min(xv[i], hv[i])
			}
		}
		return qIntTensor(dt, shape, xv)
	}
	xv, err := xe.Float64s()
	if err != nil {
		return nil, err
	}
	if le != nil {
		lv, _ := le.Float64s()
		for i := range xv {
			if lv[i] != lv[i] || lv[i] > xv[i] {
				if xv[i] == xv[i] {
					xv[i] = lv[i]
				}
			}
		}
	}
	if he != nil {
		hv, _ := he.Float64s()
		for i := range xv {
			if hv[i] != hv[i] || hv[i] < xv[i] {
				if xv[i] == xv[i] {
					xv[i] = hv[i]
				}
			}
		}
	}
	if dt == tensor.Float64 {
		return tensor.FromData(tensor.Float64, shape, xv)
	}
	r := make([]float32, len(xv))
	for i, v := range xv {
		r[i] = float32(v)
	}
	return qFloatResult(dt, shape, r, nil)
}

// OutDType is torch.ops.higher_order.out_dtype(op, out_dtype, *args): the
// tensor arguments are promoted together with a tensor of outDType
// (torch.result_type rules), op runs in that dtype, and the result is cast
// to outDType with [ToDType] (float -> int truncates toward zero, it does
// not round). op is the inner overload's name; supported: aten.mul.Tensor,
// aten.div.Tensor (true division), aten.linear.default and aten.mm.default
// (integer products accumulate exactly in int64 and wrap to the
// promoted dtype).
func OutDType(op string, outDType tensor.DType, args []Operand) (*tensor.Tensor, error) {
	if !outDType.Valid() {
		return nil, argErrf("out_dtype(%s): argument \"out_dtype\": want a known dtype, got %s", op, outDType)
	}
	probe, err := tensor.Zeros(outDType, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: out_dtype(%s): argument \"out_dtype\": %v", ErrUnsupportedDType, op, err)
	}
	ops := append([]Operand{T(probe)}, args...)
	var ts []Operand
	for _, a := range ops {
		ts = append(ts, a)
	}
	pt, err := ResultType(ts...)
	if err != nil {
		return nil, fmt.Errorf("out_dtype(%s, %s): %w", op, outDType, err)
	}
	conv := make([]Operand, len(args))
	for i, a := range args {
		if a.T == nil {
			conv[i] = a
			continue
		}
		c, err := ToDType(a.T, pt)
		if err != nil {
			return nil, fmt.Errorf("out_dtype(%s, %s): argument %d: %w", op, outDType, i, err)
		}
		conv[i] = T(c)
	}
	var res *tensor.Tensor
	switch op {
	case "aten.mul.Tensor", "aten.div.Tensor":
		if len(conv) != 2 {
			return nil, argErrf("out_dtype(%s): want 2 operands, got %d", op, len(conv))
		}
		bop := OpMul
		if op == "aten.div.Tensor" {
			bop = OpDiv
		}
		res, err = Binary(bop, conv[0], conv[1], nil)
	case "aten.linear.default", "aten.mm.default":
		res, err = qOutDTypeMatmul(op, conv, pt)
	default:
		return nil, argErrf("out_dtype: inner op %s has no kernel (supported: aten.mul.Tensor, aten.div.Tensor, aten.linear.default, aten.mm.default)", op)
	}
	if err != nil {
		return nil, fmt.Errorf("out_dtype(%s, %s): %w", op, outDType, err)
	}
	return ToDType(res, outDType)
}

// qOutDTypeMatmul runs linear (x @ w.T + b) or mm (a @ b) on promoted
// operands: exactly in int64 for integer dtypes, through the float kernels
// otherwise.
func qOutDTypeMatmul(op string, args []Operand, pt tensor.DType) (*tensor.Tensor, error) {
	if len(args) < 2 || args[0].T == nil || args[1].T == nil {
		return nil, argErrf("%s: want two tensor operands", op)
	}
	a, b := args[0].T, args[1].T
	var bias *tensor.Tensor
	if len(args) > 2 && args[2].T != nil {
		bias = args[2].T
	}
	if !pt.IsInteger() {
		if op == "aten.mm.default" {
			return Mm(a, b)
		}
		return Linear(a, b, bias)
	}
	if op == "aten.linear.default" {
		if b.Dim() != 2 {
			return nil, shapeErrf("%s: argument %q: want a 2-D weight, got shape %v", op, "weight", b.Shape())
		}
		bt, err := b.Transpose(0, 1)
		if err != nil {
			return nil, err
		}
		b = bt
	} else if a.Dim() != 2 || b.Dim() != 2 {
		return nil, shapeErrf("%s: want 2-D operands, got %v and %v", op, a.Shape(), b.Shape())
	}
	if a.Dim() < 1 || b.Dim() != 2 {
		return nil, shapeErrf("%s: operand shapes %v and %v", op, a.Shape(), b.Shape())
	}
	k := a.Size(-1)
	if b.Size(0) != k {
		return nil, shapeErrf("%s: inner dimensions differ: %v and %v", op, a.Shape(), b.Shape())
	}
	n := b.Size(1)
	av, err := a.Int64s()
	if err != nil {
		return nil, err
	}
	bv, err := b.Int64s()
	if err != nil {
		return nil, err
	}
	m := len(av) / max(k, 1)
	if k == 0 {
		m = tensor.Numel(a.Shape()[:a.Dim()-1])
	}
	out := make([]int64, m*n)
	for i := 0; i < m; i++ {
		for kk := 0; kk < k; kk++ {
			x := av[i*k+kk]
			if x == 0 {
				continue
			}
			row := bv[kk*n : (kk+1)*n]
			o := out[i*n : (i+1)*n]
			for j, w := range row {
				o[j] += x * w
			}
		}
	}
	if bias != nil {
		bvv, err := bias.Int64s()
		if err != nil {
			return nil, err
		}
		if len(bvv) != n {
			return nil, shapeErrf("%s: argument %q: want %d values, got shape %v", op, "bias", n, bias.Shape())
		}
		for i := range out {
			out[i] += bvv[i%n]
		}
	}
	for i := range out {
		out[i] = qWrap(out[i], pt)
	}
	shape := append(a.Shape()[:a.Dim()-1], n)
	return qIntTensor(pt, shape, out)
}
