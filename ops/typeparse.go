package ops

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// TypeSyntaxError reports type text that does not parse: the text, the
// byte offset and what was expected there.
type TypeSyntaxError struct {
	Text string
	Pos  int
	Msg  string
}

// Error returns "ops: type <text>: at offset N: <expectation>".
func (e *TypeSyntaxError) Error() string {
	return fmt.Sprintf("ops: type %q: at offset %d: %s", e.Text, e.Pos, e.Msg)
}

// ParseType parses the printed form of a [Type], exactly what
// TensorType, TupleType and PyType print:
//
//   - a tensor type "f32[4, 32]", "i8[]", "?[2]" (no element type),
//     dynamic dimensions as a symbol "f32[s0, 8]" or "?";
//   - a quantized tensor type "!quant.uniform<i8:f32, 0.02:-3>[1, 16]",
//     "!quant.uniform<i8<-127:127>:f32:0, {0.1,0.2:3}>[2, 4]";
//   - a tuple "(f32[1], i32[1])", "(f32[1],)", "()", with "?" for a
//     missing element;
//   - any other identifier as a PyType: "int", "SymInt", "None".
//
// Quantized element types are validated as their constructors do, and a
// per-axis type must fit its tensor's shape ([CheckElementFits]), so
// ParseType(t.String()) equals t for every valid t. Errors are
// *TypeSyntaxError values; ParseType never panics.
func ParseType(s string) (Type, error) {
	p := &typeParser{textCursor{src: s}}
	t, err := p.typ(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, p.errf("want end of type, found %s", p.found())
	}
	if t == nil {
		return nil, p.errf("a bare \"?\" is not a type")
	}
	return t, nil
}

// ParseElement parses the printed form of an [Element]: a dtype
// abbreviation ("f32", "i8", "b8") or a quantized type
// ("!quant.uniform<i8:f32, 0.5:3>", "!quant.uniform<i8:f32:1, {0.1,0.2}>").
func ParseElement(s string) (Element, error) {
	p := &typeParser{textCursor{src: s}}
	e, err := p.element()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, p.errf("want end of element type, found %s", p.found())
	}
	if e == nil {
		return nil, &TypeSyntaxError{Text: s, Pos: 0, Msg: "\"?\" is not an element type"}
	}
	return e, nil
}

type typeParser struct{ textCursor }

const maxTypeDepth = 64

func (p *typeParser) errf(format string, a ...any) error {
	return &TypeSyntaxError{Text: p.src, Pos: p.pos, Msg: fmt.Sprintf(format, a...)}
}

func (p *typeParser) peekByte() byte {
	p.space()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *typeParser) expect(s string) error {
	if !p.accept(s) {
		return p.errf("want %q, found %s", s, p.found())
	}
	return nil
}

// typ parses one type; it returns nil for a bare "?" (a missing tuple element).
func (p *typeParser) typ(depth int) (Type, error) {
	if depth > maxTypeDepth {
		return nil, p.errf("types nest deeper than %d", maxTypeDepth)
	}
	switch c := p.peekByte(); {
	case c == '(':
		return p.tuple(depth)
	case c == '?' || c == '!':
		start := p.pos
		if c == '?' && (p.pos+1 >= len(p.src) || p.src[p.pos+1] != '[') {
			p.pos++
			return nil, nil
		}
		e, err := p.element()
		if err != nil {
			return nil, err
		}
		return p.tensor(e, start)
	case isIdentByte(c, true):
		start := p.pos
		name := p.ident()
		if p.pos < len(p.src) && p.src[p.pos] == '[' {
			d, ok := abbrevDType(name)
			if !ok {
				p.pos = start
				return nil, p.errf("unknown dtype %q", name)
			}
			return p.tensor(Scalar{d}, start)
		}
		return PyType{Name: name}, nil
	}
	return nil, p.errf("want a type, found %s", p.found())
}

func (p *typeParser) tuple(depth int) (Type, error) {
	p.pos++ // "("
	t := TupleType{}
	if p.accept(")") {
		return t, nil
	}
	for {
		e, err := p.typ(depth + 1)
		if err != nil {
			return nil, err
		}
		t.Elems = append(t.Elems, e)
		if p.accept(")") {
			return t, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
		if p.accept(")") {
			return t, nil
		}
	}
}

// tensor parses the "[d, d, ...]" after an element type.
func (p *typeParser) tensor(e Element, start int) (Type, error) {
	if err := p.expect("["); err != nil {
		return nil, err
	}
	t := TensorType{Shape: []int64{}, Elem: e}
	var syms []string
	hasSym := false
	if !p.accept("]") {
		for {
			p.space()
			switch c := p.peekByte(); {
			case c == '?':
				p.pos++
				t.Shape = append(t.Shape, DynamicDim)
				syms = append(syms, "")
			case c >= '0' && c <= '9' && !p.symbolicAhead():
				at := p.pos
				for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
					p.pos++
				}
				n, err := strconv.ParseInt(p.src[at:p.pos], 10, 64)
				if err != nil {
					p.pos = at
					return nil, p.errf("dimension %q out of range", p.src[at:p.pos])
				}
				t.Shape = append(t.Shape, n)
				syms = append(syms, "")
			case isIdentByte(c, true) || c == '(' || c >= '0' && c <= '9':
				// a symbol (s0) or an expression of symbols (s0*s1,
				// Mod(s0, 2)), up to the next "," or "]" outside brackets
				at, depth := p.pos, 0
				for ; p.pos < len(p.src); p.pos++ {
					b := p.src[p.pos]
					if depth == 0 && (b == ',' || b == ']') {
						break
					}
					switch b {
					case '(':
						depth++
					case ')':
						depth--
					}
				}
				text := strings.TrimRight(p.src[at:p.pos], " ")
				e, err := ParseSymExpr(text)
				if err != nil {
					p.pos = at
					return nil, p.errf("symbolic dimension %q: %v", text, err)
				}
				if e.Kind == SymInteger {
					p.pos = at
					return nil, p.errf("symbolic dimension %q is a constant: write it as a size", text)
				}
				t.Shape = append(t.Shape, DynamicDim)
				syms = append(syms, e.String())
				hasSym = true
			default:
				return nil, p.errf("want a dimension (a size, a symbol or \"?\"), found %s", p.found())
			}
			if p.accept("]") {
				break
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
	}
	if hasSym {
		t.Syms = syms
	}
	if e != nil {
		if err := CheckElementFits(t.Shape, e); err != nil {
			return nil, &TypeSyntaxError{Text: p.src, Pos: start, Msg: err.Error()}
		}
	}
	return t, nil
}

// abbrevDType maps an FX dtype abbreviation ("f32", "i8") to its DType.
func abbrevDType(s string) (tensor.DType, bool) {
	for _, d := range tensor.AllDTypes() {
		if d.Abbrev() == s {
			return d, true
		}
	}
	return tensor.Unknown, false
}

// element parses "?" (nil), a dtype abbreviation or "!quant.uniform<...>".
func (p *typeParser) element() (Element, error) {
	p.space()
	if p.accept("?") {
		return nil, nil
	}
	if !p.accept("!quant.uniform<") {
		start := p.pos
		name := p.ident()
		d, ok := abbrevDType(name)
		if !ok {
			p.pos = start
			return nil, p.errf("want a dtype abbreviation or !quant.uniform<...>, found %s", p.found())
		}
		return Scalar{d}, nil
	}
	start := p.pos
	sname := p.ident()
	st, ok := abbrevDType(sname)
	if !ok {
		p.pos = start
		return nil, p.errf("unknown storage type %q", sname)
	}
	lo, hi, ok := st.IntRange()
	if !ok || st == tensor.Bool {
		p.pos = start
		return nil, p.errf("storage type %s is not an integer type", sname)
	}
	if p.accept("<") {
		var err error
		if lo, err = p.int(); err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		if hi, err = p.int(); err != nil {
			return nil, err
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
	}
	if err := p.expect(":"); err != nil {
		return nil, err
	}
	at := p.pos
	ename := p.ident()
	ex, ok := abbrevDType(ename)
	if !ok {
		p.pos = at
		return nil, p.errf("unknown expressed type %q", ename)
	}
	if p.accept(":") {
		at := p.pos
		axis, err := p.int()
		if err != nil {
			return nil, err
		}
		if axis < 0 || axis > 1<<20 {
			p.pos = at
			return nil, p.errf("axis %d out of range", axis)
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
		if err := p.expect("{"); err != nil {
			return nil, err
		}
		var scales []float64
		var zps []int64
		for {
			s, zp, err := p.scaleZP()
			if err != nil {
				return nil, err
			}
			scales, zps = append(scales, s), append(zps, zp)
			if p.accept("}") {
				break
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
		q, err := NewUniformQuantizedPerAxis(st, lo, hi, ex, int(axis), scales, zps)
		if err != nil {
			return nil, &TypeSyntaxError{Text: p.src, Pos: start, Msg: err.Error()}
		}
		return q, nil
	}
	if err := p.expect(","); err != nil {
		return nil, err
	}
	s, zp, err := p.scaleZP()
	if err != nil {
		return nil, err
	}
	if err := p.expect(">"); err != nil {
		return nil, err
	}
	q, err := NewUniformQuantized(st, lo, hi, ex, s, zp)
	if err != nil {
		return nil, &TypeSyntaxError{Text: p.src, Pos: start, Msg: err.Error()}
	}
	return q, nil
}

func (p *typeParser) int() (int64, error) {
	p.space()
	at := p.pos
	if p.pos < len(p.src) && (p.src[p.pos] == '-' || p.src[p.pos] == '+') {
		p.pos++
	}
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.ParseInt(p.src[at:p.pos], 10, 64)
	if err != nil {
		p.pos = at
		return 0, p.errf("want an integer, found %s", p.found())
	}
	return n, nil
}

// scaleZP parses "scale" or "scale:zero_point".
func (p *typeParser) scaleZP() (float64, int64, error) {
	p.space()
	at := p.pos
	for p.pos < len(p.src) && !strings.ContainsRune(":,}> ", rune(p.src[p.pos])) {
		p.pos++
	}
	s, err := strconv.ParseFloat(p.src[at:p.pos], 64)
	if err != nil {
		p.pos = at
		return 0, 0, p.errf("want a scale, found %s", p.found())
	}
	var zp int64
	if p.accept(":") {
		if zp, err = p.int(); err != nil {
			return 0, 0, err
		}
	}
	return s, zp, nil
}

// symbolicAhead reports whether the dimension at the cursor, which starts
// with a digit, goes on as an expression (2*s0) rather than ending after
// its digits.
func (p *typeParser) symbolicAhead() bool {
	i := p.pos
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		i++
	}
	for i < len(p.src) && p.src[i] == ' ' {
		i++
	}
	return i < len(p.src) && p.src[i] != ',' && p.src[i] != ']'
}
