package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Operand is one input of a binary elementwise kernel: either a tensor T or,
// when T is nil, a Python scalar S (bool, int64 or float64), which takes
// part in type promotion as a wrapped number (a float scalar does not turn
// a float32 tensor into float64).
type Operand struct {
	T *tensor.Tensor
	S any
}

// T wraps a tensor as an [Operand].
func T(t *tensor.Tensor) Operand { return Operand{T: t} }

// S wraps a Python scalar (bool, int64 or float64) as an [Operand].
func S(v any) Operand { return Operand{S: v} }

func (o Operand) shape() []int {
	if o.T != nil {
		return o.T.Shape()
	}
	return nil
}

// BroadcastShapes returns the broadcast of two shapes under NumPy/PyTorch
// rules (align trailing dims; sizes must be equal or 1). It fails naming
// both shapes when they do not broadcast.
func BroadcastShapes(a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, shapeErrf("shapes %v and %v do not broadcast (dim %d: %d vs %d)", a, b, i, da, db)
		}
	}
	return out, nil
}

// PromoteTypes is torch.promote_types (tensor.PromoteTypes) restricted to
// what the elementwise kernels compute: real dtypes only, no float8 mixed
// with another float, and of the unsigned integers only uint8 mixed with a
// signed one. Other combinations are an ErrUnsupportedDType error.
func PromoteTypes(a, b tensor.DType) (tensor.DType, error) {
	if a == b || a == tensor.Unknown || b == tensor.Unknown {
		return tensor.PromoteTypes(a, b)
	}
	if a.IsComplex() || b.IsComplex() {
		return 0, fmt.Errorf("%w: complex promotion of %s and %s", ErrUnsupportedDType, a, b)
	}
	if a.IsFloat() && b.IsFloat() && (isFloat8(a) || isFloat8(b)) {
		return 0, fmt.Errorf("%w: no promotion between %s and %s", ErrUnsupportedDType, a, b)
	}
	if a.IsInteger() && b.IsInteger() && a.IsSigned() != b.IsSigned() {
		unsigned := a
		if a.IsSigned() {
			unsigned = b
		}
		if unsigned != tensor.UInt8 {
			return 0, fmt.Errorf("%w: no promotion between %s and %s", ErrUnsupportedDType, a, b)
		}
	}
	return tensor.PromoteTypes(a, b)
}

func isFloat8(d tensor.DType) bool { return d.IsFloat() && d.Size() == 1 }

func scalarDType(v any) (tensor.DType, error) {
	switch v.(type) {
	case bool:
		return tensor.Bool, nil
	case int64:
		return tensor.Int64, nil
	case float64:
		return tensor.Float64, nil
	}
	return 0, argErrf("scalar operand of Go type %T: want bool, int64 or float64", v)
}

func combineCategories(higher, lower tensor.DType) (tensor.DType, error) {
	if higher == tensor.Unknown {
		return lower, nil
	}
	if higher.IsFloat() {
		return higher, nil
	}
	if higher == tensor.Bool || (lower != tensor.Unknown && lower.IsFloat()) {
		return PromoteTypes(higher, lower)
	}
	return higher, nil
}

// ResultType is torch.result_type over operands: tensors with dims take
// precedence over 0-dim tensors, which take precedence over Python
// scalars, unless a lower tier is of a higher category (bool < integer <
// float). A Python float scalar counts as the default dtype float32.
func ResultType(ops ...Operand) (tensor.DType, error) {
	var dimR, zeroR, wrapR tensor.DType
	for _, o := range ops {
		if o.T == nil {
			d, err := scalarDType(o.S)
			if err != nil {
				return 0, err
			}
			if d == tensor.Float64 {
				d = tensor.Float32
			}
			if wrapR, err = PromoteTypes(wrapR, d); err != nil {
				return 0, err
			}
			continue
		}
		var err error
		if o.T.Dim() == 0 {
			zeroR, err = PromoteTypes(zeroR, o.T.DType())
		} else {
			dimR, err = PromoteTypes(dimR, o.T.DType())
		}
		if err != nil {
			return 0, err
		}
	}
	low, err := combineCategories(zeroR, wrapR)
	if err != nil {
		return 0, err
	}
	return combineCategories(dimR, low)
}

// float32Values returns o broadcast to shape as float32 values; a scalar
// becomes one value (the caller broadcasts it).
func float32Values(name string, o Operand, shape []int) ([]float32, bool, error) {
	if o.T == nil {
		switch v := o.S.(type) {
		case bool:
			if v {
				return []float32{1}, true, nil
			}
			return []float32{0}, true, nil
		case int64:
			return []float32{float32(v)}, true, nil
		case float64:
			return []float32{float32(v)}, true, nil
		}
		return nil, false, argErrf("argument %q: scalar of Go type %T", name, o.S)
	}
	t, scalar, err := expandOperand(name, o.T, shape)
	if err != nil {
		return nil, false, err
	}
	if scalar {
		f, err := t.Float64s()
		if err != nil {
			return nil, false, fmt.Errorf("argument %q: %w", name, err)
		}
		return []float32{float32(f[0])}, true, nil
	}
	if isFloatCompute(t.DType()) {
		d, err := floatArg(name, t)
		return d, false, err
	}
	if t.DType().IsComplex() {
		return nil, false, dtypeErr(name, t.DType(), "a real tensor")
	}
	f, err := t.Float64s()
	if err != nil {
		return nil, false, fmt.Errorf("argument %q: %w", name, err)
	}
	out := make([]float32, len(f))
	for i, v := range f {
		out[i] = float32(v)
	}
	return out, false, nil
}

// expandOperand returns t expanded to shape, or t itself and true when it
// holds one element that broadcasts as a scalar (no more dimensions than
// shape).
func expandOperand(name string, t *tensor.Tensor, shape []int) (*tensor.Tensor, bool, error) {
	if t.Numel() == 1 && t.Dim() <= len(shape) {
		return t, true, nil
	}
	if !slices.Equal(t.Shape(), shape) {
		e, err := t.Expand(shape...)
		if err != nil {
			return nil, false, fmt.Errorf("argument %q: %w", name, err)
		}
		t = e
	}
	return t, false, nil
}

// float64Values is float32Values in float64.
func float64Values(name string, o Operand, shape []int) ([]float64, bool, error) {
	if o.T == nil {
		switch v := o.S.(type) {
		case bool:
			if v {
				return []float64{1}, true, nil
			}
			return []float64{0}, true, nil
		case int64:
			return []float64{float64(v)}, true, nil
		case float64:
			return []float64{v}, true, nil
		}
		return nil, false, argErrf("argument %q: scalar of Go type %T", name, o.S)
	}
	t, scalar, err := expandOperand(name, o.T, shape)
	if err != nil {
		return nil, false, err
	}
	f, err := t.Float64s()
	if err != nil {
		return nil, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return f, scalar, nil
}

func int64Values(name string, o Operand, shape []int) ([]int64, bool, error) {
	if o.T == nil {
		switch v := o.S.(type) {
		case bool:
			if v {
				return []int64{1}, true, nil
			}
			return []int64{0}, true, nil
		case int64:
			return []int64{v}, true, nil
		}
		return nil, false, argErrf("argument %q: want an integer scalar, got %T", name, o.S)
	}
	t, scalar, err := expandOperand(name, o.T, shape)
	if err != nil {
		return nil, false, err
	}
	out, err := toInt64s(name, t)
	return out, scalar, err
}

// int32Operand reports whether o is an int32 tensor or an integer or
// bool scalar.
func int32Operand(o Operand) bool {
	if o.T != nil {
		return o.T.DType() == tensor.Int32
	}
	switch o.S.(type) {
	case int64, bool:
		return true
	}
	return false
}

// int32Values is int64Values for int32 tensors, without widening; a
// scalar wraps to int32 (the arithmetic is modulo 2**32 either way).
func int32Values(name string, o Operand, shape []int) ([]int32, bool, error) {
	if o.T == nil {
		v, s, err := int64Values(name, o, shape)
		if err != nil {
			return nil, false, err
		}
		return []int32{int32(v[0])}, s, nil
	}
	t, scalar, err := expandOperand(name, o.T, shape)
	if err != nil {
		return nil, false, err
	}
	d, err := tensor.Data[int32](t)
	if err != nil {
		return nil, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return d, scalar, nil
}

func toInt64s(name string, t *tensor.Tensor) ([]int64, error) {
	c := t.Contiguous()
	out := make([]int64, c.Numel())
	switch s := c.Storage().(type) {
	case []int8:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []uint8:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []int16:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []int32:
		for i, v := range s {
			out[i] = int64(v)
		}
	case []int64:
		copy(out, s)
	case []bool:
		for i, v := range s {
			if v {
				out[i] = 1
			}
		}
	default:
		return nil, dtypeErr(name, t.DType(), "an integer or bool tensor")
	}
	return out, nil
}

// fromInt64 builds an integer tensor of dtype dt, wrapping values as a C
// cast does.
func fromInt64(dt tensor.DType, shape []int, v []int64) (*tensor.Tensor, error) {
	switch dt {
	case tensor.Int64:
		return tensor.FromData(dt, shape, v)
	case tensor.Int32:
		return tensor.FromData(dt, shape, convertInts[int32](v))
	case tensor.Int16:
		return tensor.FromData(dt, shape, convertInts[int16](v))
	case tensor.Int8:
		return tensor.FromData(dt, shape, convertInts[int8](v))
	case tensor.UInt8:
		return tensor.FromData(dt, shape, convertInts[uint8](v))
	case tensor.Bool:
		b := make([]bool, len(v))
		for i, x := range v {
			b[i] = x != 0
		}
		return tensor.FromData(dt, shape, b)
	}
	return nil, fmt.Errorf("%w: integer result dtype %s", ErrUnsupportedDType, dt)
}

func convertInts[T int8 | uint8 | int16 | int32](v []int64) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// BinaryOp names the arithmetic of a binary elementwise kernel.
type BinaryOp int

// The binary elementwise operations.
const (
	OpAdd     BinaryOp = iota // a + alpha*b
	OpSub                     // a - alpha*b
	OpMul                     // a * b
	OpDiv                     // a / b, true division
	OpMaximum                 // max(a, b), NaN propagating
	OpMinimum                 // min(a, b), NaN propagating
)

var binaryOpNames = [...]string{"add", "sub", "mul", "div", "maximum", "minimum"}

// Binary runs a broadcasting elementwise operation with PyTorch's type
// promotion ([ResultType]); alpha (bool, int64 or float64; nil for 1)
// scales b for OpAdd and OpSub. Float32 results are computed in float32
// (float16/bfloat16 in float32 and rounded back, float64 in float64); an
// integer division returns float32, as torch.div does by default. For
// alpha != 1 add and sub compute fma(b, ±alpha, a), as PyTorch's
// vectorised kernel does (here in float64 and rounded once more, so a
// result can differ from a single-rounding FMA in rare halfway cases).
// Integer results wrap as C casts do. NaN and infinities follow IEEE
// arithmetic; maximum and minimum propagate NaN.
func Binary(op BinaryOp, a, b Operand, alpha any) (*tensor.Tensor, error) {
	if int(op) < 0 || int(op) >= len(binaryOpNames) {
		return nil, argErrf("unknown binary op %d", op)
	}
	name := binaryOpNames[op]
	if a.T == nil && b.T == nil {
		return nil, argErrf("%s: want at least one tensor operand", name)
	}
	dt, err := ResultType(a, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if op == OpDiv && (dt.IsInteger() || dt == tensor.Bool) {
		dt = tensor.Float32
	}
	shape, err := BroadcastShapes(a.shape(), b.shape())
	if err != nil {
		return nil, fmt.Errorf("%s: arguments \"self\" and \"other\": %w", name, err)
	}
	n := tensor.Numel(shape)
	alphaF, alphaI, hasAlpha := 1.0, int64(1), false
	if alpha != nil {
		switch v := alpha.(type) {
		case int64:
			alphaF, alphaI, hasAlpha = float64(v), v, v != 1
		case float64:
			if !dt.IsFloat() {
				return nil, argErrf("%s: argument \"alpha\": float alpha %v for integer result %s", name, v, dt)
			}
			alphaF, hasAlpha = v, v != 1
		case bool:
			if v {
				alphaF, alphaI = 1, 1
			} else {
				alphaF, alphaI, hasAlpha = 0, 0, true
			}
		default:
			return nil, argErrf("%s: argument \"alpha\": want a number, got %T", name, alpha)
		}
	}
	if op == OpSub {
		alphaF, alphaI = -alphaF, -alphaI
		hasAlpha = true
	}
	switch {
	case isFloatCompute(dt) && (!hasAlpha || alphaF == 1 || alphaF == -1 || (op != OpAdd && op != OpSub)):
		// the common cases in plain loops (no function value per element)
		out, err := zipBinaryFast(name, a, b, shape, n, float32Values, op, alphaF == -1)
		if err != nil {
			return nil, err
		}
		return fromFloat32(dt, shape, out), nil
	case dt == tensor.Int32 && int32Operand(a) && int32Operand(b):
		// int32 arithmetic wraps like the int64 result cast to int32
		out, err := zipBinaryFast(name, a, b, shape, n, int32Values, op, false, alphaI)
		if err != nil {
			return nil, err
		}
		return tensor.FromData(dt, shape, out)
	case dt.IsInteger() && !(dt == tensor.Bool):
		out, err := zipBinaryFast(name, a, b, shape, n, int64Values, op, false, alphaI)
		if err != nil {
			return nil, err
		}
		return fromInt64(dt, shape, out)
	case isFloatCompute(dt):
		alpha32 := float32(alphaF)
		out, err := zipOperands(name, a, b, shape, n, float32Values, func(x, y float32) float32 {
			switch op {
			case OpAdd, OpSub:
				if !hasAlpha || alphaF == 1 {
					return x + y
				}
				if alphaF == -1 {
					return x - y
				}
				return float32(math.FMA(float64(y), float64(alpha32), float64(x)))
			case OpMul:
				return x * y
			case OpDiv:
				return x / y
			case OpMaximum:
				if x != x || y != y {
					return float32(math.NaN())
				}
				return max(x, y)
			default:
				if x != x || y != y {
					return float32(math.NaN())
				}
				return min(x, y)
			}
		})
		if err != nil {
			return nil, err
		}
		return fromFloat32(dt, shape, out), nil
	case dt == tensor.Float64:
		out, err := zipOperands(name, a, b, shape, n, float64Values, func(x, y float64) float64 {
			switch op {
			case OpAdd, OpSub:
				if alphaF == 1 {
					return x + y
				} else if alphaF == -1 {
					return x - y
				}
				return math.FMA(y, alphaF, x)
			case OpMul:
				return x * y
			case OpDiv:
				return x / y
			case OpMaximum:
				return math.Max(x, y)
			case OpMinimum:
				return math.Min(x, y)
			}
			return 0
		})
		if err != nil {
			return nil, err
		}
		return tensor.FromData(dt, shape, out)
	case dt.IsInteger() || dt == tensor.Bool:
		out, err := zipOperands(name, a, b, shape, n, int64Values, func(x, y int64) int64 {
			switch op {
			case OpAdd, OpSub:
				return x + alphaI*y
			case OpMul:
				return x * y
			case OpMaximum:
				return max(x, y)
			case OpMinimum:
				return min(x, y)
			}
			return 0
		})
		if err != nil {
			return nil, err
		}
		if dt == tensor.Bool && (op == OpAdd || op == OpMul) {
			for i := range out {
				if out[i] != 0 {
					out[i] = 1
				}
			}
		}
		return fromInt64(dt, shape, out)
	}
	return nil, fmt.Errorf("%s: %w: result dtype %s", name, ErrUnsupportedDType, dt)
}

// zipBinaryFast is zipOperands with op's arithmetic written out per
// loop: for float32, x + y (x - y when sub), x * y, x / y and the
// NaN-propagating maximum/minimum of Binary's closure; for int64,
// x + alpha*y (alpha[0], the signed alpha), x * y, max and min. An
// operand that broadcasts as a scalar is read at index 0 through a zero
// mask.
func zipBinaryFast[T float32 | int64 | int32](name string, a, b Operand, shape []int, n int,
	values func(string, Operand, []int) ([]T, bool, error), op BinaryOp, sub bool, alpha ...int64) ([]T, error) {
	av, as, err := values("self", a, shape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	bv, bs, err := values("other", b, shape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]T, n)
	am, bm := -1, -1
	if as {
		am = 0
	}
	if bs {
		bm = 0
	}
	if n > 0 {
		_, _ = av[(n-1)&am], bv[(n-1)&bm]
	}
	var nan T // the float32 NaN Binary's closure returns
	_, isFloat := any(nan).(float32)
	if isFloat {
		nan = any(float32(math.NaN())).(T)
	}
	switch op {
	case OpAdd, OpSub:
		switch {
		case isFloat && sub:
			for i := range out {
				out[i] = av[i&am] - bv[i&bm]
			}
		case isFloat || alpha[0] == 1:
			for i := range out {
				out[i] = av[i&am] + bv[i&bm]
			}
		default:
			k := T(alpha[0])
			for i := range out {
				out[i] = av[i&am] + k*bv[i&bm]
			}
		}
	case OpMul:
		for i := range out {
			out[i] = av[i&am] * bv[i&bm]
		}
	case OpDiv:
		for i := range out {
			out[i] = av[i&am] / bv[i&bm]
		}
	case OpMaximum:
		for i := range out {
			x, y := av[i&am], bv[i&bm]
			if x != x || y != y {
				out[i] = nan
				continue
			}
			out[i] = max(x, y)
		}
	default: // OpMinimum
		for i := range out {
			x, y := av[i&am], bv[i&bm]
			if x != x || y != y {
				out[i] = nan
				continue
			}
			out[i] = min(x, y)
		}
	}
	return out, nil
}

// zipOperands reads a (as "self") and b (as "other") with values, each
// either every element of the broadcast shape or one scalar that
// broadcasts, and returns f of each pair of the n elements; a read error
// is prefixed with the op's name.
func zipOperands[T any](name string, a, b Operand, shape []int, n int,
	values func(string, Operand, []int) ([]T, bool, error), f func(x, y T) T) ([]T, error) {
	av, as, err := values("self", a, shape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	bv, bs, err := values("other", b, shape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]T, n)
	for i := range out {
		x, y := av[0], bv[0]
		if !as {
			x = av[i]
		}
		if !bs {
			y = bv[i]
		}
		out[i] = f(x, y)
	}
	return out, nil
}

// Unary applies f to every element of a float32, float16 or bfloat16
// tensor, computing in float32 and rounding back to x's dtype.
func Unary(name string, x *tensor.Tensor, f func(float32) float32) (*tensor.Tensor, error) {
	d, err := floatArg("self", x)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]float32, len(d))
	for i, v := range d {
		out[i] = f(v)
	}
	return fromFloat32(x.DType(), x.Shape(), out), nil
}

// Relu returns max(x, 0) elementwise. NaN stays NaN and -0 stays -0, as
// PyTorch's clamp_min(x, 0) kernel gives.
func Relu(x *tensor.Tensor) (*tensor.Tensor, error) {
	d, err := floatArg("self", x)
	if err != nil {
		return nil, fmt.Errorf("relu: %w", err)
	}
	// A plain loop, not Unary's function call per element: relu follows
	// every convolution of a CNN.
	out := make([]float32, len(d))
	for i, v := range d {
		if v < 0 {
			v = 0
		}
		out[i] = v
	}
	return fromFloat32(x.DType(), x.Shape(), out), nil
}

// Hardtanh clamps x to [minVal, maxVal]; NaN stays NaN.
func Hardtanh(x *tensor.Tensor, minVal, maxVal float64) (*tensor.Tensor, error) {
	if minVal > maxVal {
		return nil, argErrf("hardtanh: min_val %v > max_val %v", minVal, maxVal)
	}
	lo, hi := float32(minVal), float32(maxVal)
	return Unary("hardtanh", x, func(v float32) float32 {
		if v < lo {
			return lo
		}
		if v > hi {
			return hi
		}
		return v
	})
}
