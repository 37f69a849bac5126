package match

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Option configures a [Matcher].
type Option func(*options)

type options struct {
	matchOutput       bool
	matchPlaceholder  bool
	removeOverlapping bool
	ignoreLiterals    bool
	nodeNameMatch     string
	reg               *ops.Registry
	// For tests of the rewriter: recheck every match in full, never
	// replace in one pass, and count the rechecks of each kind.
	fullRecheck bool
	twoPhase    bool
	stats       *recheckStats
	// failAt > 0 makes a rewrite fail at its failAt-th edit step (tests
	// inject failures with it; see export_test.go).
	failAt int
}

// recheckStats counts the rewriter's rechecks and one-pass replacements
// (for tests).
type recheckStats struct{ incremental, full, onePass, onePassRest int }

func defaultOptions() options { return options{removeOverlapping: true} }

// MatchOutput makes the pattern's output node the only anchor, matched
// against the graph's output node: the pattern must then account for the
// graph's entire return value. Off by default.
func MatchOutput(on bool) Option { return func(o *options) { o.matchOutput = on } }

// MatchPlaceholder makes pattern placeholders match only graph
// placeholders (they still bind literals). Off by default: a placeholder
// matches any node or literal.
func MatchPlaceholder(on bool) Option { return func(o *options) { o.matchPlaceholder = on } }

// RemoveOverlappingMatches drops, in discovery order, every match that
// reuses a non-placeholder graph node of an earlier kept match. On by
// default.
func RemoveOverlappingMatches(on bool) Option { return func(o *options) { o.removeOverlapping = on } }

// IgnoreLiterals makes literal arguments match any literal or node
// (torch.fx's ignore_literals). A pattern placeholder still binds the
// first literal it meets. Unlike torch.fx, a non-placeholder pattern node
// never matches a graph literal, so a match never leaves a pattern node
// unbound. Off by default.
func IgnoreLiterals(on bool) Option { return func(o *options) { o.ignoreLiterals = on } }

// NodeNameMatch makes an anchor equal to any graph node whose name
// contains s, whatever its op or target (torch.fx's node_name_match).
// Empty (the default) turns it off.
func NodeNameMatch(s string) Option { return func(o *options) { o.nodeNameMatch = s } }

// WithRegistry sets the registry whose schemas normalise the arguments of
// overload targets. The default is [ops.Default].
func WithRegistry(r *ops.Registry) Option { return func(o *options) { o.reg = r } }

// Matcher finds the matches of one pattern. It is read-only once built
// and may be used by several goroutines on different graphs.
type Matcher struct {
	p       *Pattern
	o       options
	anchors []int
	// anchorNodes is shared by every Match as its Anchors field.
	anchorNodes []*fxgraph.Node
	schema      []*ops.Schema // per pattern node: the schema of its overload target, if known
	norm        [][]ops.Value // per pattern node: normalised compiled arguments
	normErr     []error       // per pattern node: why the pattern's own arguments do not normalise
	// incremental: the rewriter may recheck a match by re-reading only the
	// nodes it has rewired (see [state.recheckIncremental]): the pattern
	// returns one compute node, the search starts from it alone, and
	// overlapping matches are removed.
	incremental bool
}

// NewMatcher compiles the search for p. It fails only for a nil pattern.
func NewMatcher(p *Pattern, opts ...Option) (*Matcher, error) {
	if p == nil {
		return nil, errors.New("match: nil pattern")
	}
	m := &Matcher{p: p, o: defaultOptions()}
	for _, f := range opts {
		if f != nil {
			f(&m.o)
		}
	}
	if m.o.matchOutput {
		m.anchors = []int{p.output}
	} else {
		for _, r := range p.returning {
			if p.nodes[r].n.NumUsers() == 1 {
				m.anchors = append(m.anchors, r)
			}
		}
	}
	for _, a := range m.anchors {
		m.anchorNodes = append(m.anchorNodes, p.nodes[a].n)
	}
	if len(p.returning) == 1 && len(m.anchors) == 1 && m.anchors[0] == p.returning[0] {
		op := p.nodes[p.returning[0]].op
		m.incremental = op != fxgraph.Placeholder && op != fxgraph.Output && !m.o.matchOutput &&
			!m.o.matchPlaceholder && m.o.removeOverlapping && m.o.nodeNameMatch == ""
	}
	m.schema = make([]*ops.Schema, len(p.nodes))
	m.norm = make([][]ops.Value, len(p.nodes))
	m.normErr = make([]error, len(p.nodes))
	for i := range p.nodes {
		pn := &p.nodes[i]
		ov, ok := pn.target.(ops.Overload)
		if !ok || pn.op != fxgraph.CallFunction {
			continue
		}
		s, ok := m.registry().Schema(ov)
		if !ok {
			continue
		}
		m.schema[i] = s
		m.norm[i], m.normErr[i] = normalizeCompiled(s, pn)
	}
	return m, nil
}

func (m *Matcher) registry() *ops.Registry {
	if m.o.reg == nil {
		m.o.reg = ops.Default()
	}
	return m.o.reg
}

// Pattern returns the matcher's pattern.
func (m *Matcher) Pattern() *Pattern { return m.p }

// Anchors returns the pattern nodes the search starts from.
func (m *Matcher) Anchors() []*fxgraph.Node {
	out := make([]*fxgraph.Node, len(m.anchors))
	for i, a := range m.anchors {
		out[i] = m.p.nodes[a].n
	}
	return out
}

func normalizeCompiled(s *ops.Schema, pn *pnode) ([]ops.Value, error) {
	kw := make([]ops.Kwarg, len(pn.kwNames))
	for i := range kw {
		kw[i] = ops.Kwarg{Name: pn.kwNames[i], Value: pn.kwVals[i]}
	}
	return s.Normalize(pn.args, kw)
}

// Binding is one entry of a match's node map.
type Binding struct {
	Pattern *fxgraph.Node // the pattern node
	Value   ops.Value     // the graph node (*fxgraph.Node) or literal it bound
}

// Match is one occurrence of a pattern in a graph (torch.fx's
// InternalMatch). The graph nodes it names belong to the matched graph.
type Match struct {
	p *Pattern
	// vals holds per pattern node what it bound; the output, last, has no
	// entry unless the matcher matches outputs.
	vals []ops.Value
	// order lists the pattern nodes in binding order (the backward walk's
	// pre-order); matches that bound in the same order share it.
	order *[]int32
	// Anchors are the pattern nodes the match was found from. The slice is
	// shared by all matches of one matcher: do not modify it.
	Anchors []*fxgraph.Node
	// PlaceholderNodes holds, per pattern placeholder in order, the graph
	// node or literal it bound. It may share storage with the match's
	// bindings: do not modify it.
	PlaceholderNodes []ops.Value
	// ReturningNodes holds the graph nodes bound to the pattern's returning
	// nodes, in order.
	ReturningNodes []*fxgraph.Node
}

// Pattern returns the matched pattern.
func (m *Match) Pattern() *Pattern { return m.p }

// Lookup returns what pattern node pn bound: a graph node or a literal.
func (m *Match) Lookup(pn *fxgraph.Node) (ops.Value, bool) {
	i, ok := m.p.idx[pn]
	if !ok || int(i) >= len(m.vals) {
		return nil, false
	}
	for _, j := range *m.order {
		if int(j) == i {
			return m.vals[i], true
		}
	}
	return nil, false
}

// NodeOf returns the graph node that pattern node pn bound, or nil when pn
// bound a literal or is not part of the match.
func (m *Match) NodeOf(pn *fxgraph.Node) *fxgraph.Node {
	v, _ := m.Lookup(pn)
	n, _ := v.(*fxgraph.Node)
	return n
}

// NodesMap returns every binding in binding order (anchors first, then the
// backward walk's pre-order).
func (m *Match) NodesMap() []Binding {
	out := make([]Binding, len(*m.order))
	for i, j := range *m.order {
		out[i] = Binding{Pattern: m.p.nodes[j].n, Value: m.vals[j]}
	}
	return out
}

// Named returns what the pattern node registered under name bound
// (SubgraphMatcherWithNameNodeMap's name_node_map): a graph node, or a
// literal for a placeholder that bound one.
func (m *Match) Named(name string) (ops.Value, bool) {
	i, ok := m.p.nameIdx[name]
	if !ok {
		return nil, false
	}
	if i >= len(m.vals) {
		return nil, true // the output, not matched
	}
	return m.vals[i], true
}

// Node returns the graph node bound to the pattern node registered under
// name, or nil if the name is unknown or bound a literal.
func (m *Match) Node(name string) *fxgraph.Node {
	v, _ := m.Named(name)
	n, _ := v.(*fxgraph.Node)
	return n
}

// NameNodeMap returns the named bindings as a map (name → node or literal).
func (m *Match) NameNodeMap() map[string]ops.Value {
	out := make(map[string]ops.Value, len(m.p.names))
	for _, name := range m.p.names {
		out[name] = m.vals[m.p.nameIdx[name]]
	}
	return out
}

// GraphNodes returns the graph nodes bound to the pattern's non-placeholder,
// non-output nodes, in pattern order: the nodes a rewrite replaces.
func (m *Match) GraphNodes() []*fxgraph.Node {
	var out []*fxgraph.Node
	for i := range m.p.nodes {
		pn := &m.p.nodes[i]
		if pn.op == fxgraph.Placeholder || pn.op == fxgraph.Output {
			continue
		}
		if n, ok := m.vals[i].(*fxgraph.Node); ok {
			out = append(out, n)
		}
	}
	return out
}

// String lists the bindings, for messages and debugging.
func (m *Match) String() string {
	s := "match{"
	for i, b := range m.NodesMap() {
		if i > 0 {
			s += ", "
		}
		s += b.Pattern.Name() + "->" + valueString(b.Value)
	}
	return s + "}"
}

func valueString(v ops.Value) string {
	if n, ok := v.(*fxgraph.Node); ok {
		return n.String()
	}
	return fmt.Sprint(v)
}

// Find matches p in g with the given options; see [Matcher.Match].
func Find(g *fxgraph.Graph, p *Pattern, opts ...Option) ([]*Match, error) {
	m, err := NewMatcher(p, opts...)
	if err != nil {
		return nil, err
	}
	return m.Match(g)
}

// Match returns the matches of the pattern in g, in discovery order (graph
// order of the first anchor's candidates). No match is not an error. g is
// not modified.
//
// Match makes one pass over g, numbering the nodes in program order; for a
// pattern with one anchor it tries each candidate as the pass reaches it,
// so no index is built and a candidate's neighbourhood is still in cache.
func (m *Matcher) Match(g *fxgraph.Graph) ([]*Match, error) {
	if g == nil {
		return nil, errors.New("match: nil graph")
	}
	s := newState(m, g, nil)
	defer s.release()
	return s.run(), nil
}

// MatchIndex is [Matcher.Match] on a prebuilt index, so that several
// patterns can share one. The index must be built after the graph's last
// change.
func (m *Matcher) MatchIndex(ix *Index) ([]*Match, error) {
	if ix == nil || ix.g == nil {
		return nil, errors.New("match: nil index")
	}
	s := newState(m, ix.g, slices.Clone(ix.info))
	cands := make([][]*fxgraph.Node, len(m.anchors))
	for i, a := range m.anchors {
		cands[i] = m.candidates(ix, a)
		if len(cands[i]) == 0 {
			// An anchor without candidates means no match (fx-graph.md 9.3 item 16).
			return nil, nil
		}
	}
	if m.o.removeOverlapping {
		s.claimed = newNodeSet(len(ix.info))
	}
	var found []*Match
	s.search(cands, 0, &found)
	return found, nil
}

// candidates lists, in graph order, the graph nodes anchor a may bind.
func (m *Matcher) candidates(ix *Index, a int) []*fxgraph.Node {
	pn := &m.p.nodes[a]
	var pool []*fxgraph.Node
	switch {
	case m.o.nodeNameMatch != "":
		pool = ix.allNodes()
	case m.o.matchOutput && pn.op == fxgraph.Output:
		if out, ok := ix.g.OutputNode(); ok {
			pool = []*fxgraph.Node{out}
		}
	case pn.op == fxgraph.Placeholder && !m.o.matchPlaceholder:
		pool = ix.allNodes()
	case pn.op == fxgraph.CallFunction && pn.set == nil:
		return ix.byTarget[pn.target] // already exact: no filtering needed
	default:
		pool = ix.byOp[pn.op]
	}
	var out []*fxgraph.Node
	for _, n := range pool {
		if m.nodesEqual(pn, n, m.o.nodeNameMatch) {
			out = append(out, n)
		}
	}
	return out
}

// isCandidate reports whether graph node n is a candidate for anchor a:
// the filter [Matcher.candidates] applies to its pool, for one node.
func (m *Matcher) isCandidate(a int, n *fxgraph.Node) bool {
	pn := &m.p.nodes[a]
	switch {
	case m.o.nodeNameMatch != "":
		return m.nodesEqual(pn, n, m.o.nodeNameMatch)
	case m.o.matchOutput && pn.op == fxgraph.Output:
		return n.Op() == fxgraph.Output && n.Next() == nil
	case pn.op == fxgraph.Placeholder && !m.o.matchPlaceholder:
		return true
	case pn.op == fxgraph.CallFunction && pn.set == nil:
		return n.Op() == fxgraph.CallFunction && n.Target() == pn.target
	}
	return m.nodesEqual(pn, n, "")
}

// nodesEqual is torch.fx's _nodes_are_equal.
func (m *Matcher) nodesEqual(pn *pnode, gn *fxgraph.Node, nameMatch string) bool {
	if !m.o.matchPlaceholder && pn.op == fxgraph.Placeholder {
		return true
	}
	if nameMatch != "" && containsString(gn.Name(), nameMatch) {
		return true
	}
	if pn.op != gn.Op() {
		return false
	}
	switch pn.op {
	case fxgraph.Placeholder, fxgraph.Output:
		return true
	case fxgraph.GetAttr:
		return attrIsTensorLike(gn)
	case fxgraph.CallFunction:
		if pn.set != nil {
			return pn.set.Has(gn.Target())
		}
		return pn.target == gn.Target()
	default:
		return pn.targetName == gn.TargetName()
	}
}

func containsString(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// attrIsTensorLike reports whether a get_attr node reads a tensor, or an
// attribute the graph does not hold (parsed graphs carry no values). A
// module or other object does not match a pattern get_attr.
func attrIsTensorLike(gn *fxgraph.Node) bool {
	v, ok := gn.Graph().Attr(gn.TargetName())
	if !ok {
		return true
	}
	_, isTensor := v.(*tensor.Tensor)
	return isTensor
}

// nodeSet is a set of graph nodes kept as a bitmap over node IDs.
type nodeSet struct{ bits []uint64 }

func newNodeSet(n int) *nodeSet { return &nodeSet{bits: make([]uint64, n/64+1)} }

func (s *nodeSet) has(n *fxgraph.Node) bool {
	id := n.ID()
	return id/64 < len(s.bits) && s.bits[id/64]&(1<<(id%64)) != 0
}

func (s *nodeSet) add(n *fxgraph.Node) {
	id := n.ID()
	for id/64 >= len(s.bits) {
		s.bits = append(s.bits, 0)
	}
	s.bits[id/64] |= 1 << (id % 64)
}
