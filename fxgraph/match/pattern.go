package match

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// ErrBadPattern classifies errors about a pattern that cannot be used:
// an unused placeholder, dead code (a pure node without users; an impure
// one, such as an assertion, is allowed and left unbound, as torch 2.14
// does), a missing output, a dangling reference.
var ErrBadPattern = errors.New("bad pattern")

// PatternError reports a problem with one node of a pattern.
type PatternError struct {
	Node string // pattern node name; empty for graph-level problems
	Err  error  // the problem; wraps ErrBadPattern
}

// Error returns "match: pattern node "x": ...".
func (e *PatternError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("match: pattern: %v", e.Err)
	}
	return fmt.Sprintf("match: pattern node %q: %v", e.Node, e.Err)
}

// Unwrap returns the cause.
func (e *PatternError) Unwrap() error { return e.Err }

func patternErr(node, format string, args ...any) error {
	return &PatternError{Node: node, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadPattern}, args...)...)}
}

// pref is a reference to pattern node i inside a compiled argument value.
type pref int32

// pnode is one compiled pattern node.
type pnode struct {
	n          *fxgraph.Node
	op         fxgraph.OpKind
	target     ops.Target
	targetName string
	set        *ops.TargetSet
	args       []ops.Value // node references replaced by pref
	kwNames    []string
	kwVals     []ops.Value // node references replaced by pref
	returning  bool
	// unbound marks an impure node without users: no anchor reaches it,
	// so, as in torch's SubgraphMatcher, a match leaves it unbound.
	unbound bool
}

// Pattern is a compiled pattern graph: read-only once built, and safe to
// share between matchers and goroutines.
type Pattern struct {
	g            *fxgraph.Graph
	nodes        []pnode // program order, output last
	idx          map[*fxgraph.Node]int
	placeholders []int
	// phStart is placeholders[0] when the placeholders are consecutive
	// pattern nodes, so that a match's PlaceholderNodes can share its
	// per-node values; -1 otherwise.
	phStart   int
	returning []int // deduplicated, in order of first appearance in the output
	output    int
	names     []string // sorted
	nameIdx   map[string]int
}

// Graph returns the pattern graph. Do not modify it.
func (p *Pattern) Graph() *fxgraph.Graph { return p.g }

// Placeholders returns the pattern's placeholder nodes in order.
func (p *Pattern) Placeholders() []*fxgraph.Node {
	out := make([]*fxgraph.Node, len(p.placeholders))
	for i, pi := range p.placeholders {
		out[i] = p.nodes[pi].n
	}
	return out
}

// Returning returns the pattern's returning nodes (the output's input
// nodes, deduplicated, in order of first appearance).
func (p *Pattern) Returning() []*fxgraph.Node {
	out := make([]*fxgraph.Node, len(p.returning))
	for i, pi := range p.returning {
		out[i] = p.nodes[pi].n
	}
	return out
}

// Output returns the pattern's output node.
func (p *Pattern) Output() *fxgraph.Node { return p.nodes[p.output].n }

// Names returns the names given with [Builder.Name], sorted.
func (p *Pattern) Names() []string { return slices.Clone(p.names) }

// Named returns the pattern node registered under name.
func (p *Pattern) Named(name string) (*fxgraph.Node, bool) {
	i, ok := p.nameIdx[name]
	if !ok {
		return nil, false
	}
	return p.nodes[i].n, true
}

// Builder records a pattern or replacement graph. Its methods create nodes
// in program order; misuse is recorded and reported by [NewPattern] or
// [NewGraph], so pattern functions need no error handling.
type Builder struct {
	g     *fxgraph.Graph
	names map[string]*fxgraph.Node
	sets  map[*fxgraph.Node]*ops.TargetSet
	errs  []error
}

func newBuilder() *Builder {
	return &Builder{g: fxgraph.New(), names: map[string]*fxgraph.Node{}, sets: map[*fxgraph.Node]*ops.TargetSet{}}
}

// Graph returns the graph being recorded, e.g. to set a node's type with
// [fxgraph.Node.SetType].
func (b *Builder) Graph() *fxgraph.Graph { return b.g }

// Placeholder adds an input named name.
func (b *Builder) Placeholder(name string) *fxgraph.Node {
	return b.g.Placeholder(name, nil)
}

// Typed sets n's static type and returns n. Replacement graphs use it to
// give their intermediate nodes a type.
func (b *Builder) Typed(n *fxgraph.Node, t ops.Type) *fxgraph.Node {
	if n == nil || n.Graph() != b.g {
		b.errs = append(b.errs, fmt.Errorf("Typed: node %s is not a node of this builder", n))
		return n
	}
	n.SetType(t)
	return n
}

// Call adds a call_function node with positional arguments.
func (b *Builder) Call(t ops.Target, args ...ops.Value) *fxgraph.Node {
	if t == nil {
		b.errs = append(b.errs, errors.New("Call: nil target"))
	}
	return b.g.Call(t, args...)
}

// CallKw adds a call_function node with positional and keyword arguments.
func (b *Builder) CallKw(t ops.Target, args []ops.Value, kwargs ...ops.Kwarg) *fxgraph.Node {
	if t == nil {
		b.errs = append(b.errs, errors.New("CallKw: nil target"))
	}
	return b.g.CallKw(t, args, kwargs)
}

// CallMethod adds a call_method node (a Tensor method called on args[0]).
func (b *Builder) CallMethod(method string, args ...ops.Value) *fxgraph.Node {
	return b.g.CreateNode(fxgraph.CallMethod, nil, method, args, nil, "", nil)
}

// CallModule adds a call_module node calling the module at path.
func (b *Builder) CallModule(path string, args ...ops.Value) *fxgraph.Node {
	return b.g.CallModule(path, args...)
}

// GetAttr adds a get_attr node reading the attribute path. In a pattern
// it matches any get_attr node whose attribute is a tensor or unknown.
func (b *Builder) GetAttr(path string) *fxgraph.Node {
	return b.g.GetAttr(path, nil)
}

// Name registers n under name, so that a match can report which graph
// node (or literal) n bound to ([Match.Named]). Names must be unique. A
// named node is not an output: a node that only the name map mentions
// must still not have users outside a match.
func (b *Builder) Name(name string, n *fxgraph.Node) *fxgraph.Node {
	switch {
	case n == nil || n.Graph() != b.g:
		b.errs = append(b.errs, fmt.Errorf("Name(%q): node %s is not a node of this builder", name, n))
	case name == "":
		b.errs = append(b.errs, fmt.Errorf("Name: empty name for node %s", n))
	case b.names[name] != nil:
		b.errs = append(b.errs, fmt.Errorf("Name(%q): name already given to %s", name, b.names[name]))
	default:
		b.names[name] = n
	}
	return n
}

// AnyTarget lets the call_function node n match a graph node calling any
// target in set (for example a packet and all its overloads), instead of
// n's own target only. set is not copied; do not change it afterwards.
func (b *Builder) AnyTarget(n *fxgraph.Node, set *ops.TargetSet) *fxgraph.Node {
	switch {
	case n == nil || n.Graph() != b.g:
		b.errs = append(b.errs, fmt.Errorf("AnyTarget: node %s is not a node of this builder", n))
	case n.Op() != fxgraph.CallFunction:
		b.errs = append(b.errs, fmt.Errorf("AnyTarget: node %s is a %s, want call_function", n, n.Op()))
	case set == nil:
		b.errs = append(b.errs, fmt.Errorf("AnyTarget: nil target set for node %s", n))
	default:
		b.sets[n] = set
	}
	return n
}

func (b *Builder) run(fn func(b *Builder) ops.Value) error {
	if fn == nil {
		return errors.New("match: nil builder function")
	}
	out := fn(b)
	if len(b.errs) > 0 {
		return fmt.Errorf("match: builder: %w", errors.Join(b.errs...))
	}
	b.g.SetOutput(out)
	return nil
}

// NewPattern records fn into a pattern graph and compiles it. fn returns
// the pattern's result: a node, or a [ops.Tuple] of nodes for a
// multi-output pattern. It fails, naming the node, on builder misuse, an
// unused placeholder, or a non-output node that nothing uses.
func NewPattern(fn func(b *Builder) ops.Value) (*Pattern, error) {
	b := newBuilder()
	if err := b.run(fn); err != nil {
		return nil, err
	}
	return compile(b.g, b.names, b.sets)
}

// NewGraph records fn into a plain graph, for use as a replacement.
// Unlike a pattern, a replacement may leave placeholders unused.
func NewGraph(fn func(b *Builder) ops.Value) (*fxgraph.Graph, error) {
	b := newBuilder()
	if err := b.run(fn); err != nil {
		return nil, err
	}
	return b.g, nil
}

// FromGraph compiles an existing graph (for example a parsed one) into a
// pattern. names maps caller-chosen names to pattern nodes, like
// [Builder.Name]; sets gives call_function nodes a target set, like
// [Builder.AnyTarget]. Both may be nil. The graph is not copied: do not
// modify it while the pattern is in use.
func FromGraph(g *fxgraph.Graph, names map[string]*fxgraph.Node, sets map[*fxgraph.Node]*ops.TargetSet) (*Pattern, error) {
	if g == nil {
		return nil, patternErr("", "nil graph")
	}
	for name, n := range names {
		if n == nil || n.Graph() != g || n.Erased() {
			return nil, patternErr("", "name %q refers to %s, which is not a live node of the pattern graph", name, n)
		}
	}
	for n, s := range sets {
		if n == nil || n.Graph() != g || n.Erased() {
			return nil, patternErr("", "target set given for %s, which is not a live node of the pattern graph", n)
		}
		if n.Op() != fxgraph.CallFunction || s == nil {
			return nil, patternErr(n.Name(), "a target set needs a call_function node and a non-nil set")
		}
	}
	return compile(g, names, sets)
}

func compile(g *fxgraph.Graph, names map[string]*fxgraph.Node, sets map[*fxgraph.Node]*ops.TargetSet) (*Pattern, error) {
	nodes := g.Nodes()
	if len(nodes) == 0 {
		return nil, patternErr("", "empty pattern")
	}
	p := &Pattern{g: g, nodes: make([]pnode, len(nodes)), idx: make(map[*fxgraph.Node]int, len(nodes)), output: -1}
	for i, n := range nodes {
		if n.Op() == fxgraph.Output {
			if i != len(nodes)-1 {
				return nil, patternErr(n.Name(), "output node must be the last node")
			}
			p.output = i
		}
		p.idx[n] = i
	}
	if p.output < 0 {
		return nil, patternErr("", "pattern has no output node")
	}
	if len(nodes) == 1 {
		return nil, patternErr("", "empty pattern: only an output node")
	}
	var convErr error
	conv := func(v ops.Value, at *fxgraph.Node) ops.Value {
		out, err := ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
			m, ok := x.(*fxgraph.Node)
			if !ok {
				return nil, fmt.Errorf("argument holds a %T; want a literal or a pattern node", x)
			}
			j, ok := p.idx[m]
			if !ok || j >= p.idx[at] {
				return nil, fmt.Errorf("argument %s is not an earlier node of the pattern", m)
			}
			return pref(j), nil
		})
		if err != nil && convErr == nil {
			convErr = &PatternError{Node: at.Name(), Err: fmt.Errorf("%w: %v", ErrBadPattern, err)}
		}
		return out
	}
	for i, n := range nodes {
		pn := &p.nodes[i]
		pn.n, pn.op, pn.target = n, n.Op(), n.Target()
		if n.Op() != fxgraph.CallFunction {
			pn.targetName = n.TargetName()
		} else if n.Target() == nil {
			return nil, patternErr(n.Name(), "call_function node without a target")
		}
		pn.set = sets[n]
		pn.args = make([]ops.Value, len(n.Args()))
		for j, a := range n.Args() {
			pn.args[j] = conv(a, n)
		}
		for _, kw := range n.Kwargs() {
			pn.kwNames = append(pn.kwNames, kw.Name)
			pn.kwVals = append(pn.kwVals, conv(kw.Value, n))
		}
		if convErr != nil {
			return nil, convErr
		}
		switch n.Op() {
		case fxgraph.Placeholder:
			p.placeholders = append(p.placeholders, i)
			if n.NumUses() == 0 {
				return nil, patternErr(n.Name(), "placeholder is unused; every pattern input must be used (a Python scalar input is fixed as a literal instead)")
			}
		case fxgraph.Output:
		default:
			// torch 2.14's SubgraphMatcher refuses unused nodes as dead
			// code unless they are impure (an exported .to(dtype) leaves an
			// unused aten._assert_tensor_metadata). Such a node is reached
			// from no anchor, so it is never bound: the search ignores it
			// and a rewrite leaves the graph's own copy in place.
			if n.NumUses() == 0 {
				if !n.IsImpure(nil) {
					return nil, patternErr(n.Name(), "node has no users: pattern with dead code")
				}
				pn.unbound = true
			}
		}
	}
	p.phStart = -1
	if len(p.placeholders) > 0 {
		p.phStart = p.placeholders[0]
		for i, pi := range p.placeholders {
			if pi != p.phStart+i {
				p.phStart = -1
				break
			}
		}
	}
	out := nodes[p.output]
	for _, r := range out.InputNodes() {
		p.returning = append(p.returning, p.idx[r])
		p.nodes[p.idx[r]].returning = true
	}
	if len(p.returning) == 0 {
		return nil, patternErr(out.Name(), "pattern returns no node")
	}
	p.nameIdx = make(map[string]int, len(names))
	for name, n := range names {
		p.nameIdx[name] = p.idx[n]
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	return p, nil
}
