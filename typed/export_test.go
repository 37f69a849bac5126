package typed

// Test-only hooks.

// WithFailAt returns o set to inject a failure at Canonicalize's k-th edit
// (k >= 1): a node or constant created, a use replaced, a node erased.
func WithFailAt(o CanonOptions, k int) CanonOptions {
	o.failAt = k
	return o
}

// ErrInjected is the failure WithFailAt injects.
var ErrInjected = errInjected
