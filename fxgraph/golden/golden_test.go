package golden_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph/golden"
)

func TestParseArchive(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		comment string
		files   []golden.File
		format  string // Format's output; "" means the input itself
	}{
		{"sections", "note\n-- input --\na\nb\n-- want --\nc\n", "note\n",
			[]golden.File{{Name: "input", Data: []byte("a\nb\n")}, {Name: "want", Data: []byte("c\n")}}, ""},
		{"no final newline", "-- a --\nx", "", []golden.File{{Name: "a", Data: []byte("x\n")}}, "-- a --\nx\n"},
		{"empty section", "-- a --\n-- b --\ny\n", "", []golden.File{{Name: "a"}, {Name: "b", Data: []byte("y\n")}}, ""},
		{"not a marker", "--a--\n-- --\n", "--a--\n-- --\n", nil, ""},
		{"name trimmed", "--  want.err  --\nz\n", "", []golden.File{{Name: "want.err", Data: []byte("z\n")}}, "-- want.err --\nz\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := golden.ParseArchive([]byte(tt.in))
			assert.Equal(t, tt.comment, string(a.Comment))
			require.Len(t, a.Files, len(tt.files))
			for i, f := range tt.files {
				assert.Equal(t, f.Name, a.Files[i].Name)
				assert.Equal(t, string(f.Data), string(a.Files[i].Data))
			}
			want := tt.format
			if want == "" {
				want = tt.in
			}
			assert.Equal(t, want, string(a.Format()))
		})
	}
}

func TestArchiveSetDelete(t *testing.T) {
	a := golden.ParseArchive([]byte("-- input --\nx\n"))
	a.Set("want", []byte("y"))
	a.Set("input", []byte("z\n"))
	assert.Equal(t, "-- input --\nz\n-- want --\ny\n", string(a.Format()))
	a.Delete("input")
	got, ok := a.Get("want")
	assert.True(t, ok)
	assert.Equal(t, "y", string(got))
	_, ok = a.Get("input")
	assert.False(t, ok)
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.txt")
	require.NoError(t, os.WriteFile(path, []byte("same\n"), 0o644))
	golden.Check(t, path, []byte("same\n")) // equal: no failure
	a := golden.ParseArchive([]byte("-- want --\nok\n"))
	golden.CheckSection(t, path, a, "want", []byte("ok\n"))
}

func TestDiff(t *testing.T) {
	got := golden.Diff("a\nb\nc\n", "a\nx\nc\n")
	assert.Equal(t, "  a\n- b\n+ x\n  c\n", got)
	assert.Equal(t, "  same\n", golden.Diff("same", "same"))
}
