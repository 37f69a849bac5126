//go:build unix

package kernels

import "syscall"

// processCPUSeconds is the user and system CPU time this process has used,
// or 0 where it cannot be read.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
