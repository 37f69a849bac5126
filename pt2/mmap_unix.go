//go:build unix

package pt2

import (
	"os"
	"syscall"
)

// mapFile maps the regular file name into memory, private and
// copy-on-write; ok is false when it cannot (the caller reads the file).
// The mapping is never unmapped (see Options.MapFile).
func mapFile(name string) (data []byte, ok bool) {
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= 0 || st.Size() != int64(int(st.Size())) {
		return nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return b, true
}
