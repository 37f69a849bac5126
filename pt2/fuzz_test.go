package pt2_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/pt2"
)

// jsonSeeds returns the program JSON of every fixture archive and the
// JSON files of tests/testdata/pt2-json.
func jsonSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, file := range fixtures(t) {
		zr, err := zip.OpenReader(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			if strings.HasSuffix(f.Name, "/models/model.json") {
				rc, _ := f.Open()
				b, _ := io.ReadAll(rc)
				rc.Close()
				out = append(out, b)
			}
		}
		zr.Close()
	}
	files, _ := filepath.Glob("../tests/testdata/pt2-json/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzReadJSON: the program reader never panics, and what it accepts it
// can write and read back.
func FuzzReadJSON(f *testing.F) {
	for _, s := range jsonSeeds(f) {
		if len(s) < 16000 { // large seeds make minimization slow
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := pt2.ReadJSON(data, opaque)
		if err != nil {
			return
		}
		js, err := p.EncodeJSON(nil)
		if err != nil {
			return // some graphs cannot be written (no tensors for weights, ...)
		}
		if _, err := pt2.ReadJSON(js, opaque); err != nil {
			t.Fatalf("re-reading written JSON: %v\n%s", err, js)
		}
	})
}

// FuzzReadArchive: the archive reader never panics.
func FuzzReadArchive(f *testing.F) {
	for _, file := range fixtures(f) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 20000 {
			f.Add(b)
		}
	}
	js := marshal(f, reluProgram())
	f.Add(pt2Archive(f, "a", js, `{"config": {}}`, nil, "little"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := pt2.Read(data, opaque)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		_ = p.WriteArchive(&buf, nil)
	})
}
