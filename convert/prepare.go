package convert

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
)

// ObserverPrefix is the attribute prefix of inserted observers:
// activation_post_process_<i>.
const ObserverPrefix = "activation_post_process_"

// PrepareOptions configures Prepare. The zero value is prepare_pt2e.
type PrepareOptions struct {
	// Registry is used for schemas and DCE; nil means ops.Default().
	Registry *ops.Registry
	// SkipBNFold turns off the conv+BN and linear+BN folds of section 3.7.
	SkipBNFold bool
	// ObserverCallback may replace entries of the edge-or-node to observer
	// map before insertion (torchao's prepare_obs_or_fq_callback). keys
	// lists the map's keys in order.
	ObserverCallback func(g *fxgraph.Graph, keys []EdgeOrNode, obs map[EdgeOrNode]observers.Observer) error
	// Buffers lists the attribute paths that are registered buffers (the
	// BUFFER inputs of the exported program, e.g. "cache.k"), as opposed to
	// parameters and constants. Observer insertion leaves the written
	// argument of a mutating op unobserved when it comes from such a buffer
	// (section 3.4, pytorch/ao PR #4466). Nil means no attribute is known
	// to be a buffer.
	Buffers []string
}

// Prepare is prepare_pt2e (spec sections 3.2 to 3.4) on an unlifted graph
// (parameters as get_attr nodes, see Unlift): it folds batch norms into
// convolutions and linears, lets q transform, annotate and validate the
// graph, groups edges and outputs that share an observer (union-find), and
// inserts one call_module observer node activation_post_process_<i> per
// observed edge or output, storing the observers as graph attributes.
//
// Prepare works on a clone of g and swaps it in only on success: on error g
// is unchanged. Errors name the node concerned and wrap ErrAnnotation,
// ErrSharedSpec, ErrObserver or ErrFold.
func Prepare(g *fxgraph.Graph, q Quantizer) error {
	return PrepareWithOptions(g, q, PrepareOptions{})
}

// PrepareWithOptions is Prepare with options.
func PrepareWithOptions(g *fxgraph.Graph, q Quantizer, opts PrepareOptions) error {
	if q == nil {
		return errors.New("prepare: nil quantizer")
	}
	reg := opts.Registry
	if reg == nil {
		reg = ops.Default()
	}
	steps.Store(0)
	snap := snapshotAnnotations(g)
	c, _ := g.Clone()
	if !opts.SkipBNFold {
		if err := stepThen(func() error { return FoldBatchNorm(c, reg) }); err != nil {
			return snap.fail(fmt.Errorf("prepare: %w", err))
		}
	}
	if err := stepThen(func() error { return q.TransformForAnnotation(c) }); err != nil {
		return snap.fail(fmt.Errorf("prepare: transform_for_annotation: %w", err))
	}
	if err := stepThen(func() error { return q.Annotate(c) }); err != nil {
		return snap.fail(fmt.Errorf("prepare: annotate: %w", err))
	}
	if err := stepThen(func() error { return q.Validate(c) }); err != nil {
		return snap.fail(fmt.Errorf("prepare: validate: %w", err))
	}
	if n := snap.changed(); n != nil {
		return snap.fail(fmt.Errorf("prepare: node %q: %w: the quantizer annotated a node of the graph passed to Prepare; it must annotate the graph its Annotate method is given", n.Name(), ErrAnnotation))
	}
	if err := checkAnnotations(c); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	if err := stepThen(func() error { return insertObservers(c, reg, opts.Buffers, opts.ObserverCallback) }); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	if err := step(); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	g.ReplaceWith(c)
	return nil
}

// steps counts the steps of a Prepare or Convert call (a stage, an
// observer replaced); a test sets failAt to inject a failure at one
// (export_test.go). Tests that do so do not run in parallel.
var (
	steps  atomic.Int64 // atomic: calls on different graphs may run at once
	failAt int
)

// errInjected is the failure a test injects.
var errInjected = errors.New("injected failure")

// step counts one step and returns the injected failure at failAt.
func step() error {
	k := steps.Add(1)
	if failAt > 0 && k == int64(failAt) {
		return fmt.Errorf("%w at step %d", errInjected, k)
	}
	return nil
}

// stepThen counts a step, then runs fn unless the step failed.
func stepThen(fn func() error) error {
	if err := step(); err != nil {
		return err
	}
	return fn()
}

// annotationSnapshot records the annotations of the graph passed to
// Prepare. The quantizer runs on a clone, so an annotation that appears or
// changes on one of the original nodes (a quantizer holding nodes it
// found before Prepare cloned the graph) is a mistake: it would be
// silently ignored.
type annotationSnapshot struct {
	nodes []*fxgraph.Node
	ptrs  []*QuantizationAnnotation
	vals  []QuantizationAnnotation
}

func snapshotAnnotations(g *fxgraph.Graph) *annotationSnapshot {
	s := &annotationSnapshot{}
	for n := range g.All() {
		a := Annotation(n)
		var v QuantizationAnnotation
		if a != nil {
			v = *a
			v.InputQSpecMap = slices.Clone(a.InputQSpecMap)
		}
		s.nodes = append(s.nodes, n)
		s.ptrs = append(s.ptrs, a)
		s.vals = append(s.vals, v)
	}
	return s
}

// changed returns the first node whose annotation differs from the
// snapshot, or nil.
func (s *annotationSnapshot) changed() *fxgraph.Node {
	for i, n := range s.nodes {
		a := Annotation(n)
		if a != s.ptrs[i] {
			return n
		}
		if a == nil {
			continue
		}
		v := s.vals[i]
		if a.OutputQSpec != v.OutputQSpec || a.NoImplicitSharing != v.NoImplicitSharing || a.Annotated != v.Annotated ||
			!slices.Equal(a.InputQSpecMap, v.InputQSpecMap) {
			return n
		}
	}
	return nil
}

// fail restores the snapshot and returns err.
func (s *annotationSnapshot) fail(err error) error {
	for i, n := range s.nodes {
		if s.ptrs[i] != nil {
			*s.ptrs[i] = s.vals[i]
			s.ptrs[i].InputQSpecMap = slices.Clone(s.vals[i].InputQSpecMap)
		}
		if Annotation(n) != s.ptrs[i] {
			SetAnnotation(n, s.ptrs[i])
		}
	}
	return err
}

// checkAnnotations rejects annotations that name nodes the annotated node
// does not take as a positional argument, nodes of other graphs, and specs
// that refer to such nodes.
func checkAnnotations(g *fxgraph.Graph) error {
	live := map[*fxgraph.Node]bool{}
	for n := range g.All() {
		live[n] = true
	}
	checkEON := func(n *fxgraph.Node, e EdgeOrNode) error {
		if e.Producer == nil || !live[e.Producer] {
			return fmt.Errorf("node %q: %w: shared or derived spec refers to %s, which is not a node of the graph", n.Name(), ErrSharedSpec, e)
		}
		if e.Consumer != nil && !live[e.Consumer] {
			return fmt.Errorf("node %q: %w: shared or derived spec refers to %s, which is not a node of the graph", n.Name(), ErrSharedSpec, e)
		}
		return nil
	}
	checkSpec := func(n *fxgraph.Node, s QSpec) error {
		switch s := s.(type) {
		case *SharedQuantizationSpec:
			return checkEON(n, s.EdgeOrNode)
		case *DerivedQuantizationSpec:
			for _, e := range s.DerivedFrom {
				if err := checkEON(n, e); err != nil {
					return err
				}
			}
		case *QuantizationSpec:
			if s.Observer == nil {
				return fmt.Errorf("node %q: %w: quantization spec has no observer constructor", n.Name(), ErrAnnotation)
			}
			if s.QuantMin != nil && s.QuantMax != nil && *s.QuantMin > *s.QuantMax {
				return fmt.Errorf("node %q: %w: quant_min %d > quant_max %d", n.Name(), ErrAnnotation, *s.QuantMin, *s.QuantMax)
			}
			if s.ChAxis != nil && *s.ChAxis < 0 {
				return fmt.Errorf("node %q: %w: ch_axis %d < 0", n.Name(), ErrAnnotation, *s.ChAxis)
			}
		}
		return nil
	}
	for n := range g.All() {
		a := Annotation(n)
		if a == nil {
			continue
		}
		if len(a.InputQSpecMap) > 0 || a.OutputQSpec != nil {
			var kwNode *fxgraph.Node
			for _, kw := range n.Kwargs() {
				_, _ = ops.MapValue(kw.Value, func(v ops.Value) (ops.Value, error) {
					if k, ok := v.(*fxgraph.Node); ok && kwNode == nil {
						kwNode = k
					}
					return v, nil
				})
			}
			if kwNode != nil && len(a.InputQSpecMap) > 0 {
				return fmt.Errorf("node %q: %w: kwarg node %s not supported for annotation", n.Name(), ErrAnnotation, kwNode)
			}
		}
		argNodes := positionalNodes(n)
		for _, e := range a.InputQSpecMap {
			if e.Input == nil || !live[e.Input] {
				name := "<nil>"
				if e.Input != nil {
					name = e.Input.Name()
				}
				return fmt.Errorf("node %q: %w: input %q is not a node of the graph", n.Name(), ErrAnnotation, name)
			}
			if !argNodes[e.Input] {
				return fmt.Errorf("node %q: %w: annotated input %q is not a positional argument of the node", n.Name(), ErrAnnotation, e.Input.Name())
			}
			if err := checkSpec(n, e.Spec); err != nil {
				return err
			}
		}
		if err := checkSpec(n, a.OutputQSpec); err != nil {
			return err
		}
	}
	return nil
}

// positionalNodes returns the nodes in n's positional args (recursing into
// lists and tuples).
func positionalNodes(n *fxgraph.Node) map[*fxgraph.Node]bool {
	out := map[*fxgraph.Node]bool{}
	var walk func(v ops.Value)
	walk = func(v ops.Value) {
		switch v := v.(type) {
		case *fxgraph.Node:
			out[v] = true
		case ops.List:
			for _, e := range v {
				walk(e)
			}
		case ops.Tuple:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, a := range n.Args() {
		walk(a)
	}
	return out
}

// qspecMap is edge_or_node_to_qspec: an insertion-ordered map.
type qspecMap struct {
	keys []EdgeOrNode
	m    map[EdgeOrNode]QSpec
}

func (q *qspecMap) set(k EdgeOrNode, s QSpec) {
	if _, ok := q.m[k]; !ok {
		q.keys = append(q.keys, k)
	}
	q.m[k] = s
}

func buildQSpecMap(g *fxgraph.Graph) *qspecMap {
	q := &qspecMap{m: map[EdgeOrNode]QSpec{}}
	for n := range g.All() {
		a := Annotation(n)
		if a == nil {
			continue
		}
		for _, e := range a.InputQSpecMap {
			q.set(Edge(e.Input, n), e.Spec)
		}
		if a.OutputQSpec != nil {
			q.set(NodeOutput(n), a.OutputQSpec)
		}
	}
	return q
}

// unionFind is shared_with_map.
type unionFind struct {
	parent map[EdgeOrNode]EdgeOrNode
	specs  *qspecMap
}

func (u *unionFind) find(k EdgeOrNode) (EdgeOrNode, error) {
	p, ok := u.parent[k]
	if !ok {
		return k, fmt.Errorf("%w: %s has no quantization spec", ErrSharedSpec, k)
	}
	if p == k {
		return k, nil
	}
	r, err := u.find(p)
	if err != nil {
		return k, err
	}
	u.parent[k] = r
	return r, nil
}

func (u *unionFind) union(parent, child EdgeOrNode) error {
	rp, err := u.find(parent)
	if err != nil {
		return err
	}
	rc, err := u.find(child)
	if err != nil {
		return err
	}
	if s, ok := u.specs.m[rp].(*SharedQuantizationSpec); ok && s.EdgeOrNode == rc {
		u.parent[rp] = rc
		return nil
	}
	u.parent[rc] = rp
	return nil
}

// unwrap follows shared specs to the root spec of their group.
func (u *unionFind) unwrap(s QSpec) (QSpec, error) {
	for i := 0; ; i++ {
		sh, ok := s.(*SharedQuantizationSpec)
		if !ok {
			return s, nil
		}
		if i > len(u.specs.keys) {
			return nil, fmt.Errorf("%w: shared specs form a cycle at %s", ErrSharedSpec, sh.EdgeOrNode)
		}
		r, err := u.find(sh.EdgeOrNode)
		if err != nil {
			return nil, err
		}
		s = u.specs.m[r]
	}
}

// sameAttrs compares the attributes torchao's _has_same_attr checks:
// dtype, is_dynamic, quant_min, quant_max, qscheme, ch_axis, scale and
// zero_point (an attribute missing on both sides counts as equal).
func sameAttrs(a, b QSpec) bool {
	type attrs struct {
		kind            int
		dtype           observers.DType
		dyn             bool
		qmin, qmax      *int64
		qscheme         observers.QScheme
		chAxis          *int
		hasCh, hasScale bool
		scale           float64
		zp              int64
	}
	get := func(s QSpec) (attrs, bool) {
		switch s := s.(type) {
		case *QuantizationSpec:
			return attrs{dtype: s.DType, dyn: s.IsDynamic, qmin: s.QuantMin, qmax: s.QuantMax, qscheme: s.QScheme, chAxis: s.ChAxis, hasCh: true}, true
		case *DerivedQuantizationSpec:
			return attrs{dtype: s.DType, dyn: s.IsDynamic, qmin: s.QuantMin, qmax: s.QuantMax, qscheme: s.QScheme, chAxis: s.ChAxis, hasCh: true}, true
		case *FixedQParamsQuantizationSpec:
			return attrs{dtype: s.DType, dyn: s.IsDynamic, qmin: s.QuantMin, qmax: s.QuantMax, qscheme: s.QScheme, hasScale: true, scale: s.Scale, zp: s.ZeroPoint}, true
		}
		return attrs{}, false
	}
	x, okx := get(a)
	y, oky := get(b)
	if !okx || !oky {
		return false
	}
	eqInt := func(p, q *int64) bool { return (p == nil) == (q == nil) && (p == nil || *p == *q) }
	eqAxis := func(p, q *int) bool { return (p == nil) == (q == nil) && (p == nil || *p == *q) }
	return x.dtype == y.dtype && x.dyn == y.dyn && eqInt(x.qmin, y.qmin) && eqInt(x.qmax, y.qmax) &&
		x.qscheme == y.qscheme && x.hasCh == y.hasCh && eqAxis(x.chAxis, y.chAxis) &&
		x.hasScale == y.hasScale && x.scale == y.scale && x.zp == y.zp
}

// groupObservers runs section 3.3: union-find over the spec map and one
// observer per group. It returns the map from each key to its observer
// (nil for a nil spec).
func groupObservers(g *fxgraph.Graph, specs *qspecMap) (map[EdgeOrNode]observers.Observer, error) {
	u := &unionFind{parent: map[EdgeOrNode]EdgeOrNode{}, specs: specs}
	for _, k := range specs.keys {
		u.parent[k] = k
	}
	nodeErr := func(k EdgeOrNode, err error) error {
		n := k.Producer
		if k.IsEdge() {
			n = k.Consumer
		}
		return fmt.Errorf("node %q: %s: %w", n.Name(), k, err)
	}
	for _, k := range specs.keys {
		s := specs.m[k]
		if !k.IsEdge() {
			if sh, ok := s.(*SharedQuantizationSpec); ok {
				if err := u.union(sh.EdgeOrNode, k); err != nil {
					return nil, nodeErr(k, err)
				}
			}
			continue
		}
		arg, n := k.Producer, k.Consumer
		root, err := u.unwrap(s)
		if err != nil {
			return nil, nodeErr(k, err)
		}
		if a := Annotation(n); a != nil && !a.NoImplicitSharing {
			unionWith := func(other EdgeOrNode) error {
				os, ok := specs.m[other]
				if !ok {
					return nil
				}
				oroot, err := u.unwrap(os)
				if err != nil {
					return err
				}
				if oroot != nil && sameAttrs(oroot, root) {
					return u.union(other, k)
				}
				return nil
			}
			for _, user := range arg.Users() {
				if user == n {
					continue
				}
				if err := unionWith(Edge(arg, user)); err != nil {
					return nil, nodeErr(k, err)
				}
			}
			if err := unionWith(NodeOutput(arg)); err != nil {
				return nil, nodeErr(k, err)
			}
		}
		if sh, ok := s.(*SharedQuantizationSpec); ok {
			if err := u.union(sh.EdgeOrNode, k); err != nil {
				return nil, nodeErr(k, err)
			}
		}
	}
	// Group ids in key order; the first member of a group builds its
	// observer.
	groupObs := map[EdgeOrNode]observers.Observer{}
	built := map[EdgeOrNode]bool{}
	obs := map[EdgeOrNode]observers.Observer{}
	for _, k := range specs.keys {
		root, err := u.find(k)
		if err != nil {
			return nil, nodeErr(k, err)
		}
		if !built[root] {
			o, err := observerFromSpec(specs.m[k], obs)
			if err != nil {
				return nil, nodeErr(k, err)
			}
			groupObs[root] = o
			built[root] = true
		}
		obs[k] = groupObs[root]
	}
	return obs, nil
}

// observerFromSpec is _create_obs_or_fq_from_qspec.
func observerFromSpec(s QSpec, built map[EdgeOrNode]observers.Observer) (observers.Observer, error) {
	switch s := s.(type) {
	case nil:
		return nil, nil
	case *SharedQuantizationSpec:
		o, ok := built[s.EdgeOrNode]
		if !ok {
			return nil, fmt.Errorf("%w: shared spec points at %s, which has no observer yet", ErrSharedSpec, s.EdgeOrNode)
		}
		return o, nil
	case *DerivedQuantizationSpec:
		d := &derivedObserver{spec: s}
		for _, e := range s.DerivedFrom {
			o, ok := built[e]
			if !ok || o == nil {
				return nil, fmt.Errorf("%w: derived spec reads %s, which has no observer", ErrSharedSpec, e)
			}
			d.from = append(d.from, o)
		}
		return d, nil
	case *FixedQParamsQuantizationSpec:
		qmin, qmax, _, err := observers.CalculateQMinQMax(s.QuantMin, s.QuantMax, s.DType, false)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrObserver, err)
		}
		o, err := observers.NewFixedQParamsObserver(s.Scale, s.ZeroPoint, s.DType, s.QScheme, qmin, qmax)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrObserver, err)
		}
		return o, nil
	case *QuantizationSpec:
		if s.Observer == nil {
			return nil, fmt.Errorf("%w: quantization spec has no observer constructor", ErrAnnotation)
		}
		o, err := s.Observer(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrObserver, err)
		}
		if o == nil {
			return nil, fmt.Errorf("%w: observer constructor returned nil", ErrObserver)
		}
		return o, nil
	}
	return nil, fmt.Errorf("%w: unknown spec type %T", ErrAnnotation, s)
}

// isObserverNode reports whether n is a call_module node whose attribute
// is an observer.
func isObserverNode(g *fxgraph.Graph, n *fxgraph.Node) (observers.Observer, bool) {
	if n.Op() != fxgraph.CallModule {
		return nil, false
	}
	v, ok := g.Attr(n.TargetName())
	if !ok {
		return nil, false
	}
	o, ok := v.(observers.Observer)
	return o, ok
}

// collectProducerNodes is torchao's collect_producer_nodes: n and every node
// its positional and keyword arguments reach, transitively; nil when a
// placeholder is among them.
func collectProducerNodes(n *fxgraph.Node) []*fxgraph.Node {
	nodes := []*fxgraph.Node{n}
	seen := map[*fxgraph.Node]bool{n: true}
	frontier := []*fxgraph.Node{n}
	for len(frontier) > 0 {
		cur := frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		vals := append([]ops.Value(nil), cur.Args()...)
		for _, kw := range cur.Kwargs() {
			vals = append(vals, kw.Value)
		}
		for _, v := range vals {
			a, ok := v.(*fxgraph.Node)
			if !ok {
				continue
			}
			if a.Op() == fxgraph.Placeholder {
				return nil
			}
			if seen[a] {
				continue
			}
			seen[a] = true
			nodes = append(nodes, a)
			frontier = append(frontier, a)
		}
	}
	return nodes
}

// isBufferMutation reports whether the edge (arg, n) is the written first
// argument of a mutating op fed by a registered buffer: n calls an overload
// whose first schema argument is written (Tensor(a!)), arg is n's first
// argument, and the producers of arg (collectProducerNodes, which gives up
// at a placeholder) include a get_attr of a buffer. Such an edge gets no
// observer, so the mutation still targets the buffer (pytorch/ao PR #4466).
func isBufferMutation(reg *ops.Registry, buffers map[string]bool, n, arg *fxgraph.Node) bool {
	if len(buffers) == 0 || n.Op() != fxgraph.CallFunction || len(n.Args()) == 0 || n.Arg(0) != ops.Value(arg) {
		return false
	}
	o, ok := n.Target().(ops.Overload)
	if !ok {
		return false
	}
	sch, ok := reg.Schema(o)
	if !ok || len(sch.Args) == 0 || !sch.Args[0].Type.Write {
		return false
	}
	producers := collectProducerNodes(arg)
	for _, p := range producers {
		if p.Op() == fxgraph.GetAttr && buffers[p.TargetName()] {
			return true
		}
	}
	return false
}

// insertObservers runs sections 3.3 and 3.4 on g.
func insertObservers(g *fxgraph.Graph, reg *ops.Registry, bufferList []string, cb func(*fxgraph.Graph, []EdgeOrNode, map[EdgeOrNode]observers.Observer) error) error {
	buffers := map[string]bool{}
	for _, b := range bufferList {
		buffers[b] = true
	}
	specs := buildQSpecMap(g)
	obs, err := groupObservers(g, specs)
	if err != nil {
		return err
	}
	if cb != nil {
		if err := cb(g, append([]EdgeOrNode(nil), specs.keys...), obs); err != nil {
			return fmt.Errorf("observer callback: %w", err)
		}
	}
	insert := func(arg *fxgraph.Node, o observers.Observer) *fxgraph.Node {
		name := g.FreshAttrName(ObserverPrefix)
		g.SetAttr(name, o)
		restore := g.InsertingAfter(arg)
		defer restore()
		return g.CallModule(name, arg)
	}
	var mapArg func(n *fxgraph.Node, v ops.Value) ops.Value
	mapArg = func(n *fxgraph.Node, v ops.Value) ops.Value {
		switch v := v.(type) {
		case ops.List:
			out := make(ops.List, len(v))
			for i, e := range v {
				out[i] = mapArg(n, e)
			}
			return out
		case ops.Tuple:
			out := make(ops.Tuple, len(v))
			for i, e := range v {
				out[i] = mapArg(n, e)
			}
			return out
		case *fxgraph.Node:
			orig := v
			for {
				if _, ok := isObserverNode(g, orig); !ok || len(orig.Args()) == 0 {
					break
				}
				p, ok := orig.Arg(0).(*fxgraph.Node)
				if !ok {
					break
				}
				orig = p
			}
			o, ok := obs[Edge(orig, n)]
			if !ok || o == nil {
				return v
			}
			if out, ok := obs[NodeOutput(orig)]; ok && out == o {
				return v
			}
			for _, user := range v.Users() {
				if uo, ok := isObserverNode(g, user); ok && uo == o {
					return user
				}
			}
			return insert(v, o)
		}
		return v
	}
	for _, n := range g.Nodes() {
		if Annotation(n) == nil {
			continue
		}
		args := n.Args()
		newArgs := make([]ops.Value, len(args))
		changed := false
		for i, a := range args {
			if an, ok := a.(*fxgraph.Node); ok && i == 0 && isBufferMutation(reg, buffers, n, an) {
				newArgs[i] = a
				continue
			}
			newArgs[i] = mapArg(n, a)
			if !sameValue(newArgs[i], a) {
				changed = true
			}
		}
		if changed {
			g.SetArgs(n, newArgs...)
		}
		o, ok := obs[NodeOutput(n)]
		if !ok || o == nil {
			continue
		}
		if _, isTensor := n.Type().(ops.TensorType); n.Type() != nil && !isTensor {
			continue
		}
		on := insert(n, o)
		on.Meta.FromNode = n.Meta.FromNode
		// The output observer inherits n's numeric debug handle, as
		// torchao's prepare gave it before from_node replaced handles.
		on.Meta.NumericDebugHandle = n.Meta.NumericDebugHandle
		g.ReplaceAllUsesWith(n, on, func(u *fxgraph.Node) bool { return u == on })
	}
	return nil
}

// sameValue reports whether two argument values hold the same nodes in the
// same places (a shallow identity check for containers).
func sameValue(a, b ops.Value) bool {
	switch x := a.(type) {
	case ops.List:
		y, ok := b.(ops.List)
		return ok && slices.EqualFunc(x, y, sameValue)
	case ops.Tuple:
		y, ok := b.(ops.Tuple)
		return ok && slices.EqualFunc(x, y, sameValue)
	case *fxgraph.Node:
		y, ok := b.(*fxgraph.Node)
		return ok && x == y
	}
	return true
}
