//go:build ignore

// gen builds the hostile corpus in testdata/ from the real fixture
// archives (tests/testdata/pt2e and two small zoo models) and writes
// testdata/manifest.json: for each file, the error it must give and the
// commands that must fail with it. Run it with "go generate
// ./tests/hostile". It is deterministic: the same fixtures give the same
// bytes.
package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ent is one zip entry. declared, when non-zero, is the uncompressed size
// the headers claim (a lie); crcOf, when set, is what the CRC is computed
// over; stored keeps the entry uncompressed.
type ent struct {
	name     string
	data     []byte
	declared uint64
	crcOf    []byte
	raw      []byte // the compressed bytes, when they are not data deflated
	stored   bool
}

type archive struct{ ents []ent }

func load(path string) *archive {
	zr, err := zip.OpenReader(path)
	check(err)
	defer zr.Close()
	a := &archive{}
	for _, f := range zr.File {
		rc, err := f.Open()
		check(err)
		b, err := io.ReadAll(rc)
		check(err)
		rc.Close()
		a.ents = append(a.ents, ent{name: f.Name, data: b})
	}
	return a
}

func (a *archive) clone() *archive {
	b := &archive{ents: make([]ent, len(a.ents))}
	copy(b.ents, a.ents)
	for i := range b.ents {
		b.ents[i].data = bytes.Clone(b.ents[i].data)
	}
	return b
}

// idx finds the entry archive/<name>.
func (a *archive) idx(name string) int {
	for i, e := range a.ents {
		if e.name == "archive/"+name {
			return i
		}
	}
	panic("no entry " + name)
}

func (a *archive) get(name string) []byte    { return a.ents[a.idx(name)].data }
func (a *archive) set(name string, b []byte) { a.ents[a.idx(name)].data = b }
func (a *archive) del(name string) {
	i := a.idx(name)
	a.ents = append(a.ents[:i], a.ents[i+1:]...)
}
func (a *archive) add(e ent) { a.ents = append(a.ents, e) }

// js decodes a JSON entry with exact numbers.
func (a *archive) js(name string) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(a.get(name)))
	dec.UseNumber()
	var m map[string]any
	check(dec.Decode(&m))
	return m
}

func (a *archive) setJS(name string, m map[string]any) {
	b, err := json.Marshal(m)
	check(err)
	a.set(name, b)
}

// editJS decodes name, lets fn change it and stores it back.
func (a *archive) editJS(name string, fn func(m map[string]any)) *archive {
	m := a.js(name)
	fn(m)
	a.setJS(name, m)
	return a
}

func (a *archive) bytes() []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range a.ents {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.stored {
			h.Method = zip.Store
		}
		if e.declared == 0 && e.raw == nil && e.crcOf == nil {
			w, err := zw.CreateHeader(h)
			check(err)
			_, err = w.Write(e.data)
			check(err)
			continue
		}
		comp := e.raw
		if comp == nil {
			comp = deflate(e.data)
		}
		crcOf := e.crcOf
		if crcOf == nil {
			crcOf = e.data
		}
		h.CRC32 = crc32.ChecksumIEEE(crcOf)
		h.CompressedSize64 = uint64(len(comp))
		h.UncompressedSize64 = e.declared
		if h.UncompressedSize64 == 0 {
			h.UncompressedSize64 = uint64(len(e.data))
		}
		w, err := zw.CreateRaw(h)
		check(err)
		_, err = w.Write(comp)
		check(err)
	}
	check(zw.Close())
	return buf.Bytes()
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	check(err)
	_, err = fw.Write(b)
	check(err)
	check(fw.Close())
	return buf.Bytes()
}

// at walks m along keys (string keys and int indexes).
func at(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

func obj(v any, keys ...any) map[string]any { return at(v, keys...).(map[string]any) }

func graph(m map[string]any) map[string]any { return obj(m, "graph_module", "graph") }

func tv(m map[string]any, name string) map[string]any { return obj(graph(m), "tensor_values", name) }

func ints(v ...int64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = map[string]any{"as_int": x}
	}
	return out
}

// cfgMeta returns the tensor_meta of fqn in the weights config.
func cfgMeta(m map[string]any, fqn string) map[string]any {
	return obj(m, "config", fqn, "tensor_meta")
}

// nodeNamed returns the node called name.
func nodeNamed(m map[string]any, name string) map[string]any {
	for _, n := range graph(m)["nodes"].([]any) {
		if n.(map[string]any)["name"] == name {
			return n.(map[string]any)
		}
	}
	panic("no node " + name)
}

// input returns the named input of node n.
func input(n map[string]any, name string) map[string]any {
	for _, in := range n["inputs"].([]any) {
		if in.(map[string]any)["name"] == name {
			return in.(map[string]any)
		}
	}
	panic("no input " + name)
}

// Case is one corpus file and what fxquant must say about it.
type Case struct {
	File string `json:"file"`
	// What the file is.
	Note string `json:"note"`
	// Want is a substring of the error every command in Fail gives.
	Want string `json:"want"`
	// Fail lists the commands that must fail with Want, and Pass those
	// that must succeed; the others must not crash (they may succeed).
	// Both empty means print, verify and run must fail.
	Fail []string `json:"fail,omitempty"`
	Pass []string `json:"pass,omitempty"`
}

var (
	cases   []Case
	outDir  = "testdata"
	written = map[string]bool{}
)

func emit(file, note, want string, data []byte, opts ...func(*Case)) {
	if written[file] {
		panic("duplicate case " + file)
	}
	written[file] = true
	check(os.WriteFile(filepath.Join(outDir, file), data, 0o644))
	c := Case{File: file, Note: note, Want: want}
	for _, o := range opts {
		o(&c)
	}
	cases = append(cases, c)
}

func only(cmds ...string) func(*Case)   { return func(c *Case) { c.Fail = cmds } }
func passes(cmds ...string) func(*Case) { return func(c *Case) { c.Pass = cmds } }

const (
	cfgName = "data/weights/model_weights_config.json"
)

func f32(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func main() {
	fixtures := filepath.Join("..", "testdata")
	lin := load(filepath.Join(fixtures, "pt2e", "int4_linear_g16.float.pt2"))
	mlp := load(filepath.Join(fixtures, "pt2e", "mlp.float.pt2"))
	static := load(filepath.Join(fixtures, "pt2e", "mlp.static.pt2"))
	gn := load(filepath.Join(fixtures, "pt2e", "groupnorm.float.pt2"))
	cnn := load(filepath.Join(fixtures, "pt2e", "cnn.float.pt2"))
	dyn := load(filepath.Join(fixtures, "zoo", "mlp_dynamic_batch.float.pt2"))
	bert := load(filepath.Join(fixtures, "zoo", "bert_encoder.float.pt2"))
	olds, _ := filepath.Glob(filepath.Join(outDir, "*"))
	for _, f := range olds {
		check(os.Remove(f))
	}
	check(os.MkdirAll(outDir, 0o755))

	zipLayer(lin)
	records(lin)
	payloads(lin)
	shapes(lin)
	program(lin)
	scales(static)
	for _, b := range []struct {
		name string
		a    *archive
		fqn  string // first weight's FQN
		tv   string // a tensor value to break
	}{
		{"mlp", mlp, "fc1.weight", "linear"},
		{"groupnorm", gn, "conv1.weight", "conv2d"},
		{"cnn", cnn, "conv1.weight", "conv2d"},
		{"dynbatch", dyn, "fc1.weight", "linear"},
	} {
		generic(b.name, b.a, b.fqn, b.tv)
	}
	dynamic(dyn)
	a := bert.clone()
	a.add(ent{name: "archive/models/model.json", data: []byte("{}")})
	emit("bert-dup-model-json.pt2", "bert_encoder with a second models/model.json", `entry "archive/models/model.json" appears more than once`, a.bytes())
	bareJSON(lin)
	text()

	sort.Slice(cases, func(i, j int) bool { return cases[i].File < cases[j].File })
	b, err := json.MarshalIndent(cases, "", "  ")
	check(err)
	check(os.WriteFile(filepath.Join(outDir, "manifest.json"), append(b, '\n'), 0o644))
	fmt.Printf("%d cases\n", len(cases))
}

// zipLayer: entry names, duplicates, sizes and bombs.
func zipLayer(base *archive) {
	for _, c := range []struct{ file, name, why string }{
		{"zip-name-dotdot.pt2", "archive/extra/../../x", `entry name "archive/extra/../../x" has a ".." path segment`},
		{"zip-name-empty-segment.pt2", "archive/extra//etc/passwd", `entry name "archive/extra//etc/passwd" has an empty path segment`},
		{"zip-name-absolute.pt2", "/etc/passwd", `entry name "/etc/passwd" is an absolute path`},
		{"zip-name-backslash.pt2", `archive\extra\x`, `entry name "archive\\extra\\x" contains a backslash`},
		{"zip-name-drive.pt2", "C:/x", `entry name "C:/x" starts with a drive letter`},
		{"zip-name-dot.pt2", "archive/./extra/x", `entry name "archive/./extra/x" has a "." path segment`},
		{"zip-name-control.pt2", "archive/extra/a\x01b", `entry name "archive/extra/a\x01b" contains a control character`},
		{"zip-name-empty.pt2", "", `entry name "" is empty`},
	} {
		a := base.clone()
		a.add(ent{name: c.name, data: []byte("x")})
		emit(c.file, "extra entry named "+fmt.Sprintf("%q", c.name), c.why, a.bytes())
	}
	// a bad name first in the zip, before the root folder is known
	a := base.clone()
	a.ents = append([]ent{{name: "../evil", data: []byte("x")}}, a.ents...)
	emit("zip-name-dotdot-first.pt2", "first entry named ../evil", `entry name "../evil" has a ".." path segment`, a.bytes())

	a = base.clone()
	a.add(ent{name: "archive/models/model.json", data: []byte(`{"schema_version": {"major": 8, "minor": 0}}`)})
	emit("zip-dup-model-json.pt2", "two models/model.json entries (the last used to win)", `entry "archive/models/model.json" appears more than once`, a.bytes())
	a = base.clone()
	a.add(ent{name: "archive/data/weights/weight_0", data: make([]byte, 1024)})
	emit("zip-dup-weight.pt2", "two weight_0 entries", `entry "archive/data/weights/weight_0" appears more than once`, a.bytes())
	a = base.clone()
	a.add(ent{name: "archive/byteorder", data: []byte("big")})
	emit("zip-dup-byteorder.pt2", "two byteorder entries", `entry "archive/byteorder" appears more than once`, a.bytes())

	// sizes: a 2 GiB model.json declared in a few bytes is refused before
	// it is read; a real deflate bomb is refused by the expansion cap
	a = base.clone()
	i := a.idx("models/model.json")
	a.ents[i].declared = 2 << 30
	emit("zip-model-json-2gib.pt2", "models/model.json declaring 2 GiB", `entry "archive/models/model.json" declares 2147483648 bytes of JSON, more than the 268435456 allowed (MaxJSONBytes)`, a.bytes())
	a = base.clone()
	i = a.idx("data/weights/weight_0")
	a.ents[i].declared = 3 << 30
	emit("zip-entry-3gib.pt2", "weight_0 declaring 3 GiB", `entry "archive/data/weights/weight_0" declares 3221225472 bytes, more than the 2147483648 allowed per entry (MaxEntryBytes)`, a.bytes())
	zeros := make([]byte, 16<<20)
	a = base.clone()
	i = a.idx("data/weights/weight_0")
	a.ents[i].data = zeros
	emit("zip-bomb-weight.pt2", "weight_0 is 16 MiB of zeros deflated to 16 KiB (an honest bomb)", `entry "archive/data/weights/weight_0" declares 16777216 bytes, which would bring the archive's uncompressed bytes to`, a.bytes())
	a = base.clone()
	i = a.idx("models/model.json")
	js := a.ents[i].data
	a.ents[i].raw = deflate(append(bytes.Clone(js), bytes.Repeat([]byte(" "), 16<<20)...))
	a.ents[i].crcOf = append(bytes.Clone(js), bytes.Repeat([]byte(" "), 16<<20)...)
	a.ents[i].declared = uint64(len(js))
	emit("zip-bomb-lying-size.pt2", "models/model.json declares its true size but holds 16 MiB more", `entry "archive/models/model.json" holds more than the 3087 bytes it declares`, a.bytes())
	a = base.clone()
	i = a.idx("data/weights/weight_0")
	a.ents[i].declared = 2048
	emit("zip-short-entry.pt2", "weight_0 declares 2048 bytes and holds 1024", `entry "archive/data/weights/weight_0": declares 2048 bytes: unexpected EOF`, a.bytes())
	a = base.clone()
	i = a.idx("data/weights/weight_0")
	a.ents[i].crcOf = append([]byte{1}, a.ents[i].data[1:]...)
	emit("zip-bad-crc.pt2", "weight_0 with a wrong CRC-32", `entry "archive/data/weights/weight_0": zip: checksum error`, a.bytes())
	full := base.bytes()
	emit("zip-truncated.pt2", "the archive cut in half", "malformed archive: zip: not a valid zip file", full[:len(full)/2])
	emit("zip-empty.pt2", "a zip with no entries", "malformed archive: empty zip", (&archive{}).bytes())
	emit("zip-only-folder.pt2", "a zip holding one folder entry", "malformed archive: zip holds only folders", (&archive{ents: []ent{{name: "archive/"}}}).bytes())
	a = base.clone()
	for i := range a.ents {
		a.ents[i].name = strings.TrimPrefix(a.ents[i].name, "archive/")
	}
	emit("zip-no-root.pt2", "entries without the root folder", `malformed archive: no archive_format record under "data/"`, a.bytes())
}

// records: the small records around the program.
func records(base *archive) {
	a := base.clone()
	a.set("byteorder", []byte("big"))
	emit("byteorder-big.pt2", "byteorder record \"big\" (PyTorch 2.14 ignores it and reads machine order)", `record byteorder is "big"`, a.bytes())
	a = base.clone()
	a.set("byteorder", []byte("middle"))
	emit("byteorder-middle.pt2", "byteorder record \"middle\"", `record byteorder is "middle", want "little"`, a.bytes())
	a = base.clone()
	a.set("archive_format", []byte("pt3"))
	emit("archive-format-pt3.pt2", "archive_format pt3", `archive_format is "pt3", want "pt2"`, a.bytes())
	a = base.clone()
	a.del("archive_format")
	emit("archive-format-missing.pt2", "no archive_format record", `no archive_format record under "archive/"`, a.bytes())
	a = base.clone()
	a.set("archive_version", []byte("1"))
	emit("archive-version-1.pt2", "archive_version 1", `archive_version is "1", want "0"`, a.bytes())
	a = base.clone()
	a.del("models/model.json")
	emit("model-json-missing.pt2", "no models/model.json", `no models/model.json`, a.bytes())
	a = base.clone()
	a.set("models/model.json", append(bytes.Clone(a.get("models/model.json")), "\n{}"...))
	emit("model-json-trailing.pt2", "models/model.json followed by a second object", `models/model.json: trailing data after the object: 2 bytes starting "{}"`, a.bytes())
	a = base.clone()
	a.set("models/model.json", a.get("models/model.json")[:1500])
	emit("model-json-truncated.pt2", "models/model.json cut short", `models/model.json: `, a.bytes())
	a = base.clone()
	a.set("models/model.json", []byte("[]"))
	emit("model-json-array.pt2", "models/model.json is an array", `models/model.json: want an object, got`, a.bytes())
	a = base.clone()
	a.set("data/weights/model_weights_config.json", append(bytes.Clone(a.get("data/weights/model_weights_config.json")), " x"...))
	emit("weights-config-trailing.pt2", "weights config followed by garbage", `trailing data after the object: 1 bytes starting "x"`, a.bytes())
	a = base.clone()
	a.del("data/weights/model_weights_config.json")
	emit("weights-config-missing.pt2", "no weights config: parameters without stored data", `parameter "linear.weight" (placeholder "p_linear_weight") has no stored data`, a.bytes())
	a = base.clone()
	a.set("data/weights/model_weights_config.json", []byte(`{"config": []}`))
	emit("weights-config-array.pt2", "weights config's config is an array", `data/weights/model_weights_config.json: config: want an object`, a.bytes())
}

// payloads: weights config entries and their records.
func payloads(base *archive) {
	const cfg = "data/weights/model_weights_config.json"
	edit := func(file, note, want string, fn func(m map[string]any)) {
		emit(file, note, want, base.clone().editJS(cfg, fn).bytes())
	}
	edit("param-no-entry.pt2", "linear.bias has no entry in the weights config", `parameter "linear.bias" (placeholder "p_linear_bias") has no stored data: no entry for it in data/weights/model_weights_config.json`, func(m map[string]any) {
		delete(obj(m, "config"), "linear.bias")
	})
	a := base.clone()
	a.del("data/weights/weight_1")
	emit("payload-record-missing.pt2", "weight_1 record deleted", `config["linear.bias"]: malformed archive: payload record "data/weights/weight_1" is missing`, a.bytes())
	edit("payload-path-dotdot.pt2", "path_name ../../models/model.json", `config["linear.bias"]: malformed archive: payload record "data/weights/../../models/model.json" is missing`, func(m map[string]any) {
		obj(m, "config", "linear.bias")["path_name"] = "../../models/model.json"
	})
	a = base.clone()
	a.set("data/weights/weight_1", []byte{1, 2, 3})
	emit("payload-odd-size.pt2", "weight_1 is 3 bytes of float32", `config["linear.bias"]: record "data/weights/weight_1": tensor: from bytes: 3 bytes is not a whole number of float32 elements`, a.bytes())
	a = base.clone()
	a.set("data/weights/weight_0", a.get("data/weights/weight_0")[:512])
	emit("payload-short.pt2", "weight_0 holds half of linear.weight", `config["linear.weight"]: record "data/weights/weight_0": tensor: from bytes: tensor: view shape [8 32] strides [32 1] offset 0 reaches outside storage of 128 elements`, a.bytes())
	edit("offset-negative.pt2", "storage_offset -1", `config["linear.weight"]: record "data/weights/weight_0": tensor_meta.storage_offset -1 is negative`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["storage_offset"] = map[string]any{"as_int": -1}
	})
	edit("offset-past-end.pt2", "storage_offset 256 on a 256-element storage", `config["linear.weight"]: record "data/weights/weight_0": tensor: from bytes: tensor: view shape [8 32] strides [32 1] offset 256 reaches outside storage of 256 elements`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["storage_offset"] = map[string]any{"as_int": 256}
	})
	edit("offset-huge.pt2", "storage_offset 2^62", `tensor_meta.storage_offset 4611686018427387904 is past any storage`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["storage_offset"] = map[string]any{"as_int": int64(1) << 62}
	})
	edit("stride-huge.pt2", "stride 2^62", `config["linear.weight"]: record "data/weights/weight_0": tensor_meta.strides[0] 4611686018427387904 out of range`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["strides"] = ints(1<<62, 1)
	})
	edit("stride-negative.pt2", "stride -32 reaching before the storage", `config["linear.weight"]: record "data/weights/weight_0": tensor: from bytes: tensor: view shape [8 32] strides [-32 1] offset 0 reaches outside storage`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["strides"] = ints(-32, 1)
	})
	a = base.clone().editJS(cfg, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["sizes"] = ints(16384, 16384)
		cfgMeta(m, "linear.weight")["strides"] = ints(16384, 1)
	})
	a.set("data/weights/weight_0", nil)
	emit("zero-fill-1gib.pt2", "linear.weight: a zero-length payload of 16384x16384 float32 (1 GiB of zeros)", `config["linear.weight"]: over a reading limit: zero-length payload for "linear.weight" would be filled with 1073741824 bytes of zeros (float32[16384 16384]), more than 536870912 (MaxTensorBytes)`, a.bytes())
	a = base.clone().editJS(cfg, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["sizes"] = ints(1<<62, 4)
		cfgMeta(m, "linear.weight")["strides"] = ints(4, 1)
	})
	a.set("data/weights/weight_0", nil)
	emit("zero-fill-wraps.pt2", "zero-length payload whose element count 2^62*4 wraps to 0", `config["linear.weight"].tensor_meta.sizes: tensor: too large: shape [4611686018427387904 4] has more than`, a.bytes())
	edit("payload-shape-mismatch.pt2", "config says 8x16 for an 8x32 parameter", `parameter "linear.weight": payload is f32[8, 16] but placeholder "p_linear_weight" is f32[8, 32]`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["sizes"] = ints(8, 16)
		cfgMeta(m, "linear.weight")["strides"] = ints(16, 1)
	})
	edit("payload-dtype-mismatch.pt2", "config says float64 for a float32 parameter", `parameter "linear.weight": payload is f64[4, 32] but placeholder "p_linear_weight" is f32[8, 32]`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["dtype"] = 8
		cfgMeta(m, "linear.weight")["sizes"] = ints(4, 32)
	})
	edit("payload-dtype-unknown.pt2", "config dtype 99", `config["linear.weight"].tensor_meta.dtype: unknown ScalarType 99`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["dtype"] = 99
	})
	edit("payload-no-meta.pt2", "config entry without tensor_meta", `config["linear.weight"]: missing required field "tensor_meta"`, func(m map[string]any) {
		delete(obj(m, "config", "linear.weight"), "tensor_meta")
	})
	edit("payload-size-negative.pt2", "config size -8", `config["linear.weight"].tensor_meta.sizes[0]: negative size -8`, func(m map[string]any) {
		cfgMeta(m, "linear.weight")["sizes"] = ints(-8, 32)
	})
	// a NaN and an infinity in a plain weight are legal values: fxquant
	// must not crash on them (print and verify succeed)
	a = base.clone()
	w := bytes.Clone(a.get("data/weights/weight_1"))
	copy(w, f32(float32(math.NaN()), float32(math.Inf(-1))))
	a.set("data/weights/weight_1", w)
	emit("weight-nan-bias.pt2", "NaN and -Inf in linear.bias: legal, but run's observers see NaN", `NaN`, a.bytes(), passes("print", "verify"))
}

// shapes: sizes that wrap, overflow or are absurd.
func shapes(base *archive) {
	const mj = "models/model.json"
	edit := func(file, note, want string, fn func(m map[string]any), opts ...func(*Case)) {
		emit(file, note, want, base.clone().editJS(mj, fn).bytes(), opts...)
	}
	edit("size-wraps-to-zero.pt2", "input x of size [2^62, 4], whose element count wraps to 0", `graph_module.graph.tensor_values["x"].sizes: tensor: too large: shape [4611686018427387904 4] has more than`, func(m map[string]any) {
		tv(m, "x")["sizes"] = ints(1<<62, 4)
	})
	edit("size-32x32.pt2", "linear result of size [2^32, 2^32]", `graph_module.graph.tensor_values["linear"].sizes: tensor: too large`, func(m map[string]any) {
		tv(m, "linear")["sizes"] = ints(1<<32, 1<<32)
	})
	edit("size-maxint.pt2", "input x of size [2^63-1, 32] (run used to panic in makeslice)", `graph_module.graph.tensor_values["x"].sizes: tensor: too large: shape [9223372036854775807 32]`, func(m map[string]any) {
		tv(m, "x")["sizes"] = ints(math.MaxInt64, 32)
		tv(m, "x")["strides"] = ints(32, 1)
	})
	edit("input-2pow40.pt2", "input x of size [2^40, 32] (run's random calibration used to allocate until out of memory)", `random calibration: input x: f32[1099511627776, 32]: 4 random batches of 140737488355328 bytes each bring calibration data to 562949953421312 bytes, more than the budget of 1073741824 (1GiB; --calibration-budget)`, func(m map[string]any) {
		tv(m, "x")["sizes"] = ints(1<<40, 32)
		tv(m, "linear")["sizes"] = ints(1<<40, 8)
	}, only("run"))
	edit("input-1gib.pt2", "input x of size [2^23, 32]: 1 GiB per batch", `random calibration: input x: f32[8388608, 32]: 4 random batches of 1073741824 bytes each`, func(m map[string]any) {
		tv(m, "x")["sizes"] = ints(1<<23, 32)
		tv(m, "linear")["sizes"] = ints(1<<23, 8)
	}, only("run"))
	edit("size-negative.pt2", "input x of size [-4, 32]", `graph_module.graph.tensor_values["x"].sizes[0]: negative size -4`, func(m map[string]any) {
		tv(m, "x")["sizes"] = ints(-4, 32)
	})
	edit("dtype-unknown.pt2", "input x of dtype 99", `graph_module.graph.tensor_values["x"].dtype: unknown ScalarType 99`, func(m map[string]any) {
		tv(m, "x")["dtype"] = 99
	})
	edit("strides-count.pt2", "input x with one stride for two sizes", `graph_module.graph.tensor_values["x"].strides: want one stride per size (2), got 1`, func(m map[string]any) {
		tv(m, "x")["strides"] = ints(1)
	})
	edit("size-not-int.pt2", "a size given as a string", `graph_module.graph.tensor_values["x"].sizes[0].as_int: want an integer, got "four"`, func(m map[string]any) {
		tv(m, "x")["sizes"] = []any{map[string]any{"as_int": "four"}, map[string]any{"as_int": 32}}
	})
	edit("size-float.pt2", "a size given as 4.5", `graph_module.graph.tensor_values["x"].sizes[0].as_int: want an int64, got 4.5`, func(m map[string]any) {
		tv(m, "x")["sizes"] = []any{map[string]any{"as_int": json.Number("4.5")}, map[string]any{"as_int": 32}}
	})
	edit("size-2pow64.pt2", "a size of 2^64 (out of int64)", `graph_module.graph.tensor_values["x"].sizes[0].as_int: want an int64, got 18446744073709551616`, func(m map[string]any) {
		tv(m, "x")["sizes"] = []any{map[string]any{"as_int": json.Number("18446744073709551616")}, map[string]any{"as_int": 32}}
	})
	// print shows what the file says; verify names the node's type and
	// run refuses the 8 GiB result before the kernel allocates it
	edit("result-recorded-huge.pt2", "linear records a [2^28, 8] result for a [4, 32] input: 8 GiB", `node "linear" (aten.linear.default): `, func(m map[string]any) {
		tv(m, "linear")["sizes"] = ints(1<<28, 8)
	}, only("verify", "run"))
}

// program: the graph and signature.
func program(base *archive) {
	const mj = "models/model.json"
	edit := func(file, note, want string, fn func(m map[string]any), opts ...func(*Case)) {
		emit(file, note, want, base.clone().editJS(mj, fn).bytes(), opts...)
	}
	edit("schema-version-missing.pt2", "no schema_version", `missing required field "schema_version"`, func(m map[string]any) {
		delete(m, "schema_version")
	})
	edit("schema-version-99.pt2", "schema_version 99.0", `schema_version: unsupported schema version: serialized schema version 99.0`, func(m map[string]any) {
		m["schema_version"] = map[string]any{"major": 99, "minor": 0}
	})
	edit("node-unknown-op.pt2", "a node calling torch.ops.aten.no_such_op.default", `graph_module.graph.nodes[0].target: unknown operator: aten.no_such_op.default`, func(m map[string]any) {
		nodeNamed(m, "linear")["target"] = "torch.ops.aten.no_such_op.default"
	})
	edit("node-undefined-input.pt2", "linear reads a tensor no node defines", `graph_module.graph.nodes[0].inputs[0].arg.as_tensor: undefined name: unknown tensor "nowhere"`, func(m map[string]any) {
		input(nodeNamed(m, "linear"), "input")["arg"] = map[string]any{"as_tensor": map[string]any{"name": "nowhere"}}
	})
	// the reader binds by the serialized kind; verify and run refuse it
	edit("node-arg-kind.pt2", "linear's input given as an int", `node "linear" (aten.linear.default): `, func(m map[string]any) {
		input(nodeNamed(m, "linear"), "input")["arg"] = map[string]any{"as_int": 3}
	}, only("verify", "run"))
	edit("node-missing-arg.pt2", "linear without its weight", `graph_module.graph.nodes[0].inputs: missing required argument "weight" of linear`, func(m map[string]any) {
		n := nodeNamed(m, "linear")
		n["inputs"] = []any{n["inputs"].([]any)[0]}
	})
	edit("node-dup-output.pt2", "two nodes define linear", `graph_module.graph.nodes[1].outputs[0]: name "linear" is defined twice`, func(m map[string]any) {
		g := graph(m)
		g["nodes"] = append(g["nodes"].([]any), g["nodes"].([]any)[0])
	})
	edit("output-undefined.pt2", "the graph returns a tensor no node defines", `graph_module.graph.outputs[0].as_tensor: undefined name: unknown tensor "nowhere"`, func(m map[string]any) {
		graph(m)["outputs"] = []any{map[string]any{"as_tensor": map[string]any{"name": "nowhere"}}}
		obj(m, "graph_module", "signature", "output_specs", 0, "user_output")["arg"] = map[string]any{"as_tensor": map[string]any{"name": "nowhere"}}
	})
	edit("tensor-value-missing.pt2", "no tensor_values entry for linear", `graph_module.graph.nodes[0].outputs[0].as_tensor: undefined name: tensor "linear" has no entry in graph.tensor_values`, func(m map[string]any) {
		delete(obj(graph(m), "tensor_values"), "linear")
	})
	edit("signature-short.pt2", "input_specs lists two of three placeholders", `graph_module.graph.inputs: 3 graph inputs but 2 input specs in graph_module.signature.input_specs`, func(m map[string]any) {
		sig := obj(m, "graph_module", "signature")
		sig["input_specs"] = sig["input_specs"].([]any)[:2]
	})
	edit("signature-unknown-param.pt2", "a parameter named no.such.weight (no stored data)", `parameter "no.such.weight" (placeholder "p_linear_weight") has no stored data`, func(m map[string]any) {
		obj(m, "graph_module", "signature", "input_specs", 0, "parameter")["parameter_name"] = "no.such.weight"
	})
	edit("signature-unknown-kind.pt2", "an input spec of kind \"wormhole\"", `graph_module.signature.input_specs[2].wormhole: unknown InputSpec tag "wormhole"`, func(m map[string]any) {
		sig := obj(m, "graph_module", "signature")
		sig["input_specs"].([]any)[2] = map[string]any{"wormhole": map[string]any{}}
	})
	edit("graph-no-nodes-key.pt2", "graph without nodes", `graph_module.graph: missing required field "nodes"`, func(m map[string]any) {
		delete(graph(m), "nodes")
	})
	edit("graph-inputs-dup.pt2", "x listed twice as a graph input", `graph_module.graph.inputs: 4 graph inputs but 3 input specs`, func(m map[string]any) {
		g := graph(m)
		g["inputs"] = append(g["inputs"].([]any), g["inputs"].([]any)[2])
	})
}

// scales: stored and literal qparams of a quantized program.
func scales(base *archive) {
	// the weights config names the record of each buffer
	cfg := base.js("data/weights/model_weights_config.json")
	rec := func(fqn string) string { return "data/weights/" + obj(cfg, "config", fqn)["path_name"].(string) }
	for _, c := range []struct {
		file string
		v    float32
		show string
	}{
		{"scale-buffer-neg-inf.pt2", float32(math.Inf(-1)), "-Inf"},
		{"scale-buffer-nan.pt2", float32(math.NaN()), "NaN"},
		{"scale-buffer-zero.pt2", 0, "0"},
		{"scale-buffer-negative.pt2", -0.5, "-0.5"},
	} {
		a := base.clone()
		w := bytes.Clone(a.get(rec("_scale_0")))
		copy(w[12:], f32(c.v))
		a.set(rec("_scale_0"), w)
		emit(c.file, "element 3 of the per-channel scale buffer _scale_0 is "+c.show,
			`buffer "_scale_0" (placeholder "b__scale_0"): element [3] is `+c.show+`, but it is the scales of node "dequantize_per_channel"`, a.bytes())
	}
	const mj = "models/model.json"
	edit := func(file, note, want string, fn func(n map[string]any), opts ...func(*Case)) {
		a := base.clone().editJS(mj, func(m map[string]any) { fn(nodeNamed(m, "quantize_per_tensor")) })
		emit(file, note, want, a.bytes(), opts...)
	}
	edit("scale-literal-nan.pt2", "quantize_per_tensor with scale NaN", `node "quantize_per_tensor" (quantized_decomposed.quantize_per_tensor.default): arg 1 (scale): want a finite scale > 0, got NaN`, func(n map[string]any) {
		input(n, "scale")["arg"] = map[string]any{"as_float": "NaN"}
	}, only("verify", "run"), passes("print"))
	edit("scale-literal-neg-inf.pt2", "quantize_per_tensor with scale -Infinity", `node "quantize_per_tensor" (quantized_decomposed.quantize_per_tensor.default): arg 1 (scale): want a finite scale > 0, got -Inf`, func(n map[string]any) {
		input(n, "scale")["arg"] = map[string]any{"as_float": "-Infinity"}
	}, only("verify", "run"), passes("print"))
	edit("scale-literal-zero.pt2", "quantize_per_tensor with scale 0", `node "quantize_per_tensor" (quantized_decomposed.quantize_per_tensor.default): arg 1 (scale): want a finite scale > 0, got 0`, func(n map[string]any) {
		input(n, "scale")["arg"] = map[string]any{"as_float": 0}
	}, only("verify", "run"), passes("print"))
	edit("zero-point-300.pt2", "int8 zero point 300", `node "quantize_per_tensor" (quantized_decomposed.quantize_per_tensor.default): arg 2 (zero_point): want a zero point in int8's range [-128, 127], got 300`, func(n map[string]any) {
		input(n, "zero_point")["arg"] = map[string]any{"as_int": 300}
	}, only("verify", "run"), passes("print"))
	edit("zero-point-2pow62.pt2", "zero point 2^62", `node "quantize_per_tensor" (quantized_decomposed.quantize_per_tensor.default): arg 2 (zero_point): want a zero point in int8's range [-128, 127], got 4611686018427387904`, func(n map[string]any) {
		input(n, "zero_point")["arg"] = map[string]any{"as_int": int64(1) << 62}
	}, only("verify", "run"), passes("print"))
	edit("quant-min-over-max.pt2", "quant_min 127 > quant_max -128", `node "quantize_per_tensor" (quantized_decomposed.quantize_per_tensor.default): arg 3 (quant_min): want quant_min <= quant_max (-128), got 127`, func(n map[string]any) {
		input(n, "quant_min")["arg"] = map[string]any{"as_int": 127}
		input(n, "quant_max")["arg"] = map[string]any{"as_int": -128}
	}, only("verify", "run"), passes("print"))
	a := base.clone().editJS(mj, func(m map[string]any) {
		input(nodeNamed(m, "dequantize_per_channel"), "axis")["arg"] = map[string]any{"as_int": 5}
	})
	emit("axis-out-of-range.pt2", "per-channel axis 5 of a rank-2 weight", `node "dequantize_per_channel" (quantized_decomposed.dequantize_per_channel.default): arg 3 (axis): want an axis in [0, 2) (the input's rank), got 5`, a.bytes(), only("verify", "run"), passes("print"))
	a = base.clone()
	a.set("byteorder", []byte("big"))
	emit("static-byteorder-big.pt2", "quantized MLP marked big-endian", `record byteorder is "big"`, a.bytes())
}

// generic applies the same mutations to another real archive.
func generic(name string, base *archive, fqn, value string) {
	rec := "data/weights/" + obj(base.js(cfgName), "config", fqn)["path_name"].(string)
	const cfg = cfgName
	a := base.clone()
	a.set("byteorder", []byte("big"))
	emit(name+"-byteorder-big.pt2", name+" marked big-endian", `record byteorder is "big"`, a.bytes())
	a = base.clone()
	a.add(ent{name: "archive/extra/../../../tmp/x", data: []byte("x")})
	emit(name+"-extra-dotdot.pt2", name+" with an extra file escaping the folder", `entry name "archive/extra/../../../tmp/x" has a ".." path segment`, a.bytes())
	a = base.clone()
	a.add(ent{name: "archive/data/weights/model_weights_config.json", data: []byte(`{"config": {}}`)})
	emit(name+"-dup-config.pt2", name+" with two weights configs", `entry "archive/data/weights/model_weights_config.json" appears more than once`, a.bytes())
	a = base.clone().editJS(cfg, func(m map[string]any) {
		cfgMeta(m, fqn)["storage_offset"] = map[string]any{"as_int": -4}
	})
	emit(name+"-offset-negative.pt2", name+": storage_offset -4 on "+fqn, fmt.Sprintf(`config[%q]: record %q: tensor_meta.storage_offset -4 is negative`, fqn, rec), a.bytes())
	a = base.clone().editJS("models/model.json", func(m map[string]any) {
		tv(m, value)["sizes"] = ints(1<<33, 1<<31)
	})
	emit(name+"-size-wraps.pt2", name+": "+value+" of size [2^33, 2^31]", fmt.Sprintf(`graph_module.graph.tensor_values[%q].sizes: tensor: too large`, value), a.bytes())
	a = base.clone()
	i := a.idx("data/weights/weight_0")
	a.ents[i].declared = 1 << 30
	emit(name+"-weight-declares-1gib.pt2", name+": weight_0 declares 1 GiB", `entry "archive/data/weights/weight_0" declares 1073741824 bytes, which would bring`, a.bytes())
	a = base.clone().editJS(cfg, func(m map[string]any) {
		delete(obj(m, "config"), fqn)
	})
	emit(name+"-param-no-data.pt2", name+": "+fqn+" has no stored data", fmt.Sprintf(`parameter %q (placeholder`, fqn), a.bytes())
}

// dynamic: symbolic sizes of the dynamic-batch MLP.
func dynamic(base *archive) {
	const mj = "models/model.json"
	a := base.clone().editJS(mj, func(m map[string]any) {
		tv(m, "x")["sizes"].([]any)[0] = map[string]any{"as_expr": map[string]any{"expr_str": "s99", "hint": map[string]any{"as_int": 4}}}
	})
	emit("dynbatch-unknown-symbol.pt2", "x's batch is a symbol the range constraints do not declare", `node "x": type: want an input's symbols to have a range (range_constraints lists s77), got symbol s99, which has none, in f32[s99, 16]`, a.bytes(), only("verify", "run"), passes("print"))
	a = base.clone().editJS(mj, func(m map[string]any) {
		for _, v := range obj(m, "range_constraints") {
			v.(map[string]any)["min_val"] = 100
			v.(map[string]any)["max_val"] = 2
		}
	})
	emit("dynbatch-range-inverted.pt2", "a range constraint with min 100 > max 2", `models/model.json: range_constraints["s77"]: empty range: min_val 100 is greater than max_val 2`, a.bytes())
}

// bareJSON: program JSON documents outside an archive.
func bareJSON(base *archive) {
	js := base.get("models/model.json")
	emit("bare-trailing.json", "a program JSON followed by garbage", `trailing data after the object: 4 bytes starting "junk"`, append(bytes.Clone(js), " junk"...))
	emit("bare-deep.json", "a JSON value nested 20000 deep", `exceeded max depth`, []byte(`{"schema_version": `+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+"}"))
	m := base.clone().js("models/model.json")
	tv(m, "x")["sizes"] = ints(1<<62, 4)
	b, err := json.Marshal(m)
	check(err)
	emit("bare-size-wraps.json", "a bare program whose input size wraps to zero", `graph_module.graph.tensor_values["x"].sizes: tensor: too large`, b)
	emit("bare-not-json.json", "binary noise named .json", `want an object`, []byte{0xff, 0xfe, 0, 1, 2})
}

// text: golden text graphs.
func text() {
	emit("text-no-return.txt", "a text graph without a return line", `line 4:1: missing return line: the graph has no output, and node %relu's [num_users=1] counts users the text does not give (want a last line "return ...")`, []byte("graph():\n    %x : [num_users=1] = placeholder[target=x]\n    %relu : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})\n"))
	emit("text-two-returns.txt", "a text graph with two return lines", `line 4:5: duplicate return line: the graph already returns on line 3, and a graph has one output`, []byte("graph():\n    %x : [num_users=1] = placeholder[target=x]\n    return (x,)\n    return (x,)\n"))
	emit("text-unknown-op.txt", "a text graph calling an unknown op", `node "y" calls aten.no_such_op.default, which is not in the op registry (--allow-opaque reads it)`, []byte("graph():\n    %x : [num_users=1] = placeholder[target=x]\n    %y : [num_users=1] = call_function[target=torch.ops.aten.no_such_op.default](args = (%x,), kwargs = {})\n    return (y,)\n"))
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
