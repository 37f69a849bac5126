package pt2

import (
	"bytes"
	"encoding/json"
	"github.com/fxquant/fxquant/fxgraph"
	"io"
	"strconv"
	"strings"
)

// numericDebugHandleKey is torchao's NUMERIC_DEBUG_HANDLE_KEY: the entry of
// node.meta["custom"] that holds a node's numeric debug handle
// (generate_numeric_debug_handle writes meta["custom"]["numeric_debug_handle"]).
const numericDebugHandleKey = "numeric_debug_handle"

// customEntry is one top-level entry of a custom metadata object: its key
// and the value's JSON text exactly as read.
type customEntry struct {
	key string
	raw json.RawMessage
}

// parseCustom splits the JSON object text of node.meta["custom"] into its
// entries, in order. ok is false when s is not a JSON object.
func parseCustom(s string) (entries []customEntry, ok bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, isKey := t.(string)
		if !isKey {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		entries = append(entries, customEntry{k, raw})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // trailing data
	}
	return entries, true
}

// customHandle returns the numeric debug handle stored in custom metadata
// text (0 when there is none, or it is not a positive integer).
func customHandle(s string) int {
	if s == "" || !strings.Contains(s, numericDebugHandleKey) {
		return 0
	}
	if h, ok := plainCustomHandle(s); ok {
		return h
	}
	return decodedCustomHandle(s)
}

// decodedCustomHandle is customHandle through a JSON decoder.
func decodedCustomHandle(s string) int {
	entries, ok := parseCustom(s)
	if !ok {
		return 0
	}
	for _, e := range entries {
		if e.key == numericDebugHandleKey {
			h, err := strconv.Atoi(string(bytes.TrimSpace(e.raw)))
			if err != nil || h <= 0 {
				return 0
			}
			return h
		}
	}
	return 0
}

// withCustomHandle returns the custom metadata text that holds handle h
// (none when h is 0) and every other entry of s, as Python's json.dumps
// writes the dict torchao leaves: an existing handle entry keeps its place,
// a new one goes last, and an object left empty is no entry at all. Text
// that already says h is returned unchanged, so a program read and written
// back keeps its bytes. Text that is not a JSON object is kept as it is,
// without the handle: torchao cannot store one there either
// (generate_numeric_debug_handle needs meta["custom"] to be a dict).
func withCustomHandle(s string, h int) string {
	if customHandle(s) == h {
		return s
	}
	var entries []customEntry
	if s != "" {
		var ok bool
		if entries, ok = parseCustom(s); !ok {
			return s
		}
	}
	found := false
	out := entries[:0:0]
	for _, e := range entries {
		if e.key == numericDebugHandleKey {
			found = true
			if h == 0 {
				continue
			}
			e.raw = json.RawMessage(strconv.Itoa(h))
		}
		out = append(out, e)
	}
	if !found && h != 0 {
		out = append(out, customEntry{numericDebugHandleKey, json.RawMessage(strconv.Itoa(h))})
	}
	if len(out) == 0 {
		return ""
	}
	b := []byte{'{'}
	for i, e := range out {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fxgraph.AppendPyJSONString(b, e.key)
		b = append(b, ": "...)
		b = append(b, e.raw...)
	}
	b = append(b, '}')
	return string(b)
}

// plainCustomHandle reads the text torchao's handles usually leave,
// {"numeric_debug_handle": N} with N a positive integer in plain digits,
// without a JSON decoder; ok is false for any other text.
func plainCustomHandle(s string) (h int, ok bool) {
	const prefix = `{"` + numericDebugHandleKey + `": `
	digits, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return 0, false
	}
	digits, ok = strings.CutSuffix(digits, "}")
	if !ok || len(digits) == 0 || len(digits) > 18 || digits[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		h = h*10 + int(c-'0')
	}
	return h, true
}
