package typed

import (
	"context"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// loweringKey is the Meta.Extra key under which Lift records how a typed
// value was built, so that Lower rebuilds exactly those q/dq nodes.
const loweringKey = "typed.lowering"

// attrRef stands for a get_attr node inside an opTemplate's arguments.
type attrRef struct {
	Path string
	Type ops.Type
	Meta fxgraph.Meta
}

// opTemplate is an erased quantize or dequantize node: its target, its
// arguments after the first (get_attr nodes as attrRefs), its kwargs, type
// and metadata.
type opTemplate struct {
	Target ops.Target // an overload, or a packet as the graph had it
	Args   []ops.Value
	Kwargs []ops.Kwarg
	Type   ops.Type
	Meta   fxgraph.Meta
}

// lowering is what Lift records on a typed value. It is never modified
// after Lift stores it.
type lowering struct {
	// Quant is the erased quantize node; nil when it stayed or the value
	// is a constant.
	Quant *opTemplate
	// Dequant is the erased dequantize node (the first, when there were
	// several); nil when none was erased.
	Dequant *opTemplate
	// SharedDQ: one dequantize served every user; otherwise each user had
	// its own.
	SharedDQ bool
	// Type is the value's type before Lift.
	Type ops.Type
}

// recipeOf returns the lowering record of n, or nil.
func recipeOf(n *fxgraph.Node) *lowering {
	v, ok := n.Meta.Get(loweringKey)
	if !ok {
		return nil
	}
	r, _ := v.(*lowering)
	return r
}

// templateOf records n (a q/dq node) as an opTemplate.
func templateOf(n *fxgraph.Node) (*opTemplate, error) {
	o := n.Target()
	conv := func(v ops.Value) (ops.Value, error) {
		return ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
			ref, ok := x.(*fxgraph.Node)
			if !ok || ref.Op() != fxgraph.GetAttr {
				return nil, fmt.Errorf("typed: node %q: argument %v is not a constant", n.Name(), x)
			}
			return attrRef{Path: ref.TargetName(), Type: ref.Type(), Meta: ref.Meta.Clone()}, nil
		})
	}
	t := &opTemplate{Target: o, Type: n.Type(), Meta: n.Meta.Clone()}
	for _, a := range n.Args()[1:] {
		v, err := conv(a)
		if err != nil {
			return nil, err
		}
		t.Args = append(t.Args, v)
	}
	for _, kw := range n.Kwargs() {
		v, err := conv(kw.Value)
		if err != nil {
			return nil, err
		}
		t.Kwargs = append(t.Kwargs, ops.Kwarg{Name: kw.Name, Value: v})
	}
	return t, nil
}

// liftGroup is one quantized value found by Lift: its source (a quantize
// node or a constant) and the dequantize nodes reading it.
type liftGroup struct {
	src  *fxgraph.Node
	dqs  []*fxgraph.Node
	elem ops.Element
}

// Lift turns the q/dq nodes of a converted graph into quantized element
// types on the values between them (see the package documentation for the
// lifted form). It needs tensor types on the values it lifts (run
// [InferTypes] on an untyped graph first). q/dq nodes that have no
// quantized element type, or whose surroundings Lift cannot express, stay
// as they are; Result.Notes names each and says why. Lift decides
// everything before it changes g, and fails only on a broken graph; when
// it fails, g is left exactly as it was (the edits run in a transaction,
// see [fxgraph.Graph.Begin]).
func Lift(g *fxgraph.Graph, reg *ops.Registry) (res fxgraph.Result, err error) {
	err = g.Atomic(func() error {
		res, err = lift(g, reg)
		return err
	})
	return res, err
}

// lift is Lift, inside its transaction.
func lift(g *fxgraph.Graph, reg *ops.Registry) (fxgraph.Result, error) {
	if reg == nil {
		reg = ops.Default()
	}
	res := fxgraph.Result{Stats: map[string]int{}}
	note := func(format string, a ...any) { res.Notes = append(res.Notes, fmt.Sprintf(format, a...)) }

	groups := map[*fxgraph.Node]*liftGroup{}
	var order []*liftGroup
	for _, n := range g.Nodes() {
		if !isQDQ(n) {
			continue
		}
		t := n.Target()
		if !isQuantizeOp(t) && !isDequantizeOp(t) {
			note("left %q (%s): no quantized element type for this op", n.Name(), t)
			continue
		}
		if !isDequantizeOp(t) {
			if _, err := ElementOf(n, reg); err != nil {
				note("left %q: %v", n.Name(), err)
			}
			continue
		}
		elem, err := ElementOf(n, reg)
		if err != nil {
			note("left %q: %v", n.Name(), err)
			continue
		}
		in, _ := n.Arg(0).(*fxgraph.Node)
		if in == nil || !(in.Op() == fxgraph.GetAttr || (in.Op() == fxgraph.CallFunction && isQuantizeOp(in.Target()))) {
			note("left %q: its input is neither a quantize node nor a constant", n.Name())
			continue
		}
		gr := groups[in]
		if gr == nil {
			gr = &liftGroup{src: in, elem: elem}
			groups[in] = gr
			order = append(order, gr)
		}
		gr.dqs = append(gr.dqs, n)
	}

	type planned struct {
		gr        *liftGroup
		value     *fxgraph.Node // the node that takes the type
		retype    bool          // value is the quantize's producer; the quantize goes
		typ       ops.TensorType
		erase     []*fxgraph.Node // dequantize nodes that go
		keep      []*fxgraph.Node // dequantize nodes that stay
		sharedDQ  bool
		quantTmpl *opTemplate
		dqTmpl    *opTemplate
	}
	var plans []planned
	for _, gr := range order {
		p := planned{gr: gr}
		src := gr.src
		left := func(format string, a ...any) {
			names := ""
			for i, d := range gr.dqs {
				if i > 0 {
					names += ", "
				}
				names += fmt.Sprintf("%q", d.Name())
			}
			note("left %q with %s: %s", src.Name(), names, fmt.Sprintf(format, a...))
		}
		ok := true
		for _, d := range gr.dqs[1:] {
			if e, _ := ElementOf(d, reg); e == nil || !e.Equal(gr.elem) {
				left("the dequantize nodes disagree on the element type")
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		mine := map[*fxgraph.Node]bool{}
		for _, d := range gr.dqs {
			mine[d] = true
		}
		users := src.Users()
		if len(users) != len(gr.dqs) {
			left("%q has users other than matching dequantize nodes", src.Name())
			continue
		}
		for _, u := range users {
			if !mine[u] {
				ok = false
			}
		}
		if !ok {
			left("%q has users other than matching dequantize nodes", src.Name())
			continue
		}
		var shape []int64
		var syms []string // the symbolic dimensions of the shape, if any
		if src.Op() == fxgraph.GetAttr {
			tt, has := src.TensorType()
			if !has || tt.Elem == nil {
				left("constant %q has no tensor type (run InferTypes)", src.Name())
				continue
			}
			if tt.DType() != gr.elem.Storage() || tt.IsQuantized() {
				left("constant %q holds %s, the dequantize reads %s", src.Name(), tt, gr.elem.Storage())
				continue
			}
			shape = tt.Shape
			p.value = src
		} else {
			qe, err := ElementOf(src, reg)
			if err != nil {
				left("%v", err)
				continue
			}
			if !qe.Equal(gr.elem) {
				left("quantize %s and dequantize %s disagree (%s)", qe, gr.elem, ops.TypeDiff(ops.TensorType{Elem: qe}, ops.TensorType{Elem: gr.elem}))
				continue
			}
			prod, _ := src.Arg(0).(*fxgraph.Node)
			if prod == nil {
				left("the quantize input is not a node")
				continue
			}
			ptt, has := prod.TensorType()
			if !has || ptt.Elem == nil {
				left("%q has no tensor type (run InferTypes)", prod.Name())
				continue
			}
			shape, syms = ptt.Shape, ptt.Syms
			exp, _ := expressedOf(gr.elem)
			sc, plain := ptt.Elem.(ops.Scalar)
			if prod.Op() == fxgraph.CallFunction && !isQDQ(prod) && prod.NumUses() == 1 && plain && sc.DType == exp {
				p.retype = true
				p.value = prod
				if p.quantTmpl, err = templateOf(src); err != nil {
					left("%v", err)
					continue
				}
			} else {
				p.value = src
			}
		}
		typ, err := ops.MakeType(shape, gr.elem)
		if err != nil {
			left("%v", err)
			continue
		}
		typ.Syms = syms
		p.typ = typ
		for _, d := range gr.dqs {
			erasable := d.NumUsers() > 0
			for _, u := range d.Users() {
				if u.Op() != fxgraph.CallFunction || isQDQ(u) {
					erasable = false
				}
			}
			if erasable {
				p.erase = append(p.erase, d)
			} else {
				p.keep = append(p.keep, d)
			}
		}
		if len(p.erase) == 1 {
			p.sharedDQ = true
		} else if len(p.erase) > 1 {
			seen := map[*fxgraph.Node]bool{}
			for _, d := range p.erase {
				us := d.Users()
				if len(us) != 1 || seen[us[0]] {
					ok = false
					break
				}
				seen[us[0]] = true
			}
			if !ok {
				left("several dequantize nodes share users; the lifted form keeps one per user or one for all")
				continue
			}
		}
		if len(p.erase) > 0 {
			if p.dqTmpl, err = templateOf(p.erase[0]); err != nil {
				left("%v", err)
				continue
			}
		}
		plans = append(plans, p)
	}

	// Apply.
	for _, p := range plans {
		rec := &lowering{Quant: p.quantTmpl, Dequant: p.dqTmpl, SharedDQ: p.sharedDQ, Type: p.value.Type()}
		var qparams []*fxgraph.Node
		collect := func(n *fxgraph.Node) {
			for _, in := range n.InputNodes() {
				if in.Op() == fxgraph.GetAttr && in != p.gr.src {
					qparams = append(qparams, in)
				}
			}
		}
		p.value.SetType(p.typ)
		g.SaveMeta(p.value)
		p.value.Meta.Set(loweringKey, rec)
		for _, d := range p.erase {
			collect(d)
			g.ReplaceAllUsesWith(d, p.value, nil)
			if err := g.Erase(d); err != nil {
				return res, fmt.Errorf("typed: lift: erase %q: %w", d.Name(), err)
			}
		}
		if p.retype {
			q := p.gr.src
			for _, d := range p.keep {
				g.ReplaceInputWith(d, q, p.value)
			}
			collect(q)
			if err := g.Erase(q); err != nil {
				return res, fmt.Errorf("typed: lift: erase %q: %w", q.Name(), err)
			}
			res.Stats["quantize_erased"]++
		} else if p.value.Op() == fxgraph.GetAttr {
			res.Stats["constants_typed"]++
		} else {
			res.Stats["quantize_kept"]++
		}
		for _, n := range qparams {
			if !n.Erased() && n.NumUses() == 0 {
				if err := g.Erase(n); err != nil {
					return res, fmt.Errorf("typed: lift: erase %q: %w", n.Name(), err)
				}
			}
		}
		res.Stats["values_typed"]++
		res.Stats["dequantize_erased"] += len(p.erase)
		res.Stats["dequantize_kept"] += len(p.keep)
		res.Changed = true
	}
	return res, nil
}

// LiftPass returns [Lift] as a pipeline pass named "lift_qdq".
func LiftPass(reg *ops.Registry) fxgraph.Pass {
	return fxgraph.Pass{Name: "lift_qdq", Run: func(_ context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		return Lift(g, reg)
	}}
}
