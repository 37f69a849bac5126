package fxgraph

import (
	"strings"

	"github.com/fxquant/fxquant/ops"
)

// Operators as argument values (torch.fx's OpOverload arguments, such as
// the op of higher_order.out_dtype(aten.linear.default, torch.int32, ...)).
//
// The FX notation prints an [ops.Overload] or [ops.Packet] by its qualified
// name, torch.ops.aten.linear.default or torch.ops.aten.linear, the form
// FX's code generator writes. FX's _format_arg would print str(op),
// aten.linear.default, but that bare word reads back as a string, and a
// torch.ops.* word cannot be anything else. The Python repr notations
// (output lines, defaults, the fixture listing) print the objects' reprs:
// <OpOverload(op='aten.linear', overload='default')> and
// <OpOverloadPacket(op='aten.linear')>. An [ops.Callable] prints as
// Python's repr of a builtin, <built-in function getitem>, when it comes
// from the operator module, and as <function module.name> otherwise
// (fxquant's own form: Python's repr of other functions holds an address).

const (
	reprOverload = "<OpOverload("
	reprPacket   = "<OpOverloadPacket("
	reprBuiltin  = "<built-in function "
	reprFunction = "<function "
)

// writeOperator appends an operator value in the given notation; it
// reports false for values that are not operators.
func writeOperator(b *strings.Builder, v ops.Value, st valueStyle) bool {
	switch x := v.(type) {
	case ops.Overload:
		if st == styleFX {
			b.WriteString(x.Pretty())
			return true
		}
		b.WriteString(reprOverload)
		b.WriteString("op=")
		b.WriteString(PyQuote(x.Packet.String()))
		b.WriteString(", overload=")
		b.WriteString(PyQuote(x.Name))
		b.WriteString(")>")
	case ops.Packet:
		if st == styleFX {
			b.WriteString(x.Pretty())
			return true
		}
		b.WriteString(reprPacket)
		b.WriteString("op=")
		b.WriteString(PyQuote(x.String()))
		b.WriteString(")>")
	case ops.Callable:
		if x.Module == "operator" {
			b.WriteString(reprBuiltin)
			b.WriteString(x.Name)
		} else {
			b.WriteString(reprFunction)
			b.WriteString(x.String())
		}
		b.WriteByte('>')
	default:
		return false
	}
	return true
}

// operatorWord reads a torch.ops.* word of the FX notation as an overload
// or a packet.
func (p *valueParser) operatorWord(w string, start int) (ops.Value, error) {
	t, err := ops.ParseTarget(w)
	if err == nil {
		switch t.(type) {
		case ops.Overload, ops.Packet:
			return t, nil
		}
	}
	p.pos = start
	return nil, p.errf("bad operator %q: want torch.ops.<ns>.<op> or torch.ops.<ns>.<op>.<overload>", w)
}

// operatorRepr reads an operator in its Python repr:
// <OpOverload(op='ns.op', overload='name')>, <OpOverloadPacket(op='ns.op')>,
// <built-in function name> (a function of the operator module) or
// <function module.name>.
func (p *valueParser) operatorRepr() (ops.Value, error) {
	start := p.pos
	rest := p.s[p.pos:]
	fail := func(format string, a ...any) (ops.Value, error) {
		p.pos = start
		return nil, p.errf(format, a...)
	}
	switch {
	case strings.HasPrefix(rest, reprOverload):
		p.pos += len(reprOverload)
		op, err := p.reprField("op=")
		if err != nil {
			return nil, err
		}
		if err := p.expect(", "); err != nil {
			return nil, err
		}
		ov, err := p.reprField("overload=")
		if err != nil {
			return nil, err
		}
		if err := p.expect(")>"); err != nil {
			return nil, err
		}
		pk, ok := parsePacketName(op)
		if !ok || !ops.IsIdentifier(ov) {
			return fail("bad OpOverload op=%q overload=%q: want op='ns.op' and an identifier overload", op, ov)
		}
		return pk.Overload(ov), nil
	case strings.HasPrefix(rest, reprPacket):
		p.pos += len(reprPacket)
		op, err := p.reprField("op=")
		if err != nil {
			return nil, err
		}
		if err := p.expect(")>"); err != nil {
			return nil, err
		}
		pk, ok := parsePacketName(op)
		if !ok {
			return fail("bad OpOverloadPacket op=%q: want op='ns.op'", op)
		}
		return pk, nil
	case strings.HasPrefix(rest, reprBuiltin):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return fail("unterminated %s...>", reprBuiltin)
		}
		name := rest[len(reprBuiltin):end]
		if !ops.IsIdentifier(name) {
			return fail("bad builtin %q: want <built-in function name>", rest[:end+1])
		}
		p.pos += end + 1
		return ops.Callable{Module: "operator", Name: name}, nil
	case strings.HasPrefix(rest, reprFunction):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return fail("unterminated %s...>", reprFunction)
		}
		full := rest[len(reprFunction):end]
		i := strings.LastIndexByte(full, '.')
		if i <= 0 || !isWord(full[:i]) || !ops.IsIdentifier(full[i+1:]) || full[:i] == "operator" {
			return fail("bad function %q: want <function module.name> (a function of the operator module is <built-in function name>)", rest[:end+1])
		}
		p.pos += end + 1
		return ops.Callable{Module: full[:i], Name: full[i+1:]}, nil
	}
	got := rest
	if end := strings.IndexByte(rest, '>'); end >= 0 {
		got = rest[:end+1]
	}
	return fail("want an operator (<OpOverload(op='aten.linear', overload='default')>, <OpOverloadPacket(op='aten.linear')>, <built-in function getitem>), got %q", clip(got))
}

// reprField reads key='value' inside an operator repr.
func (p *valueParser) reprField(key string) (string, error) {
	if err := p.expect(key); err != nil {
		return "", err
	}
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return "", p.errf("want a quoted string after %s, got %s", key, p.got())
	}
	return p.str()
}

// parsePacketName splits "ns.op" into a packet.
func parsePacketName(s string) (ops.Packet, bool) {
	ns, op, ok := strings.Cut(s, ".")
	if !ok || !ops.IsIdentifier(ns) || !ops.IsIdentifier(op) {
		return ops.Packet{}, false
	}
	return ops.Packet{NS: ns, Name: op}, true
}
