package fxgraph

import (
	"fmt"
	"sync/atomic"

	"github.com/fxquant/fxquant/ops"
)

// This file holds the graph's undo journal: [Graph.Begin] opens a
// transaction, and until it is committed every edit made through Graph
// methods records what it overwrites, so that [Graph.Rollback] can put
// the graph back as it was: the same nodes in the same order with the
// same arguments, types, names, targets and (where a rewrite saved it with
// [Graph.SaveMeta]) metadata, the same use order, the same attributes, and
// a namespace that hands out the same names as before the transaction.
//
// With no transaction open an edit costs one nil check. With one open the
// records are kept small: a node's arguments are recorded once per
// transaction (the first setting holds what must come back), use lists
// are never compacted (so that a use record keeps its position and undoing
// an edit is a truncation or a restored record), and a replaced kwargs box
// is never written into.

// Journal flags, kept in Node.jflags: what the open transaction already
// holds for a node. A node created in the transaction has them all, since
// rolling it back discards it.
const (
	jArgs uint8 = 1 << iota
	jType
	jTarget
	jMeta
	jAll = jArgs | jType | jTarget | jMeta
)

// The kinds of a change to the node list (journal.links): a node
// created, erased, or moved. A node erased in the transaction keeps its
// references, whose use records are only tombstoned, until the
// transaction ends: undoing the erasure restores them. Undoing a creation
// drops the use records the node's references point at, which the
// transaction appended.
const (
	linkCreate uint8 = iota + 1
	linkErase
	linkMove
)

// argsRec holds a node's arguments, kwargs box and use back pointers as
// they were before the transaction first changed them. The use records
// refs point at are tombstoned, not removed, while the transaction is
// open.
type argsRec struct {
	n    *Node
	args []ops.Value
	kw   *[]Kwarg
	refs []useRef
}

// typeRec, targetRec and nameRec hold a node's previous type, target and
// name.
type typeRec struct {
	n   *Node
	typ ops.Type
}

type targetRec struct {
	n *Node
	t ops.Target
}

type nameRec struct {
	n    *Node
	name string
}

// metaRec holds a copy of a node's metadata (see [Graph.SaveMeta]).
type metaRec struct {
	n    *Node
	meta Meta
}

// attrRec holds an attribute's previous value (existed false: it had
// none) and, for a setting that appended the path to the order list, the
// list's length before.
type attrRec struct {
	path     string
	old      any
	existed  bool
	deleted  bool // a DeleteAttr
	orderLen int
}

// baseSave holds a namespace base record's counter and probe bound before
// a change.
type baseSave struct {
	idx         int32
	count, next int
}

// txMark is where an open transaction's records start, and the namespace
// scalars as they were when it began.
type txMark struct {
	links, moves, args, types, targets, names, metas, attrs int
	nsNames, nsBases, nsNewBases                            int
	nonIdent                                                int
	nrecs                                                   int
	last                                                    int32
	lastName                                                string
}

// journal is a graph's undo log while a transaction is open.
type journal struct {
	marks []txMark // one per open transaction, outermost first
	// links, with kinds, lists the changes to the node list in order; moves
	// holds each moved node's predecessor before the move, in order.
	links   []*Node
	kinds   []uint8
	moves   []*Node
	args    []argsRec
	types   []typeRec
	targets []targetRec
	names   []nameRec
	metas   []metaRec
	attrs   []attrRec

	// The namespace's part: every name reserved, every base record's state
	// before a change, every base record created.
	nsNames    []string
	nsBases    []baseSave
	nsNewBases []string
}

// Begin opens a transaction on g: until the matching [Graph.Commit] or
// [Graph.Rollback], every edit made through g's methods is recorded so
// that Rollback can undo it. Transactions nest: an inner Rollback undoes
// the edits since the inner Begin, an inner Commit hands them to the
// enclosing transaction.
//
// What a transaction restores: the node list, each node's arguments,
// kwargs, type, target and name, the order of every node's uses, the
// attribute store and the namespace (later nodes get the names they would
// have got had the transaction never run). Metadata is restored for the
// nodes passed to [Graph.SaveMeta] before their metadata was changed;
// nodes created in the transaction are discarded whole. Node ids are
// never reused: nodes created after a rollback get new ids. A graph edit
// not made through g (writing a node's Meta without SaveMeta) is not
// undone, and [Graph.ReplaceWith] must not run inside a transaction.
//
// Nodes a rolled-back transaction created are left erased; pointers to
// them stay valid but refer to no node of g.
func (g *Graph) Begin() {
	j := g.j
	if j == nil {
		if j = spareJournal.Swap(nil); j == nil {
			j = &journal{}
		}
		g.j = j
		g.names.j = j
	} else {
		// Records are merged per node only within one level, so that an
		// inner rollback finds its own.
		j.clearFlags()
	}
	ns := &g.names
	ns.epoch++
	j.marks = append(j.marks, txMark{
		links: len(j.links), moves: len(j.moves), args: len(j.args), types: len(j.types), targets: len(j.targets),
		names: len(j.names), metas: len(j.metas), attrs: len(j.attrs),
		nsNames: len(j.nsNames), nsBases: len(j.nsBases), nsNewBases: len(j.nsNewBases),
		nonIdent: ns.nonIdent, nrecs: len(ns.recs), last: ns.last, lastName: ns.lastName,
	})
}

// InTransaction reports whether a transaction is open on g.
func (g *Graph) InTransaction() bool { return g.j != nil }

// Commit closes the innermost open transaction, keeping its edits; an
// outer transaction may still undo them. Without an open transaction it
// does nothing.
func (g *Graph) Commit() {
	j := g.j
	if j == nil {
		return
	}
	j.marks = j.marks[:len(j.marks)-1]
	g.names.epoch++
	if len(j.marks) > 0 {
		return
	}
	// Use lists kept their tombstones while the transaction was open:
	// compact those that are now at least half dead, as dropUse would
	// have. The tombstones are where the recorded references and those of
	// erased nodes point; erased nodes, which kept their references for
	// an undo, then hold none.
	for i := range j.args {
		compactDead(j.args[i].refs)
	}
	for i, n := range j.links {
		if j.kinds[i] == linkErase && n.erased {
			compactDead(n.refs)
			n.refs = nil
		}
	}
	if 2*g.attrDead > len(g.attrOrder) {
		g.compactAttrs()
	}
	g.closeJournal()
}

// Rollback undoes every edit since the innermost open [Graph.Begin] and
// closes that transaction. Without an open transaction it does nothing.
func (g *Graph) Rollback() {
	j := g.j
	if j == nil {
		return
	}
	m := j.marks[len(j.marks)-1]
	j.marks = j.marks[:len(j.marks)-1]
	g.names.epoch++
	j.clearFlags()  // also those of the records undone below
	var fix []*Node // nodes that may have been left without uses

	// Use lists and arguments, newest first. A record's node holds, at
	// this point, the references its last setting in the transaction made,
	// all to use records appended since: those records go (an earlier
	// undo may have cut them already), and the references recorded come
	// back, with the records they point at, which the transaction only
	// tombstoned. Use records never move while a transaction is open, so
	// a position holds the record or its tombstone, or has been cut.
	for i := len(j.args) - 1; i >= m.args; i-- {
		r := &j.args[i]
		n := r.n
		fix = dropAppended(n, fix)
		n.args, n.kw, n.refs = r.args, r.kw, r.refs
		restoreUses(n)
		fix = append(fix, n)
		*r = argsRec{}
	}
	j.args = j.args[:m.args]

	// The node list, newest first.
	for i := len(j.links) - 1; i >= m.links; i-- {
		n := j.links[i]
		switch j.kinds[i] {
		case linkCreate:
			fix = dropAppended(n, fix)
			n.refs = nil
			g.unlink(n)
			n.erased = true
		case linkErase:
			// n kept its neighbours, which are next to each other again,
			// and its references (those it had before the transaction, if
			// the loop above restored them).
			// Its inUnused may be stale: dead-code elimination drops
			// erased nodes from the list without clearing it.
			n.prev.next = n
			n.next.prev = n
			g.length++
			n.erased, n.inUnused = false, false
			restoreUses(n)
			fix = append(fix, n)
		case linkMove:
			g.unlink(n)
			p := j.moves[len(j.moves)-1]
			j.moves[len(j.moves)-1] = nil
			j.moves = j.moves[:len(j.moves)-1]
			n.prev, n.next = p, p.next
			p.next.prev = n
			p.next = n
			g.length++
		}
		j.links[i] = nil
	}
	j.links, j.kinds = j.links[:m.links], j.kinds[:m.links]

	for i := len(j.types) - 1; i >= m.types; i-- {
		j.types[i].n.typ = j.types[i].typ
		j.types[i] = typeRec{}
	}
	j.types = j.types[:m.types]
	for i := len(j.targets) - 1; i >= m.targets; i-- {
		j.targets[i].n.target = j.targets[i].t
		j.targets[i] = targetRec{}
	}
	j.targets = j.targets[:m.targets]
	for i := len(j.names) - 1; i >= m.names; i-- {
		j.names[i].n.name = j.names[i].name
		j.names[i] = nameRec{}
	}
	j.names = j.names[:m.names]
	for i := len(j.metas) - 1; i >= m.metas; i-- {
		*j.metas[i].n.Meta = j.metas[i].meta
		j.metas[i] = metaRec{}
	}
	j.metas = j.metas[:m.metas]

	for i := len(j.attrs) - 1; i >= m.attrs; i-- {
		r := j.attrs[i]
		switch {
		case r.deleted:
			g.attrs[r.path] = r.old
			g.attrDead--
		case r.existed:
			g.attrs[r.path] = r.old
		default:
			delete(g.attrs, r.path)
			clear(g.attrOrder[r.orderLen:])
			g.attrOrder = g.attrOrder[:r.orderLen]
		}
		j.attrs[i] = attrRec{}
	}
	j.attrs = j.attrs[:m.attrs]
	g.attrNext = nil // a cache: every probe start is recomputed

	g.names.rollback(j, m)

	// Every live node without uses must be in the list of unused nodes.
	for _, n := range fix {
		if !n.erased && n.graph == g && !n.inUnused && n.NumUses() == 0 {
			g.trackUnused(n)
		}
	}
	if len(j.marks) == 0 {
		g.closeJournal()
	}
}

// SaveMeta records n's metadata, when a transaction is open on g, so that
// [Graph.Rollback] restores it. A rewrite that changes an existing node's
// Meta calls it first (nodes the transaction created need not be saved).
// It costs nothing outside a transaction.
func (g *Graph) SaveMeta(n *Node) {
	if j := g.j; j != nil && n.graph == g && n.jflags&jMeta == 0 {
		n.jflags |= jMeta
		j.metas = append(j.metas, metaRec{n: n, meta: n.Meta.Clone()})
	}
}

// closeJournal ends the outermost transaction: flags cleared, records
// dropped, and the journal kept for the next transaction.
func (g *Graph) closeJournal() {
	j := g.j
	j.clearFlags()
	clear(j.links)
	clear(j.moves)
	clear(j.args)
	clear(j.types)
	clear(j.targets)
	clear(j.names)
	clear(j.metas)
	clear(j.attrs)
	clear(j.nsNames)
	clear(j.nsNewBases)
	*j = journal{marks: j.marks[:0], links: j.links[:0], kinds: j.kinds[:0], moves: j.moves[:0], args: j.args[:0], types: j.types[:0], targets: j.targets[:0],
		names: j.names[:0], metas: j.metas[:0], attrs: j.attrs[:0], nsNames: j.nsNames[:0], nsBases: j.nsBases[:0],
		nsNewBases: j.nsNewBases[:0]}
	g.j, g.names.j = nil, nil
	if j.bytes() <= maxSpareBytes {
		spareJournal.Store(j)
	}
}

// spareJournal keeps a closed journal's memory for the next transaction,
// on any graph, so that a pass of many rewrites records without
// allocating. It is held once per process, up to maxSpareBytes (4 MiB:
// a rewrite of some ten thousand matches); a larger journal is left to
// the collector.
var spareJournal atomic.Pointer[journal]

const maxSpareBytes = 4 << 20

// bytes returns about how much memory j's record slices hold.
func (j *journal) bytes() int {
	return 9*cap(j.links) + 8*cap(j.moves) + 64*cap(j.args) + 24*(cap(j.types)+cap(j.targets)+cap(j.names)+cap(j.nsBases)) +
		16*(cap(j.nsNames)+cap(j.nsNewBases)) + 200*cap(j.metas) + 48*cap(j.attrs)
}

// clearFlags clears the journal flags of the nodes of every record.
func (j *journal) clearFlags() {
	for _, n := range j.links {
		n.jflags = 0
	}
	for _, r := range j.args {
		r.n.jflags = 0
	}
	for _, r := range j.types {
		r.n.jflags = 0
	}
	for _, r := range j.targets {
		r.n.jflags = 0
	}
	for _, r := range j.metas {
		r.n.jflags = 0
	}
}

// created records n, just made and linked.
func (j *journal) created(n *Node) {
	n.jflags = jAll
	j.link(n, linkCreate)
}

// link records a change of kind to the node list.
func (j *journal) link(n *Node, kind uint8) {
	j.links = append(j.links, n)
	j.kinds = append(j.kinds, kind)
}

// moved records that n, now after prev, is about to move.
func (j *journal) moved(n *Node) {
	j.link(n, linkMove)
	j.moves = append(j.moves, n.prev)
}

// saveArgs records n's arguments before their first change in the
// transaction.
func (j *journal) saveArgs(n *Node) {
	if n.jflags&jArgs != 0 {
		return
	}
	n.jflags |= jArgs
	j.args = append(j.args, argsRec{n: n, args: n.args, kw: n.kw, refs: n.refs})
}

// compactDead compacts the use lists that refs point into and that are
// at least half dead.
func compactDead(refs []useRef) {
	for _, r := range refs {
		if d := r.def; d != nil && !d.erased && 2*int(d.deadUses) > len(d.uses) {
			compactUses(d)
		}
	}
}

// dropAppended drops the use records n's references point at, which the
// transaction appended, and returns fix with the nodes they were on.
func dropAppended(n *Node, fix []*Node) []*Node {
	for k := len(n.refs) - 1; k >= 0; k-- {
		if d := n.refs[k].def; d != nil {
			truncUses(d, n.refs[k].idx)
			fix = append(fix, d)
		}
	}
	return fix
}

// restoreUses puts back the use records n's references point at, which
// the transaction tombstoned; a record cut since (appended in the
// transaction, so to be dropped anyway) is skipped. It is idempotent.
func restoreUses(n *Node) {
	for slot, ref := range n.refs {
		d := ref.def
		if d == nil || ref.idx >= len(d.uses) {
			continue
		}
		if d.uses[ref.idx].User == nil {
			d.deadUses--
		}
		d.uses[ref.idx] = Use{User: n, Slot: slot}
	}
}

// truncUses drops d's use records from index idx on, which an undo no
// longer wants (nothing when an earlier undo has cut the list shorter).
func truncUses(d *Node, idx int) {
	if idx >= len(d.uses) {
		return
	}
	for _, u := range d.uses[idx:] {
		if u.User == nil {
			d.deadUses--
		}
	}
	clear(d.uses[idx:])
	d.uses = d.uses[:idx]
}

// rollback undoes the namespace's changes since mark m: the names reserved
// since are released (and their suffixes cleared from their bases'
// records), the base records changed get their counters and bounds back,
// and the records created since go.
func (ns *namespace) rollback(j *journal, m txMark) {
	names := j.nsNames[m.nsNames:]
	for i := len(names) - 1; i >= 0; i-- {
		name := names[i]
		ns.used.remove(name)
		base, num, ok := splitSuffix(name)
		if !ok || canonicalSuffix(name, base) != nil {
			continue
		}
		if bi, ok := ns.bases[base]; ok {
			ns.recs[bi].drop(num)
		}
	}
	if len(ns.pending) > 0 && len(names) > 0 {
		gone := make(map[string]bool, len(names))
		for _, name := range names {
			gone[name] = true
		}
		kept := ns.pending[:0]
		for _, p := range ns.pending {
			if !gone[p.name] {
				kept = append(kept, p)
			}
		}
		clear(ns.pending[len(kept):])
		ns.pending = kept
	}
	clear(names)
	j.nsNames = j.nsNames[:m.nsNames]
	for i := len(j.nsBases) - 1; i >= m.nsBases; i-- {
		s := j.nsBases[i]
		if int(s.idx) < len(ns.recs) {
			ns.recs[s.idx].count, ns.recs[s.idx].next = s.count, s.next
		}
	}
	j.nsBases = j.nsBases[:m.nsBases]
	for _, b := range j.nsNewBases[m.nsNewBases:] {
		delete(ns.bases, b)
	}
	clear(j.nsNewBases[m.nsNewBases:])
	j.nsNewBases = j.nsNewBases[:m.nsNewBases]
	clear(ns.recs[m.nrecs:])
	ns.recs = ns.recs[:m.nrecs]
	ns.nonIdent, ns.last, ns.lastName = m.nonIdent, m.last, m.lastName
}

// drop clears the canonical name base_k (k >= 0) from the record.
func (b *nameBase) drop(k int) {
	if w := k >> 6; w < len(b.taken) {
		b.taken[w] &^= 1 << (k & 63)
		return
	}
	delete(b.far, k)
}

// rec returns a pointer to base record i for a change, saving the record's
// counter and bound first when a transaction is open.
func (ns *namespace) rec(i int32) *nameBase {
	b := &ns.recs[i]
	if j := ns.j; j != nil && b.saved != ns.epoch {
		b.saved = ns.epoch
		j.nsBases = append(j.nsBases, baseSave{idx: i, count: b.count, next: b.next})
	}
	return b
}

// errInTransaction is the panic of an edit that a transaction cannot
// record.
func errInTransaction(op string) error {
	return fmt.Errorf("fxgraph: %s inside an open transaction (Begin without Commit or Rollback)", op)
}

// Atomic runs edit in a transaction on g (see [Graph.Begin]): its edits
// are kept when it returns nil, and undone when it returns an error or
// panics (the panic goes on). It returns edit's error.
func (g *Graph) Atomic(edit func() error) (err error) {
	g.Begin()
	defer func() {
		if r := recover(); r != nil {
			g.Rollback()
			panic(r)
		}
		if err != nil {
			g.Rollback()
			return
		}
		g.Commit()
	}()
	return edit()
}
