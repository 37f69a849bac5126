package ops

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// SchemaError reports a schema that does not parse: the schema text, the
// byte offset of the problem and what was expected there.
type SchemaError struct {
	Text string // the schema as given
	Pos  int    // byte offset into Text
	Msg  string // what was expected and what was found
}

// Error returns "ops: schema <text>: at offset N: <expectation>".
func (e *SchemaError) Error() string {
	return fmt.Sprintf("ops: schema %q: at offset %d: %s", e.Text, e.Pos, e.Msg)
}

// ParseSchema parses an unqualified PyTorch operator schema
// "op.overload(args) -> returns", as written in native_functions.yaml and
// torch.library definitions. It understands the full argument grammar:
//
//   - types Tensor, int, float, bool, str, ScalarType, Scalar, SymInt,
//     Layout, Device, MemoryFormat, Generator, Any, Dimname, ... with the
//     suffixes "?" (optional), "[]" and "[N]" (lists), in any combination
//     such as "Tensor?[]" or "int[1]?";
//   - alias annotations "Tensor(a)", "Tensor(a!)", "Tensor(a -> *)";
//   - defaults None, True, False, integers, floats (inf, nan), strings in
//     either quote, lists, dtype names (float32, long, ...), layouts
//     (strided), memory formats (contiguous_format, ...) and the reductions
//     Mean/Sum/None; a scalar default of a fixed-length list type is
//     expanded ("int[2] padding=0" gives List{0, 0}); an integer default of
//     a float argument becomes a float64;
//   - "*" (later arguments are keyword-only) and "..." (variadic);
//   - returns "Tensor", "()", "(Tensor, Tensor)", named returns
//     "(Tensor(a) primal, Tensor tangent)", "Tensor[]" and "...".
//
// An empty overload name becomes "default". Errors are *SchemaError values
// naming the offset and the expectation.
func ParseSchema(text string) (*Schema, error) {
	p := &schemaParser{textCursor{src: text}}
	s, err := p.schema()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ParseQualifiedSchema parses "ns::op.overload(args) -> returns" and
// returns the namespace and the schema. See [ParseSchema] for the grammar.
func ParseQualifiedSchema(text string) (string, *Schema, error) {
	p := &schemaParser{textCursor{src: text}}
	p.space()
	start := p.pos
	ns := p.ident()
	if ns == "" || !strings.HasPrefix(p.src[p.pos:], "::") {
		return "", nil, p.errAt(start, "want namespace \"ns::\"")
	}
	p.pos += 2
	s, err := p.schema()
	if err != nil {
		return "", nil, err
	}
	return ns, s, nil
}

type schemaParser struct{ textCursor }

func (p *schemaParser) errAt(pos int, format string, args ...any) error {
	return &SchemaError{Text: p.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *schemaParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n') {
		p.pos++
	}
}

func (p *schemaParser) peek(s string) bool {
	p.space()
	return strings.HasPrefix(p.src[p.pos:], s)
}

func (p *schemaParser) accept(s string) bool {
	if p.peek(s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *schemaParser) expect(s string) error {
	if !p.accept(s) {
		return p.errAt(p.pos, "want %q, found %s", s, p.found())
	}
	return nil
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

// ident reads an identifier; it returns "" (and consumes nothing) if none.
func (p *schemaParser) ident() string {
	p.space()
	start := p.pos
	for p.pos < len(p.src) && isIdentByte(p.src[p.pos], p.pos == start) {
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *schemaParser) schema() (*Schema, error) {
	p.space()
	start := p.pos
	name := p.ident()
	if name == "" {
		return nil, p.errAt(start, "want operator name, found %s", p.found())
	}
	s := &Schema{Name: name, Overload: "default", Text: p.src}
	if p.src[p.pos:] != "" && p.src[p.pos] == '.' {
		p.pos++
		at := p.pos
		ov := p.ident()
		if ov == "" {
			return nil, p.errAt(at, "want overload name after \".\", found %s", p.found())
		}
		s.Overload = ov
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	kwOnly := false
	if !p.accept(")") {
		for {
			switch {
			case p.accept("..."):
				s.VarArgs = true
			case p.peek("*") && !p.peek("**"):
				at := p.pos
				p.pos++
				if kwOnly {
					return nil, p.errAt(at, "second \"*\" marker")
				}
				kwOnly = true
			default:
				if s.VarArgs {
					return nil, p.errAt(p.pos, "argument after \"...\"")
				}
				a, err := p.argument(true)
				if err != nil {
					return nil, err
				}
				a.KwargOnly = kwOnly
				for _, b := range s.Args {
					if b.Name == a.Name {
						return nil, p.errAt(p.pos, "duplicate argument name %q", a.Name)
					}
				}
				s.Args = append(s.Args, a)
			}
			if p.accept(")") {
				break
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
	}
	if err := p.expect("->"); err != nil {
		return nil, err
	}
	if err := p.returns(s); err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, p.errAt(p.pos, "want end of schema, found %s", p.found())
	}
	return s, nil
}

func (p *schemaParser) returns(s *Schema) error {
	if p.accept("...") {
		s.VarRets = true
		return nil
	}
	if !p.accept("(") {
		a, err := p.argument(false)
		if err != nil {
			return err
		}
		s.Returns = []Argument{a}
		return nil
	}
	s.Returns = []Argument{}
	if p.accept(")") {
		return nil
	}
	for {
		if p.accept("...") {
			s.VarRets = true
		} else {
			a, err := p.argument(false)
			if err != nil {
				return err
			}
			s.Returns = append(s.Returns, a)
		}
		if p.accept(")") {
			return nil
		}
		if err := p.expect(","); err != nil {
			return err
		}
	}
}

// argument parses "Type[annotations] [name] [= default]". Arguments must be
// named; returns may be unnamed and take no default.
func (p *schemaParser) argument(isArg bool) (Argument, error) {
	var a Argument
	t, err := p.argType()
	if err != nil {
		return a, err
	}
	a.Type = t
	p.space()
	at := p.pos
	a.Name = p.ident()
	if a.Name == "" && isArg {
		return a, p.errAt(at, "want argument name after type %s, found %s", t, p.found())
	}
	if isArg && p.accept("=") {
		v, err := p.defaultValue(t)
		if err != nil {
			return a, err
		}
		a.HasDefault, a.Default = true, v
	}
	return a, nil
}

// containerTypes are the TorchScript type constructors whose parentheses
// hold type parameters, not an alias annotation.
var containerTypes = map[string]bool{"Dict": true, "Future": true, "Await": true, "RRef": true, "Union": true, "Optional": true, "List": true}

// typeName reads a type name: an identifier, or a dotted class name such
// as "__torch__.torch.classes.rnn.CellParamsBase".
func (p *schemaParser) typeName() string {
	p.space()
	start := p.pos
	for {
		if p.ident() == "" {
			break
		}
		if !p.peekNoSpace(".") || p.pos+1 >= len(p.src) || !isIdentByte(p.src[p.pos+1], true) {
			break
		}
		p.pos++
	}
	return p.src[start:p.pos]
}

// typeParams parses "(T1, T2, ...)" at the cursor: the members of a tuple
// type or the parameters of a container type.
func (p *schemaParser) typeParams() ([]ArgType, error) {
	p.pos++ // "("
	var elems []ArgType
	if p.accept(")") {
		return []ArgType{}, nil
	}
	for {
		e, err := p.argType()
		if err != nil {
			return nil, err
		}
		elems = append(elems, e)
		if p.accept(")") {
			return elems, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

func (p *schemaParser) argType() (ArgType, error) {
	var t ArgType
	p.space()
	at := p.pos
	if p.peekNoSpace("(") {
		elems, err := p.typeParams()
		if err != nil {
			return t, err
		}
		t.Base, t.Elems = TupleBase, elems
	} else {
		t.Base = p.typeName()
		if t.Base == "" {
			return t, p.errAt(at, "want a type, found %s", p.found())
		}
		if containerTypes[t.Base] && p.peekNoSpace("(") {
			elems, err := p.typeParams()
			if err != nil {
				return t, err
			}
			t.Elems = elems
		}
	}
	if p.peekNoSpace("(") {
		if err := p.alias(&t); err != nil {
			return t, err
		}
	}
	for {
		switch {
		case p.peekNoSpace("?"):
			p.pos++
			t.Optional = true
		case p.peekNoSpace("["):
			if t.List {
				return t, p.errAt(p.pos, "nested list types are not supported")
			}
			p.pos++
			if t.Optional {
				t.Optional, t.ElemOptional = false, true
			}
			t.List = true
			start := p.pos
			for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
				p.pos++
			}
			if p.pos > start {
				n, err := strconv.Atoi(p.src[start:p.pos])
				if err != nil || n <= 0 {
					return t, p.errAt(start, "want a positive list length")
				}
				t.ListLen = n
			}
			if !p.peekNoSpace("]") {
				return t, p.errAt(p.pos, "want \"]\" closing the list type, found %s", p.found())
			}
			p.pos++
		case p.peekNoSpace("(") && t.List:
			// "Tensor[](a!)": the annotation names the list itself.
			if t.Alias != "" {
				return t, p.errAt(p.pos, "second alias annotation")
			}
			if err := p.alias(&t); err != nil {
				return t, err
			}
			t.AliasOnList = true
		default:
			return t, nil
		}
	}
}

func (p *schemaParser) peekNoSpace(s string) bool { return strings.HasPrefix(p.src[p.pos:], s) }

// alias parses "(a)", "(a!)", "(a -> *)", "(b|a)", "(a! -> a|*)" after a
// type.
func (p *schemaParser) alias(t *ArgType) error {
	open := p.pos
	p.pos++ // "("
	end := strings.IndexByte(p.src[p.pos:], ')')
	if end < 0 {
		return p.errAt(open, "unterminated alias annotation")
	}
	body := strings.TrimSpace(p.src[p.pos : p.pos+end])
	p.pos += end + 1
	before, after, arrow := strings.Cut(body, "->")
	before = strings.TrimSpace(before)
	if strings.HasSuffix(before, "!") {
		t.Write = true
		before = strings.TrimSpace(strings.TrimSuffix(before, "!"))
	}
	valid := func(sets string) bool {
		for _, part := range strings.Split(sets, "|") {
			if part = strings.TrimSpace(part); !IsIdentifier(part) && part != "*" {
				return false
			}
		}
		return true
	}
	if !valid(before) {
		return p.errAt(open, "want an alias set such as \"a\" or \"a!\", found %q", body)
	}
	if arrow {
		after = strings.TrimSpace(after)
		if !valid(after) {
			return p.errAt(open, "want an alias set after \"->\", found %q", body)
		}
		t.AliasAfter = after
	}
	t.Alias = before
	return nil
}

// defaultValue parses a default literal for an argument of type t.
func (p *schemaParser) defaultValue(t ArgType) (Value, error) {
	p.space()
	at := p.pos
	v, err := p.literal(t)
	if err != nil {
		return nil, err
	}
	if t.List && v != nil {
		if l, ok := v.(List); ok {
			for i, e := range l {
				l[i] = coerceDefault(t.Base, e)
			}
			return l, nil
		}
		// A scalar default of a list type: "int[2] padding=0" gives [0, 0].
		if t.ListLen == 0 {
			return nil, p.errAt(at, "scalar default %v for list type %s without a fixed length", v, t)
		}
		l := make(List, t.ListLen)
		for i := range l {
			l[i] = coerceDefault(t.Base, v)
		}
		return l, nil
	}
	if t.Optional && t.Base == "float" {
		// TorchScript keeps "float? correction=1" an int.
		return v, nil
	}
	return coerceDefault(t.Base, v), nil
}

// coerceDefault turns an integer default of a float argument into a float,
// as the TorchScript schema parser does, and a numeric default of an enum
// argument (ScalarType, MemoryFormat, Layout: "ScalarType dtype=6") into
// the enum value it numbers.
func coerceDefault(base string, v Value) Value {
	i, ok := v.(int64)
	if !ok {
		return v
	}
	switch base {
	case "float":
		return float64(i)
	case "ScalarType":
		if d, ok := c10ScalarTypes[i]; ok {
			return d
		}
	case "MemoryFormat":
		if m, ok := c10MemoryFormats[i]; ok {
			return m
		}
	case "Layout":
		if l, ok := c10Layouts[i]; ok {
			return l
		}
	}
	return v
}

// Named defaults that are not numbers.
var namedDefaults = map[string]Value{
	"None": nil, "True": true, "False": false,
	"inf": math.Inf(1), "nan": math.NaN(),
	"contiguous_format": ContiguousFormat, "preserve_format": PreserveFormat,
	"channels_last": ChannelsLast, "channels_last_3d": ChannelsLast3d,
	"strided": LayoutStrided, "sparse_coo": LayoutSparseCoo,
	// at::Reduction values.
	"Mean": int64(1), "Sum": int64(2),
}

func (p *schemaParser) literal(t ArgType) (Value, error) {
	p.space()
	at := p.pos
	if p.pos >= len(p.src) {
		return nil, p.errAt(at, "want a default value, found end of text")
	}
	c := p.src[p.pos]
	switch {
	case c == '[' || c == '(':
		closer := byte(']')
		if c == '(' {
			closer = ')'
		}
		p.pos++
		l := List{}
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == closer {
			p.pos++
			return l, nil
		}
		elem := t
		elem.List, elem.ListLen = false, 0
		for {
			v, err := p.literal(elem)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			p.space()
			if p.pos < len(p.src) && p.src[p.pos] == closer {
				p.pos++
				return l, nil
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
	case c == '\'' || c == '"':
		return p.stringLit()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	case isIdentByte(c, true):
		name := p.ident()
		if v, ok := namedDefaults[name]; ok {
			return v, nil
		}
		if d, err := tensor.ParseDType(name); err == nil {
			return d, nil
		}
		return nil, p.errAt(at, "unknown default value %q", name)
	}
	return nil, p.errAt(at, "want a default value, found %s", p.found())
}

func (p *schemaParser) stringLit() (Value, error) {
	at := p.pos
	q := p.src[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c == '\\' && p.pos+1 < len(p.src):
			p.pos++
			switch e := p.src[p.pos]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'r':
				b.WriteByte('\r')
			case '0', '1', '2', '3', '4', '5', '6', '7':
				// An octal escape of up to three digits, as printed for
				// unprintable bytes.
				v := 0
				for k := 0; k < 3 && p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '7'; k++ {
					v = v*8 + int(p.src[p.pos]-'0')
					p.pos++
				}
				if v > 0xff {
					return nil, p.errAt(at, "octal escape above \\377 in string default")
				}
				b.WriteByte(byte(v))
				continue
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
		p.pos++
	}
	return nil, p.errAt(at, "unterminated string default")
}

func (p *schemaParser) number() (Value, error) {
	at := p.pos
	if p.src[p.pos] == '-' || p.src[p.pos] == '+' {
		p.pos++
	}
	if strings.HasPrefix(p.src[p.pos:], "inf") {
		p.pos += 3
		if p.src[at] == '-' {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	isFloat := false
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' || c == 'e' || c == 'E':
			isFloat = true
		case (c == '-' || c == '+') && (p.src[p.pos-1] == 'e' || p.src[p.pos-1] == 'E'):
		default:
			goto done
		}
		p.pos++
	}
done:
	lit := p.src[at:p.pos]
	if !isFloat {
		i, err := strconv.ParseInt(lit, 10, 64)
		if err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return nil, p.errAt(at, "bad number %q", lit)
	}
	return f, nil
}
