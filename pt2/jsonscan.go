package pt2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// This file is the reader's JSON scanner: it finds the extent of a JSON
// value in the bytes, validating it as encoding/json would, without
// decoding or copying it. objectEntries and decodeArray use it to split an
// object or array into its members, which stay slices of the document.
// encoding/json's Decoder.Token and Decode into RawMessage (what the reader
// used before) allocate for every token and copy every member at every
// level; this scanner allocates nothing, so a level costs one tight pass
// over its bytes.

// maxJSONDepth is encoding/json's nesting limit, kept so that a document
// nested deeper is refused with the message encoding/json gives.
const maxJSONDepth = 10000

// errJSONDepth is encoding/json's error for a document nested too deep.
var errJSONDepth = errors.New("exceeded max depth")

// errJSONEnd is encoding/json's error for a value cut short.
var errJSONEnd = errors.New("unexpected end of JSON input")

// jsonSyntax is encoding/json's message for an unexpected byte.
func jsonSyntax(c byte, context string) error {
	return fmt.Errorf("invalid character %s %s", quoteJSONChar(c), context)
}

// quoteJSONChar is encoding/json's quoteChar.
func quoteJSONChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// isJSONSpace reports JSON whitespace.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the offset of the first non-space byte at or after i.
func skipSpace(data []byte, i int) int {
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	return i
}

// scanValue returns the end of the JSON value starting at data[i] (no
// leading space), checking its syntax; depth is the nesting of the
// containers around it.
func scanValue(data []byte, i, depth int) (int, error) {
	return scanValueIx(data, i, depth, nil)
}

// scanValueIx is scanValue, also recording the large containers in ix
// when it is not nil.
func scanValueIx(data []byte, i, depth int, ix bigIndex) (int, error) {
	if i >= len(data) {
		return 0, errJSONEnd
	}
	switch c := data[i]; {
	case c == '"':
		end, _, err := scanString(data, i)
		return end, err
	case c == '{':
		return scanObject(data, i, depth+1, ix)
	case c == '[':
		return scanArray(data, i, depth+1, nil, ix)
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(data, i)
	case c == 't':
		return scanLiteral(data, i, "true")
	case c == 'f':
		return scanLiteral(data, i, "false")
	case c == 'n':
		return scanLiteral(data, i, "null")
	default:
		return 0, jsonSyntax(c, "looking for beginning of value")
	}
}

func scanLiteral(data []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(data) {
			return 0, errJSONEnd
		}
		if data[i+k] != lit[k] {
			return 0, jsonSyntax(data[i+k], "in literal "+lit+" (expecting "+quoteJSONChar(lit[k])+")")
		}
	}
	return i + len(lit), nil
}

// scanString returns the end of the string starting at data[i] (a '"')
// and whether it is plain: printable ASCII without escapes, so that its
// bytes between the quotes are its value.
func scanString(data []byte, i int) (int, bool, error) {
	plain := true
	for j := i + 1; j < len(data); j++ {
		// runs of ordinary bytes, the bulk of a string, in a tight loop
		for j < len(data) && strPlain[data[j]] {
			j++
		}
		if j >= len(data) {
			break
		}
		switch c := data[j]; {
		case c == '"':
			return j + 1, plain, nil
		case c == '\\':
			plain = false
			j++
			if j >= len(data) {
				return 0, false, errJSONEnd
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if j+k >= len(data) {
						return 0, false, errJSONEnd
					}
					if !isHex(data[j+k]) {
						return 0, false, jsonSyntax(data[j+k], "in \\u hexadecimal character escape")
					}
				}
				j += 4
			default:
				return 0, false, jsonSyntax(data[j], "in string escape code")
			}
		case c < 0x20:
			return 0, false, jsonSyntax(c, "in string literal")
		case c >= 0x80:
			plain = false
		}
	}
	return 0, false, errJSONEnd
}

// strPlain marks the bytes a string holds as themselves: printable ASCII
// but the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber returns the end of the number starting at data[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(data []byte, i int) (int, error) {
	j := i
	if data[j] == '-' {
		j++
	}
	if j >= len(data) {
		return 0, errJSONEnd
	}
	switch {
	case data[j] == '0':
		j++
	case data[j] >= '1' && data[j] <= '9':
		for j < len(data) && isDigit(data[j]) {
			j++
		}
	default:
		return 0, jsonSyntax(data[j], "in numeric literal")
	}
	if j < len(data) && data[j] == '.' {
		j++
		if j >= len(data) {
			return 0, errJSONEnd
		}
		if !isDigit(data[j]) {
			return 0, jsonSyntax(data[j], "after decimal point in numeric literal")
		}
		for j < len(data) && isDigit(data[j]) {
			j++
		}
	}
	if j < len(data) && (data[j] == 'e' || data[j] == 'E') {
		j++
		if j < len(data) && (data[j] == '+' || data[j] == '-') {
			j++
		}
		if j >= len(data) {
			return 0, errJSONEnd
		}
		if !isDigit(data[j]) {
			return 0, jsonSyntax(data[j], "in exponent of numeric literal")
		}
		for j < len(data) && isDigit(data[j]) {
			j++
		}
	}
	return j, nil
}

// isJSONNumber reports whether b is exactly one JSON number.
func isJSONNumber(b []byte) bool {
	if len(b) == 0 || (b[0] != '-' && !isDigit(b[0])) {
		return false
	}
	end, err := scanNumber(b, 0)
	return err == nil && end == len(b)
}

func scanObject(data []byte, i, depth int, ix bigIndex) (int, error) {
	if depth > maxJSONDepth {
		return 0, errJSONDepth
	}
	j := skipSpace(data, i+1)
	if j < len(data) && data[j] == '}' {
		return j + 1, nil
	}
	for {
		if j >= len(data) {
			return 0, errJSONEnd
		}
		if data[j] != '"' {
			return 0, jsonSyntax(data[j], "looking for beginning of object key string")
		}
		end, _, err := scanString(data, j)
		if err != nil {
			return 0, err
		}
		j = skipSpace(data, end)
		if j >= len(data) {
			return 0, errJSONEnd
		}
		if data[j] != ':' {
			return 0, jsonSyntax(data[j], "after object key")
		}
		j = skipSpace(data, j+1)
		if j, err = scanValueIx(data, j, depth, ix); err != nil {
			return 0, err
		}
		j = skipSpace(data, j)
		if j >= len(data) {
			return 0, errJSONEnd
		}
		switch data[j] {
		case ',':
			j = skipSpace(data, j+1)
		case '}':
			ix.record(data, i, j+1)
			return j + 1, nil
		default:
			return 0, jsonSyntax(data[j], "after object key:value pair")
		}
	}
}

// scanArray returns the end of the array starting at data[i]; when items
// is not nil, it also appends each element there, as a slice of data.
func scanArray(data []byte, i, depth int, items *[]json.RawMessage, ix bigIndex) (int, error) {
	if depth > maxJSONDepth {
		return 0, errJSONDepth
	}
	j := skipSpace(data, i+1)
	if j < len(data) && data[j] == ']' {
		return j + 1, nil
	}
	for {
		start := j
		var err error
		if j, err = scanValueIx(data, j, depth, ix); err != nil {
			return 0, err
		}
		if items != nil {
			if *items == nil {
				*items = make([]json.RawMessage, 0, 4)
			}
			*items = append(*items, data[start:j:j])
		}
		j = skipSpace(data, j)
		if j >= len(data) {
			return 0, errJSONEnd
		}
		switch data[j] {
		case ',':
			j = skipSpace(data, j+1)
		case ']':
			ix.record(data, i, j+1)
			return j + 1, nil
		default:
			return 0, jsonSyntax(data[j], "after array element")
		}
	}
}

// knownKeys are the keys of the export schema's objects: a key among them
// is returned as this map's string instead of a new one.
var knownKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"arg", "as_bool", "as_bools", "as_custom_obj", "as_device", "as_expr", "as_float", "as_floats",
		"as_graph", "as_int", "as_ints", "as_layout", "as_memory_format", "as_none", "as_operator",
		"as_optional_tensor", "as_optional_tensors", "as_scalar_type", "as_string", "as_strings",
		"as_sym_bool", "as_sym_bools", "as_sym_float", "as_sym_floats", "as_sym_int", "as_sym_ints",
		"as_tensor", "as_tensors", "aten", "buffer", "buffer_mutation", "buffer_name", "constant_input",
		"custom_obj", "custom_obj_values", "device", "dtype", "expr_str", "forward_arg_names", "fqn",
		"from_node", "gradient_to_parameter", "gradient_to_user_input", "graph", "graph_module",
		"guards_code", "hint", "in_spec", "index", "input_specs", "inputs", "is_hop_single_tensor_return",
		"is_single_tensor_return", "kind", "layout", "loss_output", "major", "max_val", "metadata",
		"min_val", "minor", "module_call_graph", "name", "nn_module_stack", "nodes", "opset_version",
		"out_spec", "output_specs", "outputs", "parameter", "parameter_mutation", "parameter_name",
		"persistent", "range_constraints", "requires_grad", "schema_version", "signature", "sizes",
		"source_fn_stack", "stack_trace", "storage_offset", "strides", "sym_bool_values",
		"sym_float_values", "sym_int_values", "target", "tensor_constant", "tensor_values", "token",
		"torch_fn", "torch_version", "treespec_namedtuple_fields", "type", "user_input",
		"user_input_mutation", "user_output", "verifiers",
	} {
		m[k] = k
	}
	return m
}()

// internKey returns b as a string, without allocating for a known key.
func internKey(b []byte) string {
	if k, ok := knownKeys[string(b)]; ok {
		return k
	}
	return string(b)
}

// --- fast mode -------------------------------------------------------------

// The functions below split values of a document already known to be
// valid JSON (see readpath.go): they check nothing the validating
// scanner checks and so never fail on syntax; an ok of false sends the
// caller to its checked code for the verdict.

// validJSON reports whether data is one JSON value, spaces around it
// allowed, as the validating scanner (and json.Valid) says.
func validJSON(data []byte) bool {
	_, ok := validIndexed(data, false)
	return ok
}

// validIndexed is validJSON, also indexing the document's large
// containers when index is set.
func validIndexed(data []byte, index bool) (bigIndex, bool) {
	var ix bigIndex
	if index {
		ix = make(bigIndex, len(data)/1024)
	}
	i := skipSpace(data, 0)
	end, err := scanValueIx(data, i, 0, ix)
	return ix, err == nil && skipSpace(data, end) == len(data)
}

// skipString returns the end of the valid string starting at data[i].
func skipString(data []byte, i int) int {
	// most strings are short: a plain loop, an escape skipping the byte
	// it escapes
	j := i + 1
	for n := min(len(data), j+24); j < n; j++ {
		switch data[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
	}
	if j > len(data) {
		return len(data)
	}
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data)
		}
		j += k
		// the quote ends the string unless an odd run of backslashes
		// escapes it
		n := 0
		for p := j - 1; p > i && data[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// skipValue returns the end of the valid value starting at data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		if end, ok := containerEnd(data, i, len(data)); ok {
			return end
		}
		return len(data)
	}
	j := i + 1 // a number or a literal: up to the next delimiter
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// containerEnd returns the end of the valid container starting at
// data[i] when it ends within limit bytes of i.
func containerEnd(data []byte, i, limit int) (int, bool) {
	depth := 0
	for j := i; j < len(data) && j-i < limit; j++ {
		if !structural[data[j]] {
			continue
		}
		switch data[j] {
		case '"':
			j = skipString(data, j) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// structural marks the bytes skipValue acts on inside a container.
var structural = func() (t [256]bool) {
	for _, c := range `"{}[]` {
		t[c] = true
	}
	return t
}()

// plainString returns the end of the valid string starting at data[i]
// and whether it is plain (see scanString), in one pass when it is.
func plainString(data []byte, i int) (int, bool) {
	j := i + 1
	for j < len(data) && strPlain[data[j]] {
		j++
	}
	if j < len(data) && data[j] == '"' {
		return j + 1, true
	}
	return skipString(data, i), false
}

// bigIndex maps the first byte of each large container (array or
// object) of a valid document to the container's length, so that
// splitting the containers around it (the program, the graph, the node
// list: each holds most of the document) does not walk it again.
type bigIndex map[*byte]int

// minIndexed is the length from which a container is indexed.
const minIndexed = 128

// record indexes the container data[start:end] when it is large.
func (ix bigIndex) record(data []byte, start, end int) {
	if ix != nil && end-start >= minIndexed {
		ix[&data[start]] = end - start
	}
}

// skip is skipValue, jumping over an indexed container: a container that
// does not end within minIndexed bytes is in the index.
func (ix bigIndex) skip(data []byte, i int) int {
	if c := data[i]; ix != nil && (c == '{' || c == '[') {
		if end, ok := containerEnd(data, i, minIndexed); ok {
			return end
		}
		if n, ok := ix[&data[i]]; ok {
			return i + n
		}
	}
	return skipValue(data, i)
}

// splitObject splits the valid value raw, an object of plain distinct
// keys, into its entries; ok is false for anything else.
func splitObject(raw []byte, ix bigIndex) ([]kv, bool) {
	// entries gather on the stack; the object keeps an exact copy
	var buf [16]kv
	out, ok := splitObjectInto(raw, ix, buf[:0], true)
	if !ok || len(out) == 0 {
		return nil, ok
	}
	return slices.Clone(out), true
}

// splitObjectInto is splitObject appending the entries to out; without
// checkDups, duplicate keys are the caller's to find.
func splitObjectInto(raw []byte, ix bigIndex, out []kv, checkDups bool) ([]kv, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	j := skipSpace(raw, i+1)
	if raw[j] == '}' {
		return out, true
	}
	var seen keySet
	for {
		end, plain := plainString(raw, j)
		if !plain {
			return nil, false
		}
		kb := raw[j+1 : end-1]
		key := internKey(kb)
		j = skipSpace(raw, end)
		j = skipSpace(raw, j+1) // the colon
		start := j
		j = ix.skip(raw, j)
		if checkDups && !seen.add(out, key) {
			return nil, false
		}
		out = append(out, kv{key, raw[start:j:j]})
		j = skipSpace(raw, j)
		if raw[j] == '}' {
			return out, true
		}
		j = skipSpace(raw, j+1) // the comma
	}
}

// splitUnion is scanUnion for a valid value.
func splitUnion(raw []byte) (tag string, v json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", nil, false
	}
	i = skipSpace(raw, i+1)
	if raw[i] != '"' {
		return "", nil, false
	}
	end, plain := plainString(raw, i)
	if !plain {
		return "", nil, false
	}
	key := raw[i+1 : end-1]
	start := skipSpace(raw, skipSpace(raw, end)+1)
	stop := skipValue(raw, start)
	if raw[skipSpace(raw, stop)] != '}' {
		return "", nil, false
	}
	return internKey(key), raw[start:stop:stop], true
}

// splitArray is scanArrayItems for a valid value.
func splitArray(raw []byte, ix bigIndex) (items []json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	j := skipSpace(raw, i+1)
	if raw[j] == ']' {
		return []json.RawMessage{}, true
	}
	items = make([]json.RawMessage, 0, 4)
	for {
		start := j
		j = ix.skip(raw, j)
		items = append(items, raw[start:j:j])
		j = skipSpace(raw, j)
		if raw[j] == ']' {
			return items, true
		}
		j = skipSpace(raw, j+1)
	}
}
