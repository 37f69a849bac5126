package fxgraph

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops"
)

// Symbol is one symbolic size of a graph exported with dynamic shapes
// (torch.export.Dim): its name ("s77"), the range torch.export recorded in
// range_constraints, the example value it was traced with (the hint), and
// the sympy assumptions its srepr carries.
type Symbol struct {
	// Name is the symbol's name; for a range torch.export recorded on an
	// expression of symbols (a derived Dim gives "2*s74"), the
	// expression's text as the program wrote it.
	Name string
	// Ranged reports whether the program lists the symbol in its range
	// constraints; Min and Max are the bounds, nil for unbounded.
	Ranged   bool
	Min, Max *int64
	// Hint is the traced example value, nil when none was recorded.
	Hint *int64
	// Assumptions is the keyword text of the symbol's sympy srepr,
	// "positive=True, integer=True"; "" for none.
	Assumptions string
}

// InRange reports whether v lies within s's range (always, when s has
// none).
func (s Symbol) InRange(v int64) bool {
	return (s.Min == nil || v >= *s.Min) && (s.Max == nil || v <= *s.Max)
}

// Admits reports whether a run may bind the symbol (or the expression
// dimension this entry constrains) to the size v, by the rule PyTorch
// 2.14's ExportedProgram.module() applies to its inputs
// (torch/_export/utils.py, _check_symint): the upper bound always, the
// lower bound only when it is above 2, because "we allow dimensions to be
// 0/1 at runtime". A range of [1, 64] admits 0; one of [3, 32] does not
// admit 2.
func (s Symbol) Admits(v int64) bool {
	if v < 0 || s.Max != nil && v > *s.Max {
		return false
	}
	return s.Min == nil || *s.Min <= 2 || v >= *s.Min
}

// RangeString prints the range as "[1, 64]", an unbounded end as "None".
func (s Symbol) RangeString() string {
	b := func(p *int64) string {
		if p == nil {
			return "None"
		}
		return strconv.FormatInt(*p, 10)
	}
	return "[" + b(s.Min) + ", " + b(s.Max) + "]"
}

func (s Symbol) clone() Symbol {
	cp := func(p *int64) *int64 {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	s.Min, s.Max, s.Hint = cp(s.Min), cp(s.Max), cp(s.Hint)
	return s
}

// Symbols returns a copy of the graph's symbol table, in its order (the
// program's range_constraints order, then symbols met elsewhere).
func (g *Graph) Symbols() []Symbol {
	out := make([]Symbol, len(g.syms))
	for i, s := range g.syms {
		out[i] = s.clone()
	}
	return out
}

// Symbol returns the named entry of the symbol table.
func (g *Graph) Symbol(name string) (Symbol, bool) {
	for _, s := range g.syms {
		if s.Name == name {
			return s.clone(), true
		}
	}
	return Symbol{}, false
}

// SetSymbols replaces the symbol table. Names must be distinct
// identifiers, or expressions of symbols for the ranges torch.export
// records on them ("2*s74").
func (g *Graph) SetSymbols(syms []Symbol) error {
	seen := map[string]bool{}
	for _, s := range syms {
		if !isSymbolName(s.Name) && !isSymbolExpr(s.Name) {
			return fmt.Errorf("fxgraph: symbol name %q is not an identifier or an expression of symbols", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("fxgraph: symbol %q is declared twice", s.Name)
		}
		seen[s.Name] = true
	}
	g.syms = make([]Symbol, len(syms))
	for i, s := range syms {
		g.syms[i] = s.clone()
	}
	return nil
}

// isSymbolName matches an identifier [A-Za-z_][A-Za-z0-9_]*.
func isSymbolName(s string) bool {
	if s == "" || !isWordStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// isSymbolExpr reports whether s is an expression of symbols, such as
// the key "2*s74" of a derived Dim's range.
func isSymbolExpr(s string) bool {
	e, err := ops.ParseSymExpr(s)
	return err == nil && e.Kind != ops.SymInteger && !strings.ContainsAny(s, ":\n")
}

// symbolLinePrefix starts each symbol declaration of the text format.
const symbolLinePrefix = "# symbol "

// formatSymbol returns a symbol's declaration line of [Format], without
// indentation: "# symbol s77: range=[1, 64], hint=8,
// assumptions=(positive=True, integer=True)". Parts the symbol lacks are
// left out.
func formatSymbol(s Symbol) string {
	var parts []string
	if s.Ranged {
		parts = append(parts, "range="+s.RangeString())
	}
	if s.Hint != nil {
		parts = append(parts, "hint="+strconv.FormatInt(*s.Hint, 10))
	}
	if s.Assumptions != "" {
		parts = append(parts, "assumptions=("+s.Assumptions+")")
	}
	line := symbolLinePrefix + s.Name + ":"
	if len(parts) > 0 {
		line += " " + strings.Join(parts, ", ")
	}
	return line
}

// parseSymbol reads a declaration line that formatSymbol printed.
func parseSymbol(t string) (Symbol, error) {
	rest, ok := strings.CutPrefix(t, symbolLinePrefix)
	if !ok {
		return Symbol{}, fmt.Errorf("want %q", symbolLinePrefix)
	}
	name, rest, ok := strings.Cut(rest, ":")
	if !ok || !isSymbolName(name) && !isSymbolExpr(name) {
		return Symbol{}, fmt.Errorf("want a symbol name and \":\" after %q", symbolLinePrefix)
	}
	s := Symbol{Name: name}
	rest = strings.TrimLeft(rest, " ")
	bound := func(v string) (*int64, error) {
		v = strings.TrimSpace(v)
		if v == "None" {
			return nil, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("range bound %q: want an integer or None", v)
		}
		return &n, nil
	}
	if r, ok := strings.CutPrefix(rest, "range=["); ok {
		lo, after, ok := strings.Cut(r, "]")
		if !ok {
			return s, fmt.Errorf("symbol %s: range: want \"]\"", name)
		}
		a, b, ok := strings.Cut(lo, ",")
		if !ok {
			return s, fmt.Errorf("symbol %s: range: want [min, max]", name)
		}
		var err error
		if s.Min, err = bound(a); err != nil {
			return s, fmt.Errorf("symbol %s: %w", name, err)
		}
		if s.Max, err = bound(b); err != nil {
			return s, fmt.Errorf("symbol %s: %w", name, err)
		}
		s.Ranged = true
		rest = strings.TrimPrefix(after, ", ")
	}
	if r, ok := strings.CutPrefix(rest, "hint="); ok {
		v, after, _ := strings.Cut(r, ", ")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return s, fmt.Errorf("symbol %s: hint %q: want an integer", name, v)
		}
		s.Hint = &n
		rest = after
	}
	if r, ok := strings.CutPrefix(rest, "assumptions=("); ok {
		a, ok := strings.CutSuffix(strings.TrimRight(r, " \t"), ")")
		if !ok || a == "" {
			return s, fmt.Errorf("symbol %s: assumptions: want (name=True, ...)", name)
		}
		s.Assumptions = a
		rest = ""
	}
	if strings.TrimSpace(rest) != "" {
		return s, fmt.Errorf("symbol %s: unexpected %q", name, clip(rest))
	}
	return s, nil
}

// symbolUses returns the symbols a type's dimensions name, each once, or
// an error naming the dimension whose text does not parse.
func symbolUses(t ops.Type) ([]string, error) {
	tt, ok := t.(ops.TensorType)
	if !ok {
		return nil, nil
	}
	var out []string
	for i, s := range tt.Syms {
		if s == "" {
			continue
		}
		e, err := ops.ParseSymExpr(s)
		if err != nil {
			return nil, fmt.Errorf("dimension %d: %w", i, err)
		}
		for _, n := range e.Symbols() {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// ErrSymbol is the [VerifyError] check of a symbolic size: an empty range,
// a hint outside its range, a dimension that does not parse or that names
// a symbol the graph does not declare.
var ErrSymbol = errors.New("bad symbolic size")

// verifySymbols checks the symbol table (ranges ordered, hints within
// them) and that every symbolic dimension of a node's type parses and, when
// the graph declares symbols, names declared ones. The nodes are walked
// only when walk is set: [Verify]'s sweep found a type with symbolic
// dimensions (a graph without any has nothing to check there).
func verifySymbols(g *Graph, report func(*VerifyError), walk bool) {
	for _, s := range g.syms {
		if s.Min != nil && s.Max != nil && *s.Min > *s.Max {
			report(&VerifyError{Check: ErrSymbol, Field: "symbol " + s.Name, Got: "empty range " + s.RangeString()})
		}
		if s.Hint != nil && !s.InRange(*s.Hint) {
			report(&VerifyError{Check: ErrSymbol, Field: "symbol " + s.Name,
				Want: "a hint within " + s.RangeString(), Got: "hint " + strconv.FormatInt(*s.Hint, 10)})
		}
	}
	if !walk {
		return
	}
	var ranged []string
	for _, s := range g.syms {
		if s.Ranged {
			ranged = append(ranged, s.Name)
		}
	}
	for n := range g.All() {
		uses, err := symbolUses(n.Type())
		if err != nil {
			report(&VerifyError{Node: n.name, Check: ErrSymbol, Field: "type", Got: n.Type().String(), Err: err})
			continue
		}
		if len(g.syms) == 0 {
			continue
		}
		for _, u := range uses {
			s, ok := g.Symbol(u)
			switch {
			case !ok:
				report(&VerifyError{Node: n.name, Check: ErrSymbol, Field: "type",
					Want: "symbols declared by the graph (" + symbolNames(g.syms) + ")",
					Got:  "unknown symbol " + u + " in " + n.Type().String()})
			case n.op == Placeholder && !s.Ranged && len(ranged) > 0:
				// torch.export lists every symbol of an input's sizes in
				// range_constraints; one it does not list is foreign to
				// the program.
				report(&VerifyError{Node: n.name, Check: ErrSymbol, Field: "type",
					Want: "an input's symbols to have a range (range_constraints lists " + strings.Join(ranged, ", ") + ")",
					Got:  "symbol " + u + ", which has none, in " + n.Type().String()})
			}
		}
	}
}

func symbolNames(syms []Symbol) string {
	names := make([]string, len(syms))
	for i, s := range syms {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// checkSymScalar checks a node of an operator-module function on symbolic
// ints (operator.mul(sym_size_int, 2)): its positional arguments are ints
// or SymInt nodes, no keywords, and its type, when it has one, is SymInt.
func (v *verifier) checkSymScalar(n *Node, arity int) {
	if len(n.args) != arity || len(n.Kwargs()) != 0 {
		v.report(v.nodeErr(n, ErrArity, "args", fmt.Sprintf("%d positional args, no kwargs", arity), fmt.Sprintf("%d args, %d kwargs", len(n.args), len(n.Kwargs()))))
		return
	}
	for i, a := range n.args {
		switch x := a.(type) {
		case int64:
		case *Node:
			if pt, ok := x.typ.(ops.PyType); x.typ != nil && (!ok || pt.Name != "SymInt" && pt.Name != "int") {
				v.report(v.nodeErr(n, ErrArgKind, fmt.Sprintf("arg %d", i), "an int or a SymInt", "%"+x.name+" of type "+x.typ.String()))
			}
		default:
			v.report(v.nodeErr(n, ErrArgKind, fmt.Sprintf("arg %d", i), "an int or a SymInt", fmt.Sprintf("%v", a)))
		}
	}
	if pt, ok := n.typ.(ops.PyType); n.typ != nil && (!ok || pt.Name != "SymInt") {
		v.report(v.nodeErr(n, ErrTypeMismatch, "type", "SymInt", n.typ.String()))
	}
}
