package ops

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file holds the argument accessors and shape arithmetic shared by the
// result-type rules (typerules_*.go). A rule receives the normalised
// arguments of a call (one per schema argument, in schema order): a tensor
// argument as its [Type], every other argument as its literal [Value].

// ErrShape is wrapped by result-type rules when argument shapes do not fit
// the op.
var ErrShape = errors.New("shape mismatch")

// ErrArgType is wrapped by result-type rules when an argument is not of
// the kind or dtype the op accepts.
var ErrArgType = errors.New("bad argument")

// argErr builds the error of a rule for argument i ("argument 1 \"weight\"").
func argErr(i int, name string, format string, a ...any) error {
	return fmt.Errorf("argument %d %q: %w: %s", i, name, ErrArgType, fmt.Sprintf(format, a...))
}

func shapeErr(i int, name string, format string, a ...any) error {
	return fmt.Errorf("argument %d %q: %w: %s", i, name, ErrShape, fmt.Sprintf(format, a...))
}

func describe(v Value) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case Type:
		return x.String()
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

func get(args []Value, i int) Value {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// tensorArg returns argument i as a tensor type.
func tensorArg(args []Value, i int, name string) (TensorType, error) {
	t, ok := get(args, i).(TensorType)
	if !ok {
		return TensorType{}, argErr(i, name, "want a tensor, got %s", describe(get(args, i)))
	}
	if t.Elem == nil {
		return TensorType{}, argErr(i, name, "tensor %s has no element type", t)
	}
	return t, nil
}

// tensorArgs2 returns arguments 0 and 1 as tensor types, named n0 and n1:
// the leading operand pair of the binary tensor ops (mm, linear, conv...).
func tensorArgs2(args []Value, n0, n1 string) (TensorType, TensorType, error) {
	a, err := tensorArg(args, 0, n0)
	if err != nil {
		return a, TensorType{}, err
	}
	b, err := tensorArg(args, 1, n1)
	return a, b, err
}

// selfDimArgs reads the (self, dim) prefix shared by the single-dimension
// ops: the tensor self at 0 and the int dim at 1, wrapped into a rank of
// self's rank plus extra (1 where dim indexes the result, as unsqueeze's).
func selfDimArgs(args []Value, extra int) (TensorType, int, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return x, 0, err
	}
	d, err := intArg(args, 1, "dim")
	if err != nil {
		return x, 0, err
	}
	k, err := normDim(d, x.Rank()+extra, 1, "dim")
	return x, k, err
}

// selfIntsArgs returns the (self, int list) prologue shared by view and
// reduction rules: argument 0 as a tensor and argument 1 as the int list
// called name.
func selfIntsArgs(args []Value, name string) (TensorType, []int64, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return x, nil, err
	}
	ds, err := intsArg(args, 1, name)
	return x, ds, err
}

// selfIntPairArgs returns the (self, int, int) prologue of transpose and
// flatten: argument 0 as a tensor, arguments 1 and 2 as the ints called
// name1 and name2. The ints are not normalised as dimensions.
func selfIntPairArgs(args []Value, name1, name2 string) (TensorType, int64, int64, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return x, 0, 0, err
	}
	a, err := intArg(args, 1, name1)
	if err != nil {
		return x, 0, 0, err
	}
	b, err := intArg(args, 2, name2)
	return x, a, b, err
}

// optTensorArg returns argument i as a tensor type, or ok=false for None.
func optTensorArg(args []Value, i int, name string) (TensorType, bool, error) {
	if get(args, i) == nil {
		return TensorType{}, false, nil
	}
	t, err := tensorArg(args, i, name)
	return t, err == nil, err
}

// intArg returns argument i as an int.
func intArg(args []Value, i int, name string) (int64, error) {
	switch x := get(args, i).(type) {
	case int64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, argErr(i, name, "want an int, got %s", describe(get(args, i)))
}

// symIntArg returns argument i as an int, or DynamicDim when it is a
// symbolic value (a reference such as a SymInt node's type).
func symIntArg(args []Value, i int, name string) (int64, error) {
	v := get(args, i)
	if x, ok := v.(int64); ok {
		return x, nil
	}
	if CheckLiteral(v, nil) != nil {
		return DynamicDim, nil
	}
	return 0, argErr(i, name, "want a SymInt, got %s", describe(v))
}

// optIntArg returns argument i as an int, or ok=false for None.
func optIntArg(args []Value, i int, name string) (int64, bool, error) {
	if get(args, i) == nil {
		return 0, false, nil
	}
	v, err := symIntArg(args, i, name)
	return v, err == nil, err
}

// boolArg returns argument i as a bool.
func boolArg(args []Value, i int, name string) (bool, error) {
	if b, ok := get(args, i).(bool); ok {
		return b, nil
	}
	return false, argErr(i, name, "want a bool, got %s", describe(get(args, i)))
}

// intsArg returns argument i as a list of ints; symbolic elements become
// DynamicDim. A single int is accepted for a list, as PyTorch does.
func intsArg(args []Value, i int, name string) ([]int64, error) {
	var elems []Value
	switch x := get(args, i).(type) {
	case List:
		elems = x
	case Tuple:
		elems = x
	case int64:
		return []int64{x}, nil
	default:
		return nil, argErr(i, name, "want a list of ints, got %s", describe(x))
	}
	out := make([]int64, len(elems))
	for k, e := range elems {
		switch y := e.(type) {
		case int64:
			out[k] = y
		default:
			if CheckLiteral(y, nil) == nil {
				return nil, argErr(i, name, "element %d: want an int, got %s", k, describe(y))
			}
			out[k] = DynamicDim
		}
	}
	return out, nil
}

// optIntsArg returns argument i as a list of ints, or ok=false for None.
func optIntsArg(args []Value, i int, name string) ([]int64, bool, error) {
	if get(args, i) == nil {
		return nil, false, nil
	}
	v, err := intsArg(args, i, name)
	return v, err == nil, err
}

// dtypeArg returns argument i as a dtype.
func dtypeArg(args []Value, i int, name string) (tensor.DType, error) {
	if d, ok := get(args, i).(tensor.DType); ok && d.Valid() {
		return d, nil
	}
	return tensor.Unknown, argErr(i, name, "want a ScalarType, got %s", describe(get(args, i)))
}

// optDTypeArg returns argument i as a dtype, or def for None.
func optDTypeArg(args []Value, i int, name string, def tensor.DType) (tensor.DType, error) {
	if get(args, i) == nil {
		return def, nil
	}
	return dtypeArg(args, i, name)
}

// stringArg returns argument i as a string.
func stringArg(args []Value, i int, name string) (string, error) {
	if s, ok := get(args, i).(string); ok {
		return s, nil
	}
	return "", argErr(i, name, "want a str, got %s", describe(get(args, i)))
}

// normDim wraps a possibly negative dimension into [0, rank).
func normDim(d int64, rank int, i int, name string) (int, error) {
	r := int64(rank)
	if r == 0 {
		r = 1 // PyTorch accepts dim 0 and -1 on 0-dim tensors
	}
	if d < -r || d >= r {
		return 0, argErr(i, name, "dimension %d out of range for rank %d", d, rank)
	}
	if d < 0 {
		d += r
	}
	return int(d), nil
}

// mulDims multiplies sizes, giving DynamicDim if any is dynamic.
func mulDims(ds ...int64) int64 {
	n := int64(1)
	for _, d := range ds {
		if d < 0 {
			return DynamicDim
		}
		n *= d
	}
	return n
}

// broadcastShapes applies NumPy broadcasting to two shapes.
func broadcastShapes(a, b []int64) ([]int64, bool) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for k := 0; k < n; k++ {
		x, y := int64(1), int64(1)
		if i := len(a) - n + k; i >= 0 {
			x = a[i]
		}
		if i := len(b) - n + k; i >= 0 {
			y = b[i]
		}
		switch {
		case x == y:
			out[k] = x
		case x == 1:
			out[k] = y
		case y == 1:
			out[k] = x
		case x < 0 || y < 0:
			out[k] = max(x, y) // a dynamic dim against a static one: assume it fits
		default:
			return nil, false
		}
	}
	return out, true
}

// plainOf returns a tensor type with a plain element type: a compute
// result, whose element type the rule computes rather than inherits.
func plainOf(d tensor.DType, shape []int64) TensorType {
	return TensorType{Shape: slices.Clone(shape), Elem: Scalar{d}}
}

// resultType follows at::native::result_type for the operands of an
// elementwise op: tensors with dimensions, 0-dim tensors and Python
// scalars (int64 → int64, float64 → the default float32, bool → bool) each
// form a tier, and a lower tier only matters when its category is higher.
func resultType(operands ...Value) (tensor.DType, error) {
	var dim, zero, wrapped tensor.DType
	upd := func(cur *tensor.DType, d tensor.DType) error {
		p, err := tensor.PromoteTypes(*cur, d)
		*cur = p
		return err
	}
	for _, v := range operands {
		var err error
		switch x := v.(type) {
		case nil:
			continue
		case TensorType:
			if x.Rank() == 0 {
				err = upd(&zero, x.DType())
			} else {
				err = upd(&dim, x.DType())
			}
		case int64:
			err = upd(&wrapped, tensor.Int64)
		case float64:
			err = upd(&wrapped, tensor.Float32)
		case bool:
			err = upd(&wrapped, tensor.Bool)
		case complex128:
			err = upd(&wrapped, tensor.Complex64)
		default:
			return tensor.Unknown, fmt.Errorf("%w: operand %s is neither a tensor nor a number", ErrArgType, describe(v))
		}
		if err != nil {
			return tensor.Unknown, err
		}
	}
	inner, err := combineCategories(zero, wrapped)
	if err != nil {
		return tensor.Unknown, err
	}
	return combineCategories(dim, inner)
}

func combineCategories(higher, lower tensor.DType) (tensor.DType, error) {
	if higher == tensor.Unknown {
		return lower, nil
	}
	if lower == tensor.Unknown {
		return higher, nil
	}
	if higher.IsComplex() {
		return higher, nil
	}
	if lower.IsComplex() {
		if higher.IsFloat() {
			return tensor.PromoteTypes(lower, higher)
		}
		return lower, nil
	}
	if higher.IsFloat() {
		return higher, nil
	}
	if higher == tensor.Bool || lower.IsFloat() {
		return tensor.PromoteTypes(higher, lower)
	}
	return higher, nil
}

// tupleOf builds the TupleType of a multi-result op.
func tupleOf(ts ...TensorType) TupleType {
	out := TupleType{Elems: make([]Type, len(ts))}
	for i, t := range ts {
		out.Elems[i] = t
	}
	return out
}
