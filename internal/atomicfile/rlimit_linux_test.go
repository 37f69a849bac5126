package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The child process of TestRlimitFsize: it lowers its own RLIMIT_FSIZE and
// writes FSIZE_TARGET with more bytes than the limit allows.
const (
	envChild  = "ATOMICFILE_FSIZE_CHILD"
	envTarget = "ATOMICFILE_FSIZE_TARGET"
	fsizeCap  = 64 << 10 // the child's file size limit
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		os.Exit(fsizeChild(os.Getenv(envTarget)))
	}
	os.Exit(m.Run())
}

// fsizeChild exits 0 when the write failed with EFBIG, 3 when it
// succeeded, 4 on any other error.
func fsizeChild(target string) int {
	// Without this, the kernel's SIGXFSZ ends the process before write
	// returns EFBIG.
	signal.Ignore(syscall.SIGXFSZ)
	lim := syscall.Rlimit{Cur: fsizeCap, Max: fsizeCap}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		os.Stderr.WriteString("setrlimit: " + err.Error() + "\n")
		return 4
	}
	err := WriteFile(target, bytes.Repeat([]byte{0xAB}, 4*fsizeCap), 0o644)
	if err == nil {
		return 3
	}
	os.Stderr.WriteString(err.Error() + "\n")
	if !errors.Is(err, syscall.EFBIG) {
		return 4
	}
	return 0
}

// TestRlimitFsize runs a real write into the kernel's file size limit (a
// child process with RLIMIT_FSIZE lowered): the write fails with EFBIG,
// the old file is unchanged and no temporary file is left.
func TestRlimitFsize(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "model.pt2")
	old := []byte("old good file, " + strconv.Itoa(os.Getpid()))
	require.NoError(t, os.WriteFile(target, old, 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=1", envTarget+"="+target)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)
	assert.Contains(t, string(out), "file too large")
	assert.Contains(t, string(out), target)
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(old, got), "the old file changed: now %d bytes", len(got))
	assert.Equal(t, []string{"model.pt2"}, dirNames(t, dir))
}
