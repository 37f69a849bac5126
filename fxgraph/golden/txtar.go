package golden

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// File is one section of an [Archive].
type File struct {
	Name string // the name between "-- " and " --", trimmed
	Data []byte // the lines up to the next section header, each ending in "\n"
}

// Archive is a txtar archive: a comment followed by named sections.
type Archive struct {
	Comment []byte // the text before the first section header
	Files   []File // the sections in file order
}

// ParseArchive reads a txtar archive. A line "-- name --" (name trimmed,
// non-empty) starts a section; everything before the first marker is the
// comment. A final line without "\n" is read as if it had one. Parsing
// never fails.
func ParseArchive(data []byte) *Archive {
	a := &Archive{}
	cur := -1 // section being read; -1 is the comment
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		if name, ok := marker(line); ok {
			a.Files = append(a.Files, File{Name: name})
			cur = len(a.Files) - 1
			continue
		}
		dst := &a.Comment
		if cur >= 0 {
			dst = &a.Files[cur].Data
		}
		*dst = append(*dst, line...)
		if line[len(line)-1] != '\n' {
			*dst = append(*dst, '\n')
		}
	}
	return a
}

// ReadArchive reads and parses the txtar file at path.
func ReadArchive(path string) (*Archive, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("golden: %w", err)
	}
	return ParseArchive(data), nil
}

func marker(line []byte) (string, bool) {
	s := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	name := strings.TrimSpace(s[3 : len(s)-3])
	return name, name != ""
}

// Format returns the archive's text; [ParseArchive] reads it back. Each
// non-empty section is given a final newline if it lacks one.
func (a *Archive) Format() []byte {
	var b bytes.Buffer
	b.Write(fixNL(a.Comment))
	for _, f := range a.Files {
		fmt.Fprintf(&b, "-- %s --\n", f.Name)
		b.Write(fixNL(f.Data))
	}
	return b.Bytes()
}

func fixNL(data []byte) []byte {
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return data
	}
	return append(append([]byte(nil), data...), '\n')
}

// Get returns the data of the first section called name.
func (a *Archive) Get(name string) ([]byte, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// Set replaces the data of the first section called name, or appends a
// new section.
func (a *Archive) Set(name string, data []byte) {
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files[i].Data = data
			return
		}
	}
	a.Files = append(a.Files, File{Name: name, Data: data})
}

// Delete removes every section called name.
func (a *Archive) Delete(name string) {
	out := a.Files[:0]
	for _, f := range a.Files {
		if f.Name != name {
			out = append(out, f)
		}
	}
	a.Files = out
}
