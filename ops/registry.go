package ops

import "slices"

// This file declares the op registry's data model. The op rows live in
// oprows.go, the kernel table in kernels*.go, and the registry construction
// in registry_build.go.

// TypeFunc computes the static result type of a call from its normalised
// arguments (one per schema argument, in schema order, defaults filled): a
// tensor argument arrives as its [Type], every other argument as its
// literal [Value]. It returns an error naming the argument when a type or
// literal is not what the op accepts.
type TypeFunc func(args []Value) (Type, error)

// KernelFunc runs an op on normalised arguments (one per schema argument,
// in schema order, defaults filled): a tensor argument arrives as a
// *tensor.Tensor, every other as its literal [Value]. It returns a
// *tensor.Tensor, a Tuple of results, or a literal. Kernels never modify
// their inputs and never panic on bad input: they return an error that says
// what was expected.
type KernelFunc func(args []Value) (Value, error)

// OpDef is one registry row: an overload, its schema and its behaviour.
type OpDef struct {
	Target Overload // the overload this row describes, e.g. aten.linear.default
	Schema *Schema  // its parsed schema; never nil in a registry
	// Result is the result-type rule; nil means "no static rule" (the
	// verifier then only checks that the node has some type).
	Result TypeFunc
	// Kernel is the reference implementation; nil when the op cannot be run.
	Kernel KernelFunc
	// Impure marks ops that DCE must keep even when unused (mutation,
	// assertions, randomness). Mutable schemas are impure automatically.
	Impure bool
	// View marks ops whose result aliases their first argument (reshape,
	// view, permute, ...): typed rewrites keep the element type through them.
	View bool
	// Doc is a one-line description of the op's semantics.
	Doc string
	// Tags are the overload's torch.Tags from PyTorch's operator table
	// ("core", "pointwise", "inplace", "nondeterministic_seeded", ...); nil
	// for an op the table does not list.
	Tags []string
}

// HasTag reports whether the op carries torch.Tag tag ("inplace",
// "pointwise", "core", "view_copy", ...).
func (d *OpDef) HasTag(tag string) bool { return slices.Contains(d.Tags, tag) }
