package convert

// Test-only hooks.

// SetFailAt makes Prepare and Convert fail at their k-th step (k >= 1): a
// stage, an observer replaced; 0 turns it off. It returns the function
// that turns it off again. Tests that use it must not run in parallel.
func SetFailAt(k int) (restore func()) {
	failAt = k
	return func() { failAt = 0 }
}

// ErrInjected is the failure SetFailAt injects.
var ErrInjected = errInjected

// TensorTypeOf is the plain type of a tensor attribute's get_attr node.
var TensorTypeOf = tensorTypeOf
