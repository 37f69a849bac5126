package ops

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// schemaTableJSON is PyTorch 2.14.1's operator table: one JSON object a
// line with the overload's target, its schema as str(FunctionSchema) prints
// it, and its torch.Tags (see schemas/README.md).
//
//go:embed schemas/torch-2.14.1-ops.json
var schemaTableJSON string

// opTable indexes schemaTableJSON. Building the index only splits the
// lines; a look-up is a binary search over the table, which is sorted by
// target (so the overloads of a packet are consecutive entries), and an
// entry's schema is decoded and parsed on its first look-up. Parsing all
// 3,932 costs about 25 ms and 10 MB, which a command that touches twenty
// ops should not pay.
type opTable struct {
	lines  []string // the JSON object of each entry, in table order
	parsed []atomic.Pointer[tableOp]
}

// tableOp is one decoded and parsed entry.
type tableOp struct {
	schema *Schema
	tags   []string
	err    error
}

// theTable returns the process's index of the embedded table, built on
// first use.
var theTable = sync.OnceValues(func() (*opTable, error) { return indexTable(schemaTableJSON) })

// opPrefix starts every entry line; the target follows it.
const opPrefix = `{"op": "`

// indexTable splits the table into its entry lines
// `{"op": "ns.name.overload", "schema": ..., "tags": [...]}`. It checks
// only what look-ups rely on: each line names an overload. That the lines
// are sorted is checked by TestSchemaTableSorted.
func indexTable(data string) (*opTable, error) {
	t := &opTable{lines: make([]string, 0, len(data)/150)}
	for lineNo := 1; data != ""; lineNo++ {
		line, rest, _ := strings.Cut(data, "\n")
		data = rest
		if !strings.HasPrefix(line, opPrefix) {
			continue
		}
		if _, ok := lineOp(line); !ok {
			return nil, fmt.Errorf("ops: schema table line %d: want {\"op\": \"ns.name.overload\", ...}, found %.60q", lineNo, line)
		}
		t.lines = append(t.lines, strings.TrimSuffix(strings.TrimSpace(line), ","))
	}
	t.parsed = make([]atomic.Pointer[tableOp], len(t.lines))
	return t, nil
}

// lineOp reads the target of an entry line; its strings share the line's
// bytes.
func lineOp(line string) (Overload, bool) {
	name, _, ok := strings.Cut(strings.TrimPrefix(line, opPrefix), `"`)
	ns, rest, ok1 := strings.Cut(name, ".")
	i := strings.LastIndexByte(rest, '.')
	if !ok || !ok1 || i <= 0 || ns == "" || i == len(rest)-1 {
		return Overload{}, false
	}
	return Overload{Packet: Packet{NS: ns, Name: rest[:i]}, Name: rest[i+1:]}, true
}

// op returns the target of entry k.
func (t *opTable) op(k int) Overload {
	o, _ := lineOp(t.lines[k])
	return o
}

// len returns the number of entries.
func (t *opTable) len() int { return len(t.lines) }

// lowerBound returns the first entry whose target is not below the key
// parts joined ("aten", ".", "add", ".", "Tensor"). A line continues its
// target with '"', which sorts below every byte a target holds, so
// comparing the line's bytes compares the targets.
func (t *opTable) lowerBound(parts ...string) int {
	lo, hi := 0, len(t.lines)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmpParts(t.lines[m][len(opPrefix):], parts) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// cmpParts compares s with the concatenation of parts, without building it.
func cmpParts(s string, parts []string) int {
	for _, p := range parts {
		n := min(len(s), len(p))
		if c := strings.Compare(s[:n], p[:n]); c != 0 {
			return c
		}
		if n < len(p) {
			return -1 // s ended first
		}
		s = s[n:]
	}
	if s == "" {
		return 0
	}
	return 1
}

// find returns the table index of o.
func (t *opTable) find(o Overload) (int, bool) {
	k := t.lowerBound(o.Packet.NS, ".", o.Packet.Name, ".", o.Name, `"`)
	if k < len(t.lines) && t.op(k) == o {
		return k, true
	}
	return 0, false
}

// overloads returns the table indices [start, end) of p's overloads.
func (t *opTable) overloads(p Packet) (start, end int) {
	return t.lowerBound(p.NS, ".", p.Name, "."), t.lowerBound(p.NS, ".", p.Name, "/") // '/' follows '.'
}

// entry decodes and parses entry k once; concurrent callers may both parse,
// and one result wins.
func (t *opTable) entry(k int) *tableOp {
	if e := t.parsed[k].Load(); e != nil {
		return e
	}
	e := t.decode(k)
	if !t.parsed[k].CompareAndSwap(nil, e) {
		return t.parsed[k].Load()
	}
	return e
}

func (t *opTable) decode(k int) *tableOp {
	o := t.op(k)
	text, tags, err := decodeLine(t.lines[k])
	if err != nil {
		return &tableOp{err: fmt.Errorf("ops: schema table entry %s: %w", o, err)}
	}
	ns, s, err := ParseQualifiedSchema(text)
	if err != nil {
		return &tableOp{err: fmt.Errorf("ops: schema table entry %s: %w", o, err)}
	}
	if ns != o.Packet.NS || s.Name != o.Packet.Name || s.Overload != o.Name {
		return &tableOp{err: fmt.Errorf("ops: schema table entry %s: schema names %s::%s.%s", o, ns, s.Name, s.Overload)}
	}
	return &tableOp{schema: s, tags: tags}
}

// decodeLine reads the schema and tags of an entry line
// `{"op": "...", "schema": "...", "tags": ["...", ...]}`. Strings without
// escapes share the line's bytes; any line of another shape goes through
// encoding/json.
func decodeLine(line string) (schema string, tags []string, err error) {
	const sk, tk = `", "schema": "`, `", "tags": [`
	i := strings.Index(line, sk)
	j := strings.LastIndex(line, tk)
	if i < 0 || j < i+len(sk) || !strings.HasSuffix(line, "]}") {
		return decodeLineJSON(line)
	}
	schema = line[i+len(sk) : j]
	if strings.ContainsAny(schema, "\\\"") {
		if schema, err = strconv.Unquote(`"` + schema + `"`); err != nil {
			return decodeLineJSON(line)
		}
	}
	list := line[j+len(tk) : len(line)-2]
	if list == "" {
		return schema, nil, nil
	}
	parts := strings.Split(list, ", ")
	for i, p := range parts {
		if len(p) < 2 || p[0] != '"' || p[len(p)-1] != '"' || strings.ContainsAny(p[1:len(p)-1], "\\\"") {
			return decodeLineJSON(line)
		}
		parts[i] = p[1 : len(p)-1]
	}
	return schema, parts, nil
}

func decodeLineJSON(line string) (string, []string, error) {
	var raw struct {
		Schema string   `json:"schema"`
		Tags   []string `json:"tags"`
	}
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		return "", nil, err
	}
	return raw.Schema, raw.Tags, nil
}

// fxSideEffectful are the overloads in torch.fx.node._side_effectful_functions
// (PyTorch 2.14.1) that are in the table: FX's dead-code elimination keeps
// them although their schemas mutate nothing.
var fxSideEffectful = map[Overload]bool{
	{Packet: Packet{NS: "aten", Name: "_assert_async"}, Name: "msg"}:                    true,
	{Packet: Packet{NS: "aten", Name: "_assert_scalar"}, Name: "default"}:               true,
	{Packet: Packet{NS: "aten", Name: "_assert_tensor_metadata"}, Name: "default"}:      true,
	{Packet: Packet{NS: "aten", Name: "sym_constrain_range"}, Name: "default"}:          true,
	{Packet: Packet{NS: "aten", Name: "sym_constrain_range_for_size"}, Name: "default"}: true,
	{Packet: Packet{NS: "prims", Name: "_sink_tokens"}, Name: "default"}:                true,
}

// impureByTorch reports whether torch 2.14's torch._library.utils.is_impure
// calls an overload with this schema and these tags impure: a mutable
// schema, a random op (tag nondeterministic_seeded), or one of FX's
// side-effectful functions.
func impureByTorch(o Overload, s *Schema, tags []string) bool {
	return s.IsMutable() || fxSideEffectful[o] || slices.Contains(tags, "nondeterministic_seeded")
}
