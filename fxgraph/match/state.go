package match

import (
	"math"
	"slices"
	"sync"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// Index lists a graph's nodes by call_function target and by opcode, and
// records their program order, so that anchor candidates are found without
// scanning the graph. Build it with [NewIndex] after the graph's last
// change; it does not follow later edits.
type Index struct {
	g        *fxgraph.Graph
	nodes    []*fxgraph.Node // every node, built on first use
	byTarget map[ops.Target][]*fxgraph.Node
	byOp     [fxgraph.Output + 1][]*fxgraph.Node
	info     []nodeInfo // by node ID: program position + 1 (owners all 0)
}

// NewIndex indexes g in one pass.
func NewIndex(g *fxgraph.Graph) *Index {
	ix := &Index{g: g, byTarget: map[ops.Target][]*fxgraph.Node{}}
	if g == nil {
		return ix
	}
	ix.info = make([]nodeInfo, 0, g.Len()+1)
	// Consecutive nodes mostly cycle through a few targets: a small
	// most-recently-used cache saves hashing the target for most nodes.
	type entry struct {
		t ops.Target
		l *[]*fxgraph.Node
	}
	var mru [4]entry
	lists := map[ops.Target]*[]*fxgraph.Node{}
	i := 0
	for n := g.First(); n != nil; n = n.Next() {
		i++
		id := n.ID()
		for id >= len(ix.info) {
			ix.info = append(ix.info, nodeInfo{})
		}
		ix.info[id].key = int32(i)
		op := n.Op()
		if op <= fxgraph.Output {
			ix.byOp[op] = append(ix.byOp[op], n)
		}
		if op != fxgraph.CallFunction || n.Target() == nil {
			continue
		}
		t := n.Target()
		var l *[]*fxgraph.Node
		for j := range mru {
			if mru[j].l != nil && mru[j].t == t {
				l = mru[j].l
				break
			}
		}
		if l == nil {
			if l = lists[t]; l == nil {
				l = new([]*fxgraph.Node)
				lists[t] = l
			}
			copy(mru[1:], mru[:3])
			mru[0] = entry{t, l}
		}
		*l = append(*l, n)
	}
	for t, l := range lists {
		ix.byTarget[t] = *l
	}
	return ix
}

// allNodes returns every node in program order.
func (ix *Index) allNodes() []*fxgraph.Node {
	if ix.nodes == nil && ix.g != nil {
		ix.nodes = ix.g.Nodes()
	}
	return ix.nodes
}

// Graph returns the indexed graph.
func (ix *Index) Graph() *fxgraph.Graph { return ix.g }

// ByTarget returns the call_function nodes calling exactly t, in program
// order. The slice is shared: do not modify it.
func (ix *Index) ByTarget(t ops.Target) []*fxgraph.Node { return ix.byTarget[t] }

// nodeInfo is what a search keeps per graph node. Both fields sit in one
// table indexed by node ID, so that a lookup reads one cache line.
type nodeInfo struct {
	// key is the node's program-order key (see [state.orderKey]); 0: the
	// node has not been numbered.
	key int32
	// owner is the index + 1 of the pattern node bound to the node; 0:
	// unbound.
	owner int32
}

// endKeys is the key of nodes a rewrite appends at the end of the graph:
// above every program position (graphs have fewer than 2^30 nodes).
const endKeys = 1 << 30

// state is one matcher run's scratch space. The per-graph-node table is
// indexed by node ID; nodes that a rewrite creates, whose IDs start at
// base, go in a table of their own, so that the first one does not copy
// the table of the whole graph.
type state struct {
	steps int // edit steps taken (see state.step)
	m     *Matcher
	p     *Pattern
	g     *fxgraph.Graph
	vals  []ops.Value
	bound []bool
	log   []int32 // bound pattern nodes in binding order
	info  []nodeInfo
	base  int        // the ID of extra[0]
	extra []nodeInfo // IDs from base on
	mark  []uint32
	epoch uint32
	// claimed holds the compute nodes of the matches kept so far, when
	// overlapping matches are removed during the search.
	claimed *nodeSet
	stack   []*fxgraph.Node
	// fused is set while the search runs inside the pass that assigns
	// order keys: a node without a key has not been reached yet, so it
	// comes after every node that has one.
	fused bool
	// slab hands out match records in chunks; lastOrder is the binding
	// order of the previous record, shared by the next one when equal.
	slab      matchSlab
	lastOrder *[]int32
	// laterBound is set when a match found by the fused search binds a
	// node the pass has not reached, one after the anchor in the list:
	// only a graph whose nodes are out of order has such a match, and the
	// rewriter then rechecks every match in full.
	laterBound bool
	// dirty holds the nodes whose arguments the rewriter has changed (the
	// users of replaced values), for the incremental recheck.
	dirty *nodeSet
	// One-pass rewrite ([state.replaceInOnePass]): anchorKey is the key of
	// the candidate being searched, nodes with a larger key or none come
	// after it; frontier is the last node numbered, nextKey its key;
	// newFrom is the ID of the first node the rewrite created (later ones
	// have larger IDs), and with originals set no compute pattern node
	// binds such a node.
	anchorKey int32
	frontier  *fxgraph.Node
	nextKey   int32
	newFrom   int
	originals bool
	// Scratch space of the rewriter, reused from one splice to the next.
	spliceVals []ops.Value
	argBuf     []ops.Value
	kwBuf      []ops.Kwarg
	pending    []*fxgraph.Node
	newsFree   []*fxgraph.Node // see newsSlice
}

// newState returns a state for a search over g. info holds program-order
// keys by node ID (see orderKey) and is the state's own; nil means the
// search assigns them itself ([state.run]).
func newState(m *Matcher, g *fxgraph.Graph, info []nodeInfo) *state {
	return &state{
		m: m, p: m.p, g: g,
		vals:    make([]ops.Value, len(m.p.nodes)),
		bound:   make([]bool, len(m.p.nodes)),
		info:    info,
		base:    len(info),
		newFrom: math.MaxInt,
	}
}

// run assigns program-order keys to every node of s.g and finds the
// matches, in the same pass when the pattern has a single anchor: the
// search at a candidate then touches only nodes the pass has just
// visited, and no candidate list is built. With several anchors the pass
// collects each anchor's candidates and the product search follows.
func (s *state) run() []*Match {
	m, g := s.m, s.g
	if cap(s.info) < g.Len()+1 {
		s.info = getInfo(g.Len() + 1)
	}
	s.info = s.info[:0]
	// Every node the pass numbers goes in info; nodes created afterwards
	// go in extra.
	s.base = math.MaxInt
	defer func() { s.base = len(s.info) }()
	if m.o.removeOverlapping {
		s.claimed = newNodeSet(g.Len())
	}
	var found []*Match
	if len(m.anchors) == 1 {
		a, nameMatch := m.anchors[0], m.o.nodeNameMatch
		s.fused = true
		// A binding is completed (containment, cycles, overlap) only when
		// the pass reaches the next candidate, or its end: the cycle check
		// reads the users of the bound nodes, which mostly follow them
		// closely, and by then the pass has read them in order instead of
		// ahead of it. Nodes numbered after the anchor count as later
		// ones, as unnumbered nodes do (see later).
		pending := false
		var i int32
		for n := g.First(); n != nil; n = n.Next() {
			i++
			s.setKey(n, i)
			if !m.isCandidate(a, n) {
				continue
			}
			if pending {
				found = s.completeFused(found)
			}
			s.anchorKey = i
			if pending = s.matchNode(a, n, nameMatch); !pending {
				s.undo(0)
			}
		}
		if pending {
			found = s.completeFused(found)
		}
		s.fused, s.anchorKey = false, 0
		return found
	}
	cands := make([][]*fxgraph.Node, len(m.anchors))
	var i int32
	for n := g.First(); n != nil; n = n.Next() {
		i++
		s.setKey(n, i)
		for j, a := range m.anchors {
			if m.isCandidate(a, n) {
				cands[j] = append(cands[j], n)
			}
		}
	}
	for _, c := range cands {
		if len(c) == 0 {
			// An anchor without candidates means no match (fx-graph.md 9.3 item 16).
			return nil
		}
	}
	s.search(cands, 0, &found)
	return found
}

// completeFused completes the binding of a fused search's anchor
// (s.anchorKey), appends the match to found if it holds, and unbinds.
func (s *state) completeFused(found []*Match) []*Match {
	if mt := s.complete(); mt != nil {
		found = append(found, mt)
		s.laterBound = s.laterBound || s.bindsLaterNode()
	}
	s.undo(0)
	return found
}

// bindsLaterNode reports whether the current binding holds a graph node
// after the anchor being searched (see [state.later]).
func (s *state) bindsLaterNode() bool {
	for _, pi := range s.log {
		if n, ok := s.vals[pi].(*fxgraph.Node); ok && s.later(s.orderKey(n)) {
			return true
		}
	}
	return false
}

// later reports whether a node with key k comes after the anchor being
// searched (s.anchorKey): a node the pass has not numbered yet, or one
// it numbered after the anchor (a fused search completes a binding when
// the pass has moved on; a one-pass rewrite numbers ahead). Elsewhere no
// node counts as later.
func (s *state) later(k int32) bool {
	if s.anchorKey > 0 {
		return k == 0 || k > s.anchorKey
	}
	return s.fused && k == 0
}

// number gives n, reached by the pass of a one-pass rewrite, the next key
// unless a look ahead ([state.numberThrough]) already did.
func (s *state) number(n *fxgraph.Node) {
	if s.orderKey(n) == 0 {
		s.nextKey++
		s.setKey(n, s.nextKey)
		s.frontier = n
	}
}

// numberThrough numbers the nodes after the frontier up to and including
// t, as the pass will reach them, so that t has a key; nodes the rewrite
// created have theirs already.
func (s *state) numberThrough(t *fxgraph.Node) {
	for f := s.frontier; s.orderKey(t) == 0 && f != nil; {
		if f = f.Next(); f == nil {
			break
		}
		if f.ID() < s.newFrom && s.orderKey(f) == 0 {
			s.nextKey++
			s.setKey(f, s.nextKey)
		}
		s.frontier = f
	}
}

// infoPool keeps the per-node tables of finished searches, so that a
// search of a large graph reuses one instead of allocating and clearing a
// table per call. Entries are cleared as a search appends them.
var infoPool sync.Pool // of *[]nodeInfo

// getInfo returns an empty table with room for n entries.
func getInfo(n int) []nodeInfo {
	if t, _ := infoPool.Get().(*[]nodeInfo); t != nil && cap(*t) >= n {
		return (*t)[:0]
	}
	return make([]nodeInfo, 0, n)
}

// release returns the state's per-node table to infoPool; the state must
// not be used afterwards.
func (s *state) release() {
	if cap(s.info) > 0 {
		t := s.info[:0]
		infoPool.Put(&t)
	}
	s.info, s.extra = nil, nil
}

// infoOf returns n's entry, zero when n has none.
func (s *state) infoOf(n *fxgraph.Node) nodeInfo {
	id := n.ID()
	if id < s.base {
		if id < len(s.info) {
			return s.info[id]
		}
		return nodeInfo{}
	}
	if id -= s.base; id < len(s.extra) {
		return s.extra[id]
	}
	return nodeInfo{}
}

// entry returns a pointer to n's entry, growing the table that holds it.
func (s *state) entry(n *fxgraph.Node) *nodeInfo {
	id := n.ID()
	t := &s.info
	if id >= s.base {
		t, id = &s.extra, id-s.base
	}
	for id >= len(*t) {
		*t = append(*t, nodeInfo{})
	}
	return &(*t)[id]
}

func (s *state) ownerOf(n *fxgraph.Node) int32 { return s.infoOf(n).owner }

func (s *state) setOwner(n *fxgraph.Node, v int32) { s.entry(n).owner = v }

// orderKey returns n's program-order key: nodes with different keys are
// in key order; nodes with equal keys sit next to each other (a rewrite
// gives new nodes the key of the node they were inserted before).
func (s *state) orderKey(n *fxgraph.Node) int32 { return s.infoOf(n).key }

func (s *state) setKey(n *fxgraph.Node, k int32) { s.entry(n).key = k }

// before reports whether a comes before b in program order.
func (s *state) before(a, b *fxgraph.Node) bool {
	ka, kb := s.orderKey(a), s.orderKey(b)
	if ka != kb {
		return ka < kb
	}
	for n := a.Next(); n != nil && s.orderKey(n) == ka; n = n.Next() {
		if n == b {
			return true
		}
	}
	return false
}

func (s *state) bind(pi int, v ops.Value) {
	s.vals[pi] = v
	s.bound[pi] = true
	s.log = append(s.log, int32(pi))
	if n, ok := v.(*fxgraph.Node); ok {
		s.setOwner(n, int32(pi)+1)
	}
}

// undo unbinds everything bound after the log had length mark.
func (s *state) undo(mark int) {
	for _, pi := range s.log[mark:] {
		if n, ok := s.vals[pi].(*fxgraph.Node); ok {
			s.setOwner(n, 0)
		}
		s.vals[pi] = nil
		s.bound[pi] = false
	}
	s.log = s.log[:mark]
}

func (s *state) search(cands [][]*fxgraph.Node, i int, found *[]*Match) {
	if i == len(cands) {
		if mt := s.complete(); mt != nil {
			*found = append(*found, mt)
		}
		return
	}
	a := s.m.anchors[i]
	for _, c := range cands[i] {
		mark := len(s.log)
		if s.matchNode(a, c, s.m.o.nodeNameMatch) {
			s.search(cands, i+1, found)
		}
		s.undo(mark)
	}
}

// matchNode is torch.fx's _match_nodes, with bindings undone by the caller.
func (s *state) matchNode(pi int, gn *fxgraph.Node, nameMatch string) bool {
	if s.bound[pi] {
		v, ok := s.vals[pi].(*fxgraph.Node)
		return ok && v == gn
	}
	if gn.Erased() || gn.Graph() != s.g || s.ownerOf(gn) != 0 {
		return false
	}
	pn := &s.p.nodes[pi]
	if s.originals && pn.op != fxgraph.Placeholder && gn.ID() >= s.newFrom {
		return false // a node the rewrite created
	}
	if !s.m.nodesEqual(pn, gn, nameMatch) {
		return false
	}
	s.bind(pi, gn)
	if pn.op == fxgraph.Placeholder {
		return true
	}
	return s.matchArgs(pi, gn)
}

// matchArgs compares the arguments of graph node gn, bound to pattern
// node pi, with pi's (the rest of torch.fx's _match_nodes).
func (s *state) matchArgs(pi int, gn *fxgraph.Node) bool {
	pn := &s.p.nodes[pi]
	gargs, gkw := gn.Args(), gn.Kwargs()
	if len(pn.args) == len(gargs) && sameKwNames(pn.kwNames, gkw) {
		for j := range pn.args {
			if !s.matchArg(pn.args[j], gargs[j]) {
				return false
			}
		}
		for j := range pn.kwVals {
			if !s.matchArg(pn.kwVals[j], gkw[j].Value) {
				return false
			}
		}
		return true
	}
	if pn.op != fxgraph.CallFunction {
		return false
	}
	schema, pnorm := s.m.schema[pi], s.m.norm[pi]
	if schema == nil && pn.set != nil {
		// A target-set node normalises against the graph node's overload.
		ov, ok := gn.Target().(ops.Overload)
		if !ok {
			return false
		}
		if schema, ok = s.m.registry().Schema(ov); !ok {
			return false
		}
		var err error
		if pnorm, err = normalizeCompiled(schema, pn); err != nil {
			return false
		}
	} else if schema == nil || s.m.normErr[pi] != nil {
		return false
	}
	gnorm, err := schema.Normalize(gargs, gkw)
	if err != nil || len(gnorm) != len(pnorm) {
		return false
	}
	for j := range pnorm {
		if !s.matchArg(pnorm[j], gnorm[j]) {
			return false
		}
	}
	return true
}

func sameKwNames(names []string, kw []ops.Kwarg) bool {
	if len(names) != len(kw) {
		return false
	}
	for i := range names {
		if names[i] != kw[i].Name {
			return false
		}
	}
	return true
}

func seqOf(v ops.Value) ([]ops.Value, bool) {
	switch x := v.(type) {
	case ops.List:
		return x, true
	case ops.Tuple:
		return x, true
	}
	return nil, false
}

// matchArg compares one compiled pattern argument with a graph argument
// (torch.fx's _match_args on one pair).
func (s *state) matchArg(pv, gv ops.Value) bool {
	if r, ok := pv.(pref); ok {
		if gn, ok := gv.(*fxgraph.Node); ok {
			return s.matchNode(int(r), gn, "")
		}
		return s.matchLiteralToNode(int(r), gv)
	}
	if pseq, ok := seqOf(pv); ok {
		if gseq, ok := seqOf(gv); ok {
			if len(pseq) != len(gseq) {
				return false
			}
			for j := range pseq {
				if !s.matchArg(pseq[j], gseq[j]) {
					return false
				}
			}
			return true
		}
	}
	if _, ok := gv.(*fxgraph.Node); ok {
		return s.m.o.ignoreLiterals
	}
	return ops.LiteralEqual(pv, gv) || s.m.o.ignoreLiterals
}

// matchLiteralToNode handles a pattern node facing a graph literal: a
// placeholder binds it (or checks its earlier binding).
func (s *state) matchLiteralToNode(pi int, gv ops.Value) bool {
	if s.p.nodes[pi].op != fxgraph.Placeholder {
		return false
	}
	if s.bound[pi] {
		if _, isNode := s.vals[pi].(*fxgraph.Node); isNode {
			return false
		}
		return ops.LiteralEqual(s.vals[pi], gv) || s.m.o.ignoreLiterals
	}
	s.bind(pi, gv)
	return true
}

// isCompute reports whether pattern node pi is neither placeholder nor output.
func (s *state) isCompute(pi int) bool {
	op := s.p.nodes[pi].op
	return op != fxgraph.Placeholder && op != fxgraph.Output
}

// complete checks a full binding (every pattern node bound, containment,
// no cycle) and returns it as a Match, or nil.
func (s *state) complete() *Match {
	if !s.holds() {
		return nil
	}
	if s.claimed != nil {
		// Greedy overlap removal in discovery order (fx-graph.md 4.4).
		for _, pi := range s.log {
			if n, ok := s.vals[pi].(*fxgraph.Node); ok && s.isCompute(int(pi)) && s.claimed.has(n) {
				return nil
			}
		}
		for _, pi := range s.log {
			if n, ok := s.vals[pi].(*fxgraph.Node); ok && s.isCompute(int(pi)) {
				s.claimed.add(n)
			}
		}
	}
	return s.snapshot()
}

// holds reports whether the current binding is a match: every pattern
// node bound (the output only under MatchOutput), containment, no cycle.
func (s *state) holds() bool {
	for i := range s.p.nodes {
		if !s.bound[i] && !s.p.nodes[i].unbound && (i != s.p.output || s.m.o.matchOutput) {
			return false
		}
	}
	return s.contained() && !s.createsCycle()
}

// snapshot records the current binding as a Match.
func (s *state) snapshot() *Match {
	mt := s.slab.next(s.p, s.m.o.matchOutput)
	mt.Anchors = s.m.anchorNodes
	s.fill(mt)
	return mt
}

// fill copies the current binding into mt, whose slices are already
// sized for the pattern.
func (s *state) fill(mt *Match) {
	s.fillValues(mt)
	// Matches of one pattern mostly bind in the same order: share it.
	if s.lastOrder == nil || !slices.Equal(*s.lastOrder, s.log) {
		o := slices.Clone(s.log)
		s.lastOrder = &o
	}
	mt.order = s.lastOrder
}

// fillValues copies the current binding's values into mt, leaving its
// binding order as it is.
func (s *state) fillValues(mt *Match) {
	copy(mt.vals, s.vals)
	if s.p.phStart < 0 {
		for i, pi := range s.p.placeholders {
			mt.PlaceholderNodes[i] = s.vals[pi]
		}
	}
	for i, pi := range s.p.returning {
		mt.ReturningNodes[i], _ = s.vals[pi].(*fxgraph.Node)
	}
}

// matchSlab allocates match records and their slices in chunks, so that
// a search with many matches makes a few allocations instead of several
// per match.
type matchSlab struct {
	ms    []Match
	vals  []ops.Value
	rets  []*fxgraph.Node
	chunk int
}

const (
	minMatchChunk = 4
	maxMatchChunk = 256
)

// next returns a zeroed Match for p with vals, PlaceholderNodes and
// ReturningNodes sized; each slice has its capacity capped at its length.
func (sl *matchSlab) next(p *Pattern, withOutput bool) *Match {
	nv, nr := len(p.nodes), len(p.returning)
	if !withOutput {
		nv-- // the output is last
	}
	np := 0
	if p.phStart < 0 {
		np = len(p.placeholders)
	}
	if len(sl.ms) == 0 {
		sl.chunk = min(max(2*sl.chunk, minMatchChunk), maxMatchChunk)
		sl.ms = make([]Match, sl.chunk)
		sl.vals = make([]ops.Value, sl.chunk*(nv+np))
		sl.rets = make([]*fxgraph.Node, sl.chunk*nr)
	}
	mt := &sl.ms[0]
	sl.ms = sl.ms[1:]
	mt.p = p
	mt.vals = sl.vals[:nv:nv]
	if p.phStart >= 0 {
		k := p.phStart + len(p.placeholders)
		mt.PlaceholderNodes = mt.vals[p.phStart:k:k]
	} else {
		mt.PlaceholderNodes = sl.vals[nv : nv+np : nv+np]
	}
	sl.vals = sl.vals[nv+np:]
	mt.ReturningNodes = sl.rets[:nr:nr]
	sl.rets = sl.rets[nr:]
	return mt
}

// contained: every user of a bound non-placeholder, non-returning pattern
// node's graph node is itself bound to a non-placeholder pattern node.
func (s *state) contained() bool {
	for _, pi := range s.log {
		pn := &s.p.nodes[pi]
		if pn.op == fxgraph.Placeholder || pn.returning {
			continue
		}
		gn, ok := s.vals[pi].(*fxgraph.Node)
		if !ok {
			continue
		}
		for _, u := range gn.Uses() {
			o := s.ownerOf(u.User)
			if o == 0 || s.p.nodes[o-1].op == fxgraph.Placeholder {
				return false
			}
		}
	}
	return true
}

func (s *state) inPartition(n *fxgraph.Node) bool {
	o := s.ownerOf(n)
	return o != 0 && s.isCompute(int(o-1))
}

// createsCycle is validate_partition: walking forward from the partition's
// outside users must not reach the partition again. Only nodes no later
// than the partition's last node can lead back into it, which bounds the
// walk by program order.
func (s *state) createsCycle() bool {
	var maxKey int32
	// bounded: no partition node comes after the current anchor (see
	// later), which only a malformed graph (a node using a later node)
	// allows; the walk is then not cut.
	bounded := true
	for _, pi := range s.log {
		if !s.isCompute(int(pi)) {
			continue
		}
		if n, ok := s.vals[pi].(*fxgraph.Node); ok {
			k := s.orderKey(n)
			if s.later(k) {
				bounded = false
			}
			maxKey = max(maxKey, k)
		}
	}
	stack := s.stack[:0]
	for _, pi := range s.log {
		if !s.isCompute(int(pi)) {
			continue
		}
		n, ok := s.vals[pi].(*fxgraph.Node)
		if !ok {
			continue
		}
		for _, u := range n.Uses() {
			if !s.inPartition(u.User) {
				stack = append(stack, u.User)
			}
		}
	}
	if len(stack) == 0 {
		s.stack = stack
		return false
	}
	s.epoch++
	if s.epoch == 0 {
		clear(s.mark)
		s.epoch = 1
	}
	cycle := false
	for len(stack) > 0 && !cycle {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.inPartition(x) {
			cycle = true
			break
		}
		// Only nodes no later than the partition's last node can lead
		// back into it.
		if k := s.orderKey(x); bounded && (k > maxKey || s.later(k)) {
			continue
		}
		id := x.ID()
		for id >= len(s.mark) {
			s.mark = append(s.mark, 0)
		}
		if s.mark[id] == s.epoch {
			continue
		}
		s.mark[id] = s.epoch
		for _, u := range x.Uses() {
			stack = append(stack, u.User)
		}
	}
	s.stack = stack[:0]
	return cycle
}
