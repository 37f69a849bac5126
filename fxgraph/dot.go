package fxgraph

import (
	"crypto/md5"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops"
)

// dotHashColors are the fill colours torch.fx's graph drawer picks from,
// by a hash of the printed target, for call_function and call_method
// nodes.
var dotHashColors = []string{
	"CadetBlue1", "Coral", "DarkOliveGreen1", "DarkSeaGreen1", "GhostWhite", "Khaki1", "LavenderBlush1",
	"LightSkyBlue", "MistyRose1", "MistyRose2", "PaleTurquoise2", "PeachPuff1", "Salmon", "Thistle1", "Thistle3",
	"Wheat1",
}

// dotMaxListLen is how many list or tuple items a DOT label shows, as in
// the FX drawer.
const dotMaxListLen = 8

// DOT returns g as a Graphviz digraph in the style of torch.fx's
// FxGraphDrawer: one record per node, in program order, whose label is
//
//	{name=%x|op_code=call_function|target=torch.ops.aten.add.Tensor|args=(%a, %b)|kwargs={}|type=f32[4]|num_users=1}
//
// (target for every opcode but output, args and kwargs for call_* nodes,
// the default for a placeholder that has one, type when the node has one),
// with lists and tuples cut to 8 items. Fill colours follow the drawer:
// placeholder AliceBlue, get_attr LightGrey, call_module LemonChiffon1,
// output PowderBlue, other nodes a colour chosen by the MD5 of the printed
// target. Edges go from each node to each of its users, in program order
// then first-use order. The same graph always gives the same bytes.
func DOT(g *Graph) string {
	var b strings.Builder
	b.WriteString("digraph fxgraph {\n")
	b.WriteString("    rankdir=\"TB\";\n")
	b.WriteString("    node [shape=\"record\", style=\"filled,rounded\"];\n")
	for n := range g.All() {
		b.WriteString("    ")
		b.WriteString(strconv.Quote(n.name))
		b.WriteString(" [label=\"{")
		for i, f := range dotFields(n) {
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(dotEscape(f))
		}
		b.WriteString("}\", fillcolor=")
		b.WriteString(strconv.Quote(dotColor(n)))
		b.WriteString("];\n")
	}
	for n := range g.All() {
		for _, u := range n.Users() {
			b.WriteString("    ")
			b.WriteString(strconv.Quote(n.name))
			b.WriteString(" -> ")
			b.WriteString(strconv.Quote(u.name))
			b.WriteString(";\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// dotFields returns the record's fields, unescaped.
func dotFields(n *Node) []string {
	fields := []string{"name=%" + n.name, "op_code=" + n.op.String()}
	if n.op != Output {
		fields = append(fields, "target="+prettyTarget(n))
	}
	switch n.op {
	case Placeholder:
		if len(n.args) > 0 {
			fields = append(fields, "default="+formatValue(truncate(n.args[0]), styleRepr))
		}
	case GetAttr:
	case Output:
		fields = append(fields, "args="+formatValue(truncate(ops.Tuple(n.args)), styleFX))
	default:
		var kb strings.Builder
		kw := make([]Kwarg, len(n.Kwargs()))
		for i, k := range n.Kwargs() {
			kw[i] = Kwarg{Name: k.Name, Value: truncate(k.Value)}
		}
		writeKwargs(&kb, kw, styleFX)
		fields = append(fields, "args="+formatValue(truncate(ops.Tuple(n.args)), styleFX), "kwargs="+kb.String())
	}
	if n.typ != nil {
		fields = append(fields, "type="+n.typ.String())
	}
	if n.op != Output {
		fields = append(fields, "num_users="+strconv.Itoa(n.NumUsers()))
	}
	return fields
}

// dotEllipsis marks where a long list was cut; it prints as a bare word.
type dotEllipsis struct{ total int }

// truncate cuts lists and tuples, at any depth, to dotMaxListLen items.
func truncate(v ops.Value) ops.Value {
	cut := func(xs []ops.Value) []ops.Value {
		n := min(len(xs), dotMaxListLen)
		out := make([]ops.Value, n, n+1)
		for i := range n {
			out[i] = truncate(xs[i])
		}
		if len(xs) > dotMaxListLen {
			out = append(out, dotEllipsis{len(xs)})
		}
		return out
	}
	switch x := v.(type) {
	case ops.List:
		return ops.List(cut(x))
	case ops.Tuple:
		return ops.Tuple(cut(x))
	case ops.Dict:
		out := ops.Dict{Keys: x.Keys, Values: make([]ops.Value, len(x.Values))}
		for i, e := range x.Values {
			out.Values[i] = truncate(e)
		}
		return out
	}
	return v
}

// dotEscape escapes the characters that are special in a record field
// inside a quoted DOT string: braces, bars, angle brackets, quotes and
// backslashes.
func dotEscape(field string) string {
	var out strings.Builder
	for _, r := range field {
		switch r {
		case '{', '}', '|', '<', '>', '"', '\\':
			out.WriteByte('\\')
		}
		out.WriteRune(r)
	}
	return out.String()
}

func dotColor(n *Node) string {
	switch n.op {
	case Placeholder:
		return "AliceBlue"
	case GetAttr:
		return "LightGrey"
	case CallModule:
		return "LemonChiffon1"
	case Output:
		return "PowderBlue"
	}
	sum := md5.Sum([]byte(prettyTarget(n)))
	return dotHashColors[binary.BigEndian.Uint32(sum[:4])%uint32(len(dotHashColors))]
}
