package ops

import (
	"errors"
	"fmt"
	"slices"
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

// buildDefault parses and registers every row of [allRows], attaches the
// kernels of quantKernels and atenKernels (keyed "ns.op.overload"), and
// marks the impure callables. It reports every problem at once: a schema
// that does not parse, a duplicate row, and a kernel key that names no
// registered overload.
func buildDefault() (*Registry, error) {
	r := NewRegistry()
	var errs []error
	for i, row := range allRows() {
		def, err := r.RegisterSchema(row.schema, row.result, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("op row %d: %w", i, err))
			continue
		}
		def.View = row.view
		def.Doc = row.doc
		if row.impure {
			def.Impure = true
		}
	}
	for _, table := range []struct {
		name    string
		kernels map[string]KernelFunc
	}{{"quantKernels", quantKernels}, {"atenKernels", atenKernels}, {"symshapeKernels", symshapeKernels}} {
		keys := make([]string, 0, len(table.kernels))
		for k := range table.kernels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			t, err := ParseTarget(k)
			o, ok := t.(Overload)
			if err != nil || !ok {
				errs = append(errs, fmt.Errorf("%s[%q]: key is not an overload name \"ns.op.overload\"", table.name, k))
				continue
			}
			def, ok := r.Op(o)
			if !ok {
				errs = append(errs, fmt.Errorf("%s[%q]: no registered overload %s", table.name, k, o))
				continue
			}
			if def.Kernel != nil {
				errs = append(errs, fmt.Errorf("%s[%q]: %s already has a kernel", table.name, k, o))
				continue
			}
			def.Kernel = table.kernels[k]
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
