package ops

// This file declares the schema data model. The parser (ParseSchema) and the
// argument normaliser live in schema_parse.go and normalize.go.

// ArgType is the declared type of a schema argument or return, as in
// "Tensor?", "int[2]", "SymInt[]", "ScalarType?", "Tensor(a!)".
type ArgType struct {
	Base     string // "Tensor", "int", "float", "bool", "str", "ScalarType", "Scalar", "SymInt", "Layout", "Device", "MemoryFormat", "Generator", "Any", ...
	List     bool   // a list type such as "int[]" or "Tensor[]"
	ListLen  int    // fixed length of "int[2]"; 0 when unspecified
	Optional bool   // "T?" (for a list "T[]?" the list is optional; "T?[]" sets ElemOptional)
	// ElemOptional marks a list of optional elements, "Tensor?[]".
	ElemOptional bool
	Alias        string // alias set, "a" in "Tensor(a!)", "b|a" in "Tensor(b|a)"; empty if none
	Write        bool   // the alias annotation has "!": the op mutates this argument
	// AliasAfter is the alias set after "->" in "Tensor(a -> *)" (the
	// elements of a list result join the wildcard set); empty if none.
	AliasAfter string
	// AliasOnList marks an annotation written after the list brackets,
	// "Tensor[](a!)": it names the list itself, not its elements.
	AliasOnList bool
	// Elems are the type parameters of a container or tuple type: the key
	// and value of "Dict(str, Tensor)" (Base "Dict"), the element of
	// "Future(t)" (Base "Future"), the members of "(Tensor, int)" (Base
	// [TupleBase]). Nil for every other type.
	Elems []ArgType
}

// TupleBase is the Base of a tuple type such as "(Tensor, Tensor)".
const TupleBase = "Tuple"

// Argument is one schema argument or return value.
type Argument struct {
	Name       string  // the argument's name; empty for an unnamed return value
	Type       ArgType // the declared type
	HasDefault bool    // the schema gives a default (which may be None)
	// Default is the parsed default value as a literal Value: nil (None),
	// bool, int64, float64, string, tensor.DType, Layout, MemoryFormat,
	// Device, or a List of those. "int[2] padding=0" expands to List{0, 0}.
	Default   Value
	KwargOnly bool // declared after "*": passed by keyword only
}

// Schema is a parsed PyTorch operator schema, e.g.
// "quantize_per_tensor.tensor(Tensor input, Tensor scale, ...) -> Tensor".
type Schema struct {
	Name     string // operator name without namespace or overload: "quantize_per_tensor"
	Overload string // overload name; "default" when the schema has none
	Args     []Argument
	Returns  []Argument
	// VarArgs and VarRets mark "..." in the argument or return list.
	VarArgs, VarRets bool
	Text             string // the schema as written in the op row
}

// IsMutable reports whether any argument is written (has an alias with "!").
func (s *Schema) IsMutable() bool {
	for _, a := range s.Args {
		if a.Type.Write {
			return true
		}
	}
	return false
}

// ArgIndex returns the position of the argument named name, or -1.
func (s *Schema) ArgIndex(name string) int {
	for i, a := range s.Args {
		if a.Name == name {
			return i
		}
	}
	return -1
}

// NumPositional returns how many arguments may be passed positionally.
func (s *Schema) NumPositional() int {
	n := 0
	for _, a := range s.Args {
		if !a.KwargOnly {
			n++
		}
	}
	return n
}

// The argument normaliser (normalize.go) has these entry points:
//
//	func (s *Schema) Normalize(args []Value, kwargs []Kwarg) ([]Value, error)
//	    one value per schema argument in schema order, defaults filled;
//	    errors name the argument (too many positional args, unknown or
//	    duplicate keyword, missing required argument).
//	func (s *Schema) Split(full []Value) (args []Value, kwargs []Kwarg)
//	    the canonical call form torch.export writes: positional values for
//	    arguments that are not kwarg-only, keywords for kwarg-only ones,
//	    trailing arguments equal to their defaults left out.

// MutatedArgs returns the positions of the arguments the op writes: those
// whose alias annotation has "!" ("Tensor(a!) self", "Tensor(a!) out",
// "Tensor(a!)[] self").
func (s *Schema) MutatedArgs() []int {
	var out []int
	for i, a := range s.Args {
		if a.Type.Write {
			out = append(out, i)
		}
	}
	return out
}

// AliasedArg returns the position of the argument that return ret aliases
// (the first argument whose alias set equals the return's, as "Tensor(a!)
// self" for "-> Tensor(a!)"), or -1 when the return is a fresh value.
func (s *Schema) AliasedArg(ret int) int {
	if ret < 0 || ret >= len(s.Returns) {
		return -1
	}
	r := s.Returns[ret].Type
	if r.Alias == "" || r.Alias == "*" {
		return -1
	}
	for i, a := range s.Args {
		if a.Type.Alias == r.Alias {
			return i
		}
	}
	return -1
}

// InPlace reports whether the op writes its first argument and returns it,
// as aten's in-place forms do ("add_.Tensor(Tensor(a!) self, ...) ->
// Tensor(a!)"). An out= form writes its "out" argument instead and is not
// in place.
func (s *Schema) InPlace() bool {
	return len(s.Args) > 0 && s.Args[0].Type.Write && len(s.Returns) == 1 && s.Returns[0].Type.Write && s.AliasedArg(0) == 0
}

// Aliases reports whether the op is view-like: some return aliases an
// argument without writing it ("view(Tensor(a) self, ...) -> Tensor(a)",
// "split.Tensor(Tensor(a -> *) self, ...) -> Tensor(a)[]").
func (s *Schema) Aliases() bool {
	for i, r := range s.Returns {
		if !r.Type.Write && s.AliasedArg(i) >= 0 {
			return true
		}
	}
	return false
}
