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

// Resolve picks the overload of packet p that an eager call with these
// arguments dispatches to: the overloads are tried in registration order
// and the first whose schema binds the arguments (see [Schema.Normalize])
// and whose argument kinds fit wins. A tensor is any non-literal Value (a
// node, a run-time tensor or a static type, see [CheckLiteral]); a Python
// number fits int, float, Scalar and SymInt arguments as PyTorch's parser
// accepts them (an int fits a float, a float never fits an int; a bool is
// only a bool). The error lists why each overload was rejected.
func (r *Registry) Resolve(p Packet, args []Value, kwargs []Kwarg) (Overload, error) {
	ovs := r.packets[p]
	if len(ovs) == 0 {
		return Overload{}, fmt.Errorf("ops: resolve %s: %w: the packet has no registered overloads", p, ErrNoOverload)
	}
	var why []string
	for _, o := range ovs {
		s := r.defs[o].Schema
		err := s.Accepts(args, kwargs)
		if err == nil {
			return o, nil
		}
		why = append(why, fmt.Sprintf("%s: %v", o.Name, err))
	}
	return Overload{}, fmt.Errorf("ops: resolve %s: %w: %s", p, ErrNoOverload, strings.Join(why, "; "))
}

// Accepts reports whether a call with these arguments binds to s and every
// argument's kind fits its declared type; the error names the first
// argument that does not fit.
func (s *Schema) Accepts(args []Value, kwargs []Kwarg) error {
	full, err := s.Normalize(args, kwargs)
	if err != nil {
		return err
	}
	for i, a := range s.Args {
		if err := fits(a.Type, full[i]); err != nil {
			return fmt.Errorf("argument %q (%s): %w", a.Name, a.Type, err)
		}
	}
	return nil
}

func isRef(v Value) bool { return v != nil && CheckLiteral(v, nil) != nil }

// fits checks one argument value against its declared type.
func fits(t ArgType, v Value) error {
	if v == nil {
		if t.Optional || t.Base == "Any" {
			return nil
		}
		return fmt.Errorf("None given for a non-optional argument")
	}
	if t.List {
		var elems []Value
		switch x := v.(type) {
		case List:
			elems = x
		case Tuple:
			elems = x
		default:
			// PyTorch accepts a single int for int[N]/SymInt[N].
			if t.ListLen > 0 && (t.Base == "int" || t.Base == "SymInt") {
				return fitsScalar(t.Base, v)
			}
			return fmt.Errorf("want a list, got %s", describe(v))
		}
		if t.ListLen > 0 && len(elems) != t.ListLen && len(elems) != 1 {
			return fmt.Errorf("want %d elements, got %d", t.ListLen, len(elems))
		}
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
