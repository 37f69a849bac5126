package pt2

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Default limits of [Limits]: they fit a laptop and every real export.
const (
	DefaultMaxEntryBytes  int64 = 2 << 30   // 2 GiB per zip entry
	DefaultMaxTotalBytes  int64 = 4 << 30   // 4 GiB read or zero-filled in all
	DefaultMaxExpansion   int64 = 100       // uncompressed bytes per archive byte
	DefaultMaxTensorBytes int64 = 512 << 20 // 512 MiB per zero-filled weight
	DefaultMaxJSONBytes   int64 = 256 << 20 // 256 MiB per JSON record
	expansionSlack        int64 = 1 << 20   // added to MaxExpansion × file size
)

// ErrLimit reports an input that would need more memory than a limit of
// [Limits] allows.
var ErrLimit = errors.New("over a reading limit")

// Limits bound what an archive can make the reader allocate. Memory
// follows the bytes actually in the file: a declared size is checked
// against these caps before anything is allocated for it. A zero field
// takes its default; a negative one means no limit.
type Limits struct {
	// MaxEntryBytes caps the uncompressed size of one zip entry.
	MaxEntryBytes int64
	// MaxTotalBytes caps the uncompressed bytes read from all entries
	// plus the bytes of zero-filled weights.
	MaxTotalBytes int64
	// MaxExpansion caps the uncompressed bytes read from all entries at
	// MaxExpansion × the archive's size + 1 MiB (a zip bomb's entries
	// expand far more than that).
	MaxExpansion int64
	// MaxTensorBytes caps one weight rebuilt from a zero-length payload
	// (PyTorch writes those for fake tensors and fills them with zeros).
	MaxTensorBytes int64
	// MaxJSONBytes caps one JSON record (models/<name>.json, payload
	// configs): decoding takes several times the text's size.
	MaxJSONBytes int64
}

// limits returns the caps of opts (all defaults for nil opts).
func (o *Options) limits() Limits {
	if o == nil {
		return Limits{}
	}
	return o.Limits
}

func limitOr(v, def int64) int64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 1<<63 - 1
	}
	return v
}

// budget is the running account of one archive read.
type budget struct {
	entry, total, tensor, json int64
	expanded                   int64 // cap on entry bytes from the file size
	used                       int64 // entry bytes read plus zero-filled bytes
	read                       int64 // entry bytes read
}

func newBudget(opts *Options, fileSize int64) *budget {
	l := opts.limits()
	b := &budget{
		entry:  limitOr(l.MaxEntryBytes, DefaultMaxEntryBytes),
		total:  limitOr(l.MaxTotalBytes, DefaultMaxTotalBytes),
		tensor: limitOr(l.MaxTensorBytes, DefaultMaxTensorBytes),
		json:   limitOr(l.MaxJSONBytes, DefaultMaxJSONBytes),
	}
	ratio := limitOr(l.MaxExpansion, DefaultMaxExpansion)
	b.expanded = 1<<63 - 1
	if ratio < (1<<62)/max(fileSize, 1) {
		b.expanded = ratio*fileSize + expansionSlack
	}
	return b
}

// readEntry reads the zip entry f (called name in messages) through a
// reader bounded by its declared size, after checking that size against
// the caps; an entry holding more or fewer bytes than it declares is an
// error. isJSON applies the JSON cap.
func (b *budget) readEntry(f *zip.File, name string, isJSON bool) ([]byte, error) {
	if err := b.check(name, f.UncompressedSize64, isJSON); err != nil {
		return nil, err
	}
	size := int64(f.UncompressedSize64)
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: entry %q: %v", ErrArchive, name, err)
	}
	defer rc.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(rc, data); err != nil {
		return nil, fmt.Errorf("%w: entry %q: declares %d bytes: %v", ErrArchive, name, size, err)
	}
	// one more read: EOF (and the checksum check) or more than declared
	var one [1]byte
	if n, err := rc.Read(one[:]); n > 0 || (err != nil && err != io.EOF) {
		if err == nil || errors.Is(err, zip.ErrFormat) {
			return nil, fmt.Errorf("%w: entry %q holds more than the %d bytes it declares", ErrArchive, name, size)
		}
		return nil, fmt.Errorf("%w: entry %q: %v", ErrArchive, name, err)
	}
	b.read += size
	b.used += size
	return data, nil
}

// check checks an entry that declares size bytes against the caps before
// it is read.
func (b *budget) check(name string, declared uint64, isJSON bool) error {
	if declared > uint64(b.entry) {
		return fmt.Errorf("%w: entry %q declares %d bytes, more than the %d allowed per entry (MaxEntryBytes)", ErrLimit, name, declared, b.entry)
	}
	size := int64(declared)
	if isJSON && size > b.json {
		return fmt.Errorf("%w: entry %q declares %d bytes of JSON, more than the %d allowed (MaxJSONBytes)", ErrLimit, name, size, b.json)
	}
	if b.read+size > b.expanded {
		return fmt.Errorf("%w: entry %q declares %d bytes, which would bring the archive's uncompressed bytes to %d, more than %d (MaxExpansion × the file's size + 1 MiB)", ErrLimit, name, size, b.read+size, b.expanded)
	}
	if b.used+size > b.total {
		return fmt.Errorf("%w: entry %q declares %d bytes, which would bring the total read to %d, more than %d (MaxTotalBytes)", ErrLimit, name, size, b.used+size, b.total)
	}
	return nil
}

// charge accounts for an entry of size bytes viewed in place, with the
// checks and errors of readEntry.
func (b *budget) charge(name string, size uint64, isJSON bool) error {
	if err := b.check(name, size, isJSON); err != nil {
		return err
	}
	b.read += int64(size)
	b.used += int64(size)
	return nil
}

// zeroFill charges the zero-filled weight fqn of dtype d and shape (field
// names the config entry) to the budget.
func (b *budget) zeroFill(field, fqn string, d tensor.DType, shape []int) error {
	n, err := tensor.CheckedBytes(d, shape)
	if err != nil {
		return fmt.Errorf("%s: zero-length payload for %q of shape %v: %w", field, fqn, shape, err)
	}
	if n > b.tensor {
		return fmt.Errorf("%s: %w: zero-length payload for %q would be filled with %d bytes of zeros (%s%v), more than %d (MaxTensorBytes)", field, ErrLimit, fqn, n, d, shape, b.tensor)
	}
	if b.used+n > b.total {
		return fmt.Errorf("%s: %w: zero-filling %q (%s%v, %d bytes) would bring the total to %d, more than %d (MaxTotalBytes)", field, ErrLimit, fqn, d, shape, n, b.used+n, b.total)
	}
	b.used += n
	return nil
}

// checkEntryName refuses a zip entry name that could escape a folder when
// copied into an output or that names no file: absolute paths, drive
// letters, backslashes, "." or ".." segments, empty segments (except the
// trailing "/" of a folder entry) and control characters.
func checkEntryName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: entry name %q %s", ErrArchive, name, why)
	}
	switch {
	case name == "":
		return bad("is empty")
	case strings.HasPrefix(name, "/"):
		return bad("is an absolute path")
	case strings.Contains(name, `\`):
		return bad("contains a backslash")
	case len(name) >= 2 && name[1] == ':':
		return bad("starts with a drive letter")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return bad("contains a control character")
		}
	}
	segs := strings.Split(strings.TrimSuffix(name, "/"), "/")
	for _, s := range segs {
		switch s {
		case "":
			return bad("has an empty path segment")
		case ".", "..":
			return bad(fmt.Sprintf("has a %q path segment", s))
		}
	}
	return nil
}
