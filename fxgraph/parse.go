package fxgraph

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ParseError is an error in graph text: its 1-based line and column
// (in bytes) and what was expected there.
type ParseError struct {
	Line int    // 1-based line number
	Col  int    // 1-based column, in bytes
	Msg  string // what was expected and what was found
}

// Error returns "line L:C: message".
func (e *ParseError) Error() string { return fmt.Sprintf("line %d:%d: %s", e.Line, e.Col, e.Msg) }

// maxNesting bounds container nesting in arguments, so that hostile input
// cannot exhaust the stack.
const maxNesting = 200

// Parse reads a graph in the text format of [Format] and returns it.
//
// The text is a "graph():" header followed by one node line each (leading
// whitespace is ignored, blank lines are skipped, "\r\n" line ends are
// accepted). Node names are kept exactly, types are read by the type
// parser, call_function targets must be FX qualified names
// (torch.ops.<ns>.<op> for a packet, torch.ops.<ns>.<op>.<overload> for an
// overload, <module>.<name> such as operator.getitem for a plain callable),
// and string targets of the other opcodes must be dotted names
// ([A-Za-z0-9_.]+). Every [num_users=N] must equal the number of users the
// text gives the node.
//
// Arguments keep their literal kinds. In args and kwargs (FX notation):
//
//   - %name is a node, which must be defined on an earlier line;
//   - an integer (-128) is an int64; a number with '.', an exponent, or
//     inf/nan (1.0, 1e-05, -inf) is a float64; (1+2j) and 2j are complex;
//   - None, True and False are nil and bools;
//   - torch.<dtype> is a dtype, torch.strided etc. a layout,
//     torch.contiguous_format etc. a memory format;
//   - torch.ops.<ns>.<op>.<overload> is an operator value ([ops.Overload])
//     and torch.ops.<ns>.<op> a [ops.Packet]; the Python reprs
//     <OpOverload(op='ns.op', overload='name')>,
//     <OpOverloadPacket(op='ns.op')>, <built-in function name> (a function
//     of the operator module, [ops.Callable]) and <function module.name>
//     are read in every notation;
//   - a device type word (cpu, cuda, meta, mps, ...), with an optional
//     :index, is a Device, as is device(type='cuda', index=0);
//   - a quoted Python string literal is a string;
//   - any other bare word [A-Za-z_][A-Za-z0-9_.]* is a string: this is
//     the rule that lets strings print unquoted as FX prints them;
//   - [..] is a List, (..) a Tuple ((a,) for one element), {k: v} a Dict
//     whose keys are identifiers or quoted strings, and
//     slice(start, stop, step) a Slice whose parts are Python reprs.
//
// The output line (return ...) and a placeholder default ((default=...))
// are Python reprs, where a bare word names a node and strings are quoted.
//
// Errors are *[ParseError]s that give the line and column and say what was
// expected: a malformed line, an unknown node, a reference to a node
// defined later (or to the node being defined), a duplicate name, a
// num_users that disagrees with the text. Bad input is always an error,
// never a panic.
func Parse(r io.Reader) (*Graph, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("fxgraph: parse: %w", err)
	}
	return ParseString(string(src))
}

// ParseString is [Parse] on a string.
func ParseString(src string) (*Graph, error) {
	p := &graphParser{g: New()}
	if err := p.parse(src); err != nil {
		return nil, err
	}
	return p.g, nil
}

// parseTypeText reads the text of a node's type slot.
var parseTypeText = ops.ParseType

type parsedDef struct {
	node *Node
	line int
}

type parsedUsers struct {
	node      *Node
	line, col int
	want      int
}

type graphParser struct {
	g        *Graph
	lines    []string
	defs     map[string]parsedDef // nodes defined so far
	declared map[string]int       // every %name defined anywhere in the text -> its first line
	users    []parsedUsers
}

func (p *graphParser) parse(src string) error {
	p.lines = strings.Split(src, "\n")
	p.defs = make(map[string]parsedDef, len(p.lines))
	p.declared = make(map[string]int, len(p.lines))
	p.users = make([]parsedUsers, 0, len(p.lines))
	for i, l := range p.lines {
		l = strings.TrimSuffix(l, "\r")
		p.lines[i] = l
		t := strings.TrimLeft(l, " \t")
		if strings.HasPrefix(t, "%") {
			end := 1
			for end < len(t) && isIdentByte(t[end]) {
				end++
			}
			if name := t[1:end]; name != "" {
				if _, seen := p.declared[name]; !seen {
					p.declared[name] = i + 1
				}
			}
		}
	}
	header := false
	for i, l := range p.lines {
		lineNo := i + 1
		t := strings.TrimLeft(l, " \t")
		if strings.TrimSpace(t) == "" {
			continue
		}
		if !utf8.ValidString(l) {
			return &ParseError{lineNo, 1, "line is not valid UTF-8"}
		}
		indent := len(l) - len(t)
		if !header {
			if strings.TrimRight(t, " \t") != "graph():" {
				return &ParseError{lineNo, indent + 1, fmt.Sprintf("want the header %q, got %q", "graph():", clip(t))}
			}
			header = true
			continue
		}
		if err := p.parseLine(l, indent, lineNo); err != nil {
			return err
		}
	}
	if !header {
		return &ParseError{1, 1, `want the header "graph():", got empty text`}
	}
	for _, u := range p.users {
		if got := u.node.NumUsers(); got != u.want {
			return &ParseError{u.line, u.col, fmt.Sprintf("node %%%s: [num_users=%d] but the text gives it %d user(s)", u.node.name, u.want, got)}
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// resolve returns the node a reference names.
func (p *graphParser) resolve(current string) func(name string, line, col int) (ops.Value, error) {
	return func(name string, line, col int) (ops.Value, error) {
		if d, ok := p.defs[name]; ok {
			return d.node, nil
		}
		if name == current {
			return nil, &ParseError{line, col, fmt.Sprintf("node %%%s is used in its own definition", name)}
		}
		if l, ok := p.declared[name]; ok && l > line {
			return nil, &ParseError{line, col, fmt.Sprintf("node %%%s is used before its definition on line %d", name, l)}
		}
		return nil, &ParseError{line, col, fmt.Sprintf("unknown node %%%s", name)}
	}
}

func (p *graphParser) parseLine(l string, indent, lineNo int) error {
	s := &valueParser{s: l, pos: indent, line: lineNo}
	if rest := l[indent:]; rest == "return" || strings.HasPrefix(rest, "return ") {
		s.pos += len("return")
		s.skipSpaces()
		s.style = styleRepr
		s.ref = p.resolve("")
		v, err := s.value()
		if err != nil {
			return err
		}
		if err := s.end(); err != nil {
			return err
		}
		p.addNode(Output, nil, "output", []ops.Value{v}, nil, p.outputName(), nil)
		return nil
	}
	if err := s.expect("%"); err != nil {
		return s.errf("want a node line (%%name : ... or return ...), got %q", clip(l[indent:]))
	}
	nameCol := s.pos + 1
	name := s.ident()
	if name == "" {
		return s.errf("want a node name after %%")
	}
	if first, dup := p.defs[name]; dup {
		return &ParseError{lineNo, nameCol - 1, fmt.Sprintf("duplicate node name %%%s (first defined on line %d)", name, first.line)}
	}
	if err := s.expect(" : "); err != nil {
		return err
	}
	var typ ops.Type
	if !strings.HasPrefix(l[s.pos:], "[num_users=") {
		i := strings.Index(l[s.pos:], " [num_users=")
		if i < 0 {
			return s.errf("want \"[num_users=N]\" after the node's type")
		}
		t, err := parseTypeText(l[s.pos : s.pos+i])
		if err != nil {
			var te *ops.TypeSyntaxError
			if errors.As(err, &te) {
				return &ParseError{lineNo, s.pos + te.Pos + 1, fmt.Sprintf("bad type %q: %s", te.Text, te.Msg)}
			}
			return s.errf("bad type %q: %v", l[s.pos:s.pos+i], err)
		}
		typ = t
		s.pos += i + 1
	}
	usersCol := s.pos + 1
	if err := s.expect("[num_users="); err != nil {
		return err
	}
	numUsers, err := s.count()
	if err != nil {
		return err
	}
	if err := s.expect("] = "); err != nil {
		return err
	}
	opCol := s.pos
	for s.pos < len(l) && (l[s.pos] == '_' || (l[s.pos] >= 'a' && l[s.pos] <= 'z')) {
		s.pos++
	}
	op, err := ParseOpKind(l[opCol:s.pos])
	if err != nil || op == Output {
		s.pos = opCol
		return s.errf("want an opcode (placeholder, get_attr, call_function, call_method, call_module), got %q", clip(l[opCol:]))
	}
	if err := s.expect("[target="); err != nil {
		return err
	}
	tgtCol := s.pos
	for s.pos < len(l) && isWordByte(l[s.pos]) {
		s.pos++
	}
	tgtText := l[tgtCol:s.pos]
	if tgtText == "" {
		return s.errf("want a target name ([A-Za-z0-9_.]+)")
	}
	var target ops.Target
	targetName := tgtText
	if op == CallFunction {
		t, err := parseFXTarget(tgtText)
		if err != nil {
			s.pos = tgtCol
			return s.errf("%v", err)
		}
		target, targetName = t, ""
	}
	if err := s.expect("]"); err != nil {
		return err
	}
	s.ref = p.resolve(name)
	var args []ops.Value
	var kwargs []Kwarg
	switch op {
	case Placeholder:
		if s.pos < len(l) {
			if err := s.expect("(default="); err != nil {
				return err
			}
			s.style = styleRepr
			v, err := s.value()
			if err != nil {
				return err
			}
			if err := s.expect(")"); err != nil {
				return err
			}
			args = []ops.Value{v}
		}
	case GetAttr:
	default:
		if err := s.expect("(args = "); err != nil {
			return err
		}
		s.style = styleFX
		argCol := s.pos
		v, err := s.value()
		if err != nil {
			return err
		}
		tup, ok := v.(ops.Tuple)
		if !ok {
			s.pos = argCol
			return s.errf("want the args tuple, got %s", formatValue(v, styleFX))
		}
		args = tup
		if err := s.expect(", kwargs = "); err != nil {
			return err
		}
		kwargs, err = s.kwargs()
		if err != nil {
			return err
		}
		if err := s.expect(")"); err != nil {
			return err
		}
	}
	if err := s.end(); err != nil {
		return err
	}
	n := p.addNode(op, target, targetName, args, kwargs, name, typ)
	p.defs[name] = parsedDef{node: n, line: lineNo}
	p.users = append(p.users, parsedUsers{node: n, line: lineNo, col: usersCol, want: numUsers})
	return nil
}

// outputName picks "output" (or output_N) avoiding every name the text
// defines, since the output line does not print its node's name.
func (p *graphParser) outputName() string {
	name := "output"
	for i := 1; ; i++ {
		if _, taken := p.declared[name]; !taken && !p.g.names.taken(name) {
			return name
		}
		name = "output_" + strconv.Itoa(i)
	}
}

// addNode appends a node with exactly the given name (already known to be
// unused) at the end of the graph.
func (p *graphParser) addNode(op OpKind, target ops.Target, targetName string, args []ops.Value, kwargs []Kwarg, name string, typ ops.Type) *Node {
	return addNamedNode(p.g, op, target, targetName, args, kwargs, name, typ)
}

// addNamedNode appends a node named exactly name (the caller checks that
// it is unused) at the end of g, reserving the name in g's namespace.
func addNamedNode(g *Graph, op OpKind, target ops.Target, targetName string, args []ops.Value, kwargs []Kwarg, name string, typ ops.Type) *Node {
	n := g.allocNode()
	n.graph, n.id, n.op, n.target, n.targetName, n.typ, n.name = g, g.nextID, op, target, targetName, typ, name
	g.names.reserve(name, n.id)
	g.nextID++
	g.insertAtEnd(n)
	g.setArgsKwargs(n, args, kwargs)
	return n
}

// parseFXTarget reads a call_function target as FX prints it.
func parseFXTarget(s string) (ops.Target, error) {
	if strings.HasPrefix(s, "torch.ops.") {
		t, err := ops.ParseTarget(s)
		if err != nil {
			return nil, fmt.Errorf("bad target %q: want torch.ops.<ns>.<op> or torch.ops.<ns>.<op>.<overload>", s)
		}
		switch t.(type) {
		case ops.Packet, ops.Overload:
			return t, nil
		}
		return nil, fmt.Errorf("bad target %q: want torch.ops.<ns>.<op> or torch.ops.<ns>.<op>.<overload>", s)
	}
	i := strings.LastIndexByte(s, '.')
	var mod string
	if i > 0 {
		mod = s[:i]
	}
	if i <= 0 || !ops.IsIdentifier(s[i+1:]) || !isWord(mod) || !callableModule(mod) {
		if t, err := ops.ParseTarget(s); err == nil {
			if _, ok := t.(ops.Callable); !ok {
				return nil, fmt.Errorf("bad target %q: an operator target prints as %s", s, t.Pretty())
			}
		}
		return nil, fmt.Errorf("bad target %q: want torch.ops.<ns>.<op>[.<overload>] or a function of operator, builtins, math or torch (operator.getitem)", s)
	}
	if mod == "_operator" {
		mod = "operator"
	}
	return ops.Callable{Module: mod, Name: s[i+1:]}, nil
}

// callableModule reports whether a plain callable target may come from
// module: operator, builtins and math functions, and torch functions
// (torch.relu, torch.nn.functional.linear, torch.Tensor.add).
func callableModule(mod string) bool {
	switch mod {
	case "operator", "_operator", "builtins", "math", "torch":
		return true
	}
	return strings.HasPrefix(mod, "torch.")
}

// --- value parser ----------------------------------------------------------

// valueParser reads argument values from one line in one of the
// notations of [valueStyle].
type valueParser struct {
	s     string
	pos   int
	line  int
	style valueStyle
	ref   func(name string, line, col int) (ops.Value, error)
	depth int
}

func (p *valueParser) errf(format string, a ...any) *ParseError {
	return &ParseError{Line: p.line, Col: p.pos + 1, Msg: fmt.Sprintf(format, a...)}
}

func (p *valueParser) got() string {
	if p.pos >= len(p.s) {
		return "end of line"
	}
	r, _ := utf8.DecodeRuneInString(p.s[p.pos:])
	return strconv.QuoteRune(r)
}

func (p *valueParser) expect(lit string) error {
	if strings.HasPrefix(p.s[p.pos:], lit) {
		p.pos += len(lit)
		return nil
	}
	return p.errf("want %q, got %s", lit, p.got())
}

func (p *valueParser) end() error {
	p.skipSpaces()
	if p.pos < len(p.s) {
		return p.errf("want end of line, got %q", clip(p.s[p.pos:]))
	}
	p.pos = len(p.s)
	return nil
}

func (p *valueParser) skipSpaces() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

func (p *valueParser) ident() string {
	start := p.pos
	if p.pos < len(p.s) && isWordStart(p.s[p.pos]) {
		p.pos++
		for p.pos < len(p.s) && isIdentByte(p.s[p.pos]) {
			p.pos++
		}
	}
	return p.s[start:p.pos]
}

func (p *valueParser) count() (int, error) {
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.s[start:p.pos])
	if err != nil || p.pos-start > 9 {
		p.pos = start
		return 0, p.errf("want a count, got %s", p.got())
	}
	return n, nil
}

func (p *valueParser) value() (ops.Value, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxNesting {
		return nil, p.errf("arguments nested deeper than %d levels", maxNesting)
	}
	if p.pos >= len(p.s) {
		return nil, p.errf("want a value, got end of line")
	}
	c := p.s[p.pos]
	switch {
	case c == '%':
		col := p.pos + 1
		p.pos++
		name := p.ident()
		if name == "" {
			return nil, p.errf("want a node name after %%")
		}
		return p.ref(name, p.line, col)
	case c == '[':
		p.pos++
		xs, _, err := p.seq(']')
		if err != nil {
			return nil, err
		}
		return ops.List(xs), nil
	case c == '(':
		if v, ok := p.complexLit(); ok {
			return v, nil
		}
		open := p.pos
		p.pos++
		xs, comma, err := p.seq(')')
		if err != nil {
			return nil, err
		}
		if len(xs) == 1 && !comma {
			p.pos = open
			return nil, p.errf("want a ',' after the only element of a one-element tuple")
		}
		return ops.Tuple(xs), nil
	case c == '{':
		return p.dict()
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '<':
		return p.operatorRepr()
	case isWordStart(c):
		return p.word()
	}
	return nil, p.errf("want a value, got %s", p.got())
}

// seq reads comma-separated values up to close (the opening bracket is
// consumed); a trailing comma is allowed and reported.
func (p *valueParser) seq(close byte) (xs []ops.Value, trailingComma bool, err error) {
	p.skipSpaces()
	for {
		if p.pos < len(p.s) && p.s[p.pos] == close {
			p.pos++
			return xs, len(xs) > 0, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, false, err
		}
		xs = append(xs, v)
		p.skipSpaces()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			p.skipSpaces()
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == close {
			p.pos++
			return xs, false, nil
		}
		return nil, false, p.errf("want ',' or %q, got %s", string(close), p.got())
	}
}

// dictEntries reads "key: value" pairs up to '}' (the '{' is consumed).
func (p *valueParser) dictEntries() ([]string, []ops.Value, error) {
	var keys []string
	var vals []ops.Value
	seen := map[string]bool{}
	p.skipSpaces()
	for {
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return keys, vals, nil
		}
		keyCol := p.pos
		var key string
		if p.pos < len(p.s) && (p.s[p.pos] == '\'' || p.s[p.pos] == '"') {
			k, err := p.str()
			if err != nil {
				return nil, nil, err
			}
			key = k
		} else {
			for p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
				p.pos++
			}
			key = p.s[keyCol:p.pos]
			if key == "" {
				return nil, nil, p.errf("want a dict key (an identifier or a quoted string), got %s", p.got())
			}
		}
		if seen[key] {
			p.pos = keyCol
			return nil, nil, p.errf("duplicate dict key %q", key)
		}
		seen[key] = true
		p.skipSpaces()
		if err := p.expect(":"); err != nil {
			return nil, nil, err
		}
		p.skipSpaces()
		v, err := p.value()
		if err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, key), append(vals, v)
		p.skipSpaces()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			p.skipSpaces()
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return keys, vals, nil
		}
		return nil, nil, p.errf("want ',' or '}', got %s", p.got())
	}
}

func (p *valueParser) dict() (ops.Value, error) {
	p.pos++
	keys, vals, err := p.dictEntries()
	if err != nil {
		return nil, err
	}
	return ops.Dict{Keys: keys, Values: vals}, nil
}

// kwargs reads a kwargs dict into keyword arguments.
func (p *valueParser) kwargs() ([]Kwarg, error) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	keys, vals, err := p.dictEntries()
	if err != nil {
		return nil, err
	}
	var kw []Kwarg
	for i, k := range keys {
		kw = append(kw, Kwarg{Name: k, Value: vals[i]})
	}
	return kw, nil
}

// numEnd scans a number token (sign, digits, '.', exponent, a trailing j)
// from i and returns its end, or i when there is none.
func numEnd(s string, i int) int {
	j := i
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	for _, w := range []string{"inf", "nan"} {
		if strings.HasPrefix(s[j:], w) {
			j += 3
			if j < len(s) && s[j] == 'j' {
				j++
			}
			return j
		}
	}
	digits := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			digits++
		}
	}
	if digits == 0 {
		return i
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			k++
		}
		if k < len(s) && s[k] >= '0' && s[k] <= '9' {
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			j = k
		}
	}
	if j < len(s) && s[j] == 'j' {
		j++
	}
	return j
}

func parsePyFloat(t string) (float64, error) {
	switch strings.TrimPrefix(strings.TrimPrefix(t, "+"), "-") {
	case "inf", "nan":
		f, _ := strconv.ParseFloat(t, 64)
		return f, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, err
	}
	return f, nil // out of range reads as ±inf or 0, as in Python
}

// number reads an int, a float or an imaginary literal.
func (p *valueParser) number() (ops.Value, error) {
	start := p.pos
	end := numEnd(p.s, start)
	if end == start {
		return nil, p.errf("want a number, got %s", p.got())
	}
	if end < len(p.s) && isIdentByte(p.s[end]) {
		return nil, p.errf("want a number, got %q", clip(p.s[start:]))
	}
	t := p.s[start:end]
	if strings.HasSuffix(t, "j") {
		f, err := parsePyFloat(t[:len(t)-1])
		if err != nil {
			return nil, p.errf("bad imaginary literal %q", t)
		}
		p.pos = end
		return complex(0, f), nil
	}
	if strings.ContainsAny(t, ".eEna") {
		f, err := parsePyFloat(t)
		if err != nil {
			return nil, p.errf("bad float literal %q", t)
		}
		p.pos = end
		return f, nil
	}
	i, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return nil, p.errf("integer %s does not fit in int64", t)
	}
	p.pos = end
	return i, nil
}

// complexLit reads Python's complex repr "(re±imj)" at '(' if present.
func (p *valueParser) complexLit() (ops.Value, bool) {
	s, i := p.s, p.pos+1
	e1 := numEnd(s, i)
	if e1 == i || strings.HasSuffix(s[i:e1], "j") || e1 >= len(s) || (s[e1] != '+' && s[e1] != '-') {
		return nil, false
	}
	e2 := numEnd(s, e1)
	if e2 == e1 || !strings.HasSuffix(s[e1:e2], "j") || e2 >= len(s) || s[e2] != ')' {
		return nil, false
	}
	re, err1 := parsePyFloat(s[i:e1])
	im, err2 := parsePyFloat(s[e1 : e2-1])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	p.pos = e2 + 1
	return complex(re, im), true
}

// str reads a Python string literal.
func (p *valueParser) str() (string, error) {
	q := p.s[p.pos]
	start := p.pos
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			p.pos = start
			return "", p.errf("unterminated string literal")
		}
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.errf("invalid UTF-8 in string literal")
			}
			b.WriteString(p.s[p.pos : p.pos+size])
			p.pos += size
		}
	}
}

func (p *valueParser) escape(b *strings.Builder) error {
	p.pos++ // the backslash
	if p.pos >= len(p.s) {
		return p.errf("unterminated string literal")
	}
	c := p.s[p.pos]
	p.pos++
	simple := map[byte]string{'\\': `\`, '\'': `'`, '"': `"`, 'n': "\n", 'r': "\r", 't': "\t", 'a': "\a", 'b': "\b", 'f': "\f", 'v': "\v"}
	if r, ok := simple[c]; ok {
		b.WriteString(r)
		return nil
	}
	hexLen := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	if c >= '0' && c <= '7' {
		start := p.pos - 1
		for p.pos < len(p.s) && p.pos-start < 3 && p.s[p.pos] >= '0' && p.s[p.pos] <= '7' {
			p.pos++
		}
		v, _ := strconv.ParseUint(p.s[start:p.pos], 8, 32)
		b.WriteRune(rune(v))
		return nil
	}
	if hexLen == 0 {
		p.pos -= 2
		return p.errf("unknown escape \\%c in string literal", c)
	}
	if p.pos+hexLen > len(p.s) {
		p.pos -= 2
		return p.errf("want %d hex digits after \\%c", hexLen, c)
	}
	v, err := strconv.ParseUint(p.s[p.pos:p.pos+hexLen], 16, 32)
	if err != nil || v > utf8.MaxRune || (v >= 0xd800 && v <= 0xdfff) {
		p.pos -= 2
		return p.errf("bad escape \\%c%s: want %d hex digits naming a Unicode scalar value", c, p.s[p.pos+2:p.pos+2+hexLen], hexLen)
	}
	p.pos += hexLen
	b.WriteRune(rune(v))
	return nil
}

// torchConstant reads torch.<name> as a layout, memory format or dtype.
func torchConstant(w string) (ops.Value, bool) {
	for l := ops.LayoutUnknown; l <= ops.LayoutStrided; l++ {
		if l.String() == w {
			return l, true
		}
	}
	for m := ops.MemoryFormatUnknown; m <= ops.PreserveFormat; m++ {
		if m.String() == w {
			return m, true
		}
	}
	if d, err := tensor.ParseDType(w); err == nil && strings.HasPrefix(w, "torch.") {
		return d, true
	}
	return nil, false
}

// word reads a bare word: a keyword, a torch constant, a device, a call
// (slice(...), device(...)), or, by notation, a string or node reference.
func (p *valueParser) word() (ops.Value, error) {
	start := p.pos
	for p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
		p.pos++
	}
	w := p.s[start:p.pos]
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		switch w {
		case "slice":
			return p.slice()
		case "device":
			return p.device()
		}
		p.pos = start
		return nil, p.errf("unknown call %s(...): want slice(...) or device(...)", w)
	}
	switch w {
	case "None":
		return nil, nil
	case "True":
		return true, nil
	case "False":
		return false, nil
	case "inf":
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	case "infj":
		return complex(0, math.Inf(1)), nil
	case "nanj":
		return complex(0, math.NaN()), nil
	}
	if strings.HasPrefix(w, "torch.") || w == "torch" {
		if v, ok := torchConstant(w); ok {
			return v, nil
		}
		if strings.HasPrefix(w, "torch.ops.") {
			return p.operatorWord(w, start)
		}
		p.pos = start
		return nil, p.errf("unknown torch constant %q: want a dtype (torch.int8), layout (torch.strided) or memory format (torch.contiguous_format)", w)
	}
	if strings.HasSuffix(w, ".") {
		p.pos = start
		return nil, p.errf("bad word %q: a word cannot end in '.'", w)
	}
	switch p.style {
	case styleFX:
		if deviceTypes[w] {
			if p.pos+1 < len(p.s) && p.s[p.pos] == ':' && p.s[p.pos+1] >= '0' && p.s[p.pos+1] <= '9' {
				p.pos++
				for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
					p.pos++
				}
			}
			return ops.Device(p.s[start:p.pos]), nil
		}
		if reservedWords[w] {
			p.pos = start
			return nil, p.errf("%q is reserved: quote it to write a string", w)
		}
		return w, nil
	case styleRepr:
		if !ops.IsIdentifier(w) {
			p.pos = start
			return nil, p.errf("want a node name, got %q", w)
		}
		return p.ref(w, p.line, start+1)
	}
	p.pos = start
	return nil, p.errf("want a value (%%node, number, quoted string, None, True, False, torch.*), got %q", w)
}

// slice reads the rest of "slice(a, b, c)"; its parts are Python reprs.
func (p *valueParser) slice() (ops.Value, error) {
	p.pos++ // '('
	saved := p.style
	if p.style == styleFX {
		p.style = styleRepr
	}
	defer func() { p.style = saved }()
	var parts [3]ops.Value
	for i := range parts {
		p.skipSpaces()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		parts[i] = v
		p.skipSpaces()
		sep := ", "
		if i == 2 {
			sep = ")"
		}
		if err := p.expect(strings.TrimSpace(sep)); err != nil {
			return nil, err
		}
	}
	return ops.Slice{Start: parts[0], Stop: parts[1], Step: parts[2]}, nil
}

// device reads the rest of "device(type='cuda', index=0)".
func (p *valueParser) device() (ops.Value, error) {
	p.pos++ // '('
	p.skipSpaces()
	if err := p.expect("type="); err != nil {
		return nil, err
	}
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return nil, p.errf("want a quoted device type, got %s", p.got())
	}
	t, err := p.str()
	if err != nil {
		return nil, err
	}
	dev := t
	p.skipSpaces()
	if strings.HasPrefix(p.s[p.pos:], ",") {
		p.pos++
		p.skipSpaces()
		if err := p.expect("index="); err != nil {
			return nil, err
		}
		if p.pos < len(p.s) && (p.s[p.pos] == '\'' || p.s[p.pos] == '"') {
			idx, err := p.str()
			if err != nil {
				return nil, err
			}
			dev += ":" + idx
		} else {
			start := p.pos
			for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
				p.pos++
			}
			if start == p.pos {
				return nil, p.errf("want a device index, got %s", p.got())
			}
			dev += ":" + p.s[start:p.pos]
		}
		p.skipSpaces()
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	return ops.Device(dev), nil
}
