package ops

import (
	"fmt"
	"reflect"
)

// Normalize binds positional args and keyword args to the schema's
// arguments and returns one value per schema argument, in schema order,
// with defaults filled in; for a schema with "..." the positional arguments
// past the declared ones follow, in order. Errors name the argument: too many positional
// arguments, a kwarg-only argument passed positionally, an unknown or
// repeated keyword, or a missing required argument.
func (s *Schema) Normalize(args []Value, kwargs []Kwarg) ([]Value, error) {
	out := make([]Value, len(s.Args))
	set := make([]bool, len(s.Args))
	pos := 0
	var extra []Value
	for i, a := range args {
		if pos < len(s.Args) && s.Args[pos].KwargOnly {
			return nil, fmt.Errorf("%s: positional argument %d given but %q is keyword-only", s.qualifiedName(), i, s.Args[pos].Name)
		}
		if pos >= len(s.Args) {
			if s.VarArgs {
				extra = args[i:]
				break
			}
			return nil, fmt.Errorf("%s: takes %d positional arguments, got %d", s.qualifiedName(), s.NumPositional(), len(args))
		}
		out[pos], set[pos] = a, true
		pos++
	}
	for _, kw := range kwargs {
		i := s.ArgIndex(kw.Name)
		if i < 0 {
			return nil, fmt.Errorf("%s: unknown keyword argument %q", s.qualifiedName(), kw.Name)
		}
		if set[i] {
			return nil, fmt.Errorf("%s: argument %q given twice", s.qualifiedName(), kw.Name)
		}
		out[i], set[i] = kw.Value, true
	}
	for i, a := range s.Args {
		if set[i] {
			continue
		}
		if !a.HasDefault {
			return nil, fmt.Errorf("%s: missing required argument %q", s.qualifiedName(), a.Name)
		}
		out[i] = a.Default
	}
	// A "..." schema passes the remaining positional arguments through
	// after the declared ones (higher_order.out_dtype's wrapped-op args).
	return append(out, extra...), nil
}

// Split turns a full argument list (one value per schema argument) into the
// canonical call form: positional values for arguments that are not
// kwarg-only, keyword values for kwarg-only ones, and trailing arguments
// equal to their defaults left out (a kwarg-only argument equal to its
// default is left out too).
func (s *Schema) Split(full []Value) (args []Value, kwargs []Kwarg) {
	lastPos := -1
	for i, a := range s.Args {
		if i >= len(full) || a.KwargOnly {
			continue
		}
		if !a.HasDefault || !LiteralEqual(full[i], a.Default) {
			lastPos = i
		}
	}
	for i := 0; i <= lastPos; i++ {
		args = append(args, full[i])
	}
	if s.VarArgs && len(full) > len(s.Args) {
		for i := len(args); i < len(s.Args); i++ {
			if !s.Args[i].KwargOnly {
				args = append(args, full[i])
			}
		}
		args = append(args, full[len(s.Args):]...)
	}
	for i, a := range s.Args {
		if i >= len(full) || !a.KwargOnly {
			continue
		}
		if a.HasDefault && LiteralEqual(full[i], a.Default) {
			continue
		}
		kwargs = append(kwargs, Kwarg{Name: a.Name, Value: full[i]})
	}
	return args, kwargs
}

func (s *Schema) qualifiedName() string {
	if s.Overload == "" || s.Overload == "default" {
		return s.Name
	}
	return s.Name + "." + s.Overload
}

// LiteralEqual reports whether two argument values are equal as Python
// would compare them after normalisation, with one exception that FX's
// matcher also makes: values of different kinds (1 vs 1.0, a list vs a
// tuple of the same elements is equal, as FX treats them) are compared
// strictly by kind except List/Tuple. Operator values are equal iff they
// name the same target: an [Overload] equals only the same overload, and a
// [Packet] never equals an overload (FX compares OpOverload and
// OpOverloadPacket objects by identity). References (nodes, tensors)
// compare by identity.
func LiteralEqual(a, b Value) bool {
	switch x := a.(type) {
	case List:
		return seqEqual(x, b)
	case Tuple:
		return seqEqual(x, b)
	case Dict:
		y, ok := b.(Dict)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for i := range x.Keys {
			if x.Keys[i] != y.Keys[i] || !LiteralEqual(x.Values[i], y.Values[i]) {
				return false
			}
		}
		return true
	case Slice:
		y, ok := b.(Slice)
		return ok && LiteralEqual(x.Start, y.Start) && LiteralEqual(x.Stop, y.Stop) && LiteralEqual(x.Step, y.Step)
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (x != x && y != y))
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb || !ta.Comparable() {
		return false
	}
	return a == b
}

func seqEqual(x []Value, b Value) bool {
	y, ok := Sequence(b)
	if !ok {
		return false
	}
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !LiteralEqual(x[i], y[i]) {
			return false
		}
	}
	return true
}
