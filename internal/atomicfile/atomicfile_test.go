package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failAfter passes on the first n bytes written through it and then
// fails, as a full disk does part way through a file.
type failAfter struct {
	w    io.Writer
	left int
}

var errInjected = errors.New("injected write failure")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.left {
		f.left -= len(p)
		return f.w.Write(p)
	}
	n, _ := f.w.Write(p[:f.left])
	f.left = 0
	return n, errInjected
}

// withFailAfter makes every Write in the test fail after n bytes.
func withFailAfter(t *testing.T, n int) {
	t.Helper()
	wrapWriter = func(w io.Writer) io.Writer { return &failAfter{w: w, left: n} }
	t.Cleanup(func() { wrapWriter = nil })
}

// dirNames lists dir's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileNewAndReplace(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.pt2")
	require.NoError(t, WriteFile(name, []byte("first"), 0o644))
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "first", string(got))

	// A new file gets perm less the umask, as os.WriteFile gives it.
	ref := filepath.Join(dir, "ref")
	require.NoError(t, os.WriteFile(ref, nil, 0o644))
	fiRef, err := os.Stat(ref)
	require.NoError(t, err)
	fi, err := os.Stat(name)
	require.NoError(t, err)
	assert.Equal(t, fiRef.Mode().Perm(), fi.Mode().Perm())

	// An existing file keeps its permission bits.
	require.NoError(t, os.Chmod(name, 0o600))
	require.NoError(t, WriteFile(name, []byte("second"), 0o644))
	got, err = os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "second", string(got))
	fi, err = os.Stat(name)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
	assert.ElementsMatch(t, []string{"out.pt2", "ref"}, dirNames(t, dir))
}

// TestWriteFailsAfterNBytes injects a write failure after each of several
// byte counts: the old file stays byte for byte and no temporary file is
// left behind.
func TestWriteFailsAfterNBytes(t *testing.T) {
	old := []byte("the previous good file\n")
	data := bytes.Repeat([]byte("new contents "), 1000)
	for _, n := range []int{0, 1, 12, 4096, len(data) - 1} {
		dir := t.TempDir()
		name := filepath.Join(dir, "model.pt2")
		require.NoError(t, os.WriteFile(name, old, 0o644))
		withFailAfter(t, n)
		err := WriteFile(name, data, 0o644)
		require.ErrorIs(t, err, errInjected, "n=%d", n)
		assert.Contains(t, err.Error(), name)
		got, rerr := os.ReadFile(name)
		require.NoError(t, rerr)
		assert.Equal(t, old, got, "n=%d: the old file changed", n)
		assert.Equal(t, []string{"model.pt2"}, dirNames(t, dir), "n=%d: temporary file left behind", n)
	}
	// The same failure with no old file leaves nothing.
	dir := t.TempDir()
	withFailAfter(t, 5)
	require.ErrorIs(t, WriteFile(filepath.Join(dir, "new.pt2"), data, 0o644), errInjected)
	assert.Empty(t, dirNames(t, dir))
	// And with the budget covering the whole file the write succeeds.
	withFailAfter(t, len(data))
	require.NoError(t, WriteFile(filepath.Join(dir, "new.pt2"), data, 0o644))
	got, err := os.ReadFile(filepath.Join(dir, "new.pt2"))
	require.NoError(t, err)
	assert.Equal(t, data, got)
}

func TestWriteFillError(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "x.dot")
	require.NoError(t, os.WriteFile(name, []byte("old"), 0o644))
	boom := errors.New("boom")
	err := Write(name, 0o644, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, _ := os.ReadFile(name)
	assert.Equal(t, "old", string(got))
	assert.Equal(t, []string{"x.dot"}, dirNames(t, dir))
}

// TestWritePanicInFill: a panic while filling the file also removes the
// temporary file and leaves the old one.
func TestWritePanicInFill(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "x")
	require.NoError(t, os.WriteFile(name, []byte("old"), 0o644))
	assert.PanicsWithValue(t, "boom", func() {
		_ = Write(name, 0o644, func(w io.Writer) error {
			io.WriteString(w, "partial")
			panic("boom")
		})
	})
	got, _ := os.ReadFile(name)
	assert.Equal(t, "old", string(got))
	assert.Equal(t, []string{"x"}, dirNames(t, dir))
}

func TestWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.pt2")
	link := filepath.Join(dir, "link.pt2")
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o644))
	require.NoError(t, os.Symlink("real.pt2", link))
	require.NoError(t, WriteFile(link, []byte("new"), 0o644))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&fs.ModeSymlink, "the link was replaced by a file")
	got, _ := os.ReadFile(real)
	assert.Equal(t, "new", string(got))

	// A dangling link: the file it names is created.
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink("made.pt2", dangling))
	require.NoError(t, WriteFile(dangling, []byte("made"), 0o644))
	got, _ = os.ReadFile(filepath.Join(dir, "made.pt2"))
	assert.Equal(t, "made", string(got))
}

func TestWriteRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	err := WriteFile(sub, []byte("x"), 0o644)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a regular file")
	assert.Equal(t, []string{"sub"}, dirNames(t, dir))
}

func TestWriteMissingDirectory(t *testing.T) {
	err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "x"), []byte("x"), 0o644)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestTempNameIsHidden checks the temporary file's name while it is being
// written: beside the target, hidden, and marked.
func TestTempNameIsHidden(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.pt2")
	var during []string
	require.NoError(t, Write(name, 0o644, func(w io.Writer) error {
		during = dirNames(t, dir)
		return nil
	}))
	require.Len(t, during, 1)
	assert.True(t, strings.HasPrefix(during[0], ".out.pt2"+tempMark), during[0])
}
