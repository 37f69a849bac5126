package typed

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ErrTypeContract is wrapped by the errors of [Rewriter.Replace] and
// [Rewriter.CheckReplace]: a replacement whose type differs from the type
// of the value it replaces.
var ErrTypeContract = errors.New("replacement breaks the type contract")

// ErrNoRule is wrapped by the error of a rewrite that creates a node of an
// op without a result-type rule (or of an op the registry does not know):
// a typed rewrite must be able to derive every type it writes. The error
// names the op.
var ErrNoRule = errors.New("op has no result-type rule")

// Pattern is one typed canonicalisation. Match is read-only: it checks
// every condition and computes every constant, attribute and type the
// rewrite needs, and returns a Plan, or nil and the reason it does not
// apply (empty when root is not even a candidate).
type Pattern interface {
	// Name identifies the pattern in statistics and messages, e.g.
	// "groupnorm_fold".
	Name() string
	// Match inspects the graph around root without changing it and
	// returns the Plan of the rewrite, or nil and why the pattern does not
	// apply ("" when root is not a candidate at all).
	Match(root *fxgraph.Node) (Plan, string)
}

// Plan is a matched rewrite. Apply only creates nodes and replaces values
// through rw; it must not fail for data reasons (Match checked them).
type Plan interface {
	// Apply performs the matched rewrite through rw, which checks each
	// replacement's type. On an error (a broken type contract) the caller
	// rolls back everything rw did and stops.
	Apply(rw *Rewriter) error
}

// Rewriter creates nodes and replaces values for one Plan, checking each
// replacement's type against the value it replaces. Its first edit opens
// a transaction on the graph (see [fxgraph.Graph.Begin]): [Rewriter.Commit]
// keeps the plan's edits, [Rewriter.Rollback] undoes all of them
// (replacements and erasures included), leaving the graph exactly as it
// was.
type Rewriter struct {
	g       *fxgraph.Graph
	pattern string
	reg     *ops.Registry // nil means ops.Default()
	err     error         // the first node Call could not create soundly
	open    bool          // a transaction is open for the plan
	// steps counts the edits of a Canonicalize run (shared by its
	// rewriters) and failAt, when > 0, is the edit at which a test injects
	// a failure: injected then holds it, and the plan fails.
	steps    *int
	failAt   int
	injected error
}

// errInjected is the failure a test injects (see CanonOptions.failAt).
var errInjected = errors.New("injected failure")

// edit opens the plan's transaction before its first edit and counts the
// edit; it returns the injected failure, if this is the step for it.
func (rw *Rewriter) edit() error {
	if !rw.open {
		rw.g.Begin()
		rw.open = true
	}
	if rw.steps == nil {
		return nil
	}
	*rw.steps++
	if *rw.steps == rw.failAt && rw.injected == nil {
		rw.injected = fmt.Errorf("typed: pattern %s: %w at step %d", rw.pattern, errInjected, rw.failAt)
		return rw.injected
	}
	return nil
}

// NewRewriter returns a rewriter on g for the named pattern.
func NewRewriter(g *fxgraph.Graph, pattern string) *Rewriter {
	return &Rewriter{g: g, pattern: pattern}
}

// Graph returns the graph being rewritten.
func (rw *Rewriter) Graph() *fxgraph.Graph { return rw.g }

// InsertBefore makes new nodes go right before n, in creation order.
func (rw *Rewriter) InsertBefore(n *fxgraph.Node) (restore func()) {
	return rw.g.InsertingBefore(n)
}

// Call creates a call_function node with the given type. The op must have
// a result-type rule in the rewriter's registry (for a packet: some
// overload with one): otherwise the node is still created, so the plan can
// go on, but [Rewriter.Err], Replace and CheckReplace report [ErrNoRule]
// naming the op, and the rewrite fails.
func (rw *Rewriter) Call(t ops.Target, args []ops.Value, kwargs []ops.Kwarg, typ ops.Type) *fxgraph.Node {
	if rw.err == nil {
		rw.err = rw.checkRule(t)
	}
	_ = rw.edit() // an injected failure fails the plan after Apply
	n := rw.g.CallKw(t, args, kwargs)
	n.SetType(typ)
	return n
}

// checkRule reports [ErrNoRule] when no overload t may name has a rule.
func (rw *Rewriter) checkRule(t ops.Target) error {
	reg := rw.reg
	if reg == nil {
		reg = ops.Default()
	}
	switch x := t.(type) {
	case ops.Overload:
		if def, ok := reg.Op(x); ok && def.Result != nil {
			return nil
		}
	case ops.Packet:
		for _, o := range reg.Overloads(x) {
			if def, ok := reg.Op(o); ok && def.Result != nil {
				return nil
			}
		}
	case ops.Callable:
		if x == ops.GetItem {
			return nil
		}
	}
	return fmt.Errorf("typed: pattern %s: creating a node of %s: %w", rw.pattern, t, ErrNoRule)
}

// Err returns the first error of a node the rewriter created without a
// result-type rule ([ErrNoRule]), or nil.
func (rw *Rewriter) Err() error { return rw.err }

// Constant stores t under a fresh attribute path starting with prefix and
// creates a get_attr node of type typ reading it.
func (rw *Rewriter) Constant(prefix string, t *tensor.Tensor, typ ops.Type) *fxgraph.Node {
	_ = rw.edit() // an injected failure fails the plan after Apply
	path := rw.g.FreshAttrName(prefix)
	rw.g.SetAttr(path, t)
	return rw.g.GetAttr(path, typ)
}

// CheckReplace reports whether a value of type typ may replace old: the
// types must be equal exactly. The error names the pattern and the
// differing field.
func (rw *Rewriter) CheckReplace(old *fxgraph.Node, typ ops.Type) error {
	if rw.err != nil {
		return rw.err
	}
	if ops.TypesEqual(old.Type(), typ) {
		return nil
	}
	return fmt.Errorf("typed: pattern %s: replacing %q: %w: %s (have %v, replacement %v)",
		rw.pattern, old.Name(), ErrTypeContract, ops.TypeDiff(old.Type(), typ), old.Type(), typ)
}

// Replace makes every user of old use new, after checking that new's
// type equals old's ([ErrTypeContract] otherwise). new takes old's
// metadata (including Lift's lowering record) when it has none; old is
// erased.
func (rw *Rewriter) Replace(old, new *fxgraph.Node) error {
	if err := rw.CheckReplace(old, new.Type()); err != nil {
		return err
	}
	if err := rw.edit(); err != nil {
		return err
	}
	if new.Meta.IsZero() {
		rw.g.SaveMeta(new)
		*new.Meta = old.Meta.Clone()
	}
	rw.g.ReplaceAllUsesWith(old, new, func(u *fxgraph.Node) bool { return u == new })
	return rw.g.Erase(old)
}

// EraseIfDead erases each node (in order) that has no uses left.
func (rw *Rewriter) EraseIfDead(nodes ...*fxgraph.Node) error {
	for _, n := range nodes {
		if n == nil || n.Erased() || n.NumUses() > 0 || n.Op() == fxgraph.Placeholder || n.Op() == fxgraph.Output {
			continue
		}
		if err := rw.edit(); err != nil {
			return err
		}
		if err := rw.g.Erase(n); err != nil {
			return err
		}
	}
	return nil
}

// Rollback undoes every edit the rewriter made (nodes created, uses
// replaced, nodes erased, attributes stored), leaving the graph as it was
// before the plan, names included.
func (rw *Rewriter) Rollback() {
	if rw.open {
		rw.g.Rollback()
		rw.open = false
	}
}

// Commit keeps the rewriter's edits (an enclosing transaction may still
// undo them).
func (rw *Rewriter) Commit() {
	if rw.open {
		rw.g.Commit()
		rw.open = false
	}
}

// CanonOptions configures [Canonicalize].
type CanonOptions struct {
	// Patterns are tried in order at each node; nil means
	// DefaultPatterns(Registry).
	Patterns []Pattern
	// MaxIterations bounds the sweeps over the graph; 0 means 10.
	MaxIterations int
	// Debug turns on the rewrite checks of typed-rewrites.md 4.1: a
	// fingerprint of the nodes a Match may read (the root and its
	// inputs, [DebugDepth] levels up) and of the graph's node count is
	// taken before and after every Match, and a Match that changed it is
	// an error; after every successful rewrite the whole graph is
	// verified. The fingerprint costs O(size of that neighbourhood) per
	// Match, so a sweep stays linear; the verification costs O(graph)
	// per rewrite, which makes a Debug run quadratic in the number of
	// rewrites. Off by default; tests turn it on.
	Debug bool
	// Registry supplies schemas to the default patterns and to the debug
	// verifier; nil means ops.Default().
	Registry *ops.Registry

	// failAt > 0 injects a failure at that edit (tests; export_test.go).
	failAt int
}

// DebugDepth is how many levels of inputs above a Match's root the Debug
// fingerprint covers: the deepest built-in pattern (the trailing-affine
// GroupNorm fold, add → mul → reshape → instance_norm → reshape → X,
// with their constants) reads 6.
const DebugDepth = 8

// DefaultPatterns returns the built-in typed canonicalisations in order,
// using reg for schemas (nil means ops.Default()): [GroupNormFold].
func DefaultPatterns(reg *ops.Registry) []Pattern {
	return []Pattern{GroupNormFold{Registry: reg}}
}

// fingerprint hashes what a Match rooted at root may read: the graph's
// node count and, for root and its inputs up to depth levels above it
// (each node once, in a fixed visiting order), the node's printed form
// (opcode, target, arguments, type and user count) and its erased flag.
func fingerprint(g *fxgraph.Graph, root *fxgraph.Node, depth int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d;", g.Len())
	seen := map[*fxgraph.Node]bool{root: true}
	level := []*fxgraph.Node{root}
	for d := 0; d <= depth && len(level) > 0; d++ {
		var next []*fxgraph.Node
		for _, n := range level {
			fmt.Fprintf(h, "%s|%t|%d\n", fxgraph.FormatNode(n), n.Erased(), n.NumUses())
			if n.Erased() {
				continue
			}
			for _, in := range n.InputNodes() {
				if !seen[in] {
					seen[in] = true
					next = append(next, in)
				}
			}
		}
		level = next
	}
	return h.Sum64()
}

// Canonicalize applies the patterns until a sweep changes nothing. Each
// sweep visits nodes in reverse program order, so that a pattern rooted
// at a later node (the trailing-affine GroupNorm form at its add) is tried
// before one rooted inside it. Result.Notes lists every match that failed
// a guard, with its reason; Result.Stats counts rewrites per pattern.
// Canonicalize is all or nothing: it runs in a transaction on g (see
// [fxgraph.Graph.Begin]), and when a rewrite fails, or a Debug check does,
// it returns the error with g exactly as it was before the call (the
// rewrites of earlier sweeps undone too, and the namespace restored). See
// [CanonOptions.Debug] for the checks and their cost.
func Canonicalize(g *fxgraph.Graph, opts CanonOptions) (res fxgraph.Result, err error) {
	err = g.Atomic(func() error {
		res, err = canonicalize(g, opts)
		return err
	})
	return res, err
}

// canonicalize is Canonicalize's sweeps, inside its transaction.
func canonicalize(g *fxgraph.Graph, opts CanonOptions) (fxgraph.Result, error) {
	pats := opts.Patterns
	if pats == nil {
		pats = DefaultPatterns(opts.Registry)
	}
	maxIt := opts.MaxIterations
	if maxIt <= 0 {
		maxIt = 10
	}
	res := fxgraph.Result{Stats: map[string]int{}}
	seen := map[string]bool{}
	steps := 0
	for it := 0; it < maxIt; it++ {
		changed := false
		nodes := g.Nodes()
		for i := len(nodes) - 1; i >= 0; i-- {
			n := nodes[i]
			if n.Erased() {
				continue
			}
			for _, p := range pats {
				var before uint64
				if opts.Debug {
					before = fingerprint(g, n, DebugDepth)
				}
				plan, reason := p.Match(n)
				if opts.Debug && fingerprint(g, n, DebugDepth) != before {
					return res, fmt.Errorf("typed: pattern %s: Match at %q changed the graph", p.Name(), n.Name())
				}
				if plan == nil {
					if reason != "" {
						msg := fmt.Sprintf("%s at %q: %s", p.Name(), n.Name(), reason)
						if !seen[msg] {
							seen[msg] = true
							res.Notes = append(res.Notes, msg)
						}
					}
					continue
				}
				rw := NewRewriter(g, p.Name())
				rw.reg = opts.Registry
				rw.steps, rw.failAt = &steps, opts.failAt
				err := plan.Apply(rw)
				if err == nil {
					err = rw.Err()
				}
				if err == nil {
					err = rw.injected
				}
				if err != nil {
					rw.Rollback()
					return res, err
				}
				rw.Commit()
				if opts.Debug {
					if err := fxgraph.Verify(g, VerifyOptions(opts.Registry)); err != nil {
						return res, fmt.Errorf("typed: pattern %s: graph does not verify after the rewrite: %w", p.Name(), err)
					}
				}
				res.Stats[p.Name()]++
				res.Changed, changed = true, true
				break
			}
		}
		if !changed {
			return res, nil
		}
	}
	res.Notes = append(res.Notes, fmt.Sprintf("stopped after %d sweeps (iteration limit)", maxIt))
	return res, nil
}

// CanonicalizePass returns [Canonicalize] as a pipeline pass named
// "typed_canonicalize".
func CanonicalizePass(opts CanonOptions) fxgraph.Pass {
	return fxgraph.Pass{Name: "typed_canonicalize", Run: func(_ context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		return Canonicalize(g, opts)
	}}
}
