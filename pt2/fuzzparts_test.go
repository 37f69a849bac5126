package pt2_test

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/pt2"
)

// fuzzOpts reads with unknown operators allowed and with small limits, so
// that a fuzzed size costs a refusal rather than a large allocation.
var fuzzOpts = &pt2.Options{AllowOpaque: true, Limits: pt2.Limits{MaxTensorBytes: 1 << 20, MaxTotalBytes: 64 << 20}}

// smallestFixture is a real torch.export.save archive of 9 KB: a float
// linear layer with two parameters.
const smallestFixture = "int4_linear_g16.float.pt2"

// archiveParts splits a PT2 archive into the parts FuzzReadArchiveParts
// fuzzes: the program JSON, the weights config and the first two weight
// payloads.
func archiveParts(t testing.TB, data []byte) (model, cfg, w0, w1 []byte) {
	for _, e := range unzip(t, data) {
		b := e.data
		switch {
		case strings.HasSuffix(e.name, "/models/model.json"):
			model = b
		case strings.HasSuffix(e.name, "/data/weights/model_weights_config.json"):
			cfg = b
		case strings.HasSuffix(e.name, "/data/weights/weight_0"):
			w0 = b
		case strings.HasSuffix(e.name, "/data/weights/weight_1"):
			w1 = b
		}
	}
	return model, cfg, w0, w1
}

// partsArchive builds a valid PT2 zip around the fuzzed parts, so that
// every execution gets past the zip layer to the JSON and payload
// decoding. byteorder and extra (an extra file's name) are fuzzed too.
func partsArchive(model, cfg, w0, w1 []byte, byteorder, extra string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, b []byte) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err == nil {
			_, _ = w.Write(b)
		}
	}
	add("archive/data/weights/weight_0", w0)
	add("archive/data/weights/weight_1", w1)
	add("archive/data/weights/model_weights_config.json", cfg)
	add("archive/data/constants/model_constants_config.json", []byte(`{"config": {}}`))
	add("archive/models/model.json", model)
	if extra != "" {
		add("archive/extra/"+extra, []byte("x"))
	}
	add("archive/archive_format", []byte("pt2"))
	add("archive/archive_version", []byte("0"))
	add("archive/byteorder", []byte(byteorder))
	_ = zw.Close()
	return buf.Bytes()
}

// FuzzReadArchiveParts fuzzes the records inside a valid PT2 zip: the
// program JSON, the weights config, two payloads, the byteorder record
// and an extra file's name. The reader never panics; what it accepts
// and can write it reads back with its weights; an extra file it
// accepts has a name that stays inside the archive.
func FuzzReadArchiveParts(f *testing.F) {
	real, err := os.ReadFile(filepath.Join(fixtureDir, smallestFixture))
	if err != nil {
		f.Fatal(err)
	}
	m, c, w0, w1 := archiveParts(f, real)
	f.Add(m, c, w0, w1, "little", "")
	f.Add(m, c, w0, w1, "big", "notes.txt")
	f.Add(m, c, []byte{}, w1, "little", "a/../b")
	for _, s := range smallArchives(f)[:2] {
		m, c, w0, w1 := archiveParts(f, s)
		f.Add(m, c, w0, w1, "little", "")
	}
	f.Fuzz(func(t *testing.T, model, cfg, w0, w1 []byte, byteorder, extra string) {
		p, err := pt2.Read(partsArchive(model, cfg, w0, w1, byteorder, extra), fuzzOpts)
		if err != nil {
			return
		}
		for name := range p.ExtraFiles {
			for _, seg := range strings.Split(name, "/") {
				if seg == ".." || seg == "" || seg == "." || strings.Contains(seg, `\`) {
					t.Fatalf("accepted extra file %q", name)
				}
			}
		}
		var buf bytes.Buffer
		if err := p.WriteArchive(&buf, nil); err != nil {
			return
		}
		q, err := pt2.Read(buf.Bytes(), fuzzOpts)
		if err != nil {
			t.Fatalf("re-reading written archive: %v", err)
		}
		for fqn := range p.Tensors {
			if _, ok := p.Graph.Attr(fqn); !ok {
				continue
			}
			if _, ok := q.Graph.Attr(fqn); !ok {
				t.Fatalf("weight %q lost on writing", fqn)
			}
		}
	})
}
