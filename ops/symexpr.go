package ops

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SymKind is the kind of a [SymExpr] node.
type SymKind uint8

// The expression kinds torch.export writes for symbolic sizes: sympy's
// Symbol, Integer, Add, Mul, Mod, Min and Max, and torch's FloorDiv.
const (
	SymSymbol SymKind = iota
	SymInteger
	SymAdd
	SymMul
	SymFloorDiv
	SymMod
	SymMin
	SymMax
)

// symFuncs names the function-like kinds as sympy's srepr spells them.
var symFuncs = map[SymKind]string{SymAdd: "Add", SymMul: "Mul", SymFloorDiv: "FloorDiv", SymMod: "Mod", SymMin: "Min", SymMax: "Max"}

// ErrSymExpr is wrapped by every error about a symbolic expression's text
// or value.
var ErrSymExpr = errors.New("symbolic expression")

// SymExpr is a symbolic integer expression, as torch.export records a
// symbolic size: a symbol (s77), an integer, or a sum, product, floor
// division, modulo, minimum or maximum of sub-expressions. The argument
// order is kept as read, so that an expression prints back to the same
// text; sympy's canonical order is not recomputed.
type SymExpr struct {
	Kind SymKind
	Name string     // SymSymbol: the symbol's name
	Int  int64      // SymInteger: the value
	Args []*SymExpr // the operands of the other kinds
}

// SymSym returns the expression of one symbol.
func SymSym(name string) *SymExpr { return &SymExpr{Kind: SymSymbol, Name: name} }

// SymInt returns the expression of one integer.
func SymInt(v int64) *SymExpr { return &SymExpr{Kind: SymInteger, Int: v} }

// Symbols returns the names of the symbols in e, each once, in order of
// first appearance.
func (e *SymExpr) Symbols() []string {
	var out []string
	var walk func(*SymExpr)
	walk = func(x *SymExpr) {
		if x.Kind == SymSymbol {
			for _, s := range out {
				if s == x.Name {
					return
				}
			}
			out = append(out, x.Name)
		}
		for _, a := range x.Args {
			walk(a)
		}
	}
	walk(e)
	return out
}

// Eval computes e with each symbol's value from bind, with Python's
// integer semantics (floor division and modulo round towards negative
// infinity). It fails on an unbound symbol, a division by zero or an
// overflow of int64.
func (e *SymExpr) Eval(bind func(name string) (int64, bool)) (int64, error) {
	switch e.Kind {
	case SymSymbol:
		v, ok := bind(e.Name)
		if !ok {
			return 0, fmt.Errorf("%w: symbol %s has no value", ErrSymExpr, e.Name)
		}
		return v, nil
	case SymInteger:
		return e.Int, nil
	}
	if len(e.Args) == 0 {
		return 0, fmt.Errorf("%w: %s without operands", ErrSymExpr, symFuncs[e.Kind])
	}
	vals := make([]int64, len(e.Args))
	for i, a := range e.Args {
		v, err := a.Eval(bind)
		if err != nil {
			return 0, err
		}
		vals[i] = v
	}
	acc := vals[0]
	for _, v := range vals[1:] {
		switch e.Kind {
		case SymAdd:
			s := acc + v
			if (s > acc) != (v > 0) {
				return 0, fmt.Errorf("%w: %s overflows int64", ErrSymExpr, e)
			}
			acc = s
		case SymMul:
			if acc != 0 && (acc*v/acc != v || (acc == -1 && v == minInt64)) {
				return 0, fmt.Errorf("%w: %s overflows int64", ErrSymExpr, e)
			}
			acc *= v
		case SymFloorDiv, SymMod:
			if v == 0 {
				return 0, fmt.Errorf("%w: %s divides by zero", ErrSymExpr, e)
			}
			q, r := acc/v, acc%v
			if r != 0 && (r < 0) != (v < 0) {
				q, r = q-1, r+v
			}
			if e.Kind == SymFloorDiv {
				acc = q
			} else {
				acc = r
			}
		case SymMin:
			acc = min(acc, v)
		case SymMax:
			acc = max(acc, v)
		}
	}
	if (e.Kind == SymFloorDiv || e.Kind == SymMod) && len(vals) != 2 {
		return 0, fmt.Errorf("%w: %s takes 2 operands, got %d", ErrSymExpr, symFuncs[e.Kind], len(vals))
	}
	return acc, nil
}

const minInt64 = -1 << 63

// precedence of a kind in the readable form: sums bind loosest, then
// products and floor divisions, then atoms and function calls.
func (e *SymExpr) prec() int {
	switch e.Kind {
	case SymAdd:
		return 1
	case SymMul, SymFloorDiv:
		return 2
	case SymInteger:
		if e.Int < 0 {
			return 2 // -3 reads back as one factor, not after "+"
		}
	}
	return 3
}

// String prints e in fxquant's readable form, the form types print their
// symbolic dimensions in: s0, 2*s0, s0 + 1, s0 - 1 (a negative integer
// term), s0//2, Mod(s0, 2), Min(s0, 4). Sub-expressions are
// parenthesized where the operator needs it. [ParseSymExpr] reads the
// text back to an equal expression (argument order included).
func (e *SymExpr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e *SymExpr) write(b *strings.Builder) {
	child := func(a *SymExpr, need int) {
		if a.prec() < need {
			b.WriteByte('(')
			a.write(b)
			b.WriteByte(')')
		} else {
			a.write(b)
		}
	}
	switch e.Kind {
	case SymSymbol:
		b.WriteString(e.Name)
	case SymInteger:
		b.WriteString(strconv.FormatInt(e.Int, 10))
	case SymAdd:
		for i, a := range e.Args {
			switch {
			case i == 0:
				child(a, 2)
			case a.Kind == SymInteger && a.Int < 0 && a.Int != minInt64:
				b.WriteString(" - ")
				b.WriteString(strconv.FormatInt(-a.Int, 10))
			default:
				b.WriteString(" + ")
				child(a, 2)
			}
		}
	case SymMul:
		for i, a := range e.Args {
			if i > 0 {
				b.WriteByte('*')
			}
			switch {
			case a.Kind == SymInteger && a.Int < 0 && i == 0:
				a.write(b) // -1*s0
			case a.Kind == SymInteger && a.Int < 0:
				child(a, 4) // s0*(-1)
			default:
				child(a, 3)
			}
		}
	case SymFloorDiv:
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString("//")
			}
			if i > 0 && a.Kind == SymInteger && a.Int < 0 {
				child(a, 4)
			} else {
				child(a, 3)
			}
		}
	default:
		e.writeCall(b, func(a *SymExpr) { a.write(b) })
	}
}

// writeCall prints e as a call of its function, each operand by operand.
func (e *SymExpr) writeCall(b *strings.Builder, operand func(*SymExpr)) {
	b.WriteString(symFuncs[e.Kind])
	b.WriteByte('(')
	for i, a := range e.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		operand(a)
	}
	b.WriteByte(')')
}

// Srepr prints e as sympy's srepr, the form torch.export writes in
// expr_str: Symbol('s0', positive=True, integer=True), Integer(2),
// Mul(Integer(2), Symbol(...)), FloorDiv(...). assumptions gives each
// symbol's keyword arguments as written ("positive=True, integer=True";
// "" for none).
func (e *SymExpr) Srepr(assumptions func(name string) string) string {
	var b strings.Builder
	e.srepr(&b, assumptions)
	return b.String()
}

func (e *SymExpr) srepr(b *strings.Builder, assumptions func(string) string) {
	switch e.Kind {
	case SymSymbol:
		b.WriteString("Symbol(")
		b.WriteString("'" + e.Name + "'")
		if a := assumptions(e.Name); a != "" {
			b.WriteString(", ")
			b.WriteString(a)
		}
		b.WriteByte(')')
	case SymInteger:
		b.WriteString("Integer(")
		b.WriteString(strconv.FormatInt(e.Int, 10))
		b.WriteByte(')')
	default:
		e.writeCall(b, func(a *SymExpr) { a.srepr(b, assumptions) })
	}
}

// Equal reports whether e and o are the same expression, argument order
// included.
func (e *SymExpr) Equal(o *SymExpr) bool {
	if e == nil || o == nil {
		return e == o
	}
	if e.Kind != o.Kind || e.Name != o.Name || e.Int != o.Int || len(e.Args) != len(o.Args) {
		return false
	}
	for i := range e.Args {
		if !e.Args[i].Equal(o.Args[i]) {
			return false
		}
	}
	return true
}

// SymAssumption is one symbol's assumptions as a sympy srepr wrote them.
type SymAssumption struct {
	Name, Assumptions string
}

// ParseSympy reads an expr_str of torch.export: a sympy srepr
// (Symbol('s0', positive=True, integer=True), Mul(Integer(2), ...)) or,
// as older writers wrote, sympy's str form (s0, 2*s0), which is read as
// [ParseSymExpr] reads. It returns the expression and, for an srepr, each
// symbol's assumption text in order of appearance. Kinds other than
// those of [SymKind] are refused, naming the function.
func ParseSympy(s string) (*SymExpr, []SymAssumption, bool, error) {
	p := &symParser{textCursor: textCursor{src: s}}
	p.space()
	if !p.sreprStart() {
		e, err := ParseSymExpr(s)
		return e, nil, false, err
	}
	e, err := p.srepr()
	if err != nil {
		return nil, nil, true, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, nil, true, p.errf("unexpected %q after the expression", p.src[p.pos:])
	}
	return e, p.assume, true, nil
}

// ParseSymExpr reads the readable form [SymExpr.String] prints (also
// sympy's str form of simple expressions): integers, symbols, "+", "-"
// before an integer, "*", "//", parentheses and Mod/Min/Max calls.
func ParseSymExpr(s string) (*SymExpr, error) {
	p := &symParser{textCursor: textCursor{src: s}}
	e, err := p.sum()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, p.errf("unexpected %q after the expression", p.src[p.pos:])
	}
	return e, nil
}

type symParser struct {
	textCursor
	depth  int
	assume []SymAssumption
}

// maxSymDepth bounds the nesting the parsers accept.
const maxSymDepth = 64

func (p *symParser) errf(format string, args ...any) error {
	return fmt.Errorf("%w %q: at offset %d: %s", ErrSymExpr, p.src, p.pos, fmt.Sprintf(format, args...))
}

func (p *symParser) expect(tok string) error {
	if !p.accept(tok) {
		return p.errf("want %q", tok)
	}
	return nil
}

func (p *symParser) integer() (int64, error) {
	p.space()
	at := p.pos
	if p.pos < len(p.src) && p.src[p.pos] == '-' {
		p.pos++
	}
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	v, err := strconv.ParseInt(p.src[at:p.pos], 10, 64)
	if err != nil {
		p.pos = at
		return 0, p.errf("want an integer")
	}
	return v, nil
}

// sreprStart reports whether the text is an srepr: it names Symbol or
// Integer, or starts with a capitalized constructor other than the
// readable form's Mod, Min and Max.
func (p *symParser) sreprStart() bool {
	if strings.Contains(p.src, "Symbol(") || strings.Contains(p.src, "Integer(") {
		return true
	}
	at := p.pos
	name := p.ident()
	ok := p.accept("(")
	p.pos = at
	return ok && name != "" && name[0] >= 'A' && name[0] <= 'Z' && name != "Mod" && name != "Min" && name != "Max"
}

func (p *symParser) srepr() (*SymExpr, error) {
	if p.depth++; p.depth > maxSymDepth {
		return nil, p.errf("nested deeper than %d", maxSymDepth)
	}
	defer func() { p.depth-- }()
	at := p.pos
	name := p.ident()
	if err := p.expect("("); err != nil {
		return nil, err
	}
	switch name {
	case "Symbol":
		p.space()
		if !p.accept("'") {
			return nil, p.errf("want a quoted symbol name")
		}
		sym := p.ident()
		if sym == "" || !p.accept("'") {
			return nil, p.errf("want a symbol name and a closing quote")
		}
		var kw []string
		for p.accept(",") {
			k := p.ident()
			if k == "" || !p.accept("=") {
				return nil, p.errf("want an assumption name=value")
			}
			v := p.ident()
			if v != "True" && v != "False" {
				return nil, p.errf("assumption %s: want True or False", k)
			}
			kw = append(kw, k+"="+v)
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		text := strings.Join(kw, ", ")
		for _, a := range p.assume {
			if a.Name == sym {
				if a.Assumptions != text {
					return nil, p.errf("symbol %s written with assumptions (%s) and (%s)", sym, a.Assumptions, text)
				}
				return SymSym(sym), nil
			}
		}
		p.assume = append(p.assume, SymAssumption{sym, text})
		return SymSym(sym), nil
	case "Integer":
		v, err := p.integer()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return SymInt(v), nil
	}
	kind := SymKind(255)
	for k, n := range symFuncs {
		if n == name {
			kind = k
		}
	}
	if kind == 255 {
		p.pos = at
		return nil, p.errf("%s is not supported (Symbol, Integer, Add, Mul, FloorDiv, Mod, Min and Max are)", name)
	}
	return p.call(kind, at, p.srepr)
}

// call reads the operands of a function of the given kind, each by
// operand, up to the closing ")" (its "(" already read), and checks their
// count; at is where the function's name began, for the error.
func (p *symParser) call(kind SymKind, at int, operand func() (*SymExpr, error)) (*SymExpr, error) {
	e := &SymExpr{Kind: kind}
	for {
		a, err := operand()
		if err != nil {
			return nil, err
		}
		e.Args = append(e.Args, a)
		if p.accept(")") {
			break
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
	if err := checkArity(e); err != nil {
		p.pos = at
		return nil, p.errf("%v", err)
	}
	return e, nil
}

func checkArity(e *SymExpr) error {
	switch e.Kind {
	case SymFloorDiv, SymMod:
		if len(e.Args) != 2 {
			return fmt.Errorf("%s takes 2 operands, got %d", symFuncs[e.Kind], len(e.Args))
		}
	case SymAdd, SymMul, SymMin, SymMax:
		if len(e.Args) < 2 {
			return fmt.Errorf("%s takes 2 or more operands, got %d", symFuncs[e.Kind], len(e.Args))
		}
	}
	return nil
}

// sum := product (("+" product) | ("-" integer))*
func (p *symParser) sum() (*SymExpr, error) {
	first, err := p.product()
	if err != nil {
		return nil, err
	}
	args := []*SymExpr{first}
	for {
		if p.accept("+") {
			a, err := p.product()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			continue
		}
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == '-' {
			p.pos++
			v, err := p.integer()
			if err != nil || v < 0 {
				return nil, p.errf("want an integer after \" - \" (write a negative product as + -1*x)")
			}
			args = append(args, SymInt(-v))
			continue
		}
		break
	}
	if len(args) == 1 {
		return first, nil
	}
	return &SymExpr{Kind: SymAdd, Args: args}, nil
}

// product := factor ("*" factor)* | factor "//" factor
func (p *symParser) product() (*SymExpr, error) {
	first, err := p.factor()
	if err != nil {
		return nil, err
	}
	if p.accept("//") {
		d, err := p.factor()
		if err != nil {
			return nil, err
		}
		if p.accept("//") || p.accept("*") {
			return nil, p.errf("parenthesize a product or quotient used with //")
		}
		return &SymExpr{Kind: SymFloorDiv, Args: []*SymExpr{first, d}}, nil
	}
	args := []*SymExpr{first}
	for p.accept("*") {
		a, err := p.factor()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	if p.accept("//") {
		return nil, p.errf("parenthesize a product or quotient used with //")
	}
	if len(args) == 1 {
		return first, nil
	}
	return &SymExpr{Kind: SymMul, Args: args}, nil
}

// factor := integer | symbol | "(" sum ")" | Mod/Min/Max "(" sum, ... ")"
func (p *symParser) factor() (*SymExpr, error) {
	if p.depth++; p.depth > maxSymDepth {
		return nil, p.errf("nested deeper than %d", maxSymDepth)
	}
	defer func() { p.depth-- }()
	p.space()
	if p.pos >= len(p.src) {
		return nil, p.errf("want a size, a symbol or \"(\", found the end")
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		e, err := p.sum()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return e, nil
	case c == '-' || c >= '0' && c <= '9':
		v, err := p.integer()
		if err != nil {
			return nil, err
		}
		return SymInt(v), nil
	case isIdentByte(c, true):
		at := p.pos
		name := p.ident()
		if !p.accept("(") {
			return SymSym(name), nil
		}
		kind := SymKind(255)
		for _, k := range []SymKind{SymMod, SymMin, SymMax} {
			if symFuncs[k] == name {
				kind = k
			}
		}
		if kind == 255 {
			p.pos = at
			return nil, p.errf("unknown function %s (Mod, Min and Max are known)", name)
		}
		return p.call(kind, at, p.sum)
	}
	return nil, p.errf("want a size, a symbol or \"(\", found %q", c)
}

// SolveFor finds the value of the symbol name for which e equals value,
// the other symbols taking their values from bind, when e is linear in
// it: x = (value - e(0)) / (e(1) - e(0)), accepted only when it is an
// integer and e(x) == value. It is how a size that is an expression of a
// symbol (2*s74 for a derived Dim) gives the symbol's value.
func (e *SymExpr) SolveFor(name string, bind func(string) (int64, bool), value int64) (int64, bool) {
	at := func(x int64) (int64, error) {
		return e.Eval(func(n string) (int64, bool) {
			if n == name {
				return x, true
			}
			return bind(n)
		})
	}
	f0, err0 := at(0)
	f1, err1 := at(1)
	if err0 != nil || err1 != nil || f1 == f0 || (value-f0)%(f1-f0) != 0 {
		return 0, false
	}
	x := (value - f0) / (f1 - f0)
	if fx, err := at(x); err != nil || fx != value {
		return 0, false
	}
	return x, true
}
