// Package atomicfile writes files so that a failure cannot lose data:
// the new contents go to a temporary file in the target's directory,
// which is written, synced and closed, and only then renamed over the
// target (and the directory synced). Any failure removes the temporary
// file and leaves the old file, if there was one, exactly as it was.
//
// A rename replaces the target's inode: the old file's owner, ACLs,
// extended attributes and its other hard links are not carried over. Its
// permission bits are. A target that is a symbolic link is resolved, so
// the file it points to is replaced and the link is kept.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

// tempMark is the part of a temporary file's name after the target's
// base name: ".<base>.tmp-<n>". Tests look for it.
const tempMark = ".tmp-"

// wrapWriter, when set (by tests), wraps the temporary file's writer.
var wrapWriter func(io.Writer) io.Writer

// WriteFile writes data to name atomically. perm is the mode of a new
// file (before the umask); an existing file keeps its permission bits.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	return Write(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write calls fill with a writer to a temporary file beside name and,
// when fill returns nil and the file is synced and closed without error,
// renames it over name. perm is as for WriteFile. On any error the
// temporary file is removed and name is left as it was; the error names
// the file.
func Write(name string, perm fs.FileMode, fill func(io.Writer) error) (err error) {
	target, mode, err := resolve(name, perm)
	if err != nil {
		return err
	}
	f, tmp, err := createTemp(target, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	// Until the rename, any way out (an error, or a panic in fill)
	// removes the temporary file.
	renamed := false
	defer func() {
		if !renamed {
			f.Close() // a second Close after a failed one is harmless
			os.Remove(tmp)
		}
	}()
	// OpenFile applied the umask to a new file's mode; an existing
	// target's bits are kept as they are.
	if mode.exists {
		if err := f.Chmod(mode.perm); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	var w io.Writer = f
	if wrapWriter != nil {
		w = wrapWriter(w)
	}
	if err := fill(w); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", name, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	renamed = true
	// The new file is in place; a failure to sync its directory is
	// reported, but nothing is removed.
	if err := syncDir(filepath.Dir(target)); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", name, err)
	}
	return nil
}

// fileMode is the mode the written file gets.
type fileMode struct {
	perm   fs.FileMode
	exists bool // the target exists: perm is its mode, applied without umask
}

// resolve follows a symbolic link at name to the file it names and
// returns the path to replace and the mode to give the new file. A
// target that exists but is not a regular file is refused.
func resolve(name string, perm fs.FileMode) (string, fileMode, error) {
	target := name
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		t, err := filepath.EvalSymlinks(name)
		switch {
		case err == nil:
			target = t
		case errors.Is(err, fs.ErrNotExist):
			// A dangling link: write the file it names.
			dest, lerr := os.Readlink(name)
			if lerr != nil {
				return "", fileMode{}, fmt.Errorf("write %s: %w", name, lerr)
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(name), dest)
			}
			target = dest
		default:
			return "", fileMode{}, fmt.Errorf("write %s: %w", name, err)
		}
	}
	fi, err := os.Stat(target)
	switch {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return "", fileMode{}, fmt.Errorf("write %s: not a regular file (%s)", name, fi.Mode().Type())
		}
		return target, fileMode{perm: fi.Mode().Perm(), exists: true}, nil
	case errors.Is(err, fs.ErrNotExist):
		return target, fileMode{perm: perm.Perm()}, nil
	default:
		return "", fileMode{}, fmt.Errorf("write %s: %w", name, err)
	}
}

var tempSeq atomic.Uint64

// createTemp creates a new file ".<base>.tmp-<n>" beside target with
// O_EXCL; a new target's mode gets the umask as os.WriteFile's does.
func createTemp(target string, mode fileMode) (*os.File, string, error) {
	dir, base := filepath.Split(target)
	seed := uint64(time.Now().UnixNano()) ^ uint64(os.Getpid())<<32
	for range 100 {
		n := seed + tempSeq.Add(1)
		tmp := filepath.Join(dir, "."+base+tempMark+strconv.FormatUint(n%1e12, 10))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return f, tmp, nil
	}
	return nil, "", fmt.Errorf("no free temporary name beside %s", target)
}
