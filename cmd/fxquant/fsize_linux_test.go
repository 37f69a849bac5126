package main

import (
	"bytes"
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

// fsizeLimit is the child's RLIMIT_FSIZE: well under the size of the
// quantized MLP archive (about 20 KB), well over its DOT file.
const fsizeLimit = 12 << 10

func init() {
	childMains["fsize"] = func() int {
		// Without this, SIGXFSZ ends the process before write returns EFBIG.
		signal.Ignore(syscall.SIGXFSZ)
		lim := syscall.Rlimit{Cur: fsizeLimit, Max: fsizeLimit}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			os.Stderr.WriteString("setrlimit: " + err.Error() + "\n")
			return 9
		}
		return run(childArgs(), os.Stdin, os.Stdout, os.Stderr)
	}
}

// TestRunOutputHitsFileSizeLimit runs "fxquant run -o" in a child process
// whose RLIMIT_FSIZE is smaller than the archive: the command fails with
// the kernel's "file too large", the previous output is unchanged and no
// temporary file is left in the directory.
func TestRunOutputHitsFileSizeLimit(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "q.pt2")
	old := []byte("previous good output " + strconv.Itoa(os.Getpid()))
	require.NoError(t, os.WriteFile(out, old, 0o644))
	cmd := childCommand("fsize", "run", "--no-progress", "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	assert.Equal(t, exitFail, ee.ExitCode(), "stderr: %s", stderr.String())
	assert.Contains(t, stderr.String(), "file too large")
	assert.Contains(t, stderr.String(), out)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(old, got), "the previous output changed: now %d bytes", len(got))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "a temporary file was left behind")
	assert.Equal(t, "q.pt2", ents[0].Name())
}
