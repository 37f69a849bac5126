package ops

import (
	"fmt"
	"strings"
)

// Target is what a call_function node calls: a [Packet], an [Overload] or a
// [Callable] such as operator.getitem. The three are distinct comparable
// types, so a packet never equals any overload, and every Target works as a
// map key. Only this package implements Target.
type Target interface {
	// String returns the canonical dotted form: "aten.add.Tensor",
	// "torchao.quantize_affine", "operator.getitem".
	String() string
	// Pretty returns FX's qualified form for printed graphs:
	// "torch.ops.aten.add.Tensor", "operator.getitem".
	Pretty() string
	isTarget()
}

// Packet names an operator overload packet, e.g. torchao.quantize_affine
// (Python's OpOverloadPacket).
type Packet struct {
	NS   string // namespace: "aten", "quantized_decomposed", "torchao", "higher_order"
	Name string // operator name: "quantize_affine"
}

// Overload names one overload of a packet, e.g. torchao.quantize_affine.default
// or quantized_decomposed.quantize_per_tensor.tensor (Python's OpOverload).
type Overload struct {
	Packet Packet
	Name   string // "default" for the unnamed overload
}

// Callable is a plain Python callable used as a target, such as
// operator.getitem or operator.mul.
type Callable struct {
	Module string // "operator", "builtins", "torch"
	Name   string // "getitem"
}

func (Packet) isTarget()   {}
func (Overload) isTarget() {}
func (Callable) isTarget() {}

// String returns "ns.op".
func (p Packet) String() string { return p.NS + "." + p.Name }

// Pretty returns "torch.ops.ns.op".
func (p Packet) Pretty() string { return "torch.ops." + p.String() }

// Qualified returns the C++ form "ns::op".
func (p Packet) Qualified() string { return p.NS + "::" + p.Name }

// Overload returns the overload of p with the given name ("default" for the
// unnamed one).
func (p Packet) Overload(name string) Overload { return Overload{Packet: p, Name: name} }

// Default returns p's ".default" overload.
func (p Packet) Default() Overload { return Overload{Packet: p, Name: "default"} }

// String returns "ns.op.overload".
func (o Overload) String() string { return o.Packet.String() + "." + o.Name }

// Pretty returns "torch.ops.ns.op.overload".
func (o Overload) Pretty() string { return "torch.ops." + o.String() }

// Qualified returns the C++ form: "ns::op" for the default overload and
// "ns::op.overload" otherwise (as OpOverload.name() does).
func (o Overload) Qualified() string {
	if o.Name == "default" {
		return o.Packet.Qualified()
	}
	return o.Packet.Qualified() + "." + o.Name
}

// FXName returns the name torch.fx derives for a node calling o without an
// explicit name: `__name__` "op.overload" snake-cased and sanitised, e.g.
// "quantize_per_tensor_default", "add_tensor", "sum_dim_int_list".
func (o Overload) FXName() string { return o.Packet.Name + "." + o.Name }

// String returns "module.name".
func (c Callable) String() string { return c.Module + "." + c.Name }

// Pretty returns "module.name", as FX prints builtins and operator functions.
func (c Callable) Pretty() string { return c.String() }

// Well-known callables.
var (
	GetItem = Callable{Module: "operator", Name: "getitem"}
)

// knownModules lists the modules whose dotted names parse as a Callable.
var knownModules = map[string]bool{"operator": true, "builtins": true, "_operator": true, "math": true}

// ParseTarget parses the textual forms of a target:
//
//   - "aten.add.Tensor", "aten::add.Tensor", "torch.ops.aten.add.Tensor": an Overload;
//   - "aten::add" (C++ default overload): the Overload aten.add.default;
//   - "aten.linear", "torch.ops.aten.linear": a Packet;
//   - "operator.getitem", "_operator.getitem", "<built-in function getitem>": a Callable.
//
// The dotted form is ambiguous between a packet "ns.op" and nothing else, so
// two segments are a packet and three an overload. It fails on empty
// segments and other shapes.
func ParseTarget(s string) (Target, error) {
	orig := s
	if strings.HasPrefix(s, "<built-in function ") && strings.HasSuffix(s, ">") {
		name := strings.TrimSuffix(strings.TrimPrefix(s, "<built-in function "), ">")
		if !IsIdentifier(name) {
			return nil, fmt.Errorf("ops: bad target %q", orig)
		}
		return Callable{Module: "operator", Name: name}, nil
	}
	s = strings.TrimPrefix(s, "torch.ops.")
	if ns, rest, ok := strings.Cut(s, "::"); ok {
		op, ov, hasOv := strings.Cut(rest, ".")
		if !hasOv {
			ov = "default"
		}
		if !IsIdentifier(ns) || !IsIdentifier(op) || !IsIdentifier(ov) {
			return nil, fmt.Errorf("ops: bad target %q: want ns::op or ns::op.overload", orig)
		}
		return Overload{Packet: Packet{ns, op}, Name: ov}, nil
	}
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if !IsIdentifier(p) {
			return nil, fmt.Errorf("ops: bad target %q: empty or invalid segment", orig)
		}
	}
	if len(parts) == 2 && knownModules[parts[0]] {
		m := parts[0]
		if m == "_operator" {
			m = "operator"
		}
		return Callable{Module: m, Name: parts[1]}, nil
	}
	switch len(parts) {
	case 2:
		return Packet{parts[0], parts[1]}, nil
	case 3:
		return Overload{Packet: Packet{parts[0], parts[1]}, Name: parts[2]}, nil
	}
	return nil, fmt.Errorf("ops: bad target %q: want ns.op or ns.op.overload", orig)
}

// MustParseTarget is [ParseTarget] that panics on error; for constants.
func MustParseTarget(s string) Target {
	t, err := ParseTarget(s)
	if err != nil {
		panic(err)
	}
	return t
}

// MustOverload parses an overload name such as "aten.add.Tensor"; it panics
// if s is not an overload.
func MustOverload(s string) Overload {
	o, ok := MustParseTarget(s).(Overload)
	if !ok {
		panic(fmt.Sprintf("ops: %q is not an overload", s))
	}
	return o
}

// MustPacket parses a packet name such as "torchao.quantize_affine"; it
// panics if s is not a packet.
func MustPacket(s string) Packet {
	p, ok := MustParseTarget(s).(Packet)
	if !ok {
		panic(fmt.Sprintf("ops: %q is not a packet", s))
	}
	return p
}

// IsIdentifier reports whether s is a Python identifier of ASCII letters,
// digits and '_' (not starting with a digit), the form of node names and
// operator name segments.
func IsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

// PacketOf returns the packet of t: t itself for a Packet, its packet for an
// Overload, and false for a Callable.
func PacketOf(t Target) (Packet, bool) {
	switch v := t.(type) {
	case Packet:
		return v, true
	case Overload:
		return v.Packet, true
	}
	return Packet{}, false
}
