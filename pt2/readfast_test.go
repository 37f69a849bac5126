package pt2

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFastTensorMetaAgrees: the fast TensorMeta decoder reads the usual
// forms, and whatever it accepts the general decoder accepts with the
// same result; what it refuses (symbolic sizes, a device index, nulls,
// odd key orders, bad values) is left to the general decoder.
func TestFastTensorMetaAgrees(t *testing.T) {
	usual := []string{
		`{"dtype": 7, "sizes": [{"as_int": 64}, {"as_int": 32}], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 32}, {"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7}`,
		`{"dtype": 1, "sizes": [], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7}`,
		`{"dtype":7,"sizes":[{"as_int":0},{"as_int":3}],"strides":[{"as_int":3},{"as_int":1}]}`,
		` { "dtype" : 7 , "sizes" : [ { "as_int" : 5 } ] , "requires_grad" : false , "device" : { "type" : "meta" } , "strides" : [ { "as_int" : -1 } ] , "storage_offset" : 4 , "layout" : 7 } `,
		`{"dtype": 7, "sizes": [{"as_int": 2}], "strides": [{"as_int": 1}], "storage_offset": {"as_int": -3}}`,
	}
	for _, s := range usual {
		m, ok := fastTensorMeta([]byte(s))
		require.True(t, ok, "fast decoder refused %s", s)
		want, err := decodeTensorMeta([]byte(s), "tv")
		require.NoError(t, err, s)
		assert.Equal(t, want, m, s)
	}
	others := []string{
		`{"dtype": 7, "sizes": [{"as_int": -1}], "strides": [{"as_int": 1}]}`,
		`{"dtype": 0, "sizes": [], "strides": []}`,
		`{"dtype": 99, "sizes": [], "strides": []}`,
		`{"dtype": 7.0, "sizes": [], "strides": []}`,
		`{"dtype": "7", "sizes": [], "strides": []}`,
		`{"dtype": 7, "sizes": [{"as_int": 2}], "strides": []}`,
		`{"dtype": 7, "sizes": [], "strides": [], "layout": 3}`,
		`{"dtype": 7, "sizes": [], "strides": [], "layout": 8}`,
		`{"dtype": 7, "sizes": [], "strides": [], "layout": null}`,
		`{"dtype": 7, "sizes": [], "strides": [], "requires_grad": null}`,
		`{"dtype": 7, "sizes": [], "strides": [], "device": null}`,
		`{"dtype": 7, "sizes": [], "strides": [], "device": {"type": "cuda", "index": 1}}`,
		`{"dtype": 7, "sizes": [], "strides": [], "device": {"index": null}}`,
		`{"dtype": 7, "sizes": [], "strides": [], "device": {"type": "c\u0070u"}}`,
		`{"dtype": 7, "sizes": [], "strides": [], "storage_offset": null}`,
		`{"dtype": 7, "sizes": [], "strides": [], "storage_offset": 99999999999999999999}`,
		`{"dtype": 7, "sizes": [{"as_int": 9999999999}, {"as_int": 9999999999}], "strides": [{"as_int": 1}, {"as_int": 1}]}`,
		`{"dtype": 7, "sizes": [{"as_int": 123456789012345678}], "strides": [{"as_int": 1}]}`,
		`{"dtype": 7, "sizes": [{"as_int": 1234567890123456789}], "strides": [{"as_int": 1}]}`,
		`{"dtype": 7, "sizes": [{"as_expr": {"expr_str": "s0", "hint": {"as_int": 3}}}], "strides": [{"as_int": 1}]}`,
		`{"dtype": 7, "sizes": [{"as_int": 2, "as_int": 2}], "strides": [{"as_int": 1}]}`,
		`{"dtype": 7, "sizes": [{"as_int": 2}], "strides": [{"as_int": 1}], "dtype": 7}`,
		`{"dtype": 7, "strides": [{"as_int": 1}], "sizes": [{"as_int": 2}]}`,
		`{"meta": {"dtype": 7, "sizes": [], "strides": []}}`,
		`{"dtype": 7, "sizes": [], "strides": [], "extra": 1}`,
		`{"dtype": 7, "sizes": []}`,
		`{"sizes": [], "strides": []}`,
		`{}`, `[]`, `null`, `7`,
	}
	for _, s := range append(others, usual...) {
		m, ok := fastTensorMeta([]byte(s))
		want, err := decodeTensorMeta([]byte(s), "tv")
		if ok {
			require.NoError(t, err, "fast decoder accepts what the general one refuses: %s", s)
			assert.Equal(t, want, m, s)
		}
	}
}

// jsonDocs returns the program documents of the fixture archives and of
// tests/testdata/pt2-json, and the payload configs of the archives.
func jsonDocs(t *testing.T) (programs, configs [][]byte) {
	files, err := filepath.Glob("../tests/testdata/pt2e/*.pt2")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		zr, err := zip.OpenReader(file)
		require.NoError(t, err)
		for _, f := range zr.File {
			if !strings.HasSuffix(f.Name, ".json") {
				continue
			}
			rc, err := f.Open()
			require.NoError(t, err)
			b, err := io.ReadAll(rc)
			require.NoError(t, err)
			rc.Close()
			switch {
			case strings.HasSuffix(f.Name, "/models/model.json"):
				programs = append(programs, b)
			case strings.HasSuffix(f.Name, "_config.json"):
				configs = append(configs, b)
			}
		}
		zr.Close()
	}
	more, err := filepath.Glob("../tests/testdata/pt2-json/*.json")
	require.NoError(t, err)
	for _, f := range more {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		programs = append(programs, b)
	}
	return programs, configs
}

// valueStarts returns the offsets of the values that follow a colon, an
// opening bracket or a comma in the valid document doc, and of the keys.
func valueStarts(doc []byte) (values, keys []int) {
	prev := byte(0)
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if isJSONSpace(c) {
			continue
		}
		if prev == ':' || prev == '[' || prev == ',' || prev == '{' {
			if prev == '{' || (prev == ',' && c == '"' && isKeyAt(doc, i)) {
				if c == '"' {
					keys = append(keys, i)
				}
			} else {
				values = append(values, i)
			}
		}
		if c == '"' {
			i = skipString(doc, i) - 1
			prev = '"'
			continue
		}
		prev = c
	}
	return values, keys
}

// isKeyAt reports whether the string at doc[i] is followed by a colon.
func isKeyAt(doc []byte, i int) bool {
	j := skipSpace(doc, skipString(doc, i))
	return j < len(doc) && doc[j] == ':'
}

// replacements are the values a mutation puts in place of another.
var replacements = []string{
	`null`, `0`, `-1`, `7`, `1.5`, `1e3`, `99999999999999999999`, `"x"`, `""`, `"c\u0070u"`, `{}`, `[]`,
	`true`, `false`, `{"as_int": 3}`, `{"as_int": -2}`, `[{"as_int": 4}]`, `{"name": "x"}`,
	`{"as_tensor": {"name": "x"}}`, `{"as_none": null}`, `{"type": "cpu", "index": 0}`, `{"as_int": 1, "as_int": 1}`,
}

// mutate returns doc with one random change: a value replaced, a value
// doubled into a duplicate key, a member dropped, or a key renamed.
func mutate(r *rand.Rand, doc []byte) []byte {
	values, keys := valueStarts(doc)
	if len(values) == 0 || len(keys) == 0 {
		return doc
	}
	splice := func(at, end int, s string) []byte {
		out := make([]byte, 0, len(doc)+len(s))
		out = append(out, doc[:at]...)
		out = append(out, s...)
		return append(out, doc[end:]...)
	}
	switch r.IntN(4) {
	case 0, 1:
		v := values[r.IntN(len(values))]
		return splice(v, skipValue(doc, v), replacements[r.IntN(len(replacements))])
	case 2: // repeat a member: a duplicate key
		k := keys[r.IntN(len(keys))]
		colon := skipSpace(doc, skipString(doc, k))
		end := skipValue(doc, skipSpace(doc, colon+1))
		return splice(k, k, string(doc[k:end])+", ")
	default: // rename a key
		k := keys[r.IntN(len(keys))]
		names := []string{`"name"`, `"as_int"`, `"sizes"`, `"strides"`, `"kind"`, `"arg"`, `"meta"`, `"zz"`, `"device"`, `"dtype"`}
		return splice(k, skipString(doc, k), names[r.IntN(len(names))])
	}
}

// TestFastModeAgreesWithChecked: on the fixture programs and on random
// mutations of them (valid JSON kept), fast mode succeeds exactly when
// checked mode (the reader's original decoding) does, with the same
// program, written back byte for byte; the same for the payload configs.
func TestFastModeAgreesWithChecked(t *testing.T) {
	programs, configs := jsonDocs(t)
	r := rand.New(rand.NewPCG(15, 1))
	opts := &Options{AllowOpaque: true}
	rounds := 60
	if testing.Short() {
		rounds = 10
	}
	checked, fastOK := 0, 0
	for _, seed := range programs {
		if len(seed) > 300_000 {
			continue
		}
		doc := seed
		for i := 0; i < rounds; i++ {
			if i > 0 {
				doc = mutate(r, seed)
				if r.IntN(3) == 0 {
					doc = mutate(r, doc)
				}
			}
			ix, ok := validIndexed(doc, true)
			if !ok {
				continue
			}
			checkIndex(t, doc, ix)
			pf, pc := newProgram(ContainerJSON), newProgram(ContainerJSON)
			errF := pf.decodeAt(doc, opts, fastPath, ix)
			errC := pc.decodeAt(doc, opts, "", nil)
			checked++
			require.Equal(t, errC == nil, errF == nil, "fast mode and checked mode disagree (checked: %v) on %s", errC, doc)
			if errC != nil {
				continue
			}
			fastOK++
			jf, errF := pf.EncodeJSON(opts.Registry)
			jc, errC := pc.EncodeJSON(opts.Registry)
			if errC != nil {
				require.EqualError(t, errF, errC.Error())
				continue
			}
			require.NoError(t, errF)
			require.True(t, bytes.Equal(jc, jf), "fast and checked programs write differently from %s", doc)
		}
	}
	t.Logf("%d program documents, %d read", checked, fastOK)
	require.Greater(t, fastOK, len(programs), "too few mutations read: the test would not test")

	for _, seed := range configs {
		doc := seed
		for i := 0; i < rounds; i++ {
			if i > 0 {
				doc = mutate(r, seed)
			}
			if !validJSON(doc) {
				continue
			}
			fast, ok := decodePayloadConfig(doc)
			slow, err := checkedPayloadConfig(doc)
			require.Equal(t, err == nil, ok, "fast and checked payload config decoding disagree (checked: %v) on %s", err, doc)
			if ok {
				require.Equal(t, slow, fast)
			}
		}
	}
}

// checkedPayloadConfig decodes a payload config in checked mode.
func checkedPayloadConfig(cfg []byte) ([]payloadEntry, error) {
	out, err := payloadConfigEntries(cfg, "cfg")
	if err != nil {
		return nil, err
	}
	for i := range out {
		if err := out[i].decode("entry"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TestSkipValue: the fast skipper finds the extent the validating
// scanner finds on valid values, escapes and nesting included.
func TestSkipValue(t *testing.T) {
	for _, s := range []string{
		`"a\"b\\"`, `"\\\\"`, `"\u0022"`, `{"a": ["]", "}", {"b": "\\"}]}`, `[[], {}, [[1]]]`,
		`-1.5e+3`, `0`, `true`, `null`, `"é"`,
	} {
		doc := []byte(s + ` , 1`)
		want, err := scanValue(doc, 0, 0)
		require.NoError(t, err, s)
		assert.Equal(t, want, skipValue(doc, 0), s)
		assert.Equal(t, len(s), want, s)
	}
}

// checkIndex checks the index validIndexed builds of a valid document: every container of at
// least minIndexed bytes is indexed with the length the validating
// scanner gives it, and nothing else is.
func checkIndex(t *testing.T, doc []byte, ix bigIndex) {
	found := 0
	values, _ := valueStarts(doc)
	values = append(values, skipSpace(doc, 0))
	for _, v := range values {
		if doc[v] != '{' && doc[v] != '[' {
			continue
		}
		end, err := scanValue(doc, v, 0)
		require.NoError(t, err)
		n, ok := ix[&doc[v]]
		if end-v >= minIndexed {
			require.True(t, ok, "container at %d (%d bytes) not indexed", v, end-v)
			require.Equal(t, end-v, n)
			found++
		} else {
			require.False(t, ok, "small container at %d indexed", v)
		}
	}
	require.Equal(t, len(ix), found, "index holds entries that are no container")
}

// TestUnescapeASCII: the fast string decoder gives what encoding/json
// gives, and leaves to it what it does not handle.
func TestUnescapeASCII(t *testing.T) {
	for _, s := range []string{
		`""`, `"abc"`, `"a\"b"`, `"\\"`, `"\/\b\f\n\r\t"`, `"[{\"name\": \"x\"}]"`, `"tab\tend\\"`,
		`"\u0041"`, `"é"`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"",
	} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(s), &want), s)
		got, ok := unescapeASCII([]byte(s))
		if ok {
			assert.Equal(t, want, got, s)
		} else {
			assert.True(t, strings.Contains(s, `\u`) || strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 }) >= 0 || strings.Contains(s, "\xff"), "refused %s", s)
		}
	}
}
