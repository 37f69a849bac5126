package ops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// ErrNoOverload is wrapped by [Registry.Resolve] when no overload of a
// packet accepts the arguments, or the packet has none.
var ErrNoOverload = errors.New("no overload accepts the arguments")

// numbersAsTensors is torch::should_allow_numbers_as_tensors: the
// operator names whose Tensor arguments accept a Python number (a "wrapped
// number") when called from Python, through an overload or a packet.
var numbersAsTensors = map[string]bool{
	"add": true, "add_": true, "add_out": true,
	"div": true, "div_": true, "div_out": true,
	"divide": true, "divide_": true, "divide_out": true,
	"mul": true, "mul_": true, "mul_out": true,
	"multiply": true, "multiply_": true, "multiply_out": true,
	"sub": true, "sub_": true, "sub_out": true,
	"subtract": true, "subtract_": true, "subtract_out": true,
	"true_divide": true, "true_divide_": true, "true_divide_out": true,
	"floor_divide": true, "floor_divide_": true, "floor_divide_out": true,
	"to": true, "_to_copy": true, "copy_": true, "copy": true,
	"_conj": true,
}

// AllowsNumbersAsTensors reports whether a call of packet p (or of any of
// its overloads) accepts a Python number where the schema says Tensor, as
// PyTorch's opAllowsNumbersAsTensors does: every prims op, and the aten
// arithmetic ops add, sub, mul, div (with their aliases and in-place and
// out forms), true_divide, floor_divide and the copies to, _to_copy, copy.
// Such a number becomes a wrapped number: a 0-dim tensor that takes part in
// type promotion like a Python scalar (see [tensor.PromoteTypes]).
func AllowsNumbersAsTensors(p Packet) bool {
	switch p.NS {
	case "prims", "nvprims":
		return true
	case "aten":
		return numbersAsTensors[p.Name]
	}
	return false
}

// Resolve picks the overload of packet p that an eager call with these
// arguments dispatches to: the overloads are tried in the order
// [Registry.Overloads] gives (the hand-written rows in their order, which
// is eager resolution's, then the operator table's) and the first whose
// schema binds the arguments (see [Schema.Normalize]) and whose argument
// kinds fit wins. A tensor is any non-literal Value (a
// node, a run-time tensor or a static type, see [CheckLiteral]); a Python
// number fits int, float, Scalar and SymInt arguments as PyTorch's parser
// accepts them (an int fits a float, a float never fits an int; a bool is
// only a bool), and fits a Tensor argument (not a Tensor list) when the
// packet allows numbers as tensors ([AllowsNumbersAsTensors]): so
// aten.add(x, 1) picks add.Tensor, as torch.ops.aten.add does, while
// aten.clamp(x, -128, 127) picks clamp.default. The error lists why each
// overload was rejected.
func (r *Registry) Resolve(p Packet, args []Value, kwargs []Kwarg) (Overload, error) {
	ovs := r.overloads(p)
	if len(ovs) == 0 {
		return Overload{}, fmt.Errorf("ops: resolve %s: %w: the packet has no registered overloads", p, ErrNoOverload)
	}
	wrap := AllowsNumbersAsTensors(p)
	var why []string
	for _, o := range ovs {
		def, ok := r.Op(o)
		if !ok {
			why = append(why, fmt.Sprintf("%s: its schema does not parse", o.Name))
			continue
		}
		err := def.Schema.accepts(args, kwargs, wrap)
		if err == nil {
			return o, nil
		}
		why = append(why, fmt.Sprintf("%s: %v", o.Name, err))
	}
	return Overload{}, fmt.Errorf("ops: resolve %s: %w: %s", p, ErrNoOverload, strings.Join(why, "; "))
}

// Accepts reports whether a call with these arguments binds to s and every
// argument's kind fits its declared type; the error names the first
// argument that does not fit. A Python number fits a Tensor argument when
// the schema's operator is one that allows numbers as tensors (an aten
// name listed by [AllowsNumbersAsTensors]; a schema does not record its
// namespace, so the name decides).
func (s *Schema) Accepts(args []Value, kwargs []Kwarg) error {
	return s.accepts(args, kwargs, numbersAsTensors[s.Name])
}

func (s *Schema) accepts(args []Value, kwargs []Kwarg, wrap bool) error {
	full, err := s.Normalize(args, kwargs)
	if err != nil {
		return err
	}
	for i, a := range s.Args {
		if err := fits(a.Type, full[i], wrap); err != nil {
			return fmt.Errorf("argument %q (%s): %w", a.Name, a.Type, err)
		}
	}
	return nil
}

func isRef(v Value) bool { return v != nil && CheckLiteral(v, nil) != nil }

// IsWrappedNumber reports whether v is a Python number (bool, int64 or
// float64) standing for a tensor: PyTorch wraps such a number passed for a
// Tensor argument into a 0-dim tensor that promotes like a Python scalar.
func IsWrappedNumber(v Value) bool {
	switch v.(type) {
	case bool, int64, float64:
		return true
	}
	return false
}

// fits checks one argument value against its declared type; wrap lets a
// Python number stand for a (non-list) Tensor.
func fits(t ArgType, v Value, wrap bool) error {
	if v == nil {
		if t.Optional || t.Base == "Any" {
			return nil
		}
		return fmt.Errorf("None given for a non-optional argument")
	}
	if t.List {
		elems, ok := Sequence(v)
		if !ok {
			// PyTorch accepts a single int for int[N]/SymInt[N].
			if t.ListLen > 0 && (t.Base == "int" || t.Base == "SymInt") {
				return fitsScalar(t.Base, v)
			}
			return fmt.Errorf("want a list, got %s", describe(v))
		}
		// The N of "int[N]" only lets a bare int stand for the list; it
		// does not fix the list's length (PyTorch's parser accepts
		// aten.mean.dim(x, [2, 3]) for "int[1]? dim").
		for k, e := range elems {
			if e == nil && t.ElemOptional {
				continue
			}
			if err := fitsScalar(t.Base, e); err != nil {
				return fmt.Errorf("element %d: %w", k, err)
			}
		}
		return nil
	}
	if wrap && t.Base == "Tensor" && IsWrappedNumber(v) {
		return nil
	}
	return fitsScalar(t.Base, v)
}

// fitsScalar checks one non-list value against a base type.
func fitsScalar(base string, v Value) error {
	ref := isRef(v)
	want := func(ok bool) error {
		if ok {
			return nil
		}
		return fmt.Errorf("want %s, got %s", base, describe(v))
	}
	switch base {
	case "Tensor":
		return want(ref)
	case "Any":
		return nil
	case "SymInt":
		_, isInt := v.(int64)
		return want(isInt || ref) // a symbolic int is a node
	case "int":
		_, ok := v.(int64)
		return want(ok)
	case "float":
		switch v.(type) {
		case float64, int64:
			return nil
		}
		return want(false)
	case "Scalar":
		switch v.(type) {
		case float64, int64, bool, complex128:
			return nil
		}
		return want(false)
	case "bool":
		_, ok := v.(bool)
		return want(ok)
	case "str":
		_, ok := v.(string)
		return want(ok)
	case "ScalarType":
		_, ok := v.(tensor.DType)
		return want(ok)
	case "Layout":
		_, ok := v.(Layout)
		return want(ok)
	case "MemoryFormat":
		_, ok := v.(MemoryFormat)
		return want(ok)
	case "Device":
		_, ok := v.(Device)
		return want(ok)
	}
	// Types fxquant never passes literally (Generator, Dimname, ...): a
	// reference is accepted, a literal is not.
	return want(ref)
}
