package convert

import (
	"context"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/metadata"
	"github.com/fxquant/fxquant/ops"
)

// DuplicateDQPassName is the name of [DuplicateDQPass].
const DuplicateDQPassName = "duplicate_dq"

var symSizeTargets = ops.NewTargetSet(ops.MustOverload("aten.sym_size.int"), ops.MustOverload("aten.sym_numel.default"))

// hasValidAnnotation reports whether n carries a valid quantization
// annotation: a value under [AnnotationKey] whose Valid method says so
// (*QuantizationAnnotation, or any type with Valid() bool).
func hasValidAnnotation(n *fxgraph.Node) bool {
	v, ok := n.Meta.Get(AnnotationKey)
	if !ok || v == nil {
		return false
	}
	a, ok := v.(interface{ Valid() bool })
	return ok && a.Valid()
}

func isCall(n *fxgraph.Node, s *ops.TargetSet) bool {
	return n != nil && n.Op() == fxgraph.CallFunction && s.Has(n.Target())
}

// DuplicateDQ is torchao's DuplicateDQPass (torchao-pt2e.md 9) with the
// affine ops covered: every dequantize node (quantized_decomposed
// per-tensor and per-channel, torchao.dequantize_affine as packet or
// .default) with more than one user (sym_size users aside) gets a private
// copy for each user that has a valid quantization annotation. Each copy is
// made with Graph.NodeCopy (arguments, type and metadata) and inserted right
// after the dequantize; unannotated users keep the original, which is erased
// when no user is left.
//
// Dynamic dequantizes stay shared: a dequantize whose quantize takes its
// scale from a getitem of a choose_qparams node (choose_qparams.tensor,
// choose_qparams_symmetric.tensor or torchao.choose_qparams_affine in
// either form).
//
// Result.Stats["duplicated"] counts the copies and ["erased"] the originals
// removed. It never fails on a well-formed graph.
func DuplicateDQ(g *fxgraph.Graph) (fxgraph.Result, error) {
	dqOps, qOps, cqOps := ops.DequantizeOps(), ops.QuantizeOps(), ops.ChooseQParamsOps()
	res := fxgraph.Result{Stats: map[string]int{"duplicated": 0, "erased": 0}}
	for n := range g.All() {
		if !isCall(n, dqOps) {
			continue
		}
		var users []*fxgraph.Node
		for _, u := range n.Users() {
			if u.Op() == fxgraph.CallFunction && symSizeTargets.Has(u.Target()) {
				continue
			}
			users = append(users, u)
		}
		if len(users) <= 1 {
			continue
		}
		if q, ok := n.Arg(0).(*fxgraph.Node); ok && isCall(q, qOps) {
			// The scale is args[1] for the decomposed quantize and args[2]
			// for quantize_affine; check both positions.
			dynamic := false
			for _, i := range []int{1, 2} {
				if gi, ok := q.Arg(i).(*fxgraph.Node); ok && gi.Op() == fxgraph.CallFunction && gi.Target() == ops.GetItem {
					if cq, ok := gi.Arg(0).(*fxgraph.Node); ok && isCall(cq, cqOps) {
						dynamic = true
					}
				}
			}
			if dynamic {
				continue
			}
		}
		for _, u := range users {
			if !hasValidAnnotation(u) {
				continue
			}
			restore := g.InsertingAfter(n)
			c, err := g.NodeCopy(n, func(x *fxgraph.Node) (ops.Value, error) { return x, nil })
			restore()
			if err != nil {
				return res, fmt.Errorf("duplicate dq: copy node %q for user %q: %w", n.Name(), u.Name(), err)
			}
			g.ReplaceInputWith(u, n, c)
			res.Stats["duplicated"]++
			res.Changed = true
		}
		if n.NumUsers() == 0 {
			if err := g.Erase(n); err != nil {
				return res, fmt.Errorf("duplicate dq: erase node %q: %w", n.Name(), err)
			}
			res.Stats["erased"]++
		}
	}
	return res, nil
}

// DuplicateDQPass returns [DuplicateDQ] as a pipeline pass.
func DuplicateDQPass() fxgraph.Pass {
	return fxgraph.Pass{Name: DuplicateDQPassName, Run: func(ctx context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		if err := ctx.Err(); err != nil {
			return fxgraph.Result{}, err
		}
		return DuplicateDQ(g)
	}}
}

// PortMetadataAnnotation adapts a node's *QuantizationAnnotation for
// metadata.PortNodeMetaForQDQ (use it as metadata.Options.Annotation):
// the inputs whose spec is not nil, in InputQSpecMap order, each dynamic
// when its spec has IsDynamic set (a SharedQuantizationSpec never is), and
// whether an output spec is set. It returns false for a node without a valid
// annotation.
func PortMetadataAnnotation(n *fxgraph.Node) (metadata.AnnotationInfo, bool) {
	a := Annotation(n)
	if !a.Valid() {
		return metadata.AnnotationInfo{}, false
	}
	var info metadata.AnnotationInfo
	for _, e := range a.InputQSpecMap {
		if e.Spec == nil || e.Input == nil {
			continue
		}
		dyn := false
		switch s := e.Spec.(type) {
		case *QuantizationSpec:
			dyn = s != nil && s.IsDynamic
		case *FixedQParamsQuantizationSpec:
			dyn = s != nil && s.IsDynamic
		case *DerivedQuantizationSpec:
			dyn = s != nil && s.IsDynamic
		}
		info.Inputs = append(info.Inputs, metadata.AnnotatedInput{Node: e.Input, Dynamic: dyn})
	}
	info.Output = a.OutputQSpec != nil
	return info, true
}
