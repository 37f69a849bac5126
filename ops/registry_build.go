package ops

import (
	"fmt"
	"slices"
	"sync"
)

// Registry maps overloads to their [OpDef] rows and packets to their
// overloads. It is built once and read concurrently; Register is for
// setting up custom registries before use and is not safe to call while
// others read.
type Registry struct {
	defs     map[Overload]*OpDef
	packets  map[Packet][]Overload // registration order
	impureFn map[Callable]bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{defs: map[Overload]*OpDef{}, packets: map[Packet][]Overload{}, impureFn: map[Callable]bool{}}
}

var (
	defaultOnce sync.Once
	defaultReg  *Registry
	defaultErr  error
)

// Default returns the registry of every op fxquant knows: the
// quantized_decomposed and torchao ops, the aten ops of CNN and transformer
// graphs, and the ops the reference rewrites emit, each with its kernel.
// It panics only if the built-in tables are inconsistent, which the tests
// rule out.
func Default() *Registry {
	defaultOnce.Do(func() {
		defaultReg, defaultErr = buildDefault()
	})
	if defaultErr != nil {
		panic(fmt.Sprintf("ops: built-in registry is inconsistent: %v", defaultErr))
	}
	return defaultReg
}

// Register adds def. The schema's name and overload must agree with the
// target; a second row for the same overload is an error.
func (r *Registry) Register(def *OpDef) error {
	if def.Schema == nil {
		return fmt.Errorf("ops: register %s: no schema", def.Target)
	}
	if def.Schema.Name != def.Target.Packet.Name || def.Schema.Overload != def.Target.Name {
		return fmt.Errorf("ops: register %s: schema names %s.%s", def.Target, def.Schema.Name, def.Schema.Overload)
	}
	if _, dup := r.defs[def.Target]; dup {
		return fmt.Errorf("ops: register %s: already registered", def.Target)
	}
	if def.Schema.IsMutable() {
		def.Impure = true
	}
	r.defs[def.Target] = def
	r.packets[def.Target.Packet] = append(r.packets[def.Target.Packet], def.Target)
	return nil
}

// RegisterSchema parses a schema of the form "ns::op.overload(...) -> ..."
// and registers it with the given result rule and kernel.
func (r *Registry) RegisterSchema(text string, result TypeFunc, kernel KernelFunc) (*OpDef, error) {
	ns, s, err := ParseQualifiedSchema(text)
	if err != nil {
		return nil, err
	}
	def := &OpDef{Target: Overload{Packet: Packet{NS: ns, Name: s.Name}, Name: s.Overload}, Schema: s, Result: result, Kernel: kernel}
	return def, r.Register(def)
}

// MarkImpureCallable records a plain callable (operator.setitem, ...) as
// impure for DCE.
func (r *Registry) MarkImpureCallable(c Callable) { r.impureFn[c] = true }

// Op returns the row of overload o.
func (r *Registry) Op(o Overload) (*OpDef, bool) {
	d, ok := r.defs[o]
	return d, ok
}

// Schema returns the schema of overload o.
func (r *Registry) Schema(o Overload) (*Schema, bool) {
	d, ok := r.defs[o]
	if !ok {
		return nil, false
	}
	return d.Schema, true
}

// Overloads returns the overloads of p in registration order.
func (r *Registry) Overloads(p Packet) []Overload { return slices.Clone(r.packets[p]) }

// Known reports whether t is a registered overload, a packet with at least
// one registered overload, or the callable operator.getitem (the only
// callable fxquant runs).
func (r *Registry) Known(t Target) bool {
	switch v := t.(type) {
	case Overload:
		_, ok := r.defs[v]
		return ok
	case Packet:
		return len(r.packets[v]) > 0
	case Callable:
		_, sym := SymScalarArity(v)
		return v == GetItem || r.impureFn[v] || sym
	}
	return false
}

// Overloads lists every registered overload, sorted by name.
func (r *Registry) All() []Overload {
	out := make([]Overload, 0, len(r.defs))
	for o := range r.defs {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Overload) int {
		if a.String() < b.String() {
			return -1
		}
		if a.String() > b.String() {
			return 1
		}
		return 0
	})
	return out
}

// IsImpure reports whether a node calling t must survive DCE when unused:
// a registered impure or mutable overload, a packet any of whose overloads
// is impure, or a callable marked impure.
func (r *Registry) IsImpure(t Target) bool {
	switch v := t.(type) {
	case Overload:
		d, ok := r.defs[v]
		return ok && d.Impure
	case Packet:
		for _, o := range r.packets[v] {
			if r.defs[o].Impure {
				return true
			}
		}
	case Callable:
		return r.impureFn[v]
	}
	return false
}
