package pt2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fxquant/fxquant/fxgraph"
	"io"
	"math"
	"strconv"
	"strings"
)

// This file holds the JSON plumbing: field-path errors, ordered object
// decoding (Python dicts keep insertion order, Go maps do not), and a writer
// that lays JSON out the way Python's json.dumps does by default.

// kv is one entry of a JSON object, in document order.
type kv struct {
	Key string
	Val json.RawMessage
}

// objectEntries decodes a JSON object into its entries in document order;
// each value is a slice of raw. A duplicate key is an error (Python would
// keep the last one silently; a program with one is malformed).
func objectEntries(raw json.RawMessage, path string) ([]kv, error) {
	return objectEntriesIx(raw, path, nil)
}

// objectEntriesIx is objectEntries, splitting with ix in fast mode.
func objectEntriesIx(raw json.RawMessage, path string, ix bigIndex) ([]kv, error) {
	if path == fastPath {
		if out, ok := splitObject(raw, ix); ok {
			return out, nil
		}
	}
	i := skipSpace(raw, 0)
	if i >= len(raw) {
		return nil, pathErr(path, fmt.Errorf("want an object: %v", io.EOF))
	}
	if raw[i] != '{' {
		if _, err := scanValue(raw, i, 0); err != nil {
			return nil, pathErr(path, fmt.Errorf("want an object: %v", err))
		}
		return nil, pathErr(path, fmt.Errorf("want an object, got %s", describeJSON(raw)))
	}
	j := skipSpace(raw, i+1)
	var out []kv
	var seen keySet
	if j < len(raw) && raw[j] == '}' {
		j++
	} else {
		out = make([]kv, 0, 8)
		for {
			if j >= len(raw) {
				return nil, pathErr(path, errJSONEnd)
			}
			if raw[j] != '"' {
				return nil, pathErr(path, jsonSyntax(raw[j], "looking for beginning of object key string"))
			}
			end, plain, err := scanString(raw, j)
			if err != nil {
				return nil, pathErr(path, err)
			}
			var key string
			if plain {
				key = internKey(raw[j+1 : end-1])
			} else {
				key = unquoteJSON(raw[j:end]) // scanString checked it
			}
			j = skipSpace(raw, end)
			if j >= len(raw) {
				return nil, pathErr(path, errJSONEnd)
			}
			if raw[j] != ':' {
				return nil, pathErr(path, jsonSyntax(raw[j], "after object key"))
			}
			j = skipSpace(raw, j+1)
			start := j
			if j, err = scanValue(raw, j, 1); err != nil {
				return nil, pathErr(path+"."+key, err)
			}
			if !seen.add(out, key) {
				return nil, pathErr(path, fmt.Errorf("duplicate key %q", key))
			}
			out = append(out, kv{key, raw[start:j:j]})
			j = skipSpace(raw, j)
			if j >= len(raw) {
				return nil, pathErr(path, errJSONEnd)
			}
			if raw[j] == '}' {
				j++
				break
			}
			if raw[j] != ',' {
				return nil, pathErr(path, jsonSyntax(raw[j], "after object key:value pair"))
			}
			j = skipSpace(raw, j+1)
		}
	}
	if rest := raw[skipSpace(raw, j):]; len(rest) > 0 {
		return nil, pathErr(path, fmt.Errorf("trailing data after the object: %d bytes starting %q", len(rest), rest[:min(len(rest), 16)]))
	}
	return out, nil
}

// keySet finds duplicate keys: a scan of the few keys an object of the
// format has, then a map once there are many (tensor_values, the weights
// config).
type keySet struct {
	m map[string]struct{}
}

// add reports whether key is new among entries (the keys added so far,
// key not yet among them) and records it.
func (s *keySet) add(entries []kv, key string) bool {
	if s.m == nil && len(entries) < 32 {
		for _, e := range entries {
			if e.Key == key {
				return false
			}
		}
		return true
	}
	if s.m == nil {
		s.m = make(map[string]struct{}, 2*len(entries))
		for _, e := range entries {
			s.m[e.Key] = struct{}{}
		}
	}
	if _, dup := s.m[key]; dup {
		return false
	}
	s.m[key] = struct{}{}
	return true
}

// object is a decoded JSON object with lookup by key.
type object struct {
	path    string
	entries []kv
}

func decodeObject(raw json.RawMessage, path string) (*object, error) {
	return decodeObjectIx(raw, path, nil)
}

// decodeObjectIx is decodeObject, splitting with ix in fast mode.
func decodeObjectIx(raw json.RawMessage, path string, ix bigIndex) (*object, error) {
	e, err := objectEntriesIx(raw, path, ix)
	if err != nil {
		return nil, err
	}
	return &object{path: path, entries: e}, nil
}

// scanUnion splits a well-formed object of one plain key (spaces around
// it allowed) into the key and its value without allocating; ok is false
// for anything else, which union hands to objectEntries.
func scanUnion(raw []byte) (tag string, v json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", nil, false
	}
	i = skipSpace(raw, i+1)
	if i >= len(raw) || raw[i] != '"' {
		return "", nil, false
	}
	end, plain, err := scanString(raw, i)
	if err != nil || !plain {
		return "", nil, false
	}
	key := raw[i+1 : end-1]
	j := skipSpace(raw, end)
	if j >= len(raw) || raw[j] != ':' {
		return "", nil, false
	}
	start := skipSpace(raw, j+1)
	stop, err := scanValue(raw, start, 1)
	if err != nil {
		return "", nil, false
	}
	j = skipSpace(raw, stop)
	if j >= len(raw) || raw[j] != '}' || skipSpace(raw, j+1) != len(raw) {
		return "", nil, false
	}
	return internKey(key), raw[start:stop:stop], true
}

// get returns the value under key; absent and JSON null both give nil.
func (o *object) get(key string) json.RawMessage {
	for _, e := range o.entries {
		if e.Key == key {
			if isNull(e.Val) {
				return nil
			}
			return e.Val
		}
	}
	return nil
}

// req returns the value under key or an error naming the missing field.
func (o *object) req(key string) (json.RawMessage, error) {
	v := o.get(key)
	if v == nil {
		return nil, pathErr(o.path, fmt.Errorf("missing required field %q", key))
	}
	return v, nil
}

func (o *object) sub(key string) string { return subPath(o.path, key) }

// reqString returns the string under key, with req's error when it is
// missing and decodeString's when it is not a string.
func (o *object) reqString(key string) (string, error) {
	r, err := o.req(key)
	if err != nil {
		return "", err
	}
	return decodeString(r, o.sub(key))
}

// reqArray returns the elements of the array under key, with req's error
// when it is missing and decodeArray's when it is not an array.
func (o *object) reqArray(key string) ([]json.RawMessage, error) {
	r, err := o.req(key)
	if err != nil {
		return nil, err
	}
	return decodeArray(r, o.sub(key))
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// union decodes a union object: exactly one key, its tag.
func union(raw json.RawMessage, path string) (string, json.RawMessage, error) {
	if path == fastPath {
		if tag, v, ok := splitUnion(raw); ok {
			return tag, v, nil
		}
	}
	if tag, v, ok := scanUnion(raw); ok {
		return tag, v, nil
	}
	e, err := objectEntries(raw, path)
	if err != nil {
		return "", nil, err
	}
	if len(e) != 1 {
		keys := make([]string, len(e))
		for i := range e {
			keys[i] = e[i].Key
		}
		return "", nil, pathErr(path, fmt.Errorf("union object must have exactly one key, got %d %q", len(e), keys))
	}
	return e[0].Key, e[0].Val, nil
}

func decodeArray(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	return decodeArrayIx(raw, path, nil)
}

// decodeArrayIx is decodeArray, splitting with ix in fast mode.
func decodeArrayIx(raw json.RawMessage, path string, ix bigIndex) ([]json.RawMessage, error) {
	if path == fastPath {
		if items, ok := splitArray(raw, ix); ok {
			return items, nil
		}
	}
	if items, ok := scanArrayItems(raw); ok {
		return items, nil
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil || (out == nil && !isNull(raw) && strings.TrimSpace(string(raw)) != "[]") {
		return nil, pathErr(path, fmt.Errorf("want an array, got %s", describeJSON(raw)))
	}
	return out, nil
}

// scanArrayItems splits a well-formed JSON array (spaces around it
// allowed) into its elements, slices of raw; ok is false for anything
// else (null included), which decodeArray hands to encoding/json for its
// verdict.
func scanArrayItems(raw []byte) (items []json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	end, err := scanArray(raw, i, 1, &items, nil)
	if err != nil || skipSpace(raw, end) != len(raw) {
		return nil, false
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	return items, true
}

// decodeEach decodes a JSON array whose element i, at path[i], each
// decodes; the first element error is returned as is.
func decodeEach[T any](raw json.RawMessage, path string, each func(json.RawMessage, string) (T, error)) ([]T, error) {
	return decodeEachIx(raw, path, nil, each)
}

// decodeEachIx is decodeEach, splitting the array with ix in fast mode.
func decodeEachIx[T any](raw json.RawMessage, path string, ix bigIndex, each func(json.RawMessage, string) (T, error)) ([]T, error) {
	items, err := decodeArrayIx(raw, path, ix)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(items))
	for i, it := range items {
		if out[i], err = each(it, indexPath(path, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func decodeString(raw json.RawMessage, path string) (string, error) {
	if path == fastPath {
		if s, ok := unescapeASCII(raw); ok {
			return s, nil
		}
	}
	if b := trimJSONSpace(raw); len(b) >= 2 && b[0] == '"' {
		if end, plain, err := scanString(b, 0); err == nil && plain && end == len(b) {
			return string(b[1 : len(b)-1]), nil
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", pathErr(path, fmt.Errorf("want a string, got %s", describeJSON(raw)))
	}
	return s, nil
}

func decodeBool(raw json.RawMessage, path string) (bool, error) {
	switch string(trimJSONSpace(raw)) {
	case "true":
		return true, nil
	case "false", "null": // encoding/json leaves a bool alone on null
		return false, nil
	}
	return false, pathErr(path, fmt.Errorf("want a bool, got %s", describeJSON(raw)))
}

func decodeInt(raw json.RawMessage, path string) (int64, error) {
	b := trimJSONSpace(raw)
	if !isJSONNumber(b) {
		// A JSON string holding a number decodes too, as
		// encoding/json's json.Number does.
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, pathErr(path, fmt.Errorf("want an integer, got %s", describeJSON(raw)))
		}
		b = []byte(n.String())
	}
	i, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, pathErr(path, fmt.Errorf("want an int64, got %s", b))
	}
	return i, nil
}

// decodeFloat reads a JSON number or one of the strings Python writes for
// non-finite values ("Infinity", "-Infinity", "NaN").
func decodeFloat(raw json.RawMessage, path string) (float64, error) {
	b := trimJSONSpace(raw)
	if isJSONNumber(b) {
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return 0, pathErr(path, fmt.Errorf("want a float, got %s", b))
		}
		return f, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "Infinity", "inf":
			return math.Inf(1), nil
		case "-Infinity", "-inf":
			return math.Inf(-1), nil
		case "NaN", "nan":
			return math.NaN(), nil
		}
		return 0, pathErr(path, fmt.Errorf("want a float, got string %q", s))
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, pathErr(path, fmt.Errorf("want a float, got %s", describeJSON(raw)))
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil {
		return 0, pathErr(path, fmt.Errorf("want a float, got %s", n))
	}
	return f, nil
}

// trimJSONSpace drops JSON whitespace around b.
func trimJSONSpace(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && isJSONSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// describeJSON returns a short excerpt of raw for error messages.
func describeJSON(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	if s == "" {
		return "nothing"
	}
	return s
}

// --- writing --------------------------------------------------------------

// pyWriter writes JSON the way Python's json.dumps does with its defaults:
// ", " and ": " separators, non-ASCII escaped as \uXXXX, floats in repr
// form. Everything is appended to one byte slice: no value allocates.
type pyWriter struct {
	b []byte
	// first tracks, per open container, whether no element was written yet.
	first []bool
	// pendingKey is set between a key and its value.
	pendingKey bool
	// scratch is space for text formatted before it is quoted.
	scratch []byte
}

func (w *pyWriter) sep() {
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.b = append(w.b, ", "...)
		}
		w.first[n-1] = false
	}
}

func (w *pyWriter) endObject() { w.first = w.first[:len(w.first)-1]; w.b = append(w.b, '}') }
func (w *pyWriter) endArray()  { w.first = w.first[:len(w.first)-1]; w.b = append(w.b, ']') }

// oneKey writes the one-key object {k: value}, value written by value:
// a union such as {"as_int": 3}, or a TensorArgument {"name": "x"}.
func (w *pyWriter) oneKey(k string, value func()) {
	w.beginObject()
	w.key(k)
	value()
	w.endObject()
}

// twoKeyStr writes the nested union {outer: {inner: "s"}} (a
// TensorArgument under its tag, a symbolic name).
func (w *pyWriter) twoKeyStr(outer, inner, s string) {
	w.valuePrefix()
	w.b = append(w.b, '{')
	w.b = fxgraph.AppendPyJSONString(w.b, outer)
	w.b = append(w.b, ": {"...)
	w.b = fxgraph.AppendPyJSONString(w.b, inner)
	w.b = append(w.b, ": "...)
	w.b = fxgraph.AppendPyJSONString(w.b, s)
	w.b = append(w.b, "}}"...)
}

// keyLit is key for a key that needs no escaping: a name of the format
// written as a literal.
func (w *pyWriter) keyLit(k string) {
	w.sep()
	w.b = append(append(append(w.b, '"'), k...), `": `...)
	w.pendingKey = true
}

// key writes an object key; the next value call writes its value.
func (w *pyWriter) key(k string) {
	w.sep()
	w.b = fxgraph.AppendPyJSONString(w.b, k)
	w.b = append(w.b, ": "...)
	w.pendingKey = true
}

func (w *pyWriter) str(s string) {
	w.valuePrefix()
	w.b = fxgraph.AppendPyJSONString(w.b, s)
}

// strBytes writes s as a string.
func (w *pyWriter) strBytes(s []byte) {
	w.valuePrefix()
	w.b = fxgraph.AppendPyJSONString(w.b, s)
}

func (w *pyWriter) int(i int64) { w.valuePrefix(); w.b = strconv.AppendInt(w.b, i, 10) }

func (w *pyWriter) bool(v bool) {
	w.valuePrefix()
	if v {
		w.b = append(w.b, "true"...)
	} else {
		w.b = append(w.b, "false"...)
	}
}

func (w *pyWriter) null() { w.valuePrefix(); w.b = append(w.b, "null"...) }

// float writes v as Python's repr; non-finite values become the strings
// PyTorch's serializer writes ("Infinity", "-Infinity", "NaN").
func (w *pyWriter) float(v float64) {
	w.valuePrefix()
	switch {
	case math.IsNaN(v):
		w.b = append(w.b, `"NaN"`...)
	case math.IsInf(v, 1):
		w.b = append(w.b, `"Infinity"`...)
	case math.IsInf(v, -1):
		w.b = append(w.b, `"-Infinity"`...)
	default:
		w.b = appendPyFloatRepr(w.b, v)
	}
}

// raw re-emits a JSON value kept verbatim from the input, in Python layout.
// A well-formed value (checked by the reader's scanner) is re-emitted
// straight from its bytes; anything else goes through encoding/json's
// decoder, for the error it gives.
func (w *pyWriter) raw(raw json.RawMessage) error {
	if isNull(raw) {
		w.null()
		return nil
	}
	if i := skipSpace(raw, 0); i < len(raw) {
		if end, err := scanValue(raw, i, 0); err == nil && skipSpace(raw, end) == len(raw) {
			w.rawScanned(raw, i)
			return nil
		}
	}
	return w.rawDecoded(raw)
}

// rawScanned writes the well-formed JSON value starting at data[i] and
// returns its end: strings are decoded and quoted again as json.dumps
// quotes them, numbers kept as written, as rawDecoded does.
func (w *pyWriter) rawScanned(data []byte, i int) int {
	switch data[i] {
	case '{':
		w.beginObject()
		j := skipSpace(data, i+1)
		for data[j] != '}' {
			end, plain, _ := scanString(data, j)
			if plain {
				w.sep()
				w.b = append(fxgraph.AppendPyJSONString(w.b, data[j+1:end-1]), ": "...)
				w.pendingKey = true
			} else {
				w.key(unquoteJSON(data[j:end]))
			}
			j = skipSpace(data, skipSpace(data, end)+1) // past ':'
			j = skipSpace(data, w.rawScanned(data, j))
			if data[j] == ',' {
				j = skipSpace(data, j+1)
			}
		}
		w.endObject()
		return j + 1
	case '[':
		w.beginArray()
		j := skipSpace(data, i+1)
		for data[j] != ']' {
			j = skipSpace(data, w.rawScanned(data, j))
			if data[j] == ',' {
				j = skipSpace(data, j+1)
			}
		}
		w.endArray()
		return j + 1
	case '"':
		end, plain, _ := scanString(data, i)
		if plain {
			w.strBytes(data[i+1 : end-1])
		} else {
			w.str(unquoteJSON(data[i:end]))
		}
		return end
	case 't':
		w.bool(true)
		return i + 4
	case 'f':
		w.bool(false)
		return i + 5
	case 'n':
		w.null()
		return i + 4
	}
	end, _ := scanNumber(data, i)
	w.valuePrefix()
	w.b = append(w.b, data[i:end]...)
	return end
}

// unquoteJSON decodes a well-formed JSON string as encoding/json does.
func unquoteJSON(q []byte) string {
	var s string
	_ = json.Unmarshal(q, &s) // q is well-formed: it cannot fail
	return s
}

// rawDecoded is raw through encoding/json's token API.
func (w *pyWriter) rawDecoded(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := w.rawValue(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

func (w *pyWriter) rawValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			w.beginObject()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				ks, ok := k.(string)
				if !ok {
					return errors.New("object key is not a string")
				}
				w.key(ks)
				if err := w.rawValue(dec); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			w.endObject()
		case '[':
			w.beginArray()
			for dec.More() {
				if err := w.rawValue(dec); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			w.endArray()
		default:
			return fmt.Errorf("unexpected %v", t)
		}
	case string:
		w.str(t)
	case json.Number:
		w.valuePrefix()
		w.b = append(w.b, t.String()...)
	case bool:
		w.bool(t)
	case nil:
		w.null()
	}
	return nil
}

func (w *pyWriter) beginObject() {
	w.valuePrefix()
	w.b = append(w.b, '{')
	w.first = append(w.first, true)
}

func (w *pyWriter) beginArray() {
	w.valuePrefix()
	w.b = append(w.b, '[')
	w.first = append(w.first, true)
}

// valuePrefix writes the separator before a value, unless the value
// follows a key.
func (w *pyWriter) valuePrefix() {
	if w.pendingKey {
		w.pendingKey = false
		return
	}
	w.sep()
}

// PyFloatRepr formats a finite float64 as Python's repr does: the shortest
// digits that round-trip, ".0" kept on integral values, exponent form below
// 1e-4 and from 1e16 up ("0.02", "1.0", "1e-05", "1.1920928955078125e-07",
// "1e+16").
func PyFloatRepr(v float64) string {
	if math.IsNaN(v) {
		return "nan"
	}
	if math.IsInf(v, 0) {
		if v > 0 {
			return "inf"
		}
		return "-inf"
	}
	var buf [32]byte
	return string(appendPyFloatRepr(buf[:0], v))
}

// appendPyFloatRepr appends PyFloatRepr(v) for a finite v.
func appendPyFloatRepr(dst []byte, v float64) []byte {
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], v, 'e', -1, 64) // "-d.ddde±XX"
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	ei := bytes.IndexByte(s, 'e')
	mant := s[:ei]
	exp := 0
	for _, c := range s[ei+2:] {
		exp = exp*10 + int(c-'0')
	}
	if s[ei+1] == '-' {
		exp = -exp
	}
	var dg [24]byte
	digits := append(dg[:0], mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	switch {
	case exp >= 0 && exp < 16:
		if len(digits) > exp+1 {
			dst = append(dst, digits[:exp+1]...)
			dst = append(dst, '.')
			dst = append(dst, digits[exp+1:]...)
		} else {
			dst = append(dst, digits...)
			for range exp + 1 - len(digits) {
				dst = append(dst, '0')
			}
			dst = append(dst, '.', '0')
		}
	case exp < 0 && exp >= -4:
		dst = append(dst, '0', '.')
		for range -exp - 1 {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		dst = strconv.AppendInt(dst, int64(exp), 10)
	}
	return dst
}
