package ops

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Registry maps overloads to their [OpDef] rows and packets to their
// overloads. It is built once and read concurrently; Register is for
// setting up custom registries before use and is not safe to call while
// others read.
type Registry struct {
	defs     map[Overload]*OpDef
	packets  map[Packet][]Overload // registration order
	impureFn map[Callable]bool

	// The operator table, for the default registry: every overload of it
	// without a registered row gets one on first look-up.
	table    *opTable
	tkernels map[Overload]KernelFunc // kernels of table ops without a row
	// tdefs holds rows built from the table: an immutable map that
	// look-ups read without a lock. New rows wait in tnew (under tmu) until
	// they are as many as tdefs holds; then tdefs is replaced by a merged
	// copy, so building n rows copies O(n) entries in all.
	tdefs  atomic.Pointer[map[Overload]*OpDef]
	tmu    sync.Mutex
	tnew   map[Overload]*OpDef
	merged sync.Map // Packet -> []Overload: rows first, then the table's
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

// Default returns the registry of every op fxquant knows: every overload
// of PyTorch 2.14.1's operator table (aten, prims, quantized_decomposed and
// torchao; ops/schemas), with its schema and tags, and the higher-order
// out_dtype. The hand-written rows add a result-type rule, flags and a doc
// line to the ops fxquant derives types for (ops/RULES.md lists them);
// kernels attach by overload name. A table op without a row gets its row
// on first look-up. It panics only if the built-in tables are
// inconsistent, which the tests rule out.
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

// Op returns the row of overload o: a registered row, or (in the default
// registry) the row of a table op, built on first look-up with its schema,
// tags and kernel and no result rule.
func (r *Registry) Op(o Overload) (*OpDef, bool) {
	if d, ok := r.defs[o]; ok {
		return d, true
	}
	if r.table == nil {
		return nil, false
	}
	if m := r.tdefs.Load(); m != nil {
		if d, ok := (*m)[o]; ok {
			return d, true
		}
	}
	return r.tableOp(o)
}

// tableOp builds the row of table op o on its first look-up.
func (r *Registry) tableOp(o Overload) (*OpDef, bool) {
	k, ok := r.table.find(o)
	if !ok {
		return nil, false
	}
	e := r.table.entry(k)
	if e.err != nil {
		return nil, false
	}
	r.tmu.Lock()
	defer r.tmu.Unlock()
	old := r.tdefs.Load()
	if old != nil {
		if d, ok := (*old)[o]; ok {
			return d, true
		}
	}
	if d, ok := r.tnew[o]; ok {
		return d, true
	}
	d := &OpDef{Target: o, Schema: e.schema, Tags: e.tags, Kernel: r.tkernels[o], Impure: impureByTorch(o, e.schema, e.tags)}
	if r.tnew == nil {
		r.tnew = map[Overload]*OpDef{}
	}
	r.tnew[o] = d
	n := 0
	if old != nil {
		n = len(*old)
	}
	if len(r.tnew) >= n {
		m := make(map[Overload]*OpDef, n+len(r.tnew))
		if old != nil {
			maps.Copy(m, *old)
		}
		maps.Copy(m, r.tnew)
		r.tdefs.Store(&m)
		clear(r.tnew)
	}
	return d, true
}

// Schema returns the schema of overload o.
func (r *Registry) Schema(o Overload) (*Schema, bool) {
	d, ok := r.Op(o)
	if !ok {
		return nil, false
	}
	return d.Schema, true
}

// overloads returns the overloads of p: the registered rows in
// registration order (the order eager resolution tries them), then the
// table's other overloads in table order. The result is shared: callers
// must not modify it.
func (r *Registry) overloads(p Packet) []Overload {
	if r.table == nil {
		return r.packets[p]
	}
	if v, ok := r.merged.Load(p); ok {
		return v.([]Overload)
	}
	rows := r.packets[p]
	start, end := r.table.overloads(p)
	out := make([]Overload, 0, len(rows)+end-start)
	out = append(out, rows...)
	for k := start; k < end; k++ {
		if o := r.table.op(k); r.defs[o] == nil {
			out = append(out, o)
		}
	}
	v, _ := r.merged.LoadOrStore(p, out)
	return v.([]Overload)
}

// Overloads returns the overloads of p: registered rows in registration
// order, then (in the default registry) the operator table's other
// overloads of p in the table's order.
func (r *Registry) Overloads(p Packet) []Overload { return slices.Clone(r.overloads(p)) }

// Known reports whether t is a registered overload or an overload of the
// operator table, a packet with at least one of those, or the callable
// operator.getitem (the only callable fxquant runs) or a callable marked
// impure.
func (r *Registry) Known(t Target) bool {
	switch v := t.(type) {
	case Overload:
		if _, ok := r.defs[v]; ok {
			return true
		}
		if r.table != nil {
			_, ok := r.table.find(v)
			return ok
		}
		return false
	case Packet:
		if len(r.packets[v]) > 0 {
			return true
		}
		if r.table == nil {
			return false
		}
		start, end := r.table.overloads(v)
		return start < end
	case Callable:
		_, sym := SymScalarArity(v)
		return v == GetItem || r.impureFn[v] || sym
	}
	return false
}

// All lists every known overload (registered rows and the table's),
// sorted by name.
func (r *Registry) All() []Overload {
	out := make([]Overload, 0, len(r.defs))
	for o := range r.defs {
		out = append(out, o)
	}
	if r.table != nil {
		for k := range r.table.len() {
			if o := r.table.op(k); r.defs[o] == nil {
				out = append(out, o)
			}
		}
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

// IsImpure reports whether a node calling t must survive DCE when unused,
// as torch 2.14's torch._library.utils.is_impure answers: an overload that
// is marked impure, has a mutable schema, is random (tag
// nondeterministic_seeded) or is one of FX's side-effectful functions; a
// packet whose "default" overload is impure (a packet without one is
// pure); a callable marked impure.
func (r *Registry) IsImpure(t Target) bool {
	switch v := t.(type) {
	case Overload:
		d, ok := r.Op(v)
		return ok && d.Impure
	case Packet:
		d, ok := r.Op(Overload{Packet: v, Name: "default"})
		return ok && d.Impure
	case Callable:
		return r.impureFn[v]
	}
	return false
}
