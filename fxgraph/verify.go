package fxgraph

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// VerifyOptions selects what [Verify] checks. The zero value checks
// structure, schemas against [ops.Default] (unknown targets are errors) and
// types where nodes carry them.
type VerifyOptions struct {
	// Registry resolves call_function targets; nil means ops.Default().
	Registry *ops.Registry
	// AllowOpaque accepts call_function targets the registry does not know;
	// their schema and type checks are skipped.
	AllowOpaque bool
	// RequireTypes makes a missing type an error on every node that has a
	// value (all but output, call_method and call_module). Without it,
	// types are checked only where a node and all its inputs have one.
	RequireTypes bool
	// SkipSchema skips the registry checks (targets, arity, argument kinds)
	// and with them the type checks, leaving the structural ones.
	SkipSchema bool
	// SkipTypes skips the type checks.
	SkipTypes bool
	// MaxErrors caps the problems reported; the rest are counted in one
	// final summary. 0 means 100.
	MaxErrors int
	// ResultType, when set, replaces the registry row's result-type rule
	// for every call: it gets the node, its row and the normalised
	// arguments with node references replaced by their types, and returns
	// the type the node must have (nil skips the comparison) or an error
	// saying why the input types are rejected. The argument slice is
	// reused after the call returns: copy it to keep it. Package typed
	// uses it to accept quantized element types as the contracts of
	// compute nodes.
	ResultType func(n *Node, def *ops.OpDef, args []ops.Value) (ops.Type, error)
	// Lifted gives the values of placeholders that stand for lifted
	// state (parameters, buffers, tensor constants), by placeholder
	// name, so that qparams read from them are checked by value as
	// get_attr values already are (pt2.Program.LiftedAttrs provides it).
	// A placeholder not in it is a runtime input and is not checked.
	Lifted map[string]*tensor.Tensor
}

// Verify checks g and reports every problem at once, as *[VerifyError]
// values joined with errors.Join (nil when g is well formed). It checks:
//
//   - structure: the node list is intact; opcodes and targets are valid;
//     names are unique, identifiers, and reserved in the namespace;
//     every referenced node is a live node of g defined earlier (no
//     dangling or foreign references, no cycles); stored use lists equal a
//     fresh recount of the arguments; there is exactly one output node and
//     it is last; get_attr and call_module targets are in the attribute
//     store; each opcode has the arguments FX gives it;
//   - schema: call_function targets are known to the registry (unless
//     opts.AllowOpaque); the arguments normalise against the schema and
//     each given value has the kind its schema type asks for;
//   - types: each node's type equals its op's result-type rule applied to
//     its inputs' types (quantized element types compared exactly).
//
// Verify does not modify g and is linear in its size.
func Verify(g *Graph, opts VerifyOptions) error {
	if g == nil {
		return &VerifyError{Check: ErrNodeList, Got: "nil graph"}
	}
	v := &verifier{g: g, opts: opts, reg: opts.Registry, max: opts.MaxErrors}
	if v.max <= 0 {
		v.max = 100
	}
	if v.reg == nil && !opts.SkipSchema {
		v.reg = ops.Default()
	}
	v.run()
	verifySymbols(g, v.report, v.symDims)
	v.release()
	if v.dropped > 0 {
		v.errs = append(v.errs, &VerifyError{Check: ErrTooManyProblems,
			Got: fmt.Sprintf("%d more problems not shown", v.dropped)})
	}
	return errors.Join(v.errs...)
}

type verifier struct {
	g       *Graph
	opts    VerifyOptions
	reg     *ops.Registry
	max     int
	errs    []error
	dropped int

	buf   *verifyScratch // the tables below, from scratchPool
	nodes []*Node
	ids   []idEntry // by node id
	order bool      // some reference points forward
	// ownNames: every live node is its name's owner in the namespace.
	ownNames bool

	missingDone bool // the current node's missing type is reported
	attrNext    int  // the attribute order entry attrListed expects next

	quiet  bool // report only sets failed (see wellFormed)
	failed bool // something was reported while quiet

	// Reused by every node's schema check, so that checking a well-formed
	// call allocates nothing but its result type.
	opCache  []opCacheEntry
	full     []ops.Value    // normalised arguments
	set      []bool         // which schema arguments the node gives
	typed    []ops.Value    // full with node references replaced by types
	memos    [16]resultMemo // recent result-rule calls, by op
	memoNext int            // the memo slot to reuse next

	// symDims: a node's type may have symbolic dimensions (or the sweep
	// failed and did not look), so verifySymbols must walk the nodes.
	symDims bool
}

// verifyScratch holds the per-node tables of a verification. They are
// reused across calls through scratchPool: a pass manager verifies after
// every pass, and tables of a large graph's size, made anew each time,
// would make the collector scan the whole heap again and again.
type verifyScratch struct {
	ids   []idEntry
	nodes []*Node
}

// idEntry is what Verify records for a node id: 1 + the node's position in
// nodes (0 when no listed node has the id), and where the node's name is
// stored, the address of its bytes and its length. One 16-byte entry per
// id keeps both in one cache line.
//
// A namespace key that a node owns is the very string the namespace gave
// the node, so comparing addresses tells ownership without reading the
// bytes; and a table without pointers costs the collector nothing to
// scan. A name that equals its key but is stored elsewhere (or is longer
// than an int32 counts) counts as not owned, which sends Verify to its
// slower check of names.
type idEntry struct {
	name uintptr
	size int32
	pos  int32
}

// setName records where s is stored.
func (e *idEntry) setName(s string) {
	e.name, e.size = uintptr(unsafe.Pointer(unsafe.StringData(s))), int32(len(s))
}

// holds reports whether e records a name stored where s is.
func (e *idEntry) holds(s string) bool {
	return e.name != 0 && e.name == uintptr(unsafe.Pointer(unsafe.StringData(s))) && int(e.size) == len(s)
}

// sameString reports whether a and b are one stored string: the same
// bytes at the same address.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// list appends n to v.nodes and records its position and name by id.
func (v *verifier) list(n *Node) {
	v.nodes = append(v.nodes, n)
	e := &v.ids[n.id]
	e.setName(n.name)
	e.pos = int32(len(v.nodes))
}

// posOf returns 1 + the position in v.nodes of the listed node with id
// (0 when none has it); id must be in range.
func (v *verifier) posOf(id int) int { return int(v.ids[id].pos) }

var scratchPool sync.Pool

// scratch sets up v's tables for g, from the pool when it can: ids is
// zeroed and nodes empty.
func (v *verifier) scratch(g *Graph) {
	if v.buf == nil {
		v.buf, _ = scratchPool.Get().(*verifyScratch)
		if v.buf == nil {
			v.buf = &verifyScratch{}
		}
	}
	b := v.buf
	if cap(b.ids) < g.nextID {
		b.ids = make([]idEntry, g.nextID)
	} else {
		b.ids = b.ids[:g.nextID]
		clear(b.ids)
	}
	if k := min(max(g.length, 0), g.nextID); cap(b.nodes) < k {
		b.nodes = make([]*Node, 0, k)
	} else {
		b.nodes = b.nodes[:0]
	}
	v.ids, v.nodes = b.ids, b.nodes
	v.attrNext = 0
}

// release returns v's tables to the pool, dropping their references to
// g's nodes.
func (v *verifier) release() {
	if v.buf == nil {
		return
	}
	clear(v.buf.nodes[:cap(v.buf.nodes)])
	v.buf.nodes = v.buf.nodes[:0]
	scratchPool.Put(v.buf)
	v.buf = nil
	v.ids, v.nodes = nil, nil
}

func (v *verifier) report(e *VerifyError) {
	if v.quiet {
		v.failed = true
		return
	}
	if len(v.errs) >= v.max {
		v.dropped++
		return
	}
	v.errs = append(v.errs, e)
}

func (v *verifier) nodeErr(n *Node, check error, field, want, got string) *VerifyError {
	e := &VerifyError{Node: n.name, Check: check, Field: field, Want: want, Got: got}
	if n.op == CallFunction && n.target != nil {
		e.Target = n.target.String()
	} else if n.op != Placeholder && n.op != Output {
		e.Target = n.targetName
	}
	return e
}

func (v *verifier) run() {
	if v.wellFormed() {
		return
	}
	// Something is wrong: start again with the separate passes, which
	// report every problem, in a stable order.
	v.errs, v.dropped, v.failed, v.order = nil, 0, false, false
	v.symDims = true
	v.diagnose()
}

// diagnose runs the checks as separate passes over the node list and
// reports every problem found.
func (v *verifier) diagnose() {
	if !v.walkList() {
		return
	}
	v.ownNames = v.countOwnedNames() == len(v.nodes)
	var names map[string]*Node
	if !v.ownNames {
		names = make(map[string]*Node, len(v.nodes))
	}
	for i, n := range v.nodes {
		v.checkName(n, names)
		v.checkNode(n, i)
	}
	v.checkUses()
	v.checkUnused()
	v.checkOutput()
	if v.order {
		v.checkCycles()
	}
	if v.opts.SkipSchema {
		return
	}
	for _, n := range v.nodes {
		v.checkSchema(n)
	}
}

// countOwnedNames counts the listed nodes that own their name in the
// namespace. When every live node is its name's owner, the names are
// reserved and unique (a name has one owner, and the listed nodes have
// distinct ids); otherwise a set of the names seen finds duplicates.
// Ownership is counted in one scan of the namespace, which reads the
// name table's memory in order, rather than by a lookup per node, which misses
// the cache on big graphs. A node is counted at most once, for the one
// key stored where its name is (see idEntry).
func (v *verifier) countOwnedNames() int {
	owned := 0
	for name, owner := range v.g.names.used.all() {
		// Only listed nodes have a name recorded: one read per key.
		if id := owner - 1; id >= 0 && id < len(v.ids) && v.ids[id].holds(name) {
			owned++
		}
	}
	return owned
}

// wellFormed checks the whole graph in one sweep over the node list and
// reports whether it found nothing wrong; it reports no problem itself
// (v.quiet). Every check of [verifier.diagnose] is made, fused so that
// each node's memory is read once while it is in cache: on graphs larger
// than the cache, separate passes would each read all of it again. Any
// problem, or anything the sweep cannot decide on its own (a reference to
// a node later in the list), ends it with false and leaves the reporting
// to diagnose.
//
// Use lists are checked without a recount: each reference slot of a node
// must point (through refs) at a record of the referenced node that
// points back at the slot. Distinct slots then own distinct records, so
// when the slots that pass equal the records that are not tombstones,
// every record is owned by a slot of a live node and the stored lists
// equal a recount.
func (v *verifier) wellFormed() bool {
	v.quiet = true
	defer func() { v.quiet = false }()
	g := v.g
	v.scratch(g)
	limit := g.nextID
	prev := &g.root
	slots, records, outputs, unused := 0, 0, 0, 0
	for n := g.root.next; n != &g.root; n = n.next {
		if n == nil || len(v.nodes) >= limit || n.prev != prev || n.graph != g || n.erased ||
			n.id < 0 || n.id >= g.nextID || v.ids[n.id].pos != 0 {
			return false
		}
		prev = n
		i := len(v.nodes)
		v.list(n)
		if n.op == Output {
			outputs++
		}
		v.checkNode(n, i)
		if tt, ok := n.typ.(ops.TensorType); ok && len(tt.Syms) > 0 {
			v.symDims = true
		}
		s, ok := v.refsOwnRecords(n, i)
		if !ok || s != len(n.refs) {
			return false
		}
		slots += s
		dead := 0
		for _, u := range n.uses {
			if u.User == nil {
				dead++
			}
		}
		if dead != int(n.deadUses) {
			return false
		}
		records += len(n.uses) - dead
		if len(n.uses) == dead {
			unused++
		}
		if !v.opts.SkipSchema {
			v.checkSchema(n)
		}
		if v.failed {
			return false
		}
	}
	if g.root.prev != prev || len(v.nodes) != g.length || slots != records ||
		outputs != 1 || prev.op != Output {
		return false
	}
	if v.countListedUnused() != unused {
		return false
	}
	if v.ownNames = v.countOwnedNames() == len(v.nodes); !v.ownNames {
		names := make(map[string]*Node, len(v.nodes))
		for _, n := range v.nodes {
			v.checkName(n, names)
		}
	}
	return !v.failed
}

// refsOwnRecords checks the reference slots of n, the node at position i,
// against its refs and its inputs' use records: each slot's node must be
// a live node before n, named by the slot's refs entry, whose record at
// the entry's index points back at the slot. It returns the number of
// slots and whether all of them pass.
func (v *verifier) refsOwnRecords(n *Node, i int) (int, bool) {
	s := 0
	ok := true
	for _, a := range n.args {
		ok = ok && v.slotsOwnRecords(n, i, a, &s)
	}
	for _, kw := range n.Kwargs() {
		ok = ok && v.slotsOwnRecords(n, i, kw.Value, &s)
	}
	return s, ok
}

func (v *verifier) slotsOwnRecords(n *Node, i int, val ops.Value, s *int) bool {
	switch x := val.(type) {
	case *Node:
		if x == nil {
			return true
		}
		slot := *s
		*s++
		if slot >= len(n.refs) || !v.live(x) || v.posOf(x.id)-1 >= i {
			return false
		}
		r := n.refs[slot]
		return r.def == x && r.idx >= 0 && r.idx < len(x.uses) && x.uses[r.idx] == (Use{User: n, Slot: slot})
	case ops.List:
		for _, e := range x {
			if !v.slotsOwnRecords(n, i, e, s) {
				return false
			}
		}
	case ops.Tuple:
		for _, e := range x {
			if !v.slotsOwnRecords(n, i, e, s) {
				return false
			}
		}
	case ops.Dict:
		for _, e := range x.Values {
			if !v.slotsOwnRecords(n, i, e, s) {
				return false
			}
		}
	case ops.Slice:
		return v.slotsOwnRecords(n, i, x.Start, s) && v.slotsOwnRecords(n, i, x.Stop, s) && v.slotsOwnRecords(n, i, x.Step, s)
	}
	return true
}

// walkList collects the live nodes, checking links, ids and the length. It
// returns false when the list is too broken to check anything else.
func (v *verifier) walkList() bool {
	g := v.g
	v.scratch(g)
	limit := g.nextID + 1
	prev := &g.root
	for n := g.root.next; n != &g.root; n = n.next {
		if n == nil {
			v.report(&VerifyError{Check: ErrNodeList, Field: "links", Want: "a circular list", Got: fmt.Sprintf("nil link after %s", prev)})
			return false
		}
		if len(v.nodes) >= limit {
			v.report(&VerifyError{Check: ErrNodeList, Field: "links", Want: fmt.Sprintf("at most %d nodes", g.nextID), Got: "a list that does not return to its start"})
			return false
		}
		if n.prev != prev {
			v.report(v.nodeErr(n, ErrNodeList, "prev", prev.String(), n.prev.String()))
		}
		prev = n
		switch {
		case n.graph != g:
			v.report(v.nodeErr(n, ErrNodeList, "graph", "a node of this graph", "a node of another graph"))
		case n.erased:
			v.report(v.nodeErr(n, ErrNodeList, "erased", "a live node", "an erased node still linked"))
		}
		if n.id < 0 || n.id >= g.nextID {
			v.report(v.nodeErr(n, ErrNodeList, "id", fmt.Sprintf("in [0, %d)", g.nextID), fmt.Sprint(n.id)))
			continue
		}
		if p := v.posOf(n.id); p != 0 {
			v.report(v.nodeErr(n, ErrNodeList, "id", "a unique id", fmt.Sprintf("%d, also the id of %s", n.id, v.nodes[p-1])))
			continue
		}
		v.list(n)
	}
	if g.root.prev != prev {
		v.report(&VerifyError{Check: ErrNodeList, Field: "links", Want: fmt.Sprintf("last node %s", prev), Got: g.root.prev.String()})
	}
	if len(v.nodes) != g.length {
		v.report(&VerifyError{Check: ErrNodeList, Field: "length", Want: fmt.Sprint(len(v.nodes)), Got: fmt.Sprint(g.length)})
	}
	return true
}

// live reports whether m is a live node of the list (by identity).
func (v *verifier) live(m *Node) bool {
	if m == nil || m.graph != v.g || m.id < 0 || m.id >= len(v.ids) {
		return false
	}
	p := v.posOf(m.id)
	return p != 0 && v.nodes[p-1] == m
}

// checkName checks n's name: an identifier, reserved in the namespace and
// unique. names collects the names seen when the nodes do not all own
// their names (see [verifier.countOwnedNames]).
func (v *verifier) checkName(n *Node, names map[string]*Node) {
	g := v.g
	switch {
	case !ops.IsIdentifier(n.name):
		v.report(v.nodeErr(n, ErrBadName, "name", "an identifier", fmt.Sprintf("%q", n.name)))
	case !v.ownNames && !g.names.taken(n.name):
		v.report(v.nodeErr(n, ErrBadName, "name", "a name reserved in the graph's namespace", fmt.Sprintf("%q, not reserved", n.name)))
	}
	if v.ownNames {
		// unique: see run
	} else if other, dup := names[n.name]; dup {
		v.report(v.nodeErr(n, ErrDuplicateName, "name", "a unique name", fmt.Sprintf("%q, also the name of node %d", n.name, v.posOf(other.id)-1)))
	} else {
		names[n.name] = n
	}
}

// checkNode checks n, the node at position i, apart from its name: its
// opcode, target, the arguments FX gives the opcode, its attribute and
// the references and literals in its arguments.
func (v *verifier) checkNode(n *Node, i int) {
	g := v.g
	if v.quiet && g.names.nonIdent != 0 && !ops.IsIdentifier(n.name) {
		// With no such key, a node that owns its name (checked after
		// the sweep, see wellFormed) has an identifier for a name.
		v.failed = true
	}
	// opcode, target and the argument shape FX gives each opcode
	switch n.op {
	case Placeholder, GetAttr, CallMethod, CallModule, Output:
		if n.targetName == "" {
			v.report(v.nodeErr(n, ErrBadTarget, "target", "a string target", "none"))
		}
	case CallFunction:
		if n.target == nil {
			v.report(v.nodeErr(n, ErrBadTarget, "target", "a call target", "none"))
		}
	default:
		v.report(v.nodeErr(n, ErrOpKind, "op", "one of placeholder, get_attr, call_function, call_method, call_module, output", n.op.String()))
	}
	switch n.op {
	case Placeholder:
		if len(n.args) > 1 || len(n.Kwargs()) > 0 {
			v.report(v.nodeErr(n, ErrArity, "args", "no args or one default value, no kwargs", fmt.Sprintf("%d args, %d kwargs", len(n.args), len(n.Kwargs()))))
		}
	case GetAttr:
		if len(n.args) > 0 || len(n.Kwargs()) > 0 {
			v.report(v.nodeErr(n, ErrArity, "args", "no args and no kwargs", fmt.Sprintf("%d args, %d kwargs", len(n.args), len(n.Kwargs()))))
		}
	case Output:
		if len(n.args) != 1 || len(n.Kwargs()) > 0 {
			v.report(v.nodeErr(n, ErrArity, "args", "one arg (the returned value), no kwargs", fmt.Sprintf("%d args, %d kwargs", len(n.args), len(n.Kwargs()))))
		}
	case CallMethod:
		if len(n.args) == 0 {
			v.report(v.nodeErr(n, ErrArity, "args", "self as arg 0", "no args"))
		}
	}
	if n.op == GetAttr && v.attrListed(n.targetName) {
		// stored: see attrListed
	} else if n.op == GetAttr || n.op == CallModule {
		a, ok := g.attrs[n.targetName]
		switch {
		case !ok && n.targetName != "":
			v.report(v.nodeErr(n, ErrMissingAttr, "target", "an attribute in the graph's store", fmt.Sprintf("%q, not stored", n.targetName)))
		case ok && n.op == CallModule:
			if _, isMod := a.(Module); !isMod {
				v.report(v.nodeErr(n, ErrMissingAttr, "target", "a Module attribute", fmt.Sprintf("%q of Go type %T", n.targetName, a)))
			}
		}
	}
	// references and literal kinds: a value that passes the quick test
	// needs no path, so paths are built only for values with a problem.
	for j, a := range n.args {
		if !v.valueClean(n, i, a) {
			v.checkValue(n, i, a, argPath{kind: 'a', idx: j})
		}
	}
	for _, kw := range n.Kwargs() {
		if !v.valueClean(n, i, kw.Value) {
			v.checkValue(n, i, kw.Value, argPath{kind: 'k', name: kw.Name})
		}
	}
}

// attrListed reports, without a lookup in the attribute store, that path
// is stored: get_attr nodes mostly read attributes in the order they were
// stored, so it compares path with the next entry of the store's order
// list (by address: the node and the list usually hold the same string)
// and moves on when they match. The list holds exactly the stored paths
// while none has been deleted. False means "look it up".
func (v *verifier) attrListed(path string) bool {
	g := v.g
	if g.attrDead != 0 || v.attrNext >= len(g.attrOrder) {
		return false
	}
	if !sameString(g.attrOrder[v.attrNext], path) {
		return false
	}
	v.attrNext++
	return true
}

// valueClean reports whether [verifier.checkValue] would find nothing
// wrong with val: it holds only literals and references to live nodes of
// the graph defined before position i. It allocates nothing.
func (v *verifier) valueClean(n *Node, i int, val ops.Value) bool {
	switch x := val.(type) {
	case nil, bool, int64, float64, string, complex128, tensor.DType, ops.Device, ops.Layout, ops.MemoryFormat,
		ops.Overload, ops.Packet, ops.Callable:
		return true
	case *Node:
		return x != nil && x != n && !x.erased && v.live(x) && v.posOf(x.id)-1 <= i
	case ops.List:
		for _, e := range x {
			if !v.valueClean(n, i, e) {
				return false
			}
		}
		return true
	case ops.Tuple:
		for _, e := range x {
			if !v.valueClean(n, i, e) {
				return false
			}
		}
		return true
	case ops.Dict:
		if len(x.Keys) != len(x.Values) {
			return false
		}
		for _, e := range x.Values {
			if !v.valueClean(n, i, e) {
				return false
			}
		}
		return true
	case ops.Slice:
		return v.valueClean(n, i, x.Start) && v.valueClean(n, i, x.Stop) && v.valueClean(n, i, x.Step)
	}
	return false
}

// argPath names where a value sits in a node's arguments: "arg 2[0]",
// "kwarg dtype", "kwarg dims[1]". It is built into a string only for a
// message.
type argPath struct {
	kind byte // 'a' or 'k'
	idx  int
	name string
	sub  []string
}

func (p argPath) String() string {
	var b strings.Builder
	if p.kind == 'a' {
		fmt.Fprintf(&b, "arg %d", p.idx)
	} else {
		fmt.Fprintf(&b, "kwarg %s", p.name)
	}
	for _, s := range p.sub {
		b.WriteString(s)
	}
	return b.String()
}

func (p argPath) with(s string) argPath {
	q := p
	q.sub = append(p.sub[:len(p.sub):len(p.sub)], s)
	return q
}

// checkValue checks that val holds only literals and references to live
// nodes of the graph defined before position i.
func (v *verifier) checkValue(n *Node, i int, val ops.Value, path argPath) {
	switch x := val.(type) {
	case nil, bool, int64, float64, string, complex128, tensor.DType, ops.Device, ops.Layout, ops.MemoryFormat,
		ops.Overload, ops.Packet, ops.Callable:
	case *Node:
		v.checkRef(n, i, x, path)
	case ops.List:
		for k, e := range x {
			v.checkValue(n, i, e, path.with(fmt.Sprintf("[%d]", k)))
		}
	case ops.Tuple:
		for k, e := range x {
			v.checkValue(n, i, e, path.with(fmt.Sprintf("[%d]", k)))
		}
	case ops.Dict:
		if len(x.Keys) != len(x.Values) {
			v.report(v.nodeErr(n, ErrArgKind, path.String(), "a dict with one value per key", fmt.Sprintf("%d keys and %d values", len(x.Keys), len(x.Values))))
			return
		}
		for k, e := range x.Values {
			v.checkValue(n, i, e, path.with(fmt.Sprintf("[%q]", x.Keys[k])))
		}
	case ops.Slice:
		v.checkValue(n, i, x.Start, path.with(".start"))
		v.checkValue(n, i, x.Stop, path.with(".stop"))
		v.checkValue(n, i, x.Step, path.with(".step"))
	default:
		v.report(v.nodeErr(n, ErrArgKind, path.String(), "a literal or a node reference", fmt.Sprintf("a value of Go type %T", val)))
	}
}

func (v *verifier) checkRef(n *Node, i int, x *Node, path argPath) {
	switch {
	case x == nil:
		v.report(v.nodeErr(n, ErrDangling, path.String(), "a node", "a nil node reference"))
	case x.graph != v.g:
		v.report(v.nodeErr(n, ErrForeignNode, path.String(), "a node of this graph", fmt.Sprintf("%s of another graph", x)))
	case x.erased:
		v.report(v.nodeErr(n, ErrDangling, path.String(), "a live node", fmt.Sprintf("erased node %s", x)))
	case !v.live(x):
		v.report(v.nodeErr(n, ErrDangling, path.String(), "a node in the node list", fmt.Sprintf("%s, not in the list", x)))
	case x == n:
		v.order = true
		v.report(v.nodeErr(n, ErrCycle, path.String(), "a node defined earlier", fmt.Sprintf("%s itself", x)))
	case v.posOf(x.id)-1 > i:
		v.order = true
		v.report(v.nodeErr(n, ErrOrder, path.String(), fmt.Sprintf("a node defined before %s (position %d)", n, i),
			fmt.Sprintf("%s at position %d", x, v.posOf(x.id)-1)))
	}
}

// checkUses compares every stored use list (and the users' back pointers)
// with a fresh recount of the arguments, in O(nodes + references).
func (v *verifier) checkUses() {
	// Recount: base[p] is the first slot of the node at position p in the
	// flat slot array; flat[s] is the live node referenced at slot s.
	base := make([]int, len(v.nodes)+1)
	nrefs := 0
	for _, n := range v.nodes {
		nrefs += len(n.refs) // the stored count: right for a sound graph, a size hint otherwise
	}
	flat := make([]*Node, 0, nrefs)
	for p, n := range v.nodes {
		base[p] = len(flat)
		n.walkRefs(func(m *Node) {
			if v.live(m) {
				flat = append(flat, m)
			} else {
				flat = append(flat, nil)
			}
		})
	}
	base[len(v.nodes)] = len(flat)
	seen := make([]bool, len(flat))
	for _, d := range v.nodes {
		dead := 0
		for j, u := range d.uses {
			if u.User == nil {
				dead++
				continue
			}
			if !v.live(u.User) {
				got := "an erased node"
				if u.User.graph != v.g {
					got = fmt.Sprintf("%s of another graph", u.User)
				} else if !u.User.erased {
					got = fmt.Sprintf("%s, not in the list", u.User)
				} else {
					got = fmt.Sprintf("erased node %s", u.User)
				}
				v.report(v.nodeErr(d, ErrUseList, "uses", "uses by live nodes of this graph", got))
				continue
			}
			p := v.posOf(u.User.id) - 1
			s := base[p] + u.Slot
			if u.Slot < 0 || s >= base[p+1] || flat[s] != d {
				v.report(v.nodeErr(d, ErrUseList, "uses", fmt.Sprintf("%s to refer to %s at slot %d", u.User, d, u.Slot), "no such reference"))
				continue
			}
			if seen[s] {
				v.report(v.nodeErr(d, ErrUseList, "uses", fmt.Sprintf("one record for %s slot %d", u.User, u.Slot), "a duplicate record"))
				continue
			}
			seen[s] = true
			if u.Slot >= len(u.User.refs) || u.User.refs[u.Slot] != (useRef{def: d, idx: j}) {
				v.report(v.nodeErr(u.User, ErrUseList, "refs", fmt.Sprintf("slot %d to point at record %d of %s", u.Slot, j, d), "a stale back pointer"))
			}
		}
		if dead != int(d.deadUses) {
			v.report(v.nodeErr(d, ErrUseList, "uses", fmt.Sprintf("%d removed records", dead), fmt.Sprint(d.deadUses)))
		}
	}
	for p, n := range v.nodes {
		for s := base[p]; s < base[p+1]; s++ {
			if flat[s] != nil && !seen[s] {
				d := flat[s]
				v.report(v.nodeErr(d, ErrUseList, "uses", fmt.Sprintf("a record for its use by %s (slot %d)", n, s-base[p]), "none"))
			}
		}
	}
}

// listedUnused marks, by position, the listed nodes that are in the
// graph's list of unused nodes. The list is short on a graph without dead
// code.
func (v *verifier) listedUnused() []bool {
	listed := make([]bool, len(v.nodes))
	for _, m := range v.g.unused {
		if v.live(m) {
			listed[v.posOf(m.id)-1] = true
		}
	}
	return listed
}

// countListedUnused counts the listed nodes without uses that are in the
// graph's list of unused nodes.
func (v *verifier) countListedUnused() int {
	count := 0
	for p, in := range v.listedUnused() {
		if in && v.nodes[p].NumUses() == 0 {
			count++
		}
	}
	return count
}

// checkUnused checks that every listed node without uses is in the
// graph's list of unused nodes, where dead-code elimination looks for
// its candidates.
func (v *verifier) checkUnused() {
	for p, in := range v.listedUnused() {
		if n := v.nodes[p]; !in && n.NumUses() == 0 {
			v.report(v.nodeErr(n, ErrUseList, "uses", "a node without uses to be in the graph's list of unused nodes", "a node missing from it"))
		}
	}
}

func (v *verifier) checkOutput() {
	var outs []*Node
	for _, n := range v.nodes {
		if n.op == Output {
			outs = append(outs, n)
		}
	}
	switch {
	case len(outs) == 0:
		v.report(&VerifyError{Check: ErrOutput, Field: "output", Want: "exactly one output node", Got: "none"})
		return
	case len(outs) > 1:
		for _, o := range outs[1:] {
			v.report(v.nodeErr(o, ErrOutput, "op", "exactly one output node", fmt.Sprintf("%d, the first is %s", len(outs), outs[0])))
		}
	}
	if last := v.nodes[len(v.nodes)-1]; last.op != Output {
		v.report(v.nodeErr(outs[0], ErrOutput, "position", "the output node last", fmt.Sprintf("%s after it", last)))
	}
}

// maxListed caps the nodes named in one message.
const maxListed = 10

// checkCycles runs when some reference points forward: it tells a graph
// that is merely out of order from one whose dependencies are cyclic, and
// names the nodes on or between cycles (capped), in O(nodes + references).
func (v *verifier) checkCycles() {
	np := len(v.nodes)
	indeg := make([]int, np)
	succ := make([][]int, np)
	pred := make([][]int, np)
	for p, n := range v.nodes {
		for _, m := range n.InputNodes() {
			if v.live(m) {
				q := v.posOf(m.id) - 1
				succ[q] = append(succ[q], p)
				pred[p] = append(pred[p], q)
				indeg[p]++
			}
		}
	}
	removed := make([]bool, np)
	peel := func(deg []int, next [][]int) {
		var queue []int
		for p := range np {
			if !removed[p] && deg[p] == 0 {
				queue = append(queue, p)
			}
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			removed[p] = true
			for _, q := range next[p] {
				if removed[q] {
					continue
				}
				deg[q]--
				if deg[q] == 0 {
					queue = append(queue, q)
				}
			}
		}
	}
	peel(indeg, succ)
	outdeg := make([]int, np)
	for p := range np {
		if removed[p] {
			continue
		}
		for _, q := range succ[p] {
			if !removed[q] {
				outdeg[p]++
			}
		}
	}
	peel(outdeg, pred)
	var names []string
	count := 0
	for p, n := range v.nodes {
		if removed[p] {
			continue
		}
		count++
		if len(names) < maxListed {
			names = append(names, n.name)
		}
	}
	if count == 0 {
		return
	}
	got := strings.Join(names, ", ")
	if count > len(names) {
		got += fmt.Sprintf(", ... (%d nodes)", count)
	}
	v.report(&VerifyError{Check: ErrCycle, Field: "order", Want: "acyclic dependencies", Got: "a cycle through " + got})
}
