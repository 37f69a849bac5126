package pt2_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/pt2"
)

// fuzzing reports whether this run explores (go test -fuzz) rather than
// replaying the seed corpus. Large seeds are added only when replaying: a
// fuzzing run spends its time minimizing whatever new input it derives
// from a large seed (tens of executions in a minute) instead of exploring.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

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

// smallPrograms are program JSON documents of a few hundred bytes, built
// in the test, that between them reach the reader's main paths: a plain
// op, a schema with an optional argument, keyword arguments and scalar
// tags, a lifted buffer, and multi-result ops.
func smallPrograms(t testing.TB) [][]byte {
	mp := program([]any{
		node("torch.ops.aten.max_pool2d_with_indices.default", "mp", []any{
			in("self", ten("x"), 1), in("kernel_size", obj{"as_ints": []any{1, 1}}, 1)},
			ten("mp_values"), ten("mp_unused_1")),
	}, obj{"mp_values": tm(7, 1, 2, 3), "mp_unused_1": tm(5, 1, 2, 3)}, "mp_values")
	graphOf(mp)["tensor_values"].(obj)["x"] = tm(7, 1, 2, 3)
	return [][]byte{
		marshal(t, reluProgram()),
		marshal(t, linearProgram(obj{"as_none": true})),
		marshal(t, dqProgram(2, true)),
		bufferProgram(tm(7, 2), tm(7, 2)),
		marshal(t, mp),
	}
}

// FuzzReadJSON: the program reader never panics, and what it accepts it
// can write and read back.
func FuzzReadJSON(f *testing.F) {
	for _, s := range smallPrograms(f) {
		f.Add(s)
	}
	if !fuzzing() {
		for _, s := range jsonSeeds(f) {
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

// smallArchives are archives of a few hundred bytes, built in the test:
// a PT2 archive holding one 8-byte weight that two buffers view, a PT2
// archive without weights, a legacy flat zip, and a bare JSON program.
func smallArchives(t testing.TB) [][]byte {
	relu := marshal(t, reluProgram())
	cfg := marshal(t, obj{"config": obj{
		"a": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tm(7, 2)},
		"b": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tm(7, 2)}}})
	w := make([]byte, 8)
	binary.LittleEndian.PutUint32(w, 0x3f800000) // 1.0
	return [][]byte{
		pt2Archive(t, "a", bufferProgram(tm(7, 2), tm(7, 2)), string(cfg), map[string][]byte{"weight_0": w}, "little"),
		pt2Archive(t, "a", relu, `{"config": {}}`, nil, "little"),
		makeZip(t, entry{name: "serialized_exported_program.json", data: relu}, entry{name: "version", data: []byte("8.7")}),
		relu,
	}
}

// FuzzReadArchive: the archive reader never panics, and what it accepts
// and can write it reads back.
func FuzzReadArchive(f *testing.F) {
	for _, s := range smallArchives(f) {
		f.Add(s)
	}
	// one real torch.export.save archive (9 KB) even when exploring, so
	// mutations start from a zip the reader gets past
	real, err := os.ReadFile(filepath.Join(fixtureDir, smallestFixture))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	if !fuzzing() {
		for _, file := range fixtures(f) {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := pt2.Read(data, fuzzOpts)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := p.WriteArchive(&buf, nil); err != nil {
			return // some programs cannot be written (dtypes without a ScalarType, ...)
		}
		if _, err := pt2.Read(buf.Bytes(), fuzzOpts); err != nil {
			t.Fatalf("re-reading written archive: %v", err)
		}
	})
}
