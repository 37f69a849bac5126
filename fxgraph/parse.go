package fxgraph

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
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
// The text is a "graph():" header, then the symbol declarations of a graph
// with symbolic sizes ("# symbol NAME: range=[min, max], hint=N,
// assumptions=(...)", each part optional, in that order; see [Symbol]),
// then one node line each (leading whitespace is ignored, blank lines
// are skipped, "\r\n" line ends are accepted). Node names are kept
// exactly, types are read by the type parser, call_function targets must
// be FX qualified names
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
// second return line, a num_users that disagrees with the text. Text
// without a return line is a fragment (Verify reports the missing
// output), but when its counts disagree the error says the return line is
// missing rather than blame a count. Bad input is always an error, never
// a panic.
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

// parsedNode is what the parser keeps about a node it made: where its
// [num_users=N] is, the N the text claims, and the distinct users counted
// so far as later lines refer to it. It is kept small (there is one per
// node); line and column are worked out from off when an error needs them.
type parsedNode struct {
	node     *Node
	off      int    // offset in the text of "[num_users=N]"
	want     int32  // N (at most 9 digits); -1 for an output node, which no %name line defines
	users    int32  // distinct users seen so far, saturating
	lastUser uint32 // seq of the last user counted, so that a user counts once
}

// isOutput reports whether d is an output node.
func (d *parsedNode) isOutput() bool { return d.want < 0 }

// position returns the 1-based line and column of offset off in the text.
func (p *graphParser) position(off int) (line, col int) {
	start := strings.LastIndexByte(p.src[:off], '\n') + 1
	return 1 + strings.Count(p.src[:start], "\n"), off - start + 1
}

// Per-parse caches stop growing at this many entries, so that text with
// ever-new types or targets costs a parse each rather than memory.
const maxParseCache = 4096

// minNodeLine is the length of the shortest node line with its newline,
// "%a : [num_users=0] = get_attr[target=a]\n": the text holds at most
// len/minNodeLine+1 node lines, which sizes the parser's tables.
const minNodeLine = 40

// graphParser reads the text of [Format] into a new graph, one line at a
// time.
type graphParser struct {
	g   *Graph
	src string
	// nodes holds the nodes made so far, indexed by id (the graph is new,
	// so ids count up from 0 in line order). A name is looked up in the
	// graph's namespace, which gives the id of the node it was reserved
	// for.
	nodes []parsedNode

	// The line being parsed: its number and offset, the name it defines
	// ("" for the output line), its user sequence number (1-based, one per
	// line) and the offset of the next line (len(src)+1 after the last).
	lineNo  int
	lineOff int
	current string
	seq     uint32
	restOff int

	// Types and targets repeat from line to line; each distinct text is
	// parsed once and its (immutable) value shared by the nodes.
	types   map[string]ops.Type
	targets map[string]ops.Target

	vp     valueParser
	recent recentNames
	// lastRef is the id of the node the last reference named: the next
	// one often names a node defined a little after it (a tuple of
	// outputs, a cat list), which following finds without the namespace.
	lastRef int
	boxes   boxCache
	kws     arena[Kwarg]

	// outputLine is the line of the return line; 0 before it.
	outputLine int
}

func (p *graphParser) parse(src string) error {
	p.src = src
	hint := min(strings.Count(src, "\n"), len(src)/minNodeLine) + 1
	p.nodes = make([]parsedNode, 0, hint)
	p.g.growNames(hint)
	p.vp = valueParser{ref: p.resolve, vals: &p.g.vals, kws: &p.kws, boxes: &p.boxes}
	header := false
	for off, lineNo := 0, 1; off <= len(src); lineNo++ {
		l := src[off:]
		next := len(src) + 1
		if i := strings.IndexByte(l, '\n'); i >= 0 {
			l, next = l[:i], off+i+1
		}
		p.lineNo, p.lineOff, p.restOff = lineNo, off, next
		off = next
		l = strings.TrimSuffix(l, "\r")
		t := trimBlanks(l)
		if isBlank(t) {
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
		if strings.HasPrefix(t, symbolLinePrefix) {
			if len(p.nodes) > 0 {
				return &ParseError{lineNo, indent + 1, "symbol declarations must come before the first node"}
			}
			sym, err := parseSymbol(strings.TrimRight(t, " \t"))
			if err != nil {
				return &ParseError{lineNo, indent + 1, err.Error()}
			}
			if _, dup := p.g.Symbol(sym.Name); dup {
				return &ParseError{lineNo, indent + 1, fmt.Sprintf("symbol %s is declared twice", sym.Name)}
			}
			p.g.syms = append(p.g.syms, sym)
			continue
		}
		if p.seq++; p.seq == 0 { // wrapped: forget who was counted
			for i := range p.nodes {
				p.nodes[i].lastUser = 0
			}
			p.seq = 1
		}
		if err := p.parseLine(l, indent, lineNo); err != nil {
			return err
		}
	}
	if !header {
		return &ParseError{1, 1, `want the header "graph():", got empty text`}
	}
	for i := range p.nodes {
		if d := &p.nodes[i]; !d.isOutput() && d.users != d.want {
			// Text without a return line may be a fragment (Verify reports
			// the missing output), but when its counts disagree the missing
			// line is the likelier cause: say so rather than blame a count.
			if p.outputLine == 0 {
				return &ParseError{p.lineNo, 1, fmt.Sprintf("missing return line: the graph has no output, and node %%%s's [num_users=%d] counts users the text does not give (want a last line \"return ...\")", d.node.name, d.want)}
			}
			line, col := p.position(d.off)
			return &ParseError{line, col, fmt.Sprintf("node %%%s: [num_users=%d] but the text gives it %d user(s)", d.node.name, d.want, d.node.NumUsers())}
		}
	}
	return nil
}

// trimBlanks drops leading spaces and tabs.
func trimBlanks(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

// isBlank reports whether s holds only white space.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r':
		default:
			if s[i] < utf8.RuneSelf {
				return false
			}
			return strings.TrimSpace(s[i:]) == ""
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// laterDeclarations calls yield with the name and line number of each
// line after the current one that starts (after blanks) with %name, in
// text order, until yield returns false. Only the error paths and the
// output line need it, so the text is scanned on demand.
func (p *graphParser) laterDeclarations(yield func(name string, line int) bool) {
	if p.restOff > len(p.src) {
		return // the current line is the last
	}
	rest, lineNo := p.src[p.restOff:], p.lineNo
	for {
		lineNo++
		l := rest
		i := strings.IndexByte(rest, '\n')
		if i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		}
		t := trimBlanks(strings.TrimSuffix(l, "\r"))
		if strings.HasPrefix(t, "%") {
			end := 1
			for end < len(t) && isIdentByte(t[end]) {
				end++
			}
			if name := t[1:end]; name != "" && !yield(name, lineNo) {
				return
			}
		}
		if i < 0 {
			return
		}
	}
}

// recentNames remembers, in each of a few slots picked by a cheap hash
// of the name, the node last defined or resolved under that slot. Most
// references name a node a few lines up, and find it here without a probe
// of the namespace's table, which is too big to stay in cache.
type recentNames struct {
	slots [recentSize]recentName
}

type recentName struct {
	name string
	id   int
}

const recentSize = 256 // a power of two

// recentSlot hashes the length and the last bytes of a name, where names
// that share a prefix (relu_default_12, relu_default_13) differ.
func recentSlot(name string) int {
	h := uint64(len(name))
	for i := max(len(name)-8, 0); i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 0x100000001b3
	}
	return int((h * 0x9e3779b97f4a7c15) >> 56) // top 8 bits
}

// find returns the recent node named name, or nil.
func (r *recentNames) find(name string, nodes []parsedNode) *parsedNode {
	e := &r.slots[recentSlot(name)]
	if e.name != name || e.id >= len(nodes) {
		return nil
	}
	return &nodes[e.id]
}

// add remembers that name is the node with the given id.
func (r *recentNames) add(name string, id int) {
	r.slots[recentSlot(name)] = recentName{name, id}
}

// followScan is how many nodes after the last referenced one following
// looks at.
const followScan = 8

// following returns the node named name if it is one of the followScan
// nodes defined right after the last referenced node, or nil. It reads
// nodes in definition order, which the cache follows well, where the
// namespace's table would be probed at random.
func (p *graphParser) following(name string) *parsedNode {
	end := min(p.lastRef+1+followScan, len(p.nodes))
	for id := p.lastRef + 1; id < end; id++ {
		if d := &p.nodes[id]; !d.isOutput() && d.node.name == name {
			return d
		}
	}
	return nil
}

// defined returns the node a %name line defined, or nil.
func (p *graphParser) defined(name string) *parsedNode {
	id, ok := p.g.nameOwner(name)
	if !ok || id < 0 || id >= len(p.nodes) || p.nodes[id].isOutput() {
		return nil
	}
	return &p.nodes[id]
}

// resolve returns the node a reference names and counts the current line
// as one of its users.
func (p *graphParser) resolve(name string, line, col int) (ops.Value, error) {
	d := p.recent.find(name, p.nodes)
	if d == nil {
		d = p.following(name)
	}
	if d == nil {
		d = p.defined(name)
		if d != nil {
			p.recent.add(name, d.node.id)
		}
	}
	if d != nil {
		p.lastRef = d.node.id
		if d.lastUser != p.seq {
			d.lastUser = p.seq
			if d.users < math.MaxInt32 {
				d.users++
			}
		}
		return d.node, nil
	}
	if name == p.current {
		return nil, &ParseError{line, col, fmt.Sprintf("node %%%s is used in its own definition", name)}
	}
	later := 0
	p.laterDeclarations(func(n string, l int) bool {
		if n == name {
			later = l
			return false
		}
		return true
	})
	if later > 0 {
		return nil, &ParseError{line, col, fmt.Sprintf("node %%%s is used before its definition on line %d", name, later)}
	}
	return nil, &ParseError{line, col, fmt.Sprintf("unknown node %%%s", name)}
}

func (p *graphParser) parseLine(l string, indent, lineNo int) error {
	s := &p.vp // its arenas, caches and scratch stacks stay from line to line
	s.s, s.pos, s.line, s.style, s.depth = l, indent, lineNo, styleFX, 0
	if rest := l[indent:]; rest == "return" || strings.HasPrefix(rest, "return ") {
		if p.outputLine != 0 {
			return &ParseError{lineNo, indent + 1, fmt.Sprintf("duplicate return line: the graph already returns on line %d, and a graph has one output", p.outputLine)}
		}
		p.outputLine = lineNo
		s.pos += len("return")
		s.skipSpaces()
		s.style = styleRepr
		p.current = ""
		v, err := s.value()
		if err != nil {
			return err
		}
		if err := s.end(); err != nil {
			return err
		}
		args := p.g.vals.take(1)
		args[0] = v
		n := p.addNode(Output, nil, "output", args, nil, p.outputName(), nil)
		p.nodes = append(p.nodes, parsedNode{node: n, want: -1})
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
	if first := p.defined(name); first != nil {
		firstLine, _ := p.position(first.off)
		return &ParseError{lineNo, nameCol - 1, fmt.Sprintf("duplicate node name %%%s (first defined on line %d)", name, firstLine)}
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
		t, err := p.parseType(l[s.pos : s.pos+i])
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
		t, err := p.parseTarget(tgtText)
		if err != nil {
			s.pos = tgtCol
			return s.errf("%v", err)
		}
		target, targetName = t, ""
	}
	if err := s.expect("]"); err != nil {
		return err
	}
	p.current = name
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
			args = p.g.vals.take(1)
			args[0] = v
		}
	case GetAttr:
	default:
		if err := s.expect("(args = "); err != nil {
			return err
		}
		s.style = styleFX
		args, err = s.argsTuple()
		if err != nil {
			return err
		}
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
	p.recent.add(name, n.id)
	p.nodes = append(p.nodes, parsedNode{node: n, off: p.lineOff + usersCol - 1, want: int32(numUsers)})
	return nil
}

// parseType reads a type slot, parsing each distinct text once.
func (p *graphParser) parseType(text string) (ops.Type, error) {
	if t, ok := p.types[text]; ok {
		return t, nil
	}
	t, err := parseTypeText(text)
	if err != nil {
		return nil, err
	}
	if p.types == nil {
		p.types = make(map[string]ops.Type)
	}
	if len(p.types) < maxParseCache {
		t = clipType(t)
		p.types[text] = t
	}
	return t, nil
}

// clipType caps the capacity of a type's slices at their length, so that
// nodes sharing the type cannot reach each other's memory through append
// (types are immutable values; this guards against a careless append).
func clipType(t ops.Type) ops.Type {
	switch x := t.(type) {
	case ops.TensorType:
		x.Shape, x.Syms = slices.Clip(x.Shape), slices.Clip(x.Syms)
		return x
	case ops.TupleType:
		elems := make([]ops.Type, len(x.Elems))
		for i, e := range x.Elems {
			if e != nil {
				e = clipType(e)
			}
			elems[i] = e
		}
		return ops.TupleType{Elems: elems}
	}
	return t
}

// parseTarget reads a call_function target, parsing each distinct text
// once.
func (p *graphParser) parseTarget(text string) (ops.Target, error) {
	if t, ok := p.targets[text]; ok {
		return t, nil
	}
	t, err := parseFXTarget(text)
	if err != nil {
		return nil, err
	}
	if p.targets == nil {
		p.targets = make(map[string]ops.Target)
	}
	if len(p.targets) < maxParseCache {
		p.targets[text] = t
	}
	return t, nil
}

// outputName picks "output" (or output_N) avoiding every name the text
// defines, since the output line does not print its node's name. Names on
// earlier lines are reserved in the graph already; the lines after the
// output line are read here. It runs once: a second return line is an
// error.
func (p *graphParser) outputName() string {
	var later map[string]bool
	p.laterDeclarations(func(n string, _ int) bool {
		if strings.HasPrefix(n, "output") {
			if later == nil {
				later = map[string]bool{}
			}
			later[n] = true
		}
		return true
	})
	for i := 0; ; i++ {
		name := "output"
		if i > 0 {
			name += "_" + strconv.Itoa(i)
		}
		if !later[name] && !p.g.names.taken(name) {
			return name
		}
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

	// Optional, for parsers that read many lines: arenas for the slices
	// of containers and kwargs, and a cache of boxed numbers. Without
	// them each slice and number gets an allocation of its own.
	vals  *arena[ops.Value]
	kws   *arena[Kwarg]
	boxes *boxCache
	// stack and keys collect the elements of the containers being read
	// (nested ones above their parents), so that each container's slice is
	// allocated once at its final length.
	stack []ops.Value
	keys  []string
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

// argsTuple reads a node's args: a tuple, returned as its elements.
func (p *valueParser) argsTuple() ([]ops.Value, error) {
	start := p.pos
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		if v, ok := p.complexLit(); ok {
			p.pos = start
			return nil, p.errf("want the args tuple, got %s", formatValue(v, styleFX))
		}
		// value's tuple case, without boxing the tuple.
		p.depth++
		defer func() { p.depth-- }()
		p.pos++
		xs, comma, err := p.seq(')')
		if err != nil {
			return nil, err
		}
		if len(xs) == 1 && !comma {
			p.pos = start
			return nil, p.errf("want a ',' after the only element of a one-element tuple")
		}
		return xs, nil
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.pos = start
	return nil, p.errf("want the args tuple, got %s", formatValue(v, styleFX))
}

// seq reads comma-separated values up to close (the opening bracket is
// consumed); a trailing comma is allowed and reported. An empty sequence
// is nil.
func (p *valueParser) seq(close byte) (xs []ops.Value, trailingComma bool, err error) {
	base := len(p.stack)
	defer p.dropStack(base)
	p.skipSpaces()
	for {
		if p.pos < len(p.s) && p.s[p.pos] == close {
			p.pos++
			return p.values(base), len(p.stack) > base, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, false, err
		}
		p.stack = append(p.stack, v)
		p.skipSpaces()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			p.skipSpaces()
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == close {
			p.pos++
			return p.values(base), false, nil
		}
		return nil, false, p.errf("want ',' or %q, got %s", string(close), p.got())
	}
}

// values returns a copy of the stacked values from base on (nil if none),
// taken from the value arena when there is one.
func (p *valueParser) values(base int) []ops.Value {
	k := len(p.stack) - base
	if k == 0 {
		return nil
	}
	var out []ops.Value
	if p.vals != nil {
		out = p.vals.take(k)
	} else {
		out = make([]ops.Value, k)
	}
	copy(out, p.stack[base:])
	return out
}

// dropStack pops the value and key stacks back to base (keys to their
// own base through dropKeys), clearing the popped entries so that the
// scratch space holds on to nothing.
func (p *valueParser) dropStack(base int) {
	clear(p.stack[base:])
	p.stack = p.stack[:base]
}

// smallDict is the number of keys up to which a dict's duplicate check is
// a linear scan; beyond it a set is built.
const smallDict = 16

// dictEntries reads "key: value" pairs up to '}' (the '{' is consumed),
// pushing the keys on p.keys and the values on p.stack; the caller takes
// them from keyBase and valBase and pops them.
func (p *valueParser) dictEntries() (keyBase, valBase int, err error) {
	keyBase, valBase = len(p.keys), len(p.stack)
	var seen map[string]bool // only for dicts with many keys
	p.skipSpaces()
	for {
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return keyBase, valBase, nil
		}
		keyCol := p.pos
		var key string
		if p.pos < len(p.s) && (p.s[p.pos] == '\'' || p.s[p.pos] == '"') {
			k, err := p.str()
			if err != nil {
				return keyBase, valBase, err
			}
			key = k
		} else {
			for p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
				p.pos++
			}
			key = p.s[keyCol:p.pos]
			if key == "" {
				return keyBase, valBase, p.errf("want a dict key (an identifier or a quoted string), got %s", p.got())
			}
		}
		prev := p.keys[keyBase:]
		dup := false
		if len(prev) < smallDict {
			dup = slices.Contains(prev, key)
		} else {
			if seen == nil {
				seen = make(map[string]bool, 2*len(prev))
				for _, k := range prev {
					seen[k] = true
				}
			}
			dup = seen[key]
			seen[key] = true
		}
		if dup {
			p.pos = keyCol
			return keyBase, valBase, p.errf("duplicate dict key %q", key)
		}
		p.skipSpaces()
		if err := p.expect(":"); err != nil {
			return keyBase, valBase, err
		}
		p.skipSpaces()
		v, err := p.value()
		if err != nil {
			return keyBase, valBase, err
		}
		p.keys, p.stack = append(p.keys, key), append(p.stack, v)
		p.skipSpaces()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			p.skipSpaces()
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return keyBase, valBase, nil
		}
		return keyBase, valBase, p.errf("want ',' or '}', got %s", p.got())
	}
}

// dropKeys pops the key stack back to base.
func (p *valueParser) dropKeys(base int) {
	clear(p.keys[base:])
	p.keys = p.keys[:base]
}

func (p *valueParser) dict() (ops.Value, error) {
	p.pos++
	kb, vb, err := p.dictEntries()
	defer p.dropKeys(kb)
	defer p.dropStack(vb)
	if err != nil {
		return nil, err
	}
	var keys []string
	if len(p.keys) > kb {
		keys = slices.Clone(p.keys[kb:])
	}
	return ops.Dict{Keys: keys, Values: p.values(vb)}, nil
}

// kwargs reads a kwargs dict into keyword arguments (nil for {}).
func (p *valueParser) kwargs() ([]Kwarg, error) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	kb, vb, err := p.dictEntries()
	defer p.dropKeys(kb)
	defer p.dropStack(vb)
	if err != nil {
		return nil, err
	}
	k := len(p.keys) - kb
	if k == 0 {
		return nil, nil
	}
	var kw []Kwarg
	if p.kws != nil {
		kw = p.kws.take(k)
	} else {
		kw = make([]Kwarg, k)
	}
	for i := range kw {
		kw[i] = Kwarg{Name: p.keys[kb+i], Value: p.stack[vb+i]}
	}
	return kw, nil
}

// boxCache hands out boxed numbers: a number read again gets the
// interface value made the first time instead of a new allocation (boxed
// values are immutable, so sharing them is safe). It is direct-mapped by
// the number's bits; a nil cache boxes every number anew.
type boxCache struct {
	ints, floats [boxCacheSize]boxEntry
}

const boxCacheSize = 64 // a power of two

type boxEntry struct {
	bits uint64
	v    ops.Value
}

func boxSlot(bits uint64) uint64 { return (bits * 0x9e3779b97f4a7c15) >> 58 } // top 6 bits

// int returns i as a Value.
func (c *boxCache) int(i int64) ops.Value {
	if c == nil || uint64(i) < 256 { // Go boxes small integers without allocating
		return i
	}
	e := &c.ints[boxSlot(uint64(i))]
	if e.v == nil || e.bits != uint64(i) {
		e.bits, e.v = uint64(i), i
	}
	return e.v
}

// float returns f as a Value; floats are told apart by their bits, so
// -0.0 and each NaN payload keep their own box.
func (c *boxCache) float(f float64) ops.Value {
	if c == nil {
		return f
	}
	bits := math.Float64bits(f)
	e := &c.floats[boxSlot(bits)]
	if e.v == nil || e.bits != bits {
		e.bits, e.v = bits, f
	}
	return e.v
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
		return p.boxes.float(f), nil
	}
	i, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return nil, p.errf("integer %s does not fit in int64", t)
	}
	p.pos = end
	return p.boxes.int(i), nil
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
