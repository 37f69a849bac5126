//go:build !unix

package kernels

// processCPUSeconds is 0 where the process's CPU time is not read.
func processCPUSeconds() float64 { return 0 }
