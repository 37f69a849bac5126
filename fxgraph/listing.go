package fxgraph

import (
	"fmt"
	"io"
	"strings"

	"github.com/fxquant/fxquant/ops"
)

// Ref stands for a node, by name, inside the arguments of a [ListingRow]
// (a listing is read without building a graph). The printers accept it
// wherever they accept a *Node.
type Ref struct {
	// Name is the referenced node's name, without the % sign.
	Name string
}

// ListingRow is one line of the PyTorch fixture listing
// (tests/testdata/pt2e/*.graph.txt):
//
//	name | op | target | args | kwargs
//
// Args and Kwargs hold the parsed Python values, with each node written
// %name in the text held as a [Ref]. An operator argument is written as
// its Python repr and held as an operator value:
// <OpOverload(op='aten.linear', overload='default')> is an [ops.Overload],
// <OpOverloadPacket(op='aten.linear')> an [ops.Packet] and
// <built-in function getitem> an [ops.Callable].
type ListingRow struct {
	Name   string      // the node's name, e.g. "linear_1"
	Op     OpKind      // the node's opcode
	Target string      // str(node.target): "aten.linear.default", "torchao.quantize_affine", "<built-in function getitem>"
	Args   []ops.Value // the positional arguments, node references as [Ref]s
	Kwargs []Kwarg     // the keyword arguments in the listed order, node references as [Ref]s
}

// String returns the row's line, without a newline, exactly as the
// fixture generator writes it: args as repr(tuple(args)) and kwargs as
// repr(dict(kwargs)), in Python's repr conventions (strings and dict keys
// quoted, floats by [PyFloat], dtypes as torch.int8, one-tuples (x,)) with
// nodes written %name.
func (r ListingRow) String() string {
	var b strings.Builder
	writeListingRow(&b, r.Name, r.Op, r.Target, r.Args, r.Kwargs)
	return b.String()
}

func writeListingRow(b *strings.Builder, name string, op OpKind, target string, args []ops.Value, kwargs []Kwarg) {
	b.WriteString(name)
	b.WriteString(" | ")
	b.WriteString(op.String())
	b.WriteString(" | ")
	b.WriteString(target)
	b.WriteString(" | ")
	writeValue(b, ops.Tuple(args), styleListing)
	b.WriteString(" | ")
	writeKwargs(b, kwargs, styleListing)
}

// ListingTarget returns str(node.target) as the fixture listing prints it:
// an overload with its overload name (aten.linear.default), a packet
// without one (torchao.quantize_affine), a function of the operator,
// builtins or math module as <built-in function getitem>, any other
// callable as module.name, and the string target of the other opcodes
// ("output" for the output node).
func ListingTarget(n *Node) string {
	if n.op != CallFunction {
		return n.targetName
	}
	switch t := n.target.(type) {
	case nil:
		return "None"
	case ops.Callable:
		switch t.Module {
		case "operator", "_operator", "builtins", "math":
			return "<built-in function " + t.Name + ">"
		}
		return t.String()
	default:
		return t.String()
	}
}

// FormatListing returns g in the fixture listing format: one
// [ListingRow.String] line per live node in program order, each ending in
// "\n", so that an fxquant graph can be compared byte for byte with a
// PyTorch listing. Types are not part of this format.
func FormatListing(g *Graph) string {
	var b strings.Builder
	for n := range g.All() {
		writeListingRow(&b, n.name, n.op, ListingTarget(n), n.args, n.Kwargs())
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseListing reads a fixture listing into rows. Blank lines are skipped.
// Each line must have the five fields separated by " | ": a node name, an
// opcode, a non-empty target, the args tuple and the kwargs dict in
// Python's repr notation (see [ListingRow]); nodes are written %name and
// read as [Ref]s, which are not checked against the other rows. Errors are
// *[ParseError]s.
func ParseListing(r io.Reader) ([]ListingRow, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("fxgraph: parse listing: %w", err)
	}
	return ParseListingString(string(src))
}

// ParseListingString is [ParseListing] on a string.
func ParseListingString(src string) ([]ListingRow, error) {
	var rows []ListingRow
	for i, l := range strings.Split(src, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		row, err := parseListingLine(l, i+1)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func parseListingLine(l string, lineNo int) (ListingRow, error) {
	p := &valueParser{s: l, line: lineNo, style: styleListing,
		ref: func(name string, _, _ int) (ops.Value, error) { return Ref{Name: name}, nil }}
	var fields [3]string
	for i, what := range []string{"a node name", "an opcode", "a target"} {
		j := strings.Index(l[p.pos:], " | ")
		if j <= 0 {
			return ListingRow{}, p.errf("want %s followed by \" | \"", what)
		}
		fields[i] = l[p.pos : p.pos+j]
		if i == 0 && !ops.IsIdentifier(fields[0]) {
			return ListingRow{}, p.errf("want a node name, got %q", clip(fields[0]))
		}
		if i == 1 {
			if _, err := ParseOpKind(fields[1]); err != nil {
				return ListingRow{}, p.errf("want an opcode, got %q", clip(fields[1]))
			}
		}
		p.pos += j + 3
	}
	op, _ := ParseOpKind(fields[1])
	argCol := p.pos
	v, err := p.value()
	if err != nil {
		return ListingRow{}, err
	}
	args, ok := v.(ops.Tuple)
	if !ok {
		p.pos = argCol
		return ListingRow{}, p.errf("want the args tuple, got %s", formatValue(v, styleListing))
	}
	if err := p.expect(" | "); err != nil {
		return ListingRow{}, err
	}
	kwargs, err := p.kwargs()
	if err != nil {
		return ListingRow{}, err
	}
	if err := p.end(); err != nil {
		return ListingRow{}, err
	}
	return ListingRow{Name: fields[0], Op: op, Target: fields[2], Args: []ops.Value(args), Kwargs: kwargs}, nil
}

// GraphFromListing builds a graph from listing rows: node names are kept
// exactly, call_function targets are read with [ops.ParseTarget]
// (aten.add.Tensor, torchao.quantize_affine, <built-in function getitem>),
// and each [Ref] must name an earlier row. The nodes have no types. It
// fails, naming the row, on a duplicate name, an unknown or later node, or
// a target that does not parse, and on rows without an output row or
// with two.
func GraphFromListing(rows []ListingRow) (*Graph, error) {
	g := New()
	defs := make(map[string]*Node, len(rows))
	outputRow := 0 // 1-based row of the output; 0 before it
	for i, r := range rows {
		if r.Op == Output {
			if outputRow != 0 {
				return nil, fmt.Errorf("fxgraph: listing row %d (%s): duplicate output row: row %d is already the output, and a graph has one", i+1, r.Name, outputRow)
			}
			outputRow = i + 1
		}
		if _, dup := defs[r.Name]; dup || g.names.taken(r.Name) {
			return nil, fmt.Errorf("fxgraph: listing row %d: duplicate node name %q", i+1, r.Name)
		}
		resolve := func(v ops.Value) (ops.Value, error) {
			ref, ok := v.(Ref)
			if !ok {
				return nil, fmt.Errorf("value of Go type %T is not an argument", v)
			}
			n, ok := defs[ref.Name]
			if !ok {
				return nil, fmt.Errorf("unknown node %%%s (not defined on an earlier row)", ref.Name)
			}
			return n, nil
		}
		args := make([]ops.Value, len(r.Args))
		for j, a := range r.Args {
			m, err := ops.MapValue(a, resolve)
			if err != nil {
				return nil, fmt.Errorf("fxgraph: listing row %d (%s): arg %d: %w", i+1, r.Name, j, err)
			}
			args[j] = m
		}
		kwargs := make([]Kwarg, len(r.Kwargs))
		for j, k := range r.Kwargs {
			m, err := ops.MapValue(k.Value, resolve)
			if err != nil {
				return nil, fmt.Errorf("fxgraph: listing row %d (%s): kwarg %s: %w", i+1, r.Name, k.Name, err)
			}
			kwargs[j] = Kwarg{Name: k.Name, Value: m}
		}
		var target ops.Target
		targetName := r.Target
		if r.Op == CallFunction {
			t, err := ops.ParseTarget(r.Target)
			if err != nil {
				return nil, fmt.Errorf("fxgraph: listing row %d (%s): %w", i+1, r.Name, err)
			}
			target, targetName = t, ""
		}
		defs[r.Name] = addNamedNode(g, r.Op, target, targetName, args, kwargs, r.Name, nil)
	}
	if outputRow == 0 && len(rows) > 0 {
		return nil, fmt.Errorf("fxgraph: listing: missing output row: none of the %d rows has opcode output", len(rows))
	}
	return g, nil
}
