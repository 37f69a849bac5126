package constfold

// Test-only hooks.

// SetFailAt makes ConstantFold fail at its k-th edit (k >= 1): a constant
// stored, a folded node erased, a node swept; 0 turns it off. It returns
// the function that turns it off again. Tests that use it must not run in
// parallel.
func SetFailAt(k int) (restore func()) {
	failAt = k
	return func() { failAt = 0 }
}

// ErrInjected is the failure SetFailAt injects.
var ErrInjected = errInjected
