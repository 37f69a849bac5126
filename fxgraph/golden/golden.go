package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/internal/atomicfile"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files and txtar want sections with the current output")
	}
}

// Update reports whether the test binary runs with -update.
func Update() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Check compares got with the golden file at path. Under -update it
// writes got to the file (creating directories) instead. A missing or
// different file fails the test with a line diff.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := writeFile(path, got); err != nil {
			t.Fatalf("golden: update %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("golden: %s differs from the output (run with -update to accept it):\n%s", path, Diff(string(want), string(got)))
	}
}

// CheckSection compares got with section name of the archive a read from
// path. Under -update it stores got in the section (appending the section
// if missing) and rewrites path with the whole archive. A missing or
// different section fails the test with a line diff.
func CheckSection(t testing.TB, path string, a *Archive, name string, got []byte) {
	t.Helper()
	if Update() {
		a.Set(name, got)
		if err := writeFile(path, a.Format()); err != nil {
			t.Fatalf("golden: update %s: %v", path, err)
		}
		return
	}
	want, ok := a.Get(name)
	if !ok {
		t.Fatalf("golden: %s has no section %q (run with -update to add it); output:\n%s", path, name, got)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("golden: %s: section %q differs from the output (run with -update to accept it):\n%s", path, name, Diff(string(want), string(got)))
	}
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// maxDiffCells bounds the work of Diff's table; larger inputs get a
// first-difference report.
const maxDiffCells = 4_000_000

// Diff returns a line diff of want and got: lines only in want start with
// "- ", lines only in got with "+ ", shared lines with "  ". It is for
// failure messages; its layout is not stable enough for golden files.
func Diff(want, got string) string {
	a := splitLines(want)
	b := splitLines(got)
	if (len(a)+1)*(len(b)+1) > maxDiffCells {
		for i := 0; i < len(a) && i < len(b); i++ {
			if a[i] != b[i] {
				return fmt.Sprintf("first difference at line %d:\n- %q\n+ %q", i+1, a[i], b[i])
			}
		}
		return fmt.Sprintf("want %d lines, got %d lines", len(a), len(b))
	}
	// lcs[i][j] = length of the longest common subsequence of a[i:], b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	line := func(prefix, s string) {
		out.WriteString(prefix)
		out.WriteString(strings.TrimSuffix(s, "\n"))
		out.WriteByte('\n')
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			line("  ", a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			line("- ", a[i])
			i++
		default:
			line("+ ", b[j])
			j++
		}
	}
	return out.String()
}

// splitLines splits s after each newline, without the empty piece that
// follows a final newline.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
