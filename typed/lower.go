package typed

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Lower turns a lifted graph back into explicit q/dq nodes: every value
// with a quantized element type is quantized right after it is computed
// (unless it is a kept quantize node or a constant) and dequantized for
// each user that reads it as a compute input. Kept dequantize nodes read
// the quantize node, and an output that returns a typed value returns the
// stored integers. Where Lift recorded how a value was built, Lower
// rebuilds exactly those nodes (targets, arguments, constants, types and
// metadata), so Lower(Lift(g)) is equal to g up to node names and order
// ([Equiv]); other typed values get quantize_per_tensor.default or
// quantize_per_channel.default with new constant attributes.
//
// When Lower fails, g is left exactly as it was (the edits run in a
// transaction, see [fxgraph.Graph.Begin]).
func Lower(g *fxgraph.Graph, reg *ops.Registry) (res fxgraph.Result, err error) {
	err = g.Atomic(func() error {
		res, err = lower(g, reg)
		return err
	})
	return res, err
}

// lower is Lower, inside its transaction.
func lower(g *fxgraph.Graph, reg *ops.Registry) (fxgraph.Result, error) {
	if reg == nil {
		reg = ops.Default()
	}
	res := fxgraph.Result{Stats: map[string]int{}}
	for _, v := range g.Nodes() {
		tt, ok := v.TensorType()
		if !ok || !tt.IsQuantized() {
			continue
		}
		if isQDQ(v) && !isQuantizeOp(v.Target()) {
			return res, fmt.Errorf("typed: lower: node %q (%s) has the quantized type %s, which only compute nodes, quantize nodes and constants may have", v.Name(), v.Target(), tt)
		}
		rec := recipeOf(v)
		exp, _ := expressedOf(tt.Elem)
		cache := map[string]*fxgraph.Node{}
		var defQ, defDQ *opTemplate
		defaults := func() error {
			if defQ != nil {
				return nil
			}
			var err error
			defQ, defDQ, err = defaultTemplates(g, tt)
			if err != nil {
				return fmt.Errorf("typed: lower: node %q: %w", v.Name(), err)
			}
			return nil
		}
		var src *fxgraph.Node
		switch {
		case v.Op() == fxgraph.CallFunction && isQuantizeOp(v.Target()):
			for _, in := range v.InputNodes() {
				if in.Op() == fxgraph.GetAttr {
					cache[in.TargetName()] = in
				}
			}
			v.SetType(restoredType(rec, ops.Plain(tt.DType(), tt.Shape...)))
			src = v
		case v.Op() == fxgraph.GetAttr || v.Op() == fxgraph.Placeholder:
			v.SetType(restoredType(rec, ops.Plain(tt.DType(), tt.Shape...)))
			src = v
		case v.Op() == fxgraph.CallFunction:
			qt := (*opTemplate)(nil)
			if rec != nil {
				qt = rec.Quant
			}
			if qt == nil {
				if err := defaults(); err != nil {
					return res, err
				}
				qt = defQ
			}
			reuse := reusableQParams(v, cache)
			restore := insertAfter(g, v)
			q := instantiate(g, qt, v, cache)
			restore()
			for _, a := range reuse {
				if slices.Contains(q.InputNodes(), a) {
					if err := g.MoveBefore(a, q); err != nil {
						return res, fmt.Errorf("typed: lower: node %q: %w", v.Name(), err)
					}
				}
			}
			g.ReplaceAllUsesWith(v, q, func(u *fxgraph.Node) bool { return u == q })
			v.SetType(restoredType(rec, ops.Plain(exp, tt.Shape...)))
			src = q
			res.Stats["quantize_inserted"]++
		default:
			return res, fmt.Errorf("typed: lower: node %q (%s) has the quantized type %s; only call_function, get_attr and placeholder nodes can be lowered", v.Name(), v.Op(), tt)
		}
		var need []*fxgraph.Node
		for _, u := range src.Users() {
			if isDequantizeAny(u) || u.Op() == fxgraph.Output {
				continue
			}
			need = append(need, u)
		}
		if len(need) == 0 {
			res.Changed = true
			continue
		}
		dt := (*opTemplate)(nil)
		if rec != nil {
			dt = rec.Dequant
		}
		if dt == nil {
			if err := defaults(); err != nil {
				return res, err
			}
			dt = defDQ
		}
		shared := rec != nil && rec.SharedDQ
		restore := insertAfter(g, src)
		var prev *fxgraph.Node
		for i, u := range need {
			if shared && i > 0 {
				g.ReplaceInputWith(u, src, prev)
				continue
			}
			d := instantiate(g, dt, src, cache)
			prev = d
			g.ReplaceInputWith(u, src, d)
			res.Stats["dequantize_inserted"]++
		}
		restore()
		res.Changed = true
	}
	return res, nil
}

// reusableQParams puts into cache the get_attr nodes that the kept
// dequantize nodes reading v already use and that nothing else uses (in
// a converted graph the quantize Lift erased shared them: torchao's
// affine ops read one _scale<i>/_zero_point<i> pair from both). The
// rebuilt quantize reuses them instead of reading the same attributes
// through new nodes; the caller moves them before it.
func reusableQParams(v *fxgraph.Node, cache map[string]*fxgraph.Node) []*fxgraph.Node {
	users := v.Users()
	var out []*fxgraph.Node
	for _, u := range users {
		if !isDequantizeAny(u) {
			continue
		}
		for _, a := range u.InputNodes() {
			if a.Op() != fxgraph.GetAttr {
				continue
			}
			if _, ok := cache[a.TargetName()]; ok {
				continue
			}
			only := true
			for _, au := range a.Users() {
				only = only && slices.Contains(users, au)
			}
			if only {
				cache[a.TargetName()] = a
				out = append(out, a)
			}
		}
	}
	return out
}

// insertAfter makes new nodes go right after x, in creation order (x is
// never the output node, which is last).
func insertAfter(g *fxgraph.Graph, x *fxgraph.Node) (restore func()) {
	return g.InsertingBefore(x.Next())
}

// restoredType is the type Lift recorded, or def when there is no record.
func restoredType(rec *lowering, def ops.Type) ops.Type {
	if rec != nil {
		return rec.Type
	}
	return def
}

// instantiate creates the node t describes, reading x, at the insertion
// point. get_attr arguments are taken from cache or created (before the
// node) and cached by path.
func instantiate(g *fxgraph.Graph, t *opTemplate, x *fxgraph.Node, cache map[string]*fxgraph.Node) *fxgraph.Node {
	conv := func(v ops.Value) ops.Value {
		out, _ := ops.MapValue(v, func(a ops.Value) (ops.Value, error) {
			r, ok := a.(attrRef)
			if !ok {
				return a, nil
			}
			if n, ok := cache[r.Path]; ok {
				return n, nil
			}
			n := g.GetAttr(r.Path, r.Type)
			*n.Meta = r.Meta.Clone()
			cache[r.Path] = n
			return n, nil
		})
		return out
	}
	args := []ops.Value{x}
	for _, a := range t.Args {
		args = append(args, conv(a))
	}
	var kws []ops.Kwarg
	for _, kw := range t.Kwargs {
		kws = append(kws, ops.Kwarg{Name: kw.Name, Value: conv(kw.Value)})
	}
	n := g.CallKw(t.Target, args, kws)
	n.SetType(t.Type)
	*n.Meta = t.Meta.Clone()
	return n
}

// defaultTemplates builds the quantize and dequantize nodes for a typed
// value Lift did not record: quantize_per_tensor.default with literal
// qparams, or quantize_per_channel.default with new scale and zero-point
// attributes (shared by both nodes).
func defaultTemplates(g *fxgraph.Graph, tt ops.TensorType) (q, dq *opTemplate, err error) {
	q, dq = &opTemplate{}, &opTemplate{}
	var storage, expressed tensor.DType
	switch e := tt.Elem.(type) {
	case ops.UniformQuantized:
		q.Target, dq.Target = qPerTensor, dqPerTensor
		q.Args = []ops.Value{e.Scale, e.ZeroPoint, e.StorageMin, e.StorageMax, e.StorageType}
		storage, expressed = e.StorageType, e.Expressed
	case ops.UniformQuantizedPerAxis:
		q.Target, dq.Target = qPerChannel, dqPerChannel
		n := len(e.Scales)
		sd := tensor.Float32
		for _, s := range e.Scales {
			if float64(float32(s)) != s || math.IsInf(float64(float32(s)), 0) {
				sd = tensor.Float64
			}
		}
		var st *tensor.Tensor
		if sd == tensor.Float32 {
			f := make([]float32, n)
			for i, s := range e.Scales {
				f[i] = float32(s)
			}
			st, err = tensor.FromData(sd, []int{n}, f)
		} else {
			st, err = tensor.FromData(sd, []int{n}, append([]float64(nil), e.Scales...))
		}
		if err != nil {
			return nil, nil, err
		}
		zt, err := tensor.FromData(tensor.Int64, []int{n}, append([]int64(nil), e.ZeroPoints...))
		if err != nil {
			return nil, nil, err
		}
		sp := g.FreshAttrName("_typed_scale_")
		g.SetAttr(sp, st)
		zp := g.FreshAttrName("_typed_zero_point_")
		g.SetAttr(zp, zt)
		q.Args = []ops.Value{
			attrRef{Path: sp, Type: ops.Plain(sd, int64(n))},
			attrRef{Path: zp, Type: ops.Plain(tensor.Int64, int64(n))},
			int64(e.Axis), e.StorageMin, e.StorageMax, e.StorageType,
		}
		storage, expressed = e.StorageType, e.Expressed
	default:
		return nil, nil, fmt.Errorf("no q/dq op for element type %s", tt.Elem)
	}
	dq.Args = q.Args
	if expressed != tensor.Float32 {
		dq.Kwargs = []ops.Kwarg{{Name: "out_dtype", Value: expressed}}
	}
	q.Type = ops.Plain(storage, tt.Shape...)
	dq.Type = ops.Plain(expressed, tt.Shape...)
	return q, dq, nil
}

// LowerPass returns [Lower] as a pipeline pass named "lower_qdq".
func LowerPass(reg *ops.Registry) fxgraph.Pass {
	return fxgraph.Pass{Name: "lower_qdq", Run: func(_ context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		return Lower(g, reg)
	}}
}
