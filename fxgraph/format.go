package fxgraph

import (
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops"
)

// Format returns g in fxquant's golden text format: torch.fx's str(graph)
// with each node's type in FX's type slot (STYLE.md 2.7). The first line
// is "graph():"; then one line per live node in program order, indented by
// four spaces and formatted by [FormatNode]. Every line, the last included,
// ends in "\n". The output depends only on the graph: no map is iterated.
//
// [Parse] reads the text back into a graph that formats to the same bytes.
func Format(g *Graph) string {
	var b strings.Builder
	b.WriteString("graph():\n")
	for n := range g.All() {
		b.WriteString("    ")
		writeNode(&b, n)
		b.WriteByte('\n')
	}
	return b.String()
}

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
	var b strings.Builder
	writeNode(&b, n)
	return b.String()
}

func writeNode(b *strings.Builder, n *Node) {
	if n.op == Output {
		b.WriteString("return ")
		writeValue(b, n.Arg(0), styleRepr)
		return
	}
	b.WriteByte('%')
	b.WriteString(n.name)
	b.WriteString(" : ")
	if n.typ != nil {
		b.WriteString(n.typ.String())
		b.WriteByte(' ')
	}
	b.WriteString("[num_users=")
	b.WriteString(strconv.Itoa(n.NumUsers()))
	b.WriteString("] = ")
	b.WriteString(n.op.String())
	b.WriteString("[target=")
	b.WriteString(prettyTarget(n))
	b.WriteByte(']')
	switch n.op {
	case Placeholder:
		if len(n.args) > 0 {
			b.WriteString("(default=")
			writeValue(b, n.args[0], styleRepr)
			b.WriteByte(')')
		}
	case GetAttr:
	default:
		b.WriteString("(args = ")
		writeValue(b, ops.Tuple(n.args), styleFX)
		b.WriteString(", kwargs = ")
		writeKwargs(b, n.kwargs, styleFX)
		b.WriteByte(')')
	}
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

func writeKwargs(b *strings.Builder, kw []Kwarg, st valueStyle) {
	b.WriteByte('{')
	for i, k := range kw {
		if i > 0 {
			b.WriteString(", ")
		}
		writeKey(b, k.Name, st)
		b.WriteString(": ")
		writeValue(b, k.Value, st)
	}
	b.WriteByte('}')
}
