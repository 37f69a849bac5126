package ops

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// impureCallables are the plain Python callables DCE must keep
// (fx-graph.md 1.7): in-place operator functions and assertions.
var impureCallables = []Callable{
	{Module: "operator", Name: "setitem"},
	{Module: "operator", Name: "delitem"},
	{Module: "operator", Name: "iadd"},
	{Module: "operator", Name: "isub"},
	{Module: "operator", Name: "imul"},
	{Module: "operator", Name: "itruediv"},
	{Module: "builtins", Name: "print"},
	{Module: "torch", Name: "_assert"},
	{Module: "torch", Name: "_assert_async"},
}

// buildDefault registers every row of [allRows] (a table op with the
// table's schema and tags: TestDefaultBuilds checks that a row which also
// gives schema text prints as the table's), attaches the kernels of
// quantKernels and atenKernels (keyed "ns.op.overload") to rows or to
// table ops, and marks the impure callables. Every other overload of the
// operator table gets its row on first look-up. It reports every problem at
// once: a schema that does not parse, a row naming no overload, a duplicate
// row, and a kernel key that names no known overload.
func buildDefault() (*Registry, error) {
	table, err := theTable()
	if err != nil {
		return nil, err
	}
	return buildDefaultFrom(table)
}

// buildDefaultFrom is buildDefault on a given index of the table.
func buildDefaultFrom(table *opTable) (*Registry, error) {
	r := NewRegistry()
	r.table = table
	r.tkernels = map[Overload]KernelFunc{}
	var errs []error
	for i, row := range allRows() {
		def, err := rowDef(table, row)
		if err == nil {
			err = r.Register(def)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("op row %d: %w", i, err))
		}
	}
	for _, tbl := range []struct {
		name    string
		kernels map[string]KernelFunc
	}{{"quantKernels", withLayoutRules(quantKernels)}, {"atenKernels", withStructKernels(atenKernels)}, {"elemKernels", withLayoutRules(elemKernels)}, {"symshapeKernels", symshapeKernels}} {
		keys := make([]string, 0, len(tbl.kernels))
		for k := range tbl.kernels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			t, err := ParseTarget(k)
			o, ok := t.(Overload)
			if err != nil || !ok {
				errs = append(errs, fmt.Errorf("%s[%q]: key is not an overload name \"ns.op.overload\"", tbl.name, k))
				continue
			}
			if def, ok := r.defs[o]; ok {
				if def.Kernel != nil {
					errs = append(errs, fmt.Errorf("%s[%q]: %s already has a kernel", tbl.name, k, o))
					continue
				}
				def.Kernel = tbl.kernels[k]
				continue
			}
			if _, ok := table.find(o); !ok {
				errs = append(errs, fmt.Errorf("%s[%q]: no registered overload %s", tbl.name, k, o))
				continue
			}
			if r.tkernels[o] != nil {
				errs = append(errs, fmt.Errorf("%s[%q]: %s already has a kernel", tbl.name, k, o))
				continue
			}
			r.tkernels[o] = tbl.kernels[k]
		}
	}
	for _, c := range impureCallables {
		r.MarkImpureCallable(c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// rowDef builds the row's OpDef: schema and tags from the operator table
// for a table op (a row's own schema text then only names the op:
// TestDefaultBuilds checks that it prints as the table's), from the row's
// schema text otherwise.
func rowDef(table *opTable, row opRow) (*OpDef, error) {
	name := row.op
	if name == "" {
		head, _, ok := strings.Cut(row.schema, "(")
		if !ok {
			return nil, fmt.Errorf("row schema %q has no argument list", row.schema)
		}
		name = head
	}
	t, err := ParseTarget(name)
	o, ok := t.(Overload)
	if err != nil || !ok {
		return nil, fmt.Errorf("row op %q is not an overload name \"ns.op.overload\"", name)
	}
	def := &OpDef{Target: o, Result: row.result, Impure: row.impure, View: row.view, Doc: row.doc}
	if k, ok := table.find(o); ok {
		e := table.entry(k)
		if e.err != nil {
			return nil, e.err
		}
		def.Schema, def.Tags = e.schema, e.tags
		def.Impure = def.Impure || impureByTorch(o, e.schema, e.tags)
		return def, nil
	}
	if row.schema == "" {
		return nil, fmt.Errorf("row op %s: not in the operator table, and the row gives no schema", o)
	}
	ns, s, err := ParseQualifiedSchema(row.schema)
	if err != nil {
		return nil, err
	}
	if got := (Overload{Packet: Packet{NS: ns, Name: s.Name}, Name: s.Overload}); got != o {
		return nil, fmt.Errorf("row op %s but its schema names %s", o, got)
	}
	def.Schema = s
	return def, nil
}
