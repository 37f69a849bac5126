package pt2

import (
	"archive/zip"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanValueAgreesWithEncodingJSON: the scanner accepts exactly the
// documents encoding/json's Valid accepts, on hand-written cases and on
// random byte mutations of a program document, and gives the extent of
// the value.
func TestScanValueAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"x"}`, `"\u00e9\n\"\\\/"`, `-0.5e+10`, `0`, `-0`,
		`1.`, `01`, `-`, `.5`, `1e`, `1e+`, `"\x"`, `"\u12g4"`, "\"a\x01\"", `tru`, `nul`, `{"a" 1}`, `{"a":1,}`,
		`[1,]`, `[1 2]`, `{1:2}`, `"unterminated`, `{"a":1}}`, `[[[[]]]]`, "\"\xff\xfe\"", `{"a":-}`, `true false`,
	}
	zr, err := zip.OpenReader("../tests/testdata/pt2e/mlp.float.pt2")
	require.NoError(t, err)
	defer zr.Close()
	var base []byte
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/models/model.json") {
			rc, err := f.Open()
			require.NoError(t, err)
			base, err = io.ReadAll(rc)
			require.NoError(t, err)
			rc.Close()
		}
	}
	require.NotEmpty(t, base)
	cases = append(cases, string(base))
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]":,\ 0123456789-+.eEtrufalsn` + "\x00\x1f\x80")
	for range 1500 {
		b := []byte(string(base))
		for range 1 + r.IntN(3) {
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		data := []byte(c)
		end, err := scanValue(data, 0, 0)
		ok := err == nil && skipSpace(data, end) == len(data)
		require.Equal(t, json.Valid(data), ok, "document %q: scanner error %v", c, err)
	}
}

// TestObjectEntriesErrors: what objectEntries says of bad objects, as
// encoding/json's decoder said it.
func TestObjectEntriesErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{``, "p: want an object: EOF"},
		{`[1]`, "p: want an object, got [1]"},
		{"\x00\x01", `p: want an object: invalid character '\x00' looking for beginning of value`},
		{`{"a":1,"a":2}`, `p: duplicate key "a"`},
		{`{"a":1} x`, `p: trailing data after the object: 1 bytes starting "x"`},
		{`{"a":}`, `p.a: invalid character '}' looking for beginning of value`},
		{`{"a":1`, `p: unexpected end of JSON input`},
	} {
		_, err := objectEntries([]byte(tt.in), "p")
		require.Error(t, err, tt.in)
		assert.Equal(t, tt.want, err.Error(), tt.in)
	}
	e, err := objectEntries([]byte(` { "a\u0062" : [1, 2] , "c":{"d":"e"} } `), "p")
	require.NoError(t, err)
	require.Len(t, e, 2)
	assert.Equal(t, "ab", e[0].Key)
	assert.Equal(t, `[1, 2]`, string(e[0].Val))
	assert.Equal(t, `{"d":"e"}`, string(e[1].Val))
}

// TestScanDepthLimit: nesting deeper than encoding/json allows is
// refused with its message.
func TestScanDepthLimit(t *testing.T) {
	deep := make([]byte, 0, 2*maxJSONDepth+10)
	for range maxJSONDepth + 1 {
		deep = append(deep, '[')
	}
	for range maxJSONDepth + 1 {
		deep = append(deep, ']')
	}
	over := append(append([]byte(`{"a":`), deep[1:len(deep)-1]...), '}') // 10,001 levels
	require.False(t, json.Valid(over))
	_, err := objectEntries(over, "p")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exceeded max depth")
	limit := append(append([]byte(`{"a":`), deep[2:len(deep)-2]...), '}') // 10,000 levels
	require.True(t, json.Valid(limit))
	_, err = objectEntries(limit, "p")
	require.NoError(t, err)
}

// TestUnionFastPath: union's allocation-free path and its general one
// (objectEntries) agree on tags, values and errors.
func TestUnionFastPath(t *testing.T) {
	for _, in := range []string{`{"a":1}`, ` { "as_int" : [1, {"b": 2}] } `, `{"a":1,"b":2}`, `{"a\u0062":1}`, `{}`, `{"a":1} x`, `[1]`, `{"a":}`} {
		tag, v, err := union([]byte(in), "p")
		e, eerr := objectEntries([]byte(in), "p")
		switch {
		case eerr != nil:
			require.Error(t, err, in)
			assert.Equal(t, eerr.Error(), err.Error(), in)
		case len(e) != 1:
			require.Error(t, err, in)
			assert.Contains(t, err.Error(), "union object must have exactly one key", in)
		default:
			require.NoError(t, err, in)
			assert.Equal(t, e[0].Key, tag, in)
			assert.Equal(t, string(e[0].Val), string(v), in)
		}
	}
}
