package fxgraph

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/fxquant/fxquant/ops"
)

// Graph is a torch.fx graph: an ordered list of nodes (program order) plus
// a store of attributes that get_attr and call_module nodes name (tensors,
// observer modules, ...).
//
// Every edit goes through Graph methods, which keep use lists right. A
// graph is not safe for concurrent mutation; concurrent reads are fine.
type Graph struct {
	root   Node // sentinel of the circular list; root.next is the first node
	length int
	nextID int
	names  namespace

	// insertion point: new nodes go before insBefore (nil: at the end);
	// with insAfter set, each new node goes right after insAfter.
	insBefore *Node
	insAfter  *Node

	syms      []Symbol // symbolic sizes (see symbols.go)
	attrs     map[string]any
	attrOrder []string // may hold deleted paths until compacted
	attrDead  int      // deleted entries in attrOrder
	// attrNext[prefix] is where FreshAttrName starts probing: every
	// prefix+k with k below it is taken. DeleteAttr resets it.
	attrNext map[string]int

	// slab hands out new nodes in chunks, so that nodes created one after
	// another sit next to each other in memory and a walk over the list
	// reads memory mostly in order. Pointers into a chunk stay valid; a
	// chunk lives as long as any of its nodes is reachable.
	slab      []Node
	slabChunk int
	// chunks lists every node chunk the graph has handed nodes out of (the
	// slab's and Clone's), in allocation order, and chunkNodes their total
	// length, so that a pass may visit the nodes in memory order (see
	// scanDeadCode). Chunks without live nodes are dropped from time to
	// time (see pruneChunks).
	chunks     [][]Node
	chunkNodes int
	pruneAt    int // chunkNodes at which addChunk next prunes the list
	// Argument lists and use back pointers of new nodes come from chunks
	// too, for the same reason.
	vals arena[ops.Value]
	refs arena[useRef]
	uses arena[Use] // for Clone, which knows each use list's length, and first uses
	// metas holds the nodes' metadata, out of line (see [Node.Meta]).
	metas arena[Meta]
	// kwBoxes holds the nodes' kwargs slices (see Node.kw), and kws
	// their elements.
	kwBoxes arena[[]Kwarg]
	kws     arena[Kwarg]

	// unused holds every live node without uses, so that dead-code
	// elimination visits the candidates instead of the whole list. It may
	// also hold nodes that have since gained a use or been erased; a
	// node's inUnused says it is in the list. unusedKeep is the length
	// after the last compaction: the list is compacted when it doubles,
	// which keeps each addition amortised O(1).
	unused     []*Node
	unusedKeep int

	// Nodes share one stored copy of each distinct target and of recently
	// set types (see internTarget and internType): a node then points at
	// memory that other nodes also read, instead of at a copy of its own
	// that a walk over a large graph must fetch.
	targets  map[ops.Target]*internedTarget
	recentTg [4]*internedTarget
	nextTg   int
	recentTy [4]ops.Type
	nextTy   int

	// j is the undo journal while a transaction is open (see
	// [Graph.Begin]), else nil.
	j *journal
}

// internedTarget is a target the graph stores once, with the candidate
// name FX derives from it (made when first asked for).
type internedTarget struct {
	t    ops.Target
	name string
}

// internTarget returns the graph's stored copy of t, storing t if it is
// new (nil for a nil t).
func (g *Graph) internTarget(t ops.Target) *internedTarget {
	if t == nil {
		return nil
	}
	// Most new nodes call one of a few targets: look at the recent ones
	// before hashing the target's strings.
	for _, r := range g.recentTg {
		if r != nil && r.t == t {
			return r
		}
	}
	s, ok := g.targets[t]
	if !ok {
		if g.targets == nil {
			g.targets = map[ops.Target]*internedTarget{}
		}
		s = &internedTarget{t: t}
		g.targets[t] = s
	}
	g.recentTg[g.nextTg] = s
	g.nextTg = (g.nextTg + 1) % len(g.recentTg)
	return s
}

// target returns the stored target (nil for a nil it, which internTarget
// returns for no target).
func (it *internedTarget) target() ops.Target {
	if it == nil {
		return nil
	}
	return it.t
}

// candidate returns the name FX derives from the target for a new node,
// already sanitised (the namespace's sanitize leaves it as it is).
func (it *internedTarget) candidate() string {
	if it.name == "" {
		it.name = sanitize(candidateName(it.t))
	}
	return it.name
}

// internType returns an equal type set recently on a node of g, or t. Types
// are immutable values, so equal ones are interchangeable; a graph's
// nodes mostly carry a handful of distinct types, and a short list of the
// recent ones finds most of them.
func (g *Graph) internType(t ops.Type) ops.Type {
	if t == nil {
		return nil
	}
	for _, r := range g.recentTy {
		if r != nil && r.Equal(t) {
			return r
		}
	}
	g.recentTy[g.nextTy] = t
	g.nextTy = (g.nextTy + 1) % len(g.recentTy)
	return t
}

// arena hands out small slices from shared chunks, in order. Each slice
// has its capacity capped at its length, so an append to it reallocates
// instead of running into its neighbour. A chunk lives as long as any of
// its slices is reachable.
type arena[T any] struct {
	free  []T
	chunk int
}

// maxArenaChunk caps an arena's chunk; slices longer than a quarter of it
// are allocated on their own.
const maxArenaChunk = 1024

// take returns a zeroed slice of length k from the arena.
func (a *arena[T]) take(k int) []T {
	if k > maxArenaChunk/4 {
		return make([]T, k)
	}
	if len(a.free) < k {
		a.chunk = min(max(2*a.chunk, 16, k), maxArenaChunk)
		a.free = make([]T, a.chunk)
	}
	s := a.free[:k:k]
	a.free = a.free[k:]
	return s
}

// kwargsBox returns where a node keeps kwargs: nil when there are none,
// else box (the node's current one) or a new one from the graph's arena,
// holding kwargs.
func (g *Graph) kwargsBox(box *[]Kwarg, kwargs []Kwarg) *[]Kwarg {
	if len(kwargs) == 0 {
		return nil
	}
	if box == nil {
		box = &g.kwBoxes.take(1)[0]
	}
	*box = kwargs
	return box
}

// cloneKwargs copies kwargs into the graph's kwargs arena (nil when there
// are none, which is how a node without kwargs keeps them).
func (g *Graph) cloneKwargs(kwargs []Kwarg) []Kwarg {
	if len(kwargs) == 0 {
		return nil
	}
	out := g.kws.take(len(kwargs))
	copy(out, kwargs)
	return out
}

// cloneValues copies vs into the graph's value arena (nil stays nil).
func (g *Graph) cloneValues(vs []ops.Value) []ops.Value {
	if vs == nil {
		return nil
	}
	if len(vs) == 0 {
		return []ops.Value{}
	}
	out := g.vals.take(len(vs))
	copy(out, vs)
	return out
}

// Node chunks start small, so that the many tiny graphs (patterns,
// replacements) stay small, and double up to maxNodeChunk.
const (
	minNodeChunk = 4
	maxNodeChunk = 256
)

// allocNode returns a zeroed node from the graph's slab.
func (g *Graph) allocNode() *Node {
	if len(g.slab) == 0 {
		g.slabChunk = min(max(2*g.slabChunk, minNodeChunk), maxNodeChunk)
		g.slab = make([]Node, g.slabChunk)
		g.addChunk(g.slab)
	}
	n := &g.slab[0]
	g.slab = g.slab[1:]
	n.Meta = &g.metas.take(1)[0]
	return n
}

// addChunk records a new node chunk.
func (g *Graph) addChunk(c []Node) {
	if g.chunkNodes >= g.pruneAt && g.chunkNodes > 2*g.length+2*maxNodeChunk {
		g.pruneChunks()
	}
	g.chunks = append(g.chunks, c)
	g.chunkNodes += len(c)
}

// pruneChunks drops the chunks without a live node from the list, so that
// the list keeps alive no memory that the graph's nodes do not. It runs
// once the listed chunks have doubled since it last ran, which keeps its
// cost amortised constant per node made.
func (g *Graph) pruneChunks() {
	kept := g.chunks[:0]
	total := 0
	for _, c := range g.chunks {
		for i := range c {
			if n := &c[i]; n.graph == g && !n.erased {
				kept = append(kept, c)
				total += len(c)
				break
			}
		}
	}
	clear(g.chunks[len(kept):])
	g.chunks, g.chunkNodes = kept, total
	g.pruneAt = 2 * total
}

// New returns an empty graph.
func New() *Graph {
	g := &Graph{names: newNamespace(), attrs: map[string]any{}}
	g.root.graph = g
	g.root.next = &g.root
	g.root.prev = &g.root
	return g
}

// Len returns the number of live nodes.
func (g *Graph) Len() int { return g.length }

// First returns the first node, or nil for an empty graph.
func (g *Graph) First() *Node {
	if g.root.next == &g.root {
		return nil
	}
	return g.root.next
}

// Last returns the last node, or nil for an empty graph.
func (g *Graph) Last() *Node {
	if g.root.prev == &g.root {
		return nil
	}
	return g.root.prev
}

// Nodes returns the live nodes in program order (a fresh slice).
func (g *Graph) Nodes() []*Node {
	out := make([]*Node, 0, g.length)
	for n := g.root.next; n != &g.root; n = n.next {
		out = append(out, n)
	}
	return out
}

// All iterates the nodes in program order. Erasing the current node, or
// inserting nodes, during the iteration is safe: a node inserted after the
// cursor is visited, one inserted before it is not (FX's iterator).
func (g *Graph) All() func(yield func(*Node) bool) {
	return func(yield func(*Node) bool) {
		for n := g.root.next; n != &g.root; {
			if !n.erased {
				if !yield(n) {
					return
				}
			}
			n = n.next
			for n != &g.root && n.erased {
				n = n.next
			}
		}
	}
}

// Backward iterates the nodes in reverse program order, with the same
// safety as [Graph.All].
func (g *Graph) Backward() func(yield func(*Node) bool) {
	return func(yield func(*Node) bool) {
		for n := g.root.prev; n != &g.root; {
			if !n.erased {
				if !yield(n) {
					return
				}
			}
			n = n.prev
			for n != &g.root && n.erased {
				n = n.prev
			}
		}
	}
}

// OutputNode returns the output node: the last node if its op is output.
func (g *Graph) OutputNode() (*Node, bool) {
	if l := g.Last(); l != nil && l.op == Output {
		return l, true
	}
	return nil, false
}

// Placeholders returns the placeholder nodes in order.
func (g *Graph) Placeholders() []*Node {
	var out []*Node
	for n := range g.All() {
		if n.op == Placeholder {
			out = append(out, n)
		}
	}
	return out
}

// FindNodes returns the nodes with the given opcode (and, for
// call_function, target; nil matches any) in program order.
func (g *Graph) FindNodes(op OpKind, target ops.Target) []*Node {
	var out []*Node
	for n := range g.All() {
		if n.op == op && (target == nil || n.target == target) {
			out = append(out, n)
		}
	}
	return out
}

// NodeByName returns the live node with the given name. It is a linear
// scan; callers that look up many names should build their own map.
func (g *Graph) NodeByName(name string) (*Node, bool) {
	for n := range g.All() {
		if n.name == name {
			return n, true
		}
	}
	return nil, false
}

// --- insertion points ---------------------------------------------------

// InsertingBefore makes new nodes go immediately before n, in creation
// order; n == nil means the start of the graph. It returns a function that
// restores the previous insertion point.
func (g *Graph) InsertingBefore(n *Node) (restore func()) {
	pb, pa := g.insBefore, g.insAfter
	if n == nil {
		g.insBefore, g.insAfter = nil, &g.root
	} else {
		g.insBefore, g.insAfter = n, nil
	}
	return func() { g.insBefore, g.insAfter = pb, pa }
}

// InsertingAfter makes each new node go immediately after n, so successive
// creations come out in reverse creation order (as in FX); n == nil means
// the end of the graph. It returns a function that restores the previous
// insertion point.
func (g *Graph) InsertingAfter(n *Node) (restore func()) {
	pb, pa := g.insBefore, g.insAfter
	if n == nil {
		g.insBefore, g.insAfter = nil, nil
	} else {
		g.insBefore, g.insAfter = nil, n
	}
	return func() { g.insBefore, g.insAfter = pb, pa }
}

func (g *Graph) link(n *Node) {
	var next *Node
	switch {
	case g.insAfter != nil && !g.insAfter.erased:
		next = g.insAfter.next
	case g.insBefore != nil && !g.insBefore.erased:
		next = g.insBefore
	default:
		next = &g.root
	}
	prev := next.prev
	n.prev, n.next = prev, next
	prev.next = n
	next.prev = n
	g.length++
}

func (g *Graph) unlink(n *Node) {
	n.prev.next = n.next
	n.next.prev = n.prev
	g.length--
}

// --- creation -----------------------------------------------------------

// CreateNode creates a node at the insertion point. name may be empty, in
// which case it is derived from the target as FX does. Args may contain
// *Node references to nodes of this graph; a reference to an erased node
// or a node of another graph is stored but gets no use record (the
// verifier reports it). A call_function node needs a non-nil target; for
// other ops targetName is the string target.
func (g *Graph) CreateNode(op OpKind, target ops.Target, targetName string, args []ops.Value, kwargs []Kwarg, name string, typ ops.Type) *Node {
	n := g.allocNode()
	it := g.internTarget(target)
	n.graph, n.id, n.op, n.target, n.targetName, n.typ = g, g.nextID, op, it.target(), targetName, g.internType(typ)
	g.nextID++
	if op == Output && targetName == "" {
		n.targetName = "output"
	}
	if name == "" {
		switch {
		case op == CallFunction && target != nil:
			name = it.candidate()
		case op == Output:
			name = "output"
		default:
			name = TargetToName(targetName)
		}
	}
	n.name = g.names.create(name, n.id)
	g.link(n)
	if g.j != nil {
		g.j.created(n)
	}
	g.setArgsKwargs(n, g.cloneValues(args), g.cloneKwargs(kwargs))
	return n
}

func candidateName(t ops.Target) string {
	switch v := t.(type) {
	case ops.Overload:
		return TargetToName(v.FXName())
	case ops.Packet:
		return TargetToName(v.Name)
	case ops.Callable:
		return TargetToName(v.Name)
	}
	return "_unnamed"
}

// Placeholder creates a placeholder (graph input) whose target is name;
// the node's name is derived from it as FX does (snake-cased and made
// unique: input "inputTensor" gives node input_tensor).
func (g *Graph) Placeholder(name string, typ ops.Type) *Node {
	return g.CreateNode(Placeholder, nil, name, nil, nil, "", typ)
}

// GetAttr creates a get_attr node reading the attribute path.
func (g *Graph) GetAttr(path string, typ ops.Type) *Node {
	return g.CreateNode(GetAttr, nil, path, nil, nil, "", typ)
}

// Call creates a call_function node with positional arguments.
func (g *Graph) Call(target ops.Target, args ...ops.Value) *Node {
	return g.CreateNode(CallFunction, target, "", args, nil, "", nil)
}

// CallKw creates a call_function node with positional and keyword
// arguments.
func (g *Graph) CallKw(target ops.Target, args []ops.Value, kwargs []Kwarg) *Node {
	return g.CreateNode(CallFunction, target, "", args, kwargs, "", nil)
}

// CallModule creates a call_module node calling the attribute at path.
func (g *Graph) CallModule(path string, args ...ops.Value) *Node {
	return g.CreateNode(CallModule, nil, path, args, nil, "", nil)
}

// SetOutput creates the output node returning result (a node, a Tuple or
// List of nodes, or a literal).
func (g *Graph) SetOutput(result ops.Value) *Node {
	return g.CreateNode(Output, nil, "output", []ops.Value{result}, nil, "output", nil)
}

// Rename gives n a new name through the namespace (n.name if taken gets a
// suffix) and returns it.
func (g *Graph) Rename(n *Node, candidate string) string {
	if g.j != nil {
		g.j.names = append(g.j.names, nameRec{n: n, name: n.name})
	}
	n.name = g.names.create(candidate, n.id)
	return n.name
}

// --- use-list maintenance ----------------------------------------------

// setArgsKwargs replaces n's arguments and keeps use lists right: n is
// removed from the use lists of its old inputs and added, once per
// appearance, to those of the new ones (moving n to the end of each
// input's use order, as FX does).
func (g *Graph) setArgsKwargs(n *Node, args []ops.Value, kwargs []Kwarg) {
	if !n.inUnused && n.NumUses() == 0 {
		g.trackUnused(n) // a new node
	}
	box := n.kw
	if g.j != nil {
		g.j.saveArgs(n)
		box = nil // the journal may hold the old box: never write into it
	}
	g.dropUses(n, true)
	g.clearRefs(n)
	n.args = args
	n.kw = g.kwargsBox(box, kwargs)
	g.addUses(n)
}

// dropUses removes n's use records from its inputs in O(1) each: the
// records are tombstoned and an input's list is compacted once half of it
// is dead, so the cost is amortised constant per reference. With track,
// an input left without uses joins the graph's list of unused nodes;
// dead-code elimination, which erases or lists such inputs itself, passes
// false.
func (g *Graph) dropUses(n *Node, track bool) {
	if n.erased {
		return // its records are gone, or tombstoned in a transaction
	}
	for _, r := range n.refs {
		if r.def == nil {
			continue
		}
		d := r.def
		dropUse(r)
		if track && !d.inUnused && d.NumUses() == 0 {
			g.trackUnused(d)
		}
	}
}

// clearRefs empties n's references after dropUses; in a transaction they
// are left to the journal, which may hold them, and n gets new ones.
func (g *Graph) clearRefs(n *Node) {
	if g.j != nil {
		n.refs = nil
		return
	}
	clear(n.refs)
	n.refs = n.refs[:0]
}

// dropUse tombstones the use record r points at, compacting the input's
// list once half of it is dead (not while a transaction is open, whose
// undo finds records where they were).
func dropUse(r useRef) {
	d := r.def
	d.uses[r.idx] = Use{}
	d.deadUses++
	if 2*int(d.deadUses) > len(d.uses) && d.graph.j == nil {
		compactUses(d)
	}
}

// trackUnused adds n, which has no uses, to the graph's list of unused
// nodes, first compacting the list when it has doubled since the last
// compaction.
func (g *Graph) trackUnused(n *Node) {
	if len(g.unused) >= 2*g.unusedKeep+64 {
		g.compactUnused()
	}
	n.inUnused = true
	g.unused = append(g.unused, n)
}

// compactUnused drops the nodes that are erased or have gained uses from
// the list of unused nodes.
func (g *Graph) compactUnused() {
	j := 0
	for _, m := range g.unused {
		if m.erased || m.graph != g || m.NumUses() > 0 {
			m.inUnused = false
			continue
		}
		g.unused[j] = m
		j++
	}
	clear(g.unused[j:])
	g.unused = g.unused[:j]
	g.unusedKeep = j
}

// compactUses drops d's tombstoned use records, keeping the order of the
// live ones, and updates the users' back pointers.
func compactUses(d *Node) {
	j := 0
	for _, u := range d.uses {
		if u.User == nil {
			continue
		}
		d.uses[j] = u
		u.User.refs[u.Slot].idx = j
		j++
	}
	clear(d.uses[j:])
	d.uses = d.uses[:j]
	d.deadUses = 0
}

func (g *Graph) addUses(n *Node) {
	if cap(n.refs) == 0 {
		// Size refs once instead of growing it reference by reference.
		k := 0
		n.walkRefs(func(*Node) { k++ })
		if k == 0 {
			return
		}
		n.refs = g.refs.take(k)[:0]
	}
	slot := 0
	n.walkRefs(func(in *Node) {
		if in.graph == g && !in.erased {
			if len(in.uses) == cap(in.uses) {
				// Room for twice as many, from the graph's arena rather
				// than an allocation of its own, so that use lists stay
				// near the other records made at the same time.
				grown := g.uses.take(max(2, 2*cap(in.uses)))[:len(in.uses)]
				copy(grown, in.uses)
				in.uses = grown
			}
			n.refs = append(n.refs, useRef{def: in, idx: len(in.uses)})
			in.uses = append(in.uses, Use{User: n, Slot: slot})
		} else {
			n.refs = append(n.refs, useRef{})
		}
		slot++
	})
}

// SetArgs replaces n's positional arguments.
func (g *Graph) SetArgs(n *Node, args ...ops.Value) {
	g.setArgsKwargs(n, slices.Clone(args), n.Kwargs())
}

// SetKwargs replaces n's keyword arguments.
func (g *Graph) SetKwargs(n *Node, kwargs []Kwarg) {
	g.setArgsKwargs(n, n.args, g.cloneKwargs(kwargs))
}

// SetArg sets positional argument i (0 <= i < len(args)).
func (g *Graph) SetArg(n *Node, i int, v ops.Value) error {
	if i < 0 || i >= len(n.args) {
		return fmt.Errorf("fxgraph: node %s has %d args, cannot set arg %d", n, len(n.args), i)
	}
	args := slices.Clone(n.args)
	args[i] = v
	g.setArgsKwargs(n, args, n.Kwargs())
	return nil
}

// InsertArg inserts v at position i (0 <= i <= len(args)).
func (g *Graph) InsertArg(n *Node, i int, v ops.Value) error {
	if i < 0 || i > len(n.args) {
		return fmt.Errorf("fxgraph: node %s has %d args, cannot insert at %d", n, len(n.args), i)
	}
	g.setArgsKwargs(n, slices.Insert(slices.Clone(n.args), i, v), n.Kwargs())
	return nil
}

// SetKwarg sets (or adds, at the end) the keyword argument name.
func (g *Graph) SetKwarg(n *Node, name string, v ops.Value) {
	kw := slices.Clone(n.Kwargs())
	for i := range kw {
		if kw[i].Name == name {
			kw[i].Value = v
			g.setArgsKwargs(n, n.args, kw)
			return
		}
	}
	g.setArgsKwargs(n, n.args, append(kw, Kwarg{Name: name, Value: v}))
}

// DeleteKwarg removes the keyword argument name, if present.
func (g *Graph) DeleteKwarg(n *Node, name string) {
	kw := slices.DeleteFunc(slices.Clone(n.Kwargs()), func(k Kwarg) bool { return k.Name == name })
	g.setArgsKwargs(n, n.args, kw)
}

// SetTarget changes a call_function node's target.
func (g *Graph) SetTarget(n *Node, t ops.Target) {
	if j := g.j; j != nil && n.jflags&jTarget == 0 {
		n.jflags |= jTarget
		j.targets = append(j.targets, targetRec{n: n, t: n.target})
	}
	n.target = g.internTarget(t).target()
}

// replaceRefs returns v with every reference to old replaced by new.
func replaceRefs(v ops.Value, old, new *Node) ops.Value {
	switch x := v.(type) {
	case *Node:
		if x == old {
			return new
		}
		return x
	case ops.List:
		out := make(ops.List, len(x))
		for i, e := range x {
			out[i] = replaceRefs(e, old, new)
		}
		return out
	case ops.Tuple:
		out := make(ops.Tuple, len(x))
		for i, e := range x {
			out[i] = replaceRefs(e, old, new)
		}
		return out
	case ops.Dict:
		out := ops.Dict{Keys: x.Keys, Values: make([]ops.Value, len(x.Values))}
		for i, e := range x.Values {
			out.Values[i] = replaceRefs(e, old, new)
		}
		return out
	case ops.Slice:
		return ops.Slice{Start: replaceRefs(x.Start, old, new), Stop: replaceRefs(x.Stop, old, new), Step: replaceRefs(x.Step, old, new)}
	}
	return v
}

// ReplaceInputWith rewrites every reference to old in n's args and kwargs
// to new.
func (g *Graph) ReplaceInputWith(n, old, new *Node) {
	args := make([]ops.Value, len(n.args))
	for i, a := range n.args {
		args[i] = replaceRefs(a, old, new)
	}
	kw := g.kws.take(len(n.Kwargs()))
	for i, k := range n.Kwargs() {
		kw[i] = Kwarg{Name: k.Name, Value: replaceRefs(k.Value, old, new)}
	}
	g.setArgsKwargs(n, args, kw)
}

// ReplaceAllUsesWith rewrites every use of n to with, except in users for
// which keep returns true (keep may be nil). It returns the changed users
// in first-use order. Replacing n with a node that itself uses n would
// make that node consume itself; pass a keep that excludes it, as FX's
// delete_user_cb idiom does.
func (g *Graph) ReplaceAllUsesWith(n, with *Node, keep func(user *Node) bool) []*Node {
	users := n.Users() // a fresh slice: it becomes the result when keep is nil
	changed := users[:0]
	for _, u := range users {
		if keep != nil && keep(u) {
			continue
		}
		g.ReplaceInputWith(u, n, with)
		changed = append(changed, u)
	}
	if len(changed) == 0 {
		changed = nil
	}
	if n.deadUses > 0 && g.j == nil {
		compactUses(n)
	}
	return changed
}

// --- erase, move, copy ---------------------------------------------------

// ErrHasUsers is returned by Erase for a node that still has users.
var ErrHasUsers = errors.New("node still has users")

// Erase removes n from the graph. It fails while n has users, or if n
// belongs to another graph; erasing an erased node is a no-op.
func (g *Graph) Erase(n *Node) error {
	if n.graph != g {
		return fmt.Errorf("fxgraph: erase %s: node belongs to another graph", n)
	}
	if n.erased {
		return nil
	}
	if n.NumUses() > 0 {
		names := make([]string, 0, 4)
		for i, u := range n.Users() {
			if i == 4 {
				names = append(names, "...")
				break
			}
			names = append(names, u.String())
		}
		return fmt.Errorf("fxgraph: erase %s: %w: %d users %v", n, ErrHasUsers, n.NumUsers(), names)
	}
	g.erase(n, true)
	return nil
}

// erase unlinks n, which has no uses, and drops its uses of its inputs
// (see dropUses for track). It keeps n's prev and next, so that iteration
// over an erased cursor continues.
func (g *Graph) erase(n *Node, track bool) {
	g.dropUses(n, track)
	g.erasedRefs(n)
	g.unlink(n)
	n.erased = true
}

// erasedRefs empties the references of n, being erased; in a transaction
// n keeps them until it ends, and the journal records the erasure (see
// linkErase).
func (g *Graph) erasedRefs(n *Node) {
	if g.j != nil {
		g.j.link(n, linkErase)
		return
	}
	clear(n.refs)
	n.refs = n.refs[:0]
}

// MoveBefore moves n to immediately before anchor (both in this graph).
func (g *Graph) MoveBefore(n, anchor *Node) error {
	if n.graph != g || anchor.graph != g || n.erased || anchor.erased {
		return fmt.Errorf("fxgraph: move %s before %s: nodes must be live nodes of this graph", n, anchor)
	}
	if n == anchor {
		return nil
	}
	if g.j != nil {
		g.j.moved(n)
	}
	g.unlink(n)
	prev := anchor.prev
	n.prev, n.next = prev, anchor
	prev.next = n
	anchor.prev = n
	g.length++
	return nil
}

// MoveAfter moves n to immediately after anchor.
func (g *Graph) MoveAfter(n, anchor *Node) error {
	if anchor.next == &g.root {
		if n.graph != g || n.erased || anchor.graph != g || anchor.erased {
			return fmt.Errorf("fxgraph: move %s after %s: nodes must be live nodes of this graph", n, anchor)
		}
		if n == anchor {
			return nil
		}
		if g.j != nil {
			g.j.moved(n)
		}
		g.unlink(n)
		g.insertAtEnd(n)
		return nil
	}
	if anchor.next == n {
		return nil
	}
	return g.MoveBefore(n, anchor.next)
}

func (g *Graph) insertAtEnd(n *Node) {
	prev := g.root.prev
	n.prev, n.next = prev, &g.root
	prev.next = n
	g.root.prev = n
	g.length++
}

// NodeCopy copies n (from this or another graph) at the insertion point,
// mapping each node reference through mapArg, with n's name as the
// candidate name and a copy of its type and metadata (FX's node_copy).
func (g *Graph) NodeCopy(n *Node, mapArg func(*Node) (ops.Value, error)) (*Node, error) {
	f := func(v ops.Value) (ops.Value, error) {
		if m, ok := v.(*Node); ok {
			return mapArg(m)
		}
		return v, nil
	}
	args := make([]ops.Value, len(n.args))
	for i, a := range n.args {
		m, err := ops.MapValue(a, f)
		if err != nil {
			return nil, err
		}
		args[i] = m
	}
	kw := make([]Kwarg, len(n.Kwargs()))
	for i, k := range n.Kwargs() {
		m, err := ops.MapValue(k.Value, f)
		if err != nil {
			return nil, err
		}
		kw[i] = Kwarg{Name: k.Name, Value: m}
	}
	c := g.CreateNode(n.op, n.target, n.targetName, args, kw, n.name, n.typ)
	*c.Meta = n.Meta.Clone()
	return c, nil
}

// GraphCopy copies src's nodes into g at the insertion point (FX's
// graph_copy). Nodes already in valMap are not copied: that is how callers
// bind src's placeholders to nodes of g. It returns the output's value
// mapped into g (nil if src has no output) and fills valMap. Attributes
// that src's get_attr and call_module nodes name are copied into g when
// g lacks them.
func (g *Graph) GraphCopy(src *Graph, valMap map[*Node]*Node) (ops.Value, error) {
	mapArg := func(m *Node) (ops.Value, error) {
		c, ok := valMap[m]
		if !ok {
			return nil, fmt.Errorf("fxgraph: graph copy: %s used before it was mapped", m)
		}
		return c, nil
	}
	var result ops.Value
	for n := range src.All() {
		if _, ok := valMap[n]; ok {
			continue
		}
		if n.op == Output {
			v, err := ops.MapValue(n.Arg(0), func(v ops.Value) (ops.Value, error) {
				if m, ok := v.(*Node); ok {
					return mapArg(m)
				}
				return v, nil
			})
			if err != nil {
				return nil, err
			}
			result = v
			continue
		}
		if (n.op == GetAttr || n.op == CallModule) && src != g {
			if _, has := g.attrs[n.targetName]; !has {
				if a, ok := src.attrs[n.targetName]; ok {
					g.SetAttr(n.targetName, a)
				}
			}
		}
		c, err := g.NodeCopy(n, mapArg)
		if err != nil {
			return nil, err
		}
		valMap[n] = c
	}
	return result, nil
}

// Clone returns a deep copy of g (nodes, ids, names, types, metadata, the
// namespace and the attribute store; attribute values are shared) and the
// node correspondence. Use lists keep their order, so the copy's Users()
// equal the original's. Metadata values implementing [NodeRefHolder] are
// remapped to the clone's nodes. References to nodes outside g's live list (erased
// or foreign nodes) are kept as they are. Clone is linear in g's size.
func (g *Graph) Clone() (*Graph, map[*Node]*Node) {
	c := New()
	c.syms = g.Symbols()
	valMap := make(map[*Node]*Node, g.length)
	// The passes below find a node's copy through its id rather than
	// valMap, which at tens of thousands of nodes misses the cache on
	// every lookup.
	cp := nodeCopies(make([]nodeCopy, g.nextID))
	// One chunk holds every copied node, in program order.
	chunk := make([]Node, g.length)
	c.addChunk(chunk)
	metas := make([]Meta, g.length)
	i := 0
	for n := range g.All() {
		var cn *Node
		var cm *Meta
		if i < len(chunk) {
			cn, cm = &chunk[i], &metas[i]
			i++
		} else {
			cn = c.allocNode() // a length field that undercounts the list
			cm = cn.Meta
		}
		*cm = n.Meta.Clone()
		*cn = Node{graph: c, id: n.id, name: n.name, op: n.op, target: n.target, targetName: n.targetName,
			typ: n.typ, Meta: cm}
		c.insertAtEnd(cn)
		valMap[n] = cn
		if n.id >= 0 && n.id < len(cp) {
			cp[n.id] = nodeCopy{n, cn}
		}
	}
	for n := range g.All() {
		cn := cp.of(n, valMap)
		if len(n.args) > 0 {
			cn.args = c.vals.take(len(n.args))
			for i, a := range n.args {
				cn.args[i] = cp.mapRefs(a, valMap)
			}
		}
		if kws := n.Kwargs(); len(kws) > 0 {
			kw := c.kws.take(len(kws))
			for i, k := range kws {
				kw[i] = Kwarg{Name: k.Name, Value: cp.mapRefs(k.Value, valMap)}
			}
			cn.kw = c.kwargsBox(nil, kw)
		}
		if len(n.refs) > 0 {
			cn.refs = c.refs.take(len(n.refs))
		}
	}
	// Metadata values that refer to nodes (a quantizer's annotation) get
	// the clone's nodes, so the clone never points into the original.
	for n := range g.All() {
		cn := cp.of(n, valMap)
		for k, v := range cn.Meta.Extra {
			if h, ok := v.(NodeRefHolder); ok {
				cn.Meta.Extra[k] = h.RemapNodes(func(m *Node) *Node {
					if cm := cp.of(m, valMap); cm != nil {
						return cm
					}
					return m
				})
			}
		}
	}
	// Rebuild use lists in the original order.
	for n := range g.All() {
		cd := cp.of(n, valMap)
		if k := n.NumUses(); k > 0 {
			cd.uses = c.uses.take(k)[:0]
		}
		for _, u := range n.uses {
			if u.User == nil {
				continue
			}
			cu := cp.of(u.User, valMap)
			if cu == nil || u.Slot < 0 || u.Slot >= len(cu.refs) {
				continue
			}
			cu.refs[u.Slot] = useRef{def: cd, idx: len(cd.uses)}
			cd.uses = append(cd.uses, Use{User: cu, Slot: u.Slot})
		}
		if len(cd.uses) == 0 {
			cd.inUnused = true
			c.unused = append(c.unused, cd)
		}
	}
	c.unusedKeep = len(c.unused)
	c.nextID = g.nextID
	c.names = g.names.clone() // the copies keep their ids, so they own their names
	for _, k := range g.liveAttrOrder() {
		c.SetAttr(k, g.attrs[k])
	}
	return c, valMap
}

// nodeCopy pairs a node with its copy.
type nodeCopy struct{ src, copy *Node }

// nodeCopies holds Clone's copies by the original's id.
type nodeCopies []nodeCopy

// of returns n's copy, or nil when n is not a node of the list copied
// (erased, of another graph); valMap answers for a node whose id is out
// of range, which only a corrupted graph has.
func (cp nodeCopies) of(n *Node, valMap map[*Node]*Node) *Node {
	if n == nil {
		return nil
	}
	if n.id >= 0 && n.id < len(cp) && cp[n.id].src == n {
		return cp[n.id].copy
	}
	return valMap[n]
}

// mapRefs replaces each node reference in v by its copy; references to
// nodes that were not copied stay.
func (cp nodeCopies) mapRefs(v ops.Value, valMap map[*Node]*Node) ops.Value {
	switch x := v.(type) {
	case *Node:
		if c := cp.of(x, valMap); c != nil {
			return c
		}
		return x
	case ops.List, ops.Tuple, ops.Dict, ops.Slice:
		out, _ := ops.MapValue(v, func(e ops.Value) (ops.Value, error) {
			if n, ok := e.(*Node); ok {
				if c := cp.of(n, valMap); c != nil {
					return c, nil
				}
			}
			return e, nil
		})
		return out
	}
	return v
}

// --- attributes -----------------------------------------------------------

// SetAttr stores an attribute (a *tensor.Tensor, an observer module, ...)
// under a dotted path, as a get_attr or call_module target.
func (g *Graph) SetAttr(path string, v any) {
	old, ok := g.attrs[path]
	if j := g.j; j != nil {
		j.attrs = append(j.attrs, attrRec{path: path, old: old, existed: ok, orderLen: len(g.attrOrder)})
	}
	if !ok {
		g.attrOrder = append(g.attrOrder, path)
	}
	g.attrs[path] = v
}

// Attr returns the attribute stored under path.
func (g *Graph) Attr(path string) (any, bool) {
	v, ok := g.attrs[path]
	return v, ok
}

// DeleteAttr removes an attribute. Deletions are batched: the order list
// is compacted once half of it is deleted, so each call is amortised O(1).
func (g *Graph) DeleteAttr(path string) {
	old, ok := g.attrs[path]
	if !ok {
		return
	}
	if j := g.j; j != nil {
		j.attrs = append(j.attrs, attrRec{path: path, old: old, existed: true, deleted: true})
	}
	delete(g.attrs, path)
	g.attrNext = nil // a smaller fresh name may be free now
	g.attrDead++
	if 2*g.attrDead > len(g.attrOrder) && g.j == nil {
		g.compactAttrs()
	}
}

// liveAttrOrder returns attrOrder without deleted paths. A path deleted
// and then set again appears once, at its new place, so only the last
// occurrence of a live path is kept.
func (g *Graph) liveAttrOrder() []string {
	if g.attrDead == 0 {
		return slices.Clone(g.attrOrder)
	}
	seen := make(map[string]bool, len(g.attrs))
	out := make([]string, 0, len(g.attrs))
	for i := len(g.attrOrder) - 1; i >= 0; i-- {
		p := g.attrOrder[i]
		if _, live := g.attrs[p]; live && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	slices.Reverse(out)
	return out
}

func (g *Graph) compactAttrs() {
	g.attrOrder = g.liveAttrOrder()
	g.attrDead = 0
}

// AttrNames returns the attribute paths in the order they were first set
// (a path deleted and set again counts from its new setting).
func (g *Graph) AttrNames() []string { return g.liveAttrOrder() }

// FreshAttrName returns prefix followed by the smallest integer that makes
// an unused attribute path ("_frozen_param0", "_scale1"). Repeated calls
// with one prefix cost amortised O(1) while no attribute is deleted.
func (g *Graph) FreshAttrName(prefix string) string {
	if g.attrNext == nil {
		g.attrNext = map[string]int{}
	}
	for i := g.attrNext[prefix]; ; i++ {
		name := prefix + strconv.Itoa(i)
		if _, taken := g.attrs[name]; !taken {
			g.attrNext[prefix] = i
			return name
		}
	}
}

// --- dead-code elimination -----------------------------------------------

// EliminateDeadCode erases every node with no users that is not impure
// (placeholders, outputs, mutating and side-effecting ops stay; get_attr
// and call_method nodes are pure, as in FX), and then every node left
// without users by that, as FX's backward walk does. isImpure overrides
// the purity test when non-nil; it is asked about nodes without users, in
// no particular order. It reports whether anything was erased.
// It is linear in the graph's size, and when few nodes are without uses
// (see denseUnused) linear in their number and that of those it erases.
func (g *Graph) EliminateDeadCode(reg *ops.Registry, isImpure func(*Node) bool) bool {
	if reg == nil {
		reg = ops.Default()
	}
	changed := false
	// A graph calls few distinct targets: the registry's answer for the
	// last few is kept, as a lookup hashes the whole target.
	type seen struct {
		t      ops.Target
		impure bool
	}
	var recent [4]seen
	nrecent := 0
	impure := func(n *Node) bool {
		switch {
		case isImpure != nil:
			return isImpure(n)
		case n.op == CallFunction && n.target != nil:
			i := 0
			for i < nrecent && recent[i].t != n.target {
				i++
			}
			if i == nrecent {
				i = nrecent % len(recent)
				recent[i] = seen{n.target, reg.IsImpure(n.target)}
				nrecent = min(nrecent+1, len(recent))
			}
			return recent[i].impure
		default:
			return n.IsImpure(reg)
		}
	}
	// FX walks the whole list backwards, erasing each pure node without
	// users; since users follow their inputs, one walk reaches the fixed
	// point: a pure node goes exactly when all its users go. Only nodes
	// without uses can start that, and the graph keeps them in a list.
	// When they are few, visiting them, and the inputs that an erasure
	// leaves without uses, erases the same nodes at a fraction of the
	// cost. When they are many, reading every node is cheaper: in memory
	// order, which the processor fetches ahead, where the list's nodes and
	// their inputs are each a separate cache miss. scanDeadCode reads the
	// node chunks; FX's walk over the links is kept for a graph whose
	// chunks are mostly erased nodes.
	if len(g.unused)*denseUnused >= g.length {
		if g.chunkNodes <= 2*g.length+2*maxNodeChunk {
			return g.scanDeadCode(impure)
		}
		for n := range g.Backward() {
			if n.NumUses() > 0 || impure(n) {
				continue
			}
			g.erase(n, true) // an input left without uses is listed
			changed = true
		}
		g.compactUnused()
		return changed
	}
	g.compactUnused() // drop nodes that have gained uses since they were listed
	// The list is filtered in place as it is walked: the impure nodes
	// without uses stay, and inputs left without uses that are impure
	// join them (extra), so that no node is read twice.
	list := g.unused
	kept := list[:0]
	var extra, stack []*Node
	for _, root := range list {
		// Compacted above: every listed node was live and unused, and
		// uses only go away here, so only an erasure can have changed it.
		if root.erased {
			continue
		}
		if impure(root) {
			kept = append(kept, root)
			continue
		}
		stack = g.eraseDead(root, stack, func(d *Node) bool {
			if impure(d) {
				if !d.inUnused {
					d.inUnused = true
					extra = append(extra, d)
				}
				return false
			}
			return true
		})
		changed = true
	}
	clear(list[len(kept):])
	g.unused = append(kept, extra...)
	g.unusedKeep = len(g.unused)
	return changed
}

// scanDeadCode is EliminateDeadCode for a graph with many unused nodes
// whose node chunks hold few erased ones. It visits the chunks' nodes
// from the last allocated to the first, which is FX's backward walk when
// nodes were made in program order; otherwise an erasure may leave an
// already visited input without uses, and that input is dealt with on the
// spot. Pure nodes go exactly when all their users go whatever the order,
// so the same nodes are erased as by FX's walk. The visit reads memory in
// order at addresses known in advance, which the processor fetches many
// at a time, where following the list's links waits for each node in turn.
// It also rebuilds the list of unused nodes: the impure ones it kept.
func (g *Graph) scanDeadCode(impure func(*Node) bool) bool {
	passed := make([]uint64, (g.nextID+63)/64)
	isPassed := func(n *Node) bool { return passed[n.id/64]&(1<<(n.id%64)) != 0 }
	kept := g.unused[:0]
	var stack []*Node
	changed := false
	for ci := len(g.chunks) - 1; ci >= 0; ci-- {
		chunk := g.chunks[ci]
		for i := len(chunk) - 1; i >= 0; i-- {
			n := &chunk[i]
			if n.graph != g || n.erased {
				continue
			}
			passed[n.id/64] |= 1 << (n.id % 64)
			if n.NumUses() > 0 {
				if n.inUnused {
					n.inUnused = false
				}
				continue
			}
			if impure(n) {
				n.inUnused = true
				kept = append(kept, n)
				continue
			}
			stack = g.eraseDead(n, stack, func(d *Node) bool {
				if !isPassed(d) {
					return false // judged when the scan reaches it
				}
				if impure(d) {
					d.inUnused = true
					kept = append(kept, d)
					return false
				}
				return true
			})
			changed = true
		}
	}
	clear(g.unused[len(kept):])
	g.unused = kept
	g.unusedKeep = len(kept)
	return changed
}

// eraseDead erases root, a pure node without uses, then each input that
// this leaves without uses and that follow accepts, and so on; an input
// follow declines is the caller's to keep or to come back to. stack is
// scratch space, returned for reuse.
func (g *Graph) eraseDead(root *Node, stack []*Node, follow func(*Node) bool) []*Node {
	stack = append(stack[:0], root)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, r := range n.refs {
			if d := r.def; d != nil {
				dropUse(r)
				if d.NumUses() == 0 && follow(d) {
					stack = append(stack, d)
				}
			}
		}
		g.erasedRefs(n)
		g.unlink(n)
		n.erased, n.inUnused = true, false
	}
	return stack
}

// denseUnused: EliminateDeadCode walks the whole graph, as FX does, when
// at least one node in denseUnused is without uses; below that it visits
// the list of unused nodes. Visiting a listed node costs about as much as
// walking past this many.
const denseUnused = 16

// ReplaceWith moves other's contents (nodes, namespace, id counter and
// attribute store) into g, leaving other empty; g's previous nodes are
// marked erased. It lets a caller run edits on a [Graph.Clone] and swap
// them in only on success, keeping the *Graph that others hold. It is
// linear in the size of both graphs.
//
// It must not run inside a transaction (see [Graph.Begin]) on either
// graph, which could not undo it: it panics then.
func (g *Graph) ReplaceWith(other *Graph) {
	if other == g {
		return
	}
	if g.j != nil || other.j != nil {
		panic(errInTransaction("ReplaceWith"))
	}
	for n := g.root.next; n != &g.root; n = n.next {
		n.erased = true
	}
	if other.root.next == &other.root {
		g.root.next, g.root.prev = &g.root, &g.root
	} else {
		first, last := other.root.next, other.root.prev
		g.root.next, g.root.prev = first, last
		first.prev, last.next = &g.root, &g.root
		for n := first; n != &g.root; n = n.next {
			n.graph = g
		}
	}
	g.length, g.nextID, g.names = other.length, other.nextID, other.names
	g.attrs, g.attrOrder, g.attrDead = other.attrs, other.attrOrder, other.attrDead
	g.attrNext = nil
	g.insBefore, g.insAfter = nil, nil
	g.unused, g.unusedKeep = other.unused, other.unusedKeep
	g.slab, g.slabChunk = other.slab, other.slabChunk
	g.chunks, g.chunkNodes, g.pruneAt = other.chunks, other.chunkNodes, other.pruneAt
	*other = Graph{names: newNamespace(), attrs: map[string]any{}}
	other.root.graph = other
	other.root.next, other.root.prev = &other.root, &other.root
}
