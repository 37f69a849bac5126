package pt2

import (
	"encoding/json"
	"errors"
	"fmt"
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
	if i >= len(data) {
		return 0, errJSONEnd
	}
	switch c := data[i]; {
	case c == '"':
		end, _, err := scanString(data, i)
		return end, err
	case c == '{':
		return scanObject(data, i, depth+1)
	case c == '[':
		return scanArray(data, i, depth+1, nil)
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

func scanObject(data []byte, i, depth int) (int, error) {
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
		if j, err = scanValue(data, j, depth); err != nil {
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
			return j + 1, nil
		default:
			return 0, jsonSyntax(data[j], "after object key:value pair")
		}
	}
}

// scanArray returns the end of the array starting at data[i]; when items
// is not nil, it also appends each element there, as a slice of data.
func scanArray(data []byte, i, depth int, items *[]json.RawMessage) (int, error) {
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
		if j, err = scanValue(data, j, depth); err != nil {
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
