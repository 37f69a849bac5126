package reftransform

// Test-only hooks.

// SetFailAt makes Run (and RunEntry) fail at its k-th step (k >= 1): a
// node retargeted, an entry applied, a hook called; 0 turns it off. It
// returns the function that turns it off again. Tests that use it must
// not run in parallel.
func SetFailAt(k int) (restore func()) {
	failAt = k
	return func() { failAt = 0 }
}

// ErrInjected is the failure SetFailAt injects.
var ErrInjected = errInjected
