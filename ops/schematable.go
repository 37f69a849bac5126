package ops

import (
	_ "embed"
	"encoding/json"
	"fmt"
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

// opTable indexes schemaTableJSON. Building the index only finds each
// line's target; an entry's schema is decoded and parsed on its first
// look-up (parsing all 3,932 costs about 25 ms and 10 MB, which a command
// that touches twenty ops should not pay).
type opTable struct {
	lines   []string // the JSON object of each entry, in table order
	ops     []Overload
	index   map[Overload]int
	packets map[Packet][]int // overloads of each packet, in table order
	parsed  []atomic.Pointer[tableOp]
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

// indexTable finds the target of every entry line `{"op": "ns.name.overload", ...}`.
func indexTable(data string) (*opTable, error) {
	const prefix = `{"op": "`
	n := strings.Count(data, prefix)
	t := &opTable{
		lines:   make([]string, 0, n),
		ops:     make([]Overload, 0, n),
		index:   make(map[Overload]int, n),
		packets: make(map[Packet][]int, n),
	}
	for lineNo := 1; data != ""; lineNo++ {
		line, rest, _ := strings.Cut(data, "\n")
		data = rest
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		name, _, ok := strings.Cut(line[len(prefix):], `"`)
		ns, rest, ok1 := strings.Cut(name, ".")
		i := strings.LastIndexByte(rest, '.')
		if !ok || !ok1 || i <= 0 || ns == "" || i == len(rest)-1 {
			return nil, fmt.Errorf("ops: schema table line %d: op %q is not \"ns.name.overload\"", lineNo, name)
		}
		o := Overload{Packet: Packet{NS: ns, Name: rest[:i]}, Name: rest[i+1:]}
		if _, dup := t.index[o]; dup {
			return nil, fmt.Errorf("ops: schema table line %d: %s listed twice", lineNo, o)
		}
		k := len(t.ops)
		t.index[o] = k
		t.ops = append(t.ops, o)
		t.lines = append(t.lines, strings.TrimSuffix(line, ","))
		t.packets[o.Packet] = append(t.packets[o.Packet], k)
	}
	t.parsed = make([]atomic.Pointer[tableOp], len(t.ops))
	return t, nil
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
	var raw struct {
		Op     string   `json:"op"`
		Schema string   `json:"schema"`
		Tags   []string `json:"tags"`
	}
	o := t.ops[k]
	if err := json.Unmarshal([]byte(t.lines[k]), &raw); err != nil {
		return &tableOp{err: fmt.Errorf("ops: schema table entry %s: %w", o, err)}
	}
	ns, s, err := ParseQualifiedSchema(raw.Schema)
	if err != nil {
		return &tableOp{err: fmt.Errorf("ops: schema table entry %s: %w", o, err)}
	}
	if ns != o.Packet.NS || s.Name != o.Packet.Name || s.Overload != o.Name {
		return &tableOp{err: fmt.Errorf("ops: schema table entry %s: schema names %s::%s.%s", o, ns, s.Name, s.Overload)}
	}
	return &tableOp{schema: s, tags: raw.Tags}
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
	if s.IsMutable() || fxSideEffectful[o] {
		return true
	}
	for _, t := range tags {
		if t == "nondeterministic_seeded" {
			return true
		}
	}
	return false
}
