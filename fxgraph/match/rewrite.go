package match

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// Errors a rewrite returns, wrapped in a [ReplaceError].
var (
	// ErrPlaceholderCount: the replacement's placeholder count differs from
	// the pattern's.
	ErrPlaceholderCount = errors.New("placeholder count mismatch")
	// ErrOutputCount: the replacement returns a different number of values
	// than the match has returning nodes.
	ErrOutputCount = errors.New("returning nodes count mismatch")
	// ErrTypeMismatch: a replacement value's type differs from the type of
	// the value it replaces.
	ErrTypeMismatch = errors.New("type mismatch")
	// ErrBadReplacement: the replacement graph cannot be copied (no output,
	// a literal result, a dangling reference, a missing attribute).
	ErrBadReplacement = errors.New("bad replacement")

	// errInjected is the failure a test injects into a rewrite's edits.
	errInjected = errors.New("injected failure")
)

// ReplaceError reports why the replacement for one match cannot be made.
// When a rewrite returns it, the graph has not been changed.
type ReplaceError struct {
	Match  int    // index of the match among the matches that passed the filters
	Anchor string // graph node bound to the first anchor, e.g. "%linear_3"
	Err    error  // why the replacement cannot be made
}

// Error returns "match: replace match 2 (anchor %linear_3): ...".
func (e *ReplaceError) Error() string {
	return fmt.Sprintf("match: replace match %d (anchor %s): %v", e.Match, e.Anchor, e.Err)
}

// Unwrap returns the cause.
func (e *ReplaceError) Unwrap() error { return e.Err }

// Filter decides whether a match is replaced: every filter must return
// true. It receives the match, the graph being rewritten and the pattern,
// and must not modify the graph.
type Filter func(m *Match, g *fxgraph.Graph, p *Pattern) bool

// Replacer returns the replacement graph for a match (torch.fx's
// replacement_callback). The graph's placeholders bind, by position, to
// the match's PlaceholderNodes; its output returns one value per returning
// node. It is called once per match before any change is made, and must
// not modify g.
type Replacer func(m *Match, g *fxgraph.Graph, p *Pattern) (*fxgraph.Graph, error)

// Static returns a Replacer that always answers r.
func Static(r *fxgraph.Graph) Replacer {
	return func(*Match, *fxgraph.Graph, *Pattern) (*fxgraph.Graph, error) { return r, nil }
}

// Replaced describes one applied replacement (torch.fx's ReplacedPatterns).
type Replaced struct {
	// Anchor is the pattern's first anchor (a pattern node).
	Anchor *fxgraph.Node
	// Match is the match as replaced: its placeholder bindings are the ones
	// read right before the replacement, and its non-placeholder graph
	// nodes have been erased.
	Match *Match
	// Replacements are the nodes inserted into the graph, in replacement
	// graph order (empty for an identity replacement).
	Replacements []*fxgraph.Node
}

// ReplacePattern replaces every match of pattern in g with replacement;
// see [ReplacePatternWithFilters].
//
// When the pattern returns one compute node and replacement returns one
// untyped node that reads every placeholder (and holds no attribute
// nodes), ReplacePattern replaces each match as soon as its search finds
// it, in the same pass over g (see [state.replaceInOnePass]); the result
// is the one [ReplacePatternWithFilters] gives.
func ReplacePattern(g *fxgraph.Graph, pattern *Pattern, replacement *fxgraph.Graph, opts ...Option) ([]Replaced, error) {
	return rewrite(g, pattern, Static(replacement), replacement, nil, false, opts)
}

// ReplacePatternWithFilters is torch.fx's replace_pattern_with_filters.
// It matches pattern in g (with overlapping matches removed, output and
// placeholders not matched, and ignoreLiterals as given; opts may add a
// registry or a node-name match), keeps the matches every filter accepts,
// and replaces them in discovery order with the graph replace returns.
//
// Before changing anything it obtains and checks every replacement:
// placeholder count, output count, result types against the replaced
// values, references and attributes. If one fails it returns a
// [*ReplaceError] and g is unchanged.
//
// Each match is then checked again right before it is replaced, on the
// graph as earlier replacements left it. Its placeholder bindings are read
// again, so a binding to a node an earlier replacement replaced (even
// inside a list) follows the replacement; a match that no longer holds is
// skipped. The re-read bindings are written into the *Match itself (the
// one filters and the replacer saw), which the result then reports. The new nodes go before the first user of the match's returning
// nodes (after the last returning node if none has users), the users are
// rewired, and the matched nodes are erased. No dead-code elimination runs.
//
// The edits run in a transaction on g (see [fxgraph.Graph.Begin]): should
// one fail, the rewrite returns a [*ReplaceError] and every edit it made
// is undone, so that g prints, and names new nodes, exactly as before.
func ReplacePatternWithFilters(g *fxgraph.Graph, pattern *Pattern, replace Replacer, filters []Filter, ignoreLiterals bool, opts ...Option) ([]Replaced, error) {
	return rewrite(g, pattern, replace, nil, filters, ignoreLiterals, opts)
}

// rewrite is ReplacePatternWithFilters; static, when not nil, is the graph
// replace always answers.
func rewrite(g *fxgraph.Graph, pattern *Pattern, replace Replacer, static *fxgraph.Graph, filters []Filter, ignoreLiterals bool, opts []Option) ([]Replaced, error) {
	if g == nil || pattern == nil || replace == nil {
		return nil, errors.New("match: replace: nil graph, pattern or replacement")
	}
	all := append([]Option{MatchOutput(false), MatchPlaceholder(false), RemoveOverlappingMatches(true)}, opts...)
	all = append(all, IgnoreLiterals(ignoreLiterals))
	m, err := NewMatcher(pattern, all...)
	if err != nil {
		return nil, err
	}
	if len(filters) == 0 {
		if pl := onePassPlan(g, m, static); pl != nil {
			s := newState(m, g, nil)
			defer s.release()
			return atomically(g, func() ([]Replaced, error) { return s.replaceInOnePass(pl) })
		}
	}
	s := newState(m, g, nil)
	defer s.release()
	found := s.run()
	matches := found[:0]
	for _, mt := range found {
		keep := true
		for _, f := range filters {
			if f != nil && !f(mt, g, pattern) {
				keep = false
				break
			}
		}
		if keep {
			matches = append(matches, mt)
		}
	}
	// Phase 1: obtain and check every replacement; nothing changes yet.
	plans := make([]*plan, len(matches))
	cache := map[*fxgraph.Graph]*plan{}
	var last *plan // most replacers answer the same graph every time
	for i, mt := range matches {
		r, err := replace(mt, g, pattern)
		if err == nil && r == nil {
			err = fmt.Errorf("%w: replacer returned no graph", ErrBadReplacement)
		}
		var pl *plan
		if err == nil {
			if last != nil && last.r == r {
				pl = last
			} else if pl = cache[r]; pl == nil {
				pl = &plan{r: r}
				pl.err = pl.build(g, pattern)
				cache[r] = pl
			}
			last = pl
			err = pl.err
		}
		if err == nil {
			err = checkResultTypes(mt, pl)
		}
		if err != nil {
			return nil, &ReplaceError{Match: i, Anchor: anchorName(mt), Err: err}
		}
		plans[i] = pl
	}
	// Phase 2: splice, on the order keys the search assigned. The new
	// names enter the graph's name table together at the end.
	defer g.BatchNames()()
	s.claimed = nil
	if m.incremental && !s.laterBound && !m.o.fullRecheck {
		s.dirty = newNodeSet(g.Len())
	}
	return atomically(g, func() ([]Replaced, error) {
		return s.spliceAll(matches, plans, make([]Replaced, 0, len(matches)))
	})
}

// atomically runs a rewrite's edits with [fxgraph.Graph.Atomic]: they
// stay when edit succeeds, and are undone when it fails or panics, so
// that a rewrite that returns an error leaves g exactly as it was.
func atomically(g *fxgraph.Graph, edit func() ([]Replaced, error)) ([]Replaced, error) {
	var out []Replaced
	err := g.Atomic(func() (err error) {
		out, err = edit()
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// step counts one edit step of the rewrite and returns the failure a
// test asked to inject at it, if any.
func (s *state) step() error {
	s.steps++
	if s.steps == s.m.o.failAt {
		return fmt.Errorf("%w at step %d", errInjected, s.steps)
	}
	return nil
}

// spliceAll rechecks each match and replaces it with its plan, appending
// the replacements to out.
func (s *state) spliceAll(matches []*Match, plans []*plan, out []Replaced) ([]Replaced, error) {
	for i, mt := range matches {
		point, ok := s.recheck(mt)
		if !ok {
			continue
		}
		news, err := s.splice(mt, plans[i], point)
		if err != nil {
			// Unreachable for a checked plan and a re-checked match; the
			// caller undoes the edits made so far.
			return out, &ReplaceError{Match: i, Anchor: anchorName(mt), Err: err}
		}
		out = append(out, Replaced{Anchor: mt.Anchors[0], Match: mt, Replacements: news})
	}
	return out, nil
}

// onePassPlan returns the plan of replacement r when the rewrite may
// replace each match as soon as it is found ([state.replaceInOnePass]),
// and nil otherwise: r must be a static replacement whose plan builds,
// which no match can fail (one distinct untyped result, so no type to
// check), whose result is a node r computes (not a placeholder) from every
// placeholder, and which holds only placeholder, call_function and
// call_method nodes (no attributes to copy); the pattern must be one the
// incremental recheck covers.
func onePassPlan(g *fxgraph.Graph, m *Matcher, r *fxgraph.Graph) *plan {
	if r == nil || !m.incremental || m.o.twoPhase || r == g || m.p.g == g {
		return nil
	}
	pl := &plan{r: r}
	if pl.build(g, m.p) != nil || !pl.untyped || len(pl.result) != 1 || pl.phIdx[pl.result[0]] >= 0 {
		return nil
	}
	reach := make([]bool, len(pl.nodes))
	reach[pl.result[0]] = true
	mark := func(v ops.Value) {
		_, _ = ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
			if r, ok := x.(pref); ok {
				reach[r] = true
			}
			return x, nil
		})
	}
	for j := len(pl.nodes) - 1; j >= 0; j-- {
		switch pl.nodes[j].Op() {
		case fxgraph.Placeholder, fxgraph.CallFunction, fxgraph.CallMethod:
		default:
			return nil
		}
		if !reach[j] {
			continue
		}
		for _, a := range pl.args[j] {
			mark(a)
		}
		for _, kw := range pl.kws[j] {
			mark(kw.Value)
		}
	}
	for j, ph := range pl.phIdx {
		if ph >= 0 && !reach[j] {
			return nil
		}
	}
	return pl
}

// replaceInOnePass replaces the matches of a pattern that returns one
// compute node (Matcher.incremental) with the plan of a replacement that
// onePassPlan accepts, in one pass over the graph: at each candidate the
// search runs on the graph as the earlier replacements left it, and a
// match is replaced as soon as it is found, while its nodes are still in
// the cache. The two-phase rewrite reads the whole graph first and every
// match a second time.
//
// The result is the two-phase rewrite's. No check of a replacement can
// fail, so checking them all first changes nothing. The search of a
// candidate on the rewritten graph finds a match exactly when the search
// on the original graph does, with the bindings the two-phase recheck
// reads; by induction over the matches, for a match M and the earlier
// replacements E (their compute nodes disjoint from M's):
//
//   - Structure: a node E rewired held E's returning node, now E's
//     result node R. Facing a compute pattern node, that was an overlap
//     with E, and R, a node the rewrite created, is refused too; facing a
//     placeholder, it bound E's returning node where it now binds R, one
//     for one, so consistency and injectivity agree.
//   - Containment: an inner node of M that a compute node of E used was
//     E's placeholder binding, which R reads instead: outside M either way.
//   - Cycles: R reads every binding of E, and every node of E reaches E's
//     returning node, so the paths through R are the paths through E. The
//     walk's cut at M's last node agrees as long as E's nodes and users
//     are in program order around E's returning node, which each match
//     is checked for before it is replaced.
//   - The recheck of a found match is a search from its anchor on the
//     rewritten graph, as here, and cannot fail on its bindings: R is new,
//     so bound once, and precedes M.
//
// Order keys are assigned as the pass reaches nodes; finding a match's
// insertion point numbers ahead to its returning node's users. A match
// whose nodes are out of program order ends the one-pass replacements:
// it and the matches after it are collected by the rest of the pass and
// rechecked and replaced afterwards, as in the two-phase rewrite.
func (s *state) replaceInOnePass(pl *plan) ([]Replaced, error) {
	g, m := s.g, s.m
	a := m.anchors[0]
	defer g.BatchNames()() // the new names enter the name table together
	s.info = getInfo(g.Len() + 1)
	s.base = math.MaxInt // one table: original and new nodes
	s.claimed = newNodeSet(g.Len())
	s.originals = true
	var out []Replaced
	var rest []*Match // from the first match out of program order on
	// The loop reads the successor only after the splice, so that it
	// visits the nodes a replacement inserted after n (and skips them),
	// and skips erased nodes, as [fxgraph.Graph.All] does.
	for n := g.First(); n != nil; n = liveNext(n) {
		if n.ID() >= s.newFrom {
			continue // created by this rewrite
		}
		s.number(n)
		if !m.isCandidate(a, n) {
			continue
		}
		s.anchorKey = s.orderKey(n)
		var mt *Match
		var point *fxgraph.Node
		apply := false
		if s.matchNode(a, n, "") {
			if mt = s.complete(); mt != nil && rest == nil {
				if s.inOrder() {
					point, apply = s.insertionPoint()
				} else {
					rest = []*Match{}
				}
			}
		}
		s.undo(0)
		switch {
		case mt == nil:
		case rest != nil:
			rest = append(rest, mt)
		case apply:
			news, err := s.splice(mt, pl, point)
			if err != nil {
				// Unreachable for a checked plan and a checked match; the
				// caller undoes the edits made so far.
				return out, &ReplaceError{Match: len(out), Anchor: anchorName(mt), Err: err}
			}
			out = append(out, Replaced{Anchor: mt.Anchors[0], Match: mt, Replacements: news})
		}
	}
	s.anchorKey, s.originals, s.claimed = 0, false, nil
	if st := m.o.stats; st != nil {
		st.onePass += len(out)
		st.onePassRest += len(rest)
	}
	if len(rest) == 0 {
		return out, nil
	}
	plans := make([]*plan, len(rest))
	for i := range plans {
		plans[i] = pl
	}
	return s.spliceAll(rest, plans, out)
}

// liveNext returns the first node after n that is not erased, or nil; n
// itself may have been erased.
func liveNext(n *fxgraph.Node) *fxgraph.Node {
	next := n.Next()
	for next != nil && next.Erased() {
		next = next.Next()
	}
	return next
}

// inOrder reports whether the current binding and the users of its
// returning node are in program order around the anchor: every bound node
// precedes it (numbered, and not after it), and every user of the
// returning node follows it. It numbers ahead to those users.
func (s *state) inOrder() bool {
	if s.bindsLaterNode() {
		return false
	}
	for _, pi := range s.p.returning {
		r, _ := s.vals[pi].(*fxgraph.Node)
		if r == nil {
			continue
		}
		k := s.orderKey(r)
		for _, u := range r.Uses() {
			s.numberThrough(u.User)
			if s.orderKey(u.User) <= k {
				return false
			}
		}
	}
	return true
}

func anchorName(mt *Match) string {
	if len(mt.Anchors) > 0 {
		if n := mt.NodeOf(mt.Anchors[0]); n != nil {
			return n.String()
		}
	}
	return "?"
}

// plan is a checked replacement graph, laid out for repeated copying.
type plan struct {
	r      *fxgraph.Graph
	err    error
	nodes  []*fxgraph.Node // program order, output excluded
	pos    map[*fxgraph.Node]int32
	result []int32 // per result value: index into nodes
	phIdx  []int32 // per node: placeholder index, or -1
	// args and kws: per node, its arguments with each node reference
	// replaced by pref(index into nodes), ready for substitution.
	args [][]ops.Value
	kws  [][]ops.Kwarg
	// untyped: every result is a distinct untyped node of the
	// replacement, which can replace a value of any type, so the result
	// types need no check per match.
	untyped bool
}

// build checks what does not depend on the match and lays out r.
func (pl *plan) build(g *fxgraph.Graph, p *Pattern) error {
	r := pl.r
	all := r.Nodes()
	out, ok := r.OutputNode()
	if !ok {
		return fmt.Errorf("%w: replacement graph has no output node", ErrBadReplacement)
	}
	pl.pos = make(map[*fxgraph.Node]int32, len(all))
	nph := int32(0)
	for i, n := range all {
		if n.Op() == fxgraph.Output {
			if i != len(all)-1 {
				return fmt.Errorf("%w: output node %s is not last", ErrBadReplacement, n)
			}
			continue
		}
		ph := int32(-1)
		switch n.Op() {
		case fxgraph.Placeholder:
			ph = nph
			nph++
		case fxgraph.CallFunction:
			if n.Target() == nil {
				return fmt.Errorf("%w: node %s: call_function without a target", ErrBadReplacement, n)
			}
		case fxgraph.GetAttr, fxgraph.CallModule:
			_, inG := g.Attr(n.TargetName())
			_, inR := r.Attr(n.TargetName())
			if !inG && !inR {
				return fmt.Errorf("%w: node %s: attribute %q exists in neither the graph nor the replacement", ErrBadReplacement, n, n.TargetName())
			}
		}
		if err := checkRefs(n, pl.pos); err != nil {
			return err
		}
		args := make([]ops.Value, len(n.Args()))
		for k, a := range n.Args() {
			args[k] = pl.compileRefs(a)
		}
		var kws []ops.Kwarg
		for _, kw := range n.Kwargs() {
			kws = append(kws, ops.Kwarg{Name: kw.Name, Value: pl.compileRefs(kw.Value)})
		}
		pl.args = append(pl.args, args)
		pl.kws = append(pl.kws, kws)
		pl.pos[n] = int32(i)
		pl.nodes = append(pl.nodes, n)
		pl.phIdx = append(pl.phIdx, ph)
	}
	if int(nph) != len(p.placeholders) {
		return fmt.Errorf("%w: replacement has %d placeholders, pattern has %d", ErrPlaceholderCount, nph, len(p.placeholders))
	}
	res := []ops.Value{out.Arg(0)}
	if seq, ok := seqOf(out.Arg(0)); ok {
		res = seq
	}
	if len(res) != len(p.returning) {
		return fmt.Errorf("%w: replacement returns %d values, pattern has %d returning nodes", ErrOutputCount, len(res), len(p.returning))
	}
	for i, v := range res {
		n, ok := v.(*fxgraph.Node)
		if !ok {
			return fmt.Errorf("%w: replacement result %d is %v; want a node", ErrBadReplacement, i, v)
		}
		j, ok := pl.pos[n]
		if !ok {
			return fmt.Errorf("%w: replacement result %d is %s, not a node of the replacement", ErrBadReplacement, i, n)
		}
		pl.result = append(pl.result, j)
	}
	pl.untyped = true
	for i, j := range pl.result {
		if pl.phIdx[j] >= 0 || pl.nodes[j].Type() != nil || slices.Contains(pl.result[:i], j) {
			pl.untyped = false
		}
	}
	return nil
}

// compileRefs replaces each node reference in v (all checked by
// checkRefs) with its pref.
func (pl *plan) compileRefs(v ops.Value) ops.Value {
	out, _ := ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
		if n, ok := x.(*fxgraph.Node); ok {
			return pref(pl.pos[n]), nil
		}
		return x, nil
	})
	return out
}

func checkRefs(n *fxgraph.Node, pos map[*fxgraph.Node]int32) error {
	check := func(v ops.Value) error {
		_, err := ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
			m, ok := x.(*fxgraph.Node)
			if !ok {
				return nil, fmt.Errorf("%w: node %s: argument of Go type %T", ErrBadReplacement, n, x)
			}
			if _, ok := pos[m]; !ok {
				return nil, fmt.Errorf("%w: node %s uses %s, which is not an earlier node of the replacement", ErrBadReplacement, n, m)
			}
			return x, nil
		})
		return err
	}
	for _, a := range n.Args() {
		if err := check(a); err != nil {
			return err
		}
	}
	for _, kw := range n.Kwargs() {
		if err := check(kw.Value); err != nil {
			return err
		}
	}
	return nil
}

// checkResultTypes checks each replacement result against the type of the
// value it replaces.
func checkResultTypes(mt *Match, pl *plan) error {
	if pl.untyped {
		return nil
	}
	// given[j]: the type replacement node j must take (results are few).
	type givenType struct {
		j int32
		t ops.Type
	}
	var given []givenType
	lookup := func(j int32) (ops.Type, bool) {
		for _, g := range given {
			if g.j == j {
				return g.t, true
			}
		}
		return nil, false
	}
	for i, j := range pl.result {
		o := pl.nodes[j]
		want := mt.ReturningNodes[i].Type()
		var got ops.Type
		if ph := pl.phIdx[j]; ph >= 0 {
			b, isNode := mt.PlaceholderNodes[ph].(*fxgraph.Node)
			if !isNode {
				return fmt.Errorf("%w: result %d returns placeholder %s, bound to the literal %v; want a node", ErrBadReplacement, i, o, mt.PlaceholderNodes[ph])
			}
			got = b.Type()
		} else {
			got = o.Type()
		}
		if want != nil && got != nil && !want.Equal(got) {
			return fmt.Errorf("%w: result %d (%s) replacing %s: %s", ErrTypeMismatch, i, o, mt.ReturningNodes[i], ops.TypeDiff(want, got))
		}
		prev, seen := lookup(j)
		if seen && prev != nil && want != nil && !prev.Equal(want) {
			return fmt.Errorf("%w: result %s replaces values of types %v and %v", ErrTypeMismatch, o, prev, want)
		}
		if want != nil && len(pl.result) > 1 {
			if seen {
				for k := range given {
					if given[k].j == j {
						given[k].t = want
					}
				}
			} else {
				given = append(given, givenType{j, want})
			}
		}
	}
	return nil
}

// recheck matches mt's pattern again from its anchors' graph nodes on the
// current graph. When the match still holds, with the same compute nodes,
// it refreshes mt's bindings in place (placeholders read again) and
// returns the insertion point (nil: the end of the graph); otherwise it
// returns false and leaves mt as it was.
func (s *state) recheck(mt *Match) (*fxgraph.Node, bool) {
	if s.dirty != nil {
		if point, ok := s.recheckIncremental(mt); ok {
			if st := s.m.o.stats; st != nil {
				st.incremental++
			}
			return point, true
		}
	}
	if st := s.m.o.stats; st != nil {
		st.full++
	}
	s.undo(0)
	defer s.undo(0)
	for _, a := range s.m.anchors {
		gn, _ := mt.vals[a].(*fxgraph.Node)
		if gn == nil || !s.matchNode(a, gn, s.m.o.nodeNameMatch) {
			return nil, false
		}
	}
	if !s.holds() {
		return nil, false
	}
	// The compute nodes must be the ones matched on the unmodified graph.
	for i := range s.p.nodes {
		if s.isCompute(i) && s.vals[i] != mt.vals[i] {
			return nil, false
		}
	}
	point, ok := s.insertionPoint()
	if !ok {
		return nil, false
	}
	s.fill(mt)
	return point, true
}

// recheckIncremental is [state.recheck] for a pattern that returns one
// compute node, from which alone the search starts (Matcher.incremental),
// on a graph whose matches bound no node later than their anchor. It
// re-reads only the nodes of mt that earlier replacements rewired
// (s.dirty), and reports false, leaving mt as it was, when anything is
// not as the search left it; [state.recheck] then rechecks in full.
//
// Between the search and this recheck the graph changed only by the
// splices of earlier matches E, each of which created nodes R that read
// E's placeholder bindings, rewired the users of E's returning node to R,
// and erased E's compute nodes. That leaves the rest of a full recheck
// with the answers the search had:
//
//   - A node that was not rewired has the arguments, op and target it had,
//     so its arguments bind what they bound. A rewired node held E's
//     returning node, now erased: no other node refers to it, so a binding
//     that changed was read only from rewired nodes.
//   - Containment: a user that E added to or took from one of mt's inner
//     nodes would be a compute node of E, which then overlapped mt or was
//     a user outside mt that failed mt's containment.
//   - Cycles: every node of a pattern with one returning node reaches it,
//     so E's placeholder bindings reached E's returning node and, through
//     it, its users; a path through R was a path already. Splices only
//     remove reachability between the nodes that stay, so no path from
//     mt's outside users back into mt appears.
//   - E's bindings precede E's anchor, and mt's anchor follows it, so no R
//     reads mt's returning node.
//
// The insertion point and the readability of the bindings are computed
// afresh, as in a full recheck.
func (s *state) recheckIncremental(mt *Match) (*fxgraph.Node, bool) {
	s.undo(0)
	defer s.undo(0)
	for i := range s.p.nodes {
		if !s.isCompute(i) {
			continue
		}
		gn, _ := mt.vals[i].(*fxgraph.Node)
		if gn == nil || gn.Erased() || gn.Graph() != s.g || s.ownerOf(gn) != 0 {
			return nil, false
		}
		s.bind(i, gn)
	}
	for i := range s.p.nodes {
		if !s.isCompute(i) {
			continue
		}
		if gn := s.vals[i].(*fxgraph.Node); s.dirty.has(gn) && !s.matchArgs(i, gn) {
			return nil, false
		}
	}
	for _, pi := range s.p.placeholders {
		old := mt.vals[pi]
		if s.bound[pi] {
			// Read again from a rewired node: what changed must have
			// referred to a node erased since.
			if !sameValue(s.vals[pi], old) && !refersToErased(old) {
				return nil, false
			}
			continue
		}
		if n, ok := old.(*fxgraph.Node); ok && (n.Erased() || n.Graph() != s.g || s.ownerOf(n) != 0) {
			return nil, false
		}
		s.bind(pi, old)
	}
	point, ok := s.insertionPoint()
	if !ok {
		return nil, false
	}
	// The binding order is the search's: it follows from the pattern and
	// from each node's argument layout, which rewiring keeps.
	s.fillValues(mt)
	return point, true
}

// sameValue reports whether a and b are the same binding: the same node,
// or equal literals holding the same nodes.
func sameValue(a, b ops.Value) bool {
	an, aNode := a.(*fxgraph.Node)
	bn, bNode := b.(*fxgraph.Node)
	if aNode || bNode {
		return aNode && bNode && an == bn
	}
	if refersToNode(a) || refersToNode(b) {
		return false // a literal holding nodes: not compared
	}
	return ops.LiteralEqual(a, b)
}

// refersToNode reports whether v holds a node reference.
func refersToNode(v ops.Value) bool {
	found := false
	_, _ = ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
		if _, ok := x.(*fxgraph.Node); ok {
			found = true
		}
		return x, nil
	})
	return found
}

// refersToErased reports whether v holds a reference to an erased node.
func refersToErased(v ops.Value) bool {
	found := false
	_, _ = ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
		if n, ok := x.(*fxgraph.Node); ok && n != nil && n.Erased() {
			found = true
		}
		return x, nil
	})
	return found
}

// insertionPoint picks, for the current binding, the node the
// replacement goes before and checks that every node the replacement may
// read is defined before it.
func (s *state) insertionPoint() (*fxgraph.Node, bool) {
	var first, last *fxgraph.Node
	for _, pi := range s.p.returning {
		r, _ := s.vals[pi].(*fxgraph.Node)
		if r == nil {
			continue
		}
		for _, u := range r.Uses() {
			if first == nil || s.before(u.User, first) {
				first = u.User
			}
		}
		if last == nil || s.before(last, r) {
			last = r
		}
	}
	point := first
	if first == nil {
		if last == nil {
			return nil, false
		}
		point = last.Next()
	}
	if point != nil && s.frontier != nil {
		s.numberThrough(point) // a one-pass rewrite numbers as it goes
	}
	ok := true
	for _, pi := range s.p.placeholders {
		switch v := s.vals[pi].(type) {
		case *fxgraph.Node:
			ok = ok && s.readableAt(v, point)
		case ops.List, ops.Tuple, ops.Dict, ops.Slice:
			_, _ = ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
				if n, isNode := x.(*fxgraph.Node); isNode {
					ok = ok && s.readableAt(n, point)
				}
				return x, nil
			})
		}
	}
	return point, ok
}

// readableAt reports whether a replacement inserted before point (nil:
// at the end) may read n: a live node of the graph, outside the match,
// defined before point.
func (s *state) readableAt(n *fxgraph.Node, point *fxgraph.Node) bool {
	return !n.Erased() && n.Graph() == s.g && !s.inPartition(n) && (point == nil || s.before(n, point))
}

// splice copies the plan's graph into the graph before point for match
// mt, rewires the users of the returning nodes and erases the matched nodes.
func (s *state) splice(mt *Match, pl *plan, point *fxgraph.Node) ([]*fxgraph.Node, error) {
	g, r := s.g, pl.r
	var restore func()
	var key int32
	if point != nil {
		restore = g.InsertingBefore(point)
		key = s.orderKey(point)
	} else {
		restore = g.InsertingAfter(nil)
		key = endKeys + int32(len(s.info)+len(s.extra))
	}
	defer restore()
	if cap(s.spliceVals) < len(pl.nodes) {
		s.spliceVals = make([]ops.Value, len(pl.nodes))
	}
	vals := s.spliceVals[:len(pl.nodes)]
	defer clear(vals)
	news := s.newsSlice(len(pl.nodes) - len(mt.PlaceholderNodes))
	for j, rn := range pl.nodes {
		if ph := pl.phIdx[j]; ph >= 0 {
			vals[j] = mt.PlaceholderNodes[ph]
			continue
		}
		if err := s.step(); err != nil {
			return news, err
		}
		// CreateNode copies args and kwargs, so the buffers are reused.
		args := s.argBuf[:0]
		for _, a := range pl.args[j] {
			args = append(args, substitute(a, vals))
		}
		s.argBuf = args
		var kw []ops.Kwarg
		if len(pl.kws[j]) > 0 {
			kw = s.kwBuf[:0]
			for _, k := range pl.kws[j] {
				kw = append(kw, ops.Kwarg{Name: k.Name, Value: substitute(k.Value, vals)})
			}
			s.kwBuf = kw
		}
		if rn.Op() == fxgraph.GetAttr || rn.Op() == fxgraph.CallModule {
			if _, has := g.Attr(rn.TargetName()); !has {
				if a, ok := r.Attr(rn.TargetName()); ok {
					g.SetAttr(rn.TargetName(), a)
				}
			}
		}
		targetName := ""
		if rn.Op() != fxgraph.CallFunction {
			targetName = rn.TargetName()
		}
		c := g.CreateNode(rn.Op(), rn.Target(), targetName, args, kw, rn.Name(), rn.Type())
		if s.newFrom == math.MaxInt {
			s.newFrom = c.ID()
			if s.base == math.MaxInt {
				s.base = s.newFrom // a one-pass rewrite: new nodes in extra
			}
		}
		clear(args)
		clear(kw)
		if !rn.Meta.IsZero() {
			*c.Meta = rn.Meta.Clone()
		}
		s.setKey(c, key)
		vals[j] = c
		news = append(news, c)
	}
	for i, ret := range mt.ReturningNodes {
		j := pl.result[i]
		nv, _ := vals[j].(*fxgraph.Node)
		if nv == nil || ret == nil || nv == ret {
			continue
		}
		if pl.phIdx[j] < 0 {
			if t := ret.Type(); t != nil {
				nv.SetType(t)
			}
			if nv.Meta.IsZero() && !ret.Meta.IsZero() {
				*nv.Meta = ret.Meta.Clone()
			}
		}
		if err := s.step(); err != nil {
			return news, err
		}
		changed := g.ReplaceAllUsesWith(ret, nv, nil)
		if s.dirty != nil {
			for _, u := range changed {
				s.dirty.add(u)
			}
		}
	}
	// Erase matched nodes in reverse pattern order; retry for nodes whose
	// users came later in that order.
	pending := s.pending[:0]
	defer func() { clear(pending); s.pending = pending[:0] }()
	for i := len(s.p.nodes) - 1; i >= 0; i-- {
		if !s.isCompute(i) {
			continue
		}
		if n, ok := mt.vals[i].(*fxgraph.Node); ok {
			pending = append(pending, n)
		}
	}
	for len(pending) > 0 {
		left := pending[:0]
		var lastErr error
		for _, n := range pending {
			if err := s.step(); err != nil {
				return news, err
			}
			if err := g.Erase(n); err != nil {
				left = append(left, n)
				lastErr = err
			}
		}
		if len(left) == len(pending) {
			return news, lastErr
		}
		pending = left
	}
	return news, nil
}

// newsSlice returns an empty slice with room for k new nodes, from a
// chunk shared by the replacements of one rewrite (capacity capped, so an
// append to one never runs into the next).
func (s *state) newsSlice(k int) []*fxgraph.Node {
	if k == 0 {
		return []*fxgraph.Node{}
	}
	if k > len(s.newsFree) {
		s.newsFree = make([]*fxgraph.Node, max(k, 64*len(s.p.nodes)))
	}
	out := s.newsFree[:0:k]
	s.newsFree = s.newsFree[k:]
	return out
}

// substitute returns a compiled replacement argument with each reference
// to replacement node j replaced by vals[j].
func substitute(v ops.Value, vals []ops.Value) ops.Value {
	switch x := v.(type) {
	case pref:
		return vals[x]
	case ops.List, ops.Tuple, ops.Dict, ops.Slice:
		out, _ := ops.MapValue(x, func(e ops.Value) (ops.Value, error) {
			if r, ok := e.(pref); ok {
				return vals[r], nil
			}
			return e, nil
		})
		return out
	}
	return v
}
