//go:build amd64 && !purego

package kernels

import (
	"os"
	"strings"
	"testing"
)

// haveFMA32x8 (golang.org/x/sys/cpu) must agree with the flags Linux reports for the CPU.
func TestHasAVX2FMAMatchesCPUInfo(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo:", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		flags, ok := strings.CutPrefix(line, "flags")
		if !ok {
			continue
		}
		set := map[string]bool{}
		for _, f := range strings.Fields(strings.TrimLeft(flags, "\t :")) {
			set[f] = true
		}
		if want := set["avx2"] && set["fma"]; haveFMA32x8 != want {
			t.Fatalf("haveFMA32x8 = %v, /proc/cpuinfo avx2 && fma = %v", haveFMA32x8, want)
		}
		return
	}
	t.Skip("no flags line in /proc/cpuinfo")
}
