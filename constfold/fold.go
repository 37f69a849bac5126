package constfold

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// PassName is the name of [Pass].
const PassName = "constant_fold"

// FrozenParamPrefix is the attribute prefix of folded constants.
const FrozenParamPrefix = "_frozen_param"

// DequantizeOps returns the built-in don't-fold list: every dequantize of
// ops.DequantizeOps (quantized_decomposed per tensor and per channel,
// torchao.dequantize_affine in both forms) plus
// quantized_decomposed.convert_element_type.no_fuse. Folding w -> quantize
// is allowed; the dequantize stays so backends can fuse it. Each call
// returns a fresh set.
func DequantizeOps() *ops.TargetSet {
	s := ops.DequantizeOps()
	s.Add(ops.MustOverload("quantized_decomposed.convert_element_type.no_fuse"))
	return s
}

// QuantNodeConstraint is convert's _quant_node_constraint: it accepts
// call_function nodes whose target is in ops.QuantizeOps (_QUANT_OPS).
func QuantNodeConstraint(n *fxgraph.Node) bool {
	return n.Op() == fxgraph.CallFunction && quantOps.Has(n.Target())
}

var quantOps = ops.QuantizeOps()

var (
	dontFoldMu sync.Mutex
	dontFold   = &ops.TargetSet{}
)

// AddDontFold adds t to the process-wide don't-fold list, as Inductor's
// add_dont_constant_fold does; t is matched exactly (add a packet and an
// overload separately to stop both). It is safe for concurrent use.
func AddDontFold(t ops.Target) {
	dontFoldMu.Lock()
	defer dontFoldMu.Unlock()
	dontFold.Add(t)
}

// ClearDontFold empties the process-wide list of [AddDontFold]
// (Inductor's clear_dont_constant_fold); the built-in [DequantizeOps] stay.
func ClearDontFold() {
	dontFoldMu.Lock()
	defer dontFoldMu.Unlock()
	dontFold.Clear()
}

func dontFoldSnapshot() *ops.TargetSet {
	dontFoldMu.Lock()
	defer dontFoldMu.Unlock()
	return dontFold.Clone()
}

// Options configures [ConstantFold].
type Options struct {
	// Constraint, when set, must accept a frontier node for it to be
	// replaced (torchao's constraint_fn).
	Constraint func(n *fxgraph.Node) bool
	// DontFold adds targets that are never folded, on top of
	// DequantizeOps and the AddDontFold list.
	DontFold *ops.TargetSet
	// Registry supplies kernels and purity; nil means ops.Default().
	Registry *ops.Registry
}

// Pass returns [ConstantFold] as a pipeline pass.
func Pass(opts Options) fxgraph.Pass {
	return fxgraph.Pass{Name: PassName, Run: func(ctx context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		if err := ctx.Err(); err != nil {
			return fxgraph.Result{}, err
		}
		return ConstantFold(g, opts)
	}}
}

// Run is ConstantFold with no constraint.
func Run(g *fxgraph.Graph) (fxgraph.Result, error) { return ConstantFold(g, Options{}) }

var (
	woqConvert = ops.MustOverload("prims.convert_element_type.default")
	woqPermute = ops.MustOverload("aten.permute.default")
)

type folder struct {
	g        *fxgraph.Graph
	reg      *ops.Registry
	dontFold []*ops.TargetSet
	mutable  map[*fxgraph.Node]bool
	konst    map[*fxgraph.Node]bool // constant, computed (not a source)
	source   map[*fxgraph.Node]bool // get_attr of a tensor
}

// ConstantFold folds the constant subgraphs of g (torchao's constant_fold):
//
//  1. A node is constant when it is a get_attr of a tensor attribute (a
//     source), or a call_function all of whose node inputs are constant,
//     with at least one tensor input, that is not in a don't-fold list, not
//     impure in the registry, not a higher-order op, and does not take a
//     mutable buffer as a positional argument.
//  2. The frontier is the constant call_function nodes with a user that is
//     not constant (the output counts as such); a constant node used only by
//     constant nodes is not materialised. Frontier nodes the constraint
//     rejects are left alone.
//  3. The accepted frontier is evaluated with fxgraph/interp; each node
//     is replaced by a get_attr of a new attribute _frozen_param<i> holding
//     its tensor, inserted before it, with its name, type and metadata.
//  4. Nodes left without users by the replacement (the folded chain and its
//     get_attr inputs) are erased; an attribute whose path has no dot and
//     that no get_attr reads any more is deleted.
//
// Result.Stats["folded"] counts replaced nodes and ["erased"] nodes erased.
// An evaluation failure is returned, naming the node, before g changes.
// ConstantFold is all or nothing: its edits run in a transaction on g
// (see [fxgraph.Graph.Begin]), and any failure leaves g exactly as it was,
// namespace and attribute store included.
func ConstantFold(g *fxgraph.Graph, opts Options) (res fxgraph.Result, err error) {
	steps.Store(0)
	err = g.Atomic(func() error {
		res, err = constantFold(g, opts)
		return err
	})
	return res, err
}

// steps counts the edits of a ConstantFold call (a constant stored, a
// node folded, a node erased); a test sets failAt to inject a failure at
// one (export_test.go). Tests that do so do not run in parallel.
var (
	steps  atomic.Int64 // atomic: calls on different graphs may run at once
	failAt int
)

// errInjected is the failure a test injects.
var errInjected = errors.New("injected failure")

// step counts one edit and returns the injected failure at failAt.
func step() error {
	k := steps.Add(1)
	if failAt > 0 && k == int64(failAt) {
		return fmt.Errorf("constfold: %w at step %d", errInjected, k)
	}
	return nil
}

// constantFold is ConstantFold, inside its transaction.
func constantFold(g *fxgraph.Graph, opts Options) (fxgraph.Result, error) {
	reg := opts.Registry
	if reg == nil {
		reg = ops.Default()
	}
	f := &folder{g: g, reg: reg, dontFold: []*ops.TargetSet{DequantizeOps(), dontFoldSnapshot()},
		konst: map[*fxgraph.Node]bool{}, source: map[*fxgraph.Node]bool{}}
	if opts.DontFold != nil {
		f.dontFold = append(f.dontFold, opts.DontFold)
	}
	f.mutable = mutableBuffers(g, reg)
	res := fxgraph.Result{Stats: map[string]int{"folded": 0, "erased": 0}}

	nodes := g.Nodes()
	for _, n := range nodes {
		switch n.Op() {
		case fxgraph.GetAttr:
			if a, ok := g.Attr(n.TargetName()); ok {
				if _, isT := a.(*tensor.Tensor); isT {
					f.source[n] = true
				}
			}
		case fxgraph.CallFunction:
			if f.isConstant(n) {
				f.konst[n] = true
			}
		}
	}
	var frontier []*fxgraph.Node
	for _, n := range nodes {
		if !f.konst[n] || n.NumUsers() == 0 {
			continue
		}
		outside := false
		for _, u := range n.Users() {
			if !f.konst[u] {
				outside = true
				break
			}
		}
		if !outside {
			continue
		}
		if opts.Constraint != nil && !opts.Constraint(n) {
			continue
		}
		frontier = append(frontier, n)
	}
	if len(frontier) == 0 {
		return res, nil
	}
	vals, err := f.evaluate(frontier)
	if err != nil {
		return res, err
	}
	var erased []*fxgraph.Node
	for i, n := range frontier {
		t, ok := vals[i].(*tensor.Tensor)
		if !ok {
			res.Notes = append(res.Notes, fmt.Sprintf("node %q: constant value is %T, not a tensor; left in place", n.Name(), vals[i]))
			continue
		}
		if err := step(); err != nil {
			return res, err
		}
		name := g.FreshAttrName(FrozenParamPrefix)
		g.SetAttr(name, t)
		restore := g.InsertingBefore(n)
		typ := n.Type()
		if typ == nil {
			if pt, err := ops.MakePlainType(ops.ShapeInts(t.Shape()), t.DType()); err == nil {
				typ = pt
			}
		}
		ga := g.GetAttr(name, typ)
		restore()
		g.ReplaceAllUsesWith(n, ga, func(u *fxgraph.Node) bool { return u == ga })
		*ga.Meta = n.Meta.Clone()
		inputs := n.InputNodes()
		if err := step(); err != nil {
			return res, err
		}
		if err := g.Erase(n); err != nil {
			return res, fmt.Errorf("constfold: erase folded node %q: %w", n.Name(), err)
		}
		if err := g.InheritName(ga, n); err != nil {
			return res, fmt.Errorf("constfold: %w", err)
		}
		res.Stats["folded"]++
		res.Changed = true
		erased = append(erased, inputs...)
	}
	count, err := f.sweep(erased)
	res.Stats["erased"] = count
	return res, err
}

func (f *folder) inDontFold(t ops.Target) bool {
	for _, s := range f.dontFold {
		if s.Has(t) {
			return true
		}
	}
	return false
}

// isConstant decides step 1 for a call_function node; inputs are decided
// first because nodes are visited in program order.
func (f *folder) isConstant(n *fxgraph.Node) bool {
	t := n.Target()
	if f.inDontFold(t) || f.reg.IsImpure(t) {
		return false
	}
	if p, ok := ops.PacketOf(t); ok && p.NS == "higher_order" {
		return false
	}
	hasTensor := false
	for _, in := range n.InputNodes() {
		if !f.source[in] && !f.konst[in] {
			return false
		}
		hasTensor = true
	}
	if !hasTensor {
		return false // a constructor (full, arange, ...) is not folded
	}
	for _, a := range n.Args() {
		if in, ok := a.(*fxgraph.Node); ok && f.mutable[in] {
			return false
		}
	}
	// Weight-only int8 pattern: convert_element_type(int8 const -> bf16),
	// and a permute feeding only that convert.
	if t == woqConvert && f.isWOQConvert(n) {
		return false
	}
	if t == woqPermute {
		if us := n.Users(); len(us) == 1 && us[0].Target() == woqConvert && f.isWOQConvert(us[0]) {
			return false
		}
	}
	return true
}

func (f *folder) isWOQConvert(n *fxgraph.Node) bool {
	if d, ok := n.Arg(1).(tensor.DType); !ok || d != tensor.BFloat16 {
		return false
	}
	in, ok := n.Arg(0).(*fxgraph.Node)
	if !ok {
		return false
	}
	for in.Op() == fxgraph.CallFunction && in.Target() == woqPermute {
		next, ok := in.Arg(0).(*fxgraph.Node)
		if !ok {
			return false
		}
		in = next
	}
	if !f.source[in] {
		return false
	}
	a, _ := f.g.Attr(in.TargetName())
	t, ok := a.(*tensor.Tensor)
	return ok && t.DType() == tensor.Int8
}

// evaluate copies the constant ancestors of the frontier into a scratch
// graph and runs it.
func (f *folder) evaluate(frontier []*fxgraph.Node) ([]ops.Value, error) {
	need := map[*fxgraph.Node]bool{}
	var mark func(n *fxgraph.Node)
	mark = func(n *fxgraph.Node) {
		if need[n] {
			return
		}
		need[n] = true
		for _, in := range n.InputNodes() {
			mark(in)
		}
	}
	for _, n := range frontier {
		mark(n)
	}
	sg := fxgraph.New()
	vm := map[*fxgraph.Node]*fxgraph.Node{}
	for _, n := range f.g.Nodes() {
		if !need[n] {
			continue
		}
		if n.Op() == fxgraph.GetAttr {
			a, _ := f.g.Attr(n.TargetName())
			sg.SetAttr(n.TargetName(), a)
		}
		c, err := sg.NodeCopy(n, func(x *fxgraph.Node) (ops.Value, error) {
			m, ok := vm[x]
			if !ok {
				return nil, fmt.Errorf("constfold: node %q reads %q, which is not constant", n.Name(), x.Name())
			}
			return m, nil
		})
		if err != nil {
			return nil, err
		}
		vm[n] = c
	}
	outs := make(ops.Tuple, len(frontier))
	for i, n := range frontier {
		outs[i] = vm[n]
	}
	sg.SetOutput(outs)
	vals, err := interp.Run(sg, nil, interp.Options{Registry: f.reg, Release: true})
	if err != nil {
		return nil, fmt.Errorf("constfold: evaluate constant subgraph: %w", err)
	}
	if len(vals) != len(frontier) {
		return nil, fmt.Errorf("constfold: evaluate constant subgraph: want %d values, got %d", len(frontier), len(vals))
	}
	return vals, nil
}

// sweep erases, transitively, the nodes among start that lost every user
// and are not impure, deleting top-level attributes no get_attr reads.
func (f *folder) sweep(start []*fxgraph.Node) (int, error) {
	count := 0
	work := append([]*fxgraph.Node(nil), start...)
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		if n.Erased() || n.NumUsers() > 0 || n.IsImpure(f.reg) {
			continue
		}
		if n.Op() != fxgraph.GetAttr && n.Op() != fxgraph.CallFunction {
			continue
		}
		inputs := n.InputNodes()
		path := ""
		if n.Op() == fxgraph.GetAttr {
			path = n.TargetName()
		}
		if err := step(); err != nil {
			return count, err
		}
		if err := f.g.Erase(n); err != nil {
			continue
		}
		count++
		if path != "" && !strings.Contains(path, ".") && !f.attrRead(path) {
			f.g.DeleteAttr(path)
		}
		work = append(work, inputs...)
	}
	return count, nil
}

func (f *folder) attrRead(path string) bool {
	for _, n := range f.g.Nodes() {
		if n.Op() == fxgraph.GetAttr && n.TargetName() == path {
			return true
		}
	}
	return false
}

// mutableBuffers marks the producers of every copy_/put_ destination
// (pytorch/ao PR #4181): starting from args[0] of such a call, walk its
// inputs; if the chain contains a placeholder or a get_attr, every node of
// it is mutable and is never folded or read by a folded node.
func mutableBuffers(g *fxgraph.Graph, reg *ops.Registry) map[*fxgraph.Node]bool {
	out := map[*fxgraph.Node]bool{}
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		o, ok := n.Target().(ops.Overload)
		if !ok {
			if p, isP := n.Target().(ops.Packet); isP {
				o = p.Default()
			} else {
				continue
			}
		}
		if !strings.Contains(o.Packet.Name, "copy_") && !strings.Contains(o.Packet.Name, "put_") {
			continue
		}
		dst, ok := n.Arg(0).(*fxgraph.Node)
		if !ok {
			continue
		}
		producers := []*fxgraph.Node{dst}
		seen := map[*fxgraph.Node]bool{dst: true}
		stateful := false
		for i := 0; i < len(producers); i++ {
			p := producers[i]
			if p.Op() == fxgraph.Placeholder || p.Op() == fxgraph.GetAttr {
				stateful = true
			}
			for _, in := range p.InputNodes() {
				if !seen[in] {
					seen[in] = true
					producers = append(producers, in)
				}
			}
		}
		if stateful {
			for _, p := range producers {
				out[p] = true
			}
		}
	}
	return out
}
