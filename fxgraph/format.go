package fxgraph

import (
	"math"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Format returns g in fxquant's golden text format: torch.fx's str(graph)
// with each node's type in FX's type slot (STYLE.md 2.7). The first line
// is "graph():"; then, for a graph with symbolic sizes, one declaration
// per symbol of [Graph.Symbols] ("# symbol s77: range=[1, 64], hint=8,
// assumptions=(positive=True, integer=True)"); then one line per live node
// in program order, indented by four spaces and formatted by
// [FormatNode]. Every line, the last included, ends in "\n". The output
// depends only on the graph: no map is iterated.
//
// [Parse] reads the text back into a graph that formats to the same bytes.
func Format(g *Graph) string {
	var out strings.Builder
	out.WriteString("graph():\n")
	for _, s := range g.syms {
		out.WriteString("    " + formatSymbol(s) + "\n")
	}
	var types typeTexts
	var line []byte     // one node's line, appended to without a builder
	var chunks []string // earlier parts of the text, once out overflowed
	size, total := 0, g.Len()
	estimated := false
	i := 0
	for n := range g.All() {
		line = append(line[:0], "    "...)
		line = appendNode(line, n, &types)
		line = append(line, '\n')
		if i == formatSample && total > 2*formatSample {
			// Size the text from its first lines, with a margin, so that
			// it is written in one buffer without copying as it grows.
			rest := out.Len() / i * (total - i)
			out.Grow(rest + rest/8 + len(line))
			estimated = true
		} else if estimated && out.Len()+len(line) > out.Cap() {
			// The estimate fell short: go on in chunks, joined at the
			// end, rather than grow (and copy) the big buffer.
			chunks = append(chunks, out.String())
			size += out.Len()
			out = strings.Builder{}
			out.Grow(max(formatChunk, len(line)))
		}
		out.Write(line)
		i++
	}
	if chunks == nil {
		return out.String()
	}
	var joined strings.Builder
	joined.Grow(size + out.Len())
	for _, c := range chunks {
		joined.WriteString(c)
	}
	joined.WriteString(out.String())
	return joined.String()
}

// formatSample is the number of lines from which [Format] sizes its text;
// formatChunk is the size of the pieces it goes on in when the text
// outgrows that estimate.
const (
	formatSample = 256
	formatChunk  = 64 << 10
)

// FormatNode returns one node's line of [Format], without indentation or
// newline, following torch.fx's Node.format_node:
//
//	%x : f32[1, 16] [num_users=1] = placeholder[target=x]
//	%w : f32[4] [num_users=1] = placeholder[target=w](default=None)
//	%_scale0 : f32[1] [num_users=2] = get_attr[target=_scale0]
//	%add : f32[1, 16] [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%a, %b), kwargs = {})
//	return (add,)
//
// The type and its following space are left out when the node has no type.
// call_function targets print as FX's qualified name (Target.Pretty:
// torch.ops.aten.linear.default, torch.ops.torchao.quantize_affine,
// operator.getitem); other opcodes print their string target.
//
// Arguments follow FX's _format_arg: a node is %name, a list [a, b], a
// tuple (a, b) with (a,) for one element and () for none, a dict
// {key: value} in its stored order with unquoted identifier keys, a dtype
// torch.int8, a device cpu or cuda:0, None, True, False, ints in decimal,
// floats as Python's repr ([PyFloat]), and a slice as str(slice), whose
// parts are Python reprs (nodes by bare name): slice(None, 2, None).
// Strings print unquoted, as FX does, when the word reads back as a string
// (see [Parse] for the rule); any other string prints as its Python repr
// ('a b', 'None', 'cpu'), so that the text stays unambiguous.
//
// An operator passed as an argument (an [ops.Overload] or [ops.Packet]
// value, as the op of higher_order.out_dtype) prints as its qualified name,
// torch.ops.aten.linear.default or torch.ops.aten.linear, the spelling of
// FX's code generator. FX's _format_arg prints str(op), aten.linear.default,
// but that bare word would read back as a string; a torch.ops.* word reads
// back only as the operator. An [ops.Callable] prints as
// <built-in function getitem> (operator module) or <function module.name>.
// Inside Python reprs (output line, default, slice parts) an overload
// prints as its repr, <OpOverload(op='aten.linear', overload='default')>,
// and a packet as <OpOverloadPacket(op='aten.linear')>.
//
// The output line prints str() of the returned value: a node by its bare
// name (return add), a container as Python's repr with bare node names
// (return (add,)). The placeholder default (default=...) prints the same
// way. A string there is quoted (FX would print it bare).
func FormatNode(n *Node) string {
	var buf [256]byte
	return string(appendNode(buf[:0], n, nil))
}

// appendNode appends n's line; types, if not nil, caches type texts across
// the lines of one printout.
func appendNode(dst []byte, n *Node, types *typeTexts) []byte {
	if n.op == Output {
		dst = append(dst, "return "...)
		return appendValue(dst, n.Arg(0), styleRepr)
	}
	dst = append(dst, '%')
	dst = append(dst, n.name...)
	dst = append(dst, " : "...)
	if n.typ != nil {
		dst = append(dst, types.text(n.typ)...)
		dst = append(dst, ' ')
	}
	dst = append(dst, "[num_users="...)
	dst = strconv.AppendInt(dst, int64(countUsers(n)), 10)
	dst = append(dst, "] = "...)
	dst = append(dst, n.op.String()...)
	dst = append(dst, "[target="...)
	dst = appendTarget(dst, n)
	dst = append(dst, ']')
	switch n.op {
	case Placeholder:
		if len(n.args) > 0 {
			dst = append(dst, "(default="...)
			dst = appendValue(dst, n.args[0], styleRepr)
			dst = append(dst, ')')
		}
	case GetAttr:
	default:
		dst = append(dst, "(args = "...)
		dst = appendTuple(dst, n.args, styleFX)
		dst = append(dst, ", kwargs = "...)
		dst = appendKwargs(dst, n.Kwargs(), styleFX)
		dst = append(dst, ')')
	}
	return dst
}

// prettyTarget is FX's _pretty_print_target for call_function nodes and
// the string target for the other opcodes.
func prettyTarget(n *Node) string {
	if n.op == CallFunction {
		if n.target == nil {
			return "None"
		}
		return n.target.Pretty()
	}
	return n.targetName
}

// appendTarget appends prettyTarget(n) piece by piece, without building
// the string.
func appendTarget(dst []byte, n *Node) []byte {
	if n.op != CallFunction {
		return append(dst, n.targetName...)
	}
	switch t := n.target.(type) {
	case ops.Overload:
		dst = appendPacketPretty(dst, t.Packet)
		dst = append(dst, '.')
		return append(dst, t.Name...)
	case ops.Packet:
		return appendPacketPretty(dst, t)
	case ops.Callable:
		dst = append(dst, t.Module...)
		dst = append(dst, '.')
		return append(dst, t.Name...)
	}
	return append(dst, prettyTarget(n)...)
}

// appendPacketPretty appends p.Pretty(): torch.ops.ns.op.
func appendPacketPretty(dst []byte, p ops.Packet) []byte {
	dst = append(dst, "torch.ops."...)
	dst = append(dst, p.NS...)
	dst = append(dst, '.')
	return append(dst, p.Name...)
}

// typeTexts remembers the printed form of the types met so far, so that a
// type that many nodes share is printed (and allocated) once. Types are
// found by a hash of their parts and confirmed with Equal, under which
// equal types print alike. The zero value is ready to use; a nil
// *typeTexts prints every type anew.
type typeTexts struct {
	m map[uint64]typeText
}

type typeText struct {
	t ops.Type
	s string
}

// maxTypeTexts caps a printout's type cache.
const maxTypeTexts = 4096

// text returns t.String().
func (c *typeTexts) text(t ops.Type) string {
	if c == nil {
		return t.String()
	}
	h, ok := typeHash(t)
	if !ok {
		return t.String()
	}
	if e, hit := c.m[h]; hit && e.t.Equal(t) {
		return e.s
	}
	s := t.String()
	if c.m == nil {
		c.m = make(map[uint64]typeText)
	}
	if len(c.m) < maxTypeTexts {
		c.m[h] = typeText{t, s}
	}
	return s
}

// typeHash hashes a tensor type without symbolic dimensions (whose Equal
// allocates); it reports false for every other type, which is not cached.
func typeHash(t ops.Type) (uint64, bool) {
	tt, ok := t.(ops.TensorType)
	if !ok || len(tt.Syms) > 0 {
		return 0, false
	}
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	mixStorage := func(st, ex tensor.DType, lo, hi int64) {
		mix(uint64(st)<<8 | uint64(ex))
		mix(uint64(lo))
		mix(uint64(hi))
	}
	mix(uint64(len(tt.Shape)))
	for _, d := range tt.Shape {
		mix(uint64(d))
	}
	switch e := tt.Elem.(type) {
	case nil:
		mix(1)
	case ops.Scalar:
		mix(2)
		mix(uint64(e.DType))
	case ops.UniformQuantized:
		mix(3)
		mixStorage(e.StorageType, e.Expressed, e.StorageMin, e.StorageMax)
		mix(math.Float64bits(e.Scale))
		mix(uint64(e.ZeroPoint))
	case ops.UniformQuantizedPerAxis:
		mix(4)
		mixStorage(e.StorageType, e.Expressed, e.StorageMin, e.StorageMax)
		mix(uint64(e.Axis))
		for _, s := range e.Scales {
			mix(math.Float64bits(s))
		}
		for _, z := range e.ZeroPoints {
			mix(uint64(z))
		}
	default:
		return 0, false
	}
	return h, true
}

// writeKwargs appends a kwargs dict to b; see [appendKwargs].
func writeKwargs(b *strings.Builder, kw []Kwarg, st valueStyle) {
	var buf [256]byte
	b.Write(appendKwargs(buf[:0], kw, st))
}

// appendKwargs appends keyword arguments as a dict: {name: value, ...}.
func appendKwargs(dst []byte, kw []Kwarg, st valueStyle) []byte {
	dst = append(dst, '{')
	for i, k := range kw {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendKey(dst, k.Name, st)
		dst = append(dst, ": "...)
		dst = appendValue(dst, k.Value, st)
	}
	return append(dst, '}')
}
