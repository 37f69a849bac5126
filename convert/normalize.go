package convert

import (
	"context"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/reftransform"
)

// Names of the normalisation passes, as reported in fxgraph.PassRun.
const (
	NormalizeOverloadsPassName         = "normalize_overloads"
	RemoveTensorOverloadForQDQPassName = reftransform.RemoveTensorOverloadPassName
)

// NormalizeOverloads turns every call_function node whose target is a packet
// with exactly one registered overload besides its out= forms into a call
// of that overload (for example torchao.quantize_affine into
// torchao.quantize_affine.default), so that graphs written by older tools,
// which hold packets, match the exact targets of the rewrite patterns. The
// node keeps its name, arguments, type and metadata.
//
// A packet with several overloads (quantized_decomposed.quantize_per_tensor,
// aten.clamp) is left alone, as is a packet the registry does not know or
// whose only overload does not accept the node's arguments; each such node
// is reported in Result.Notes, in program order. Result.Stats["normalized"]
// counts the rewritten nodes. reg nil means ops.Default(). The graph is
// unchanged when Result.Changed is false. It never fails; the error is
// for the pass signature.
func NormalizeOverloads(g *fxgraph.Graph, reg *ops.Registry) (fxgraph.Result, error) {
	if reg == nil {
		reg = ops.Default()
	}
	res := fxgraph.Result{Stats: map[string]int{"normalized": 0, "left_as_packet": 0}}
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		p, ok := n.Target().(ops.Packet)
		if !ok {
			continue
		}
		ovs := callableOverloads(reg, p)
		switch {
		case len(ovs) == 0:
			res.Notes = append(res.Notes, fmt.Sprintf("node %q: packet %s has no registered overload; left as a packet", n.Name(), p))
			res.Stats["left_as_packet"]++
			continue
		case len(ovs) > 1:
			res.Notes = append(res.Notes, fmt.Sprintf("node %q: packet %s has %d overloads; left as a packet", n.Name(), p, len(ovs)))
			res.Stats["left_as_packet"]++
			continue
		}
		if s, ok := reg.Schema(ovs[0]); ok {
			if err := s.Accepts(n.Args(), n.Kwargs()); err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("node %q: %s does not accept the arguments (%v); left as a packet", n.Name(), ovs[0], err))
				res.Stats["left_as_packet"]++
				continue
			}
		}
		g.SetTarget(n, ovs[0])
		res.Stats["normalized"]++
		res.Changed = true
	}
	return res, nil
}

// NormalizeOverloadsPass returns NormalizeOverloads as a pipeline pass
// using reg (nil means ops.Default()).
func NormalizeOverloadsPass(reg *ops.Registry) fxgraph.Pass {
	return fxgraph.Pass{Name: NormalizeOverloadsPassName, Run: func(ctx context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		if err := ctx.Err(); err != nil {
			return fxgraph.Result{}, err
		}
		return NormalizeOverloads(g, reg)
	}}
}

// RemoveTensorOverloadForQDQOps is torchao's
// remove_tensor_overload_for_qdq_ops (torchao-pt2e.md 6.1): it rewrites
// the quantized_decomposed per-tensor and per-channel quantize/dequantize
// overloads and aten.clamp.Tensor to their packets. It is
// reftransform.RemoveTensorOverloadForQDQOps, which the reference rewrite
// runs first; it is exported here so that convert's callers can run it
// alone.
func RemoveTensorOverloadForQDQOps(g *fxgraph.Graph) (fxgraph.Result, error) {
	return reftransform.RemoveTensorOverloadForQDQOps(g)
}

// RemoveTensorOverloadForQDQPass returns RemoveTensorOverloadForQDQOps as a
// pipeline pass.
func RemoveTensorOverloadForQDQPass() fxgraph.Pass {
	return reftransform.RemoveTensorOverloadPass()
}

// callableOverloads returns the overloads of p that a call without out=
// can name: all but the out= forms (tag "out", such as aten.relu.out),
// which PyTorch's table lists beside nearly every aten op.
func callableOverloads(reg *ops.Registry, p ops.Packet) []ops.Overload {
	var out []ops.Overload
	for _, o := range reg.Overloads(p) {
		if def, ok := reg.Op(o); ok && def.HasTag("out") {
			continue
		}
		out = append(out, o)
	}
	return out
}
