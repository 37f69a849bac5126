package interp

import (
	"errors"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// Deferred constants. A call_function node whose inputs are all get_attr
// nodes (or such deferred nodes) computes the same value wherever it runs:
// a converted graph's dequantize of each folded weight, which convert
// places near the top of the graph. Run in program order, every one of
// them would be live at once (a float copy of all the weights); with
// Options.Release they are computed when their first user needs them and
// dropped after their last, so one layer's dequantized weight is live at a
// time. They are deferred only when nothing can tell: no Hook (which sees
// values in program order) unless Options.HookAnyOrder allows it, and no
// op of the graph writes its arguments (a later in-place op could change
// an attribute they read).

// deferrable returns the nodes of g to defer, by node ID (r.env's
// slots), or nil.
func (r *runner) deferrable(nodes []*fxgraph.Node) []bool {
	if !r.opts.Release || (r.opts.Hook != nil && !r.opts.HookAnyOrder) {
		return nil
	}
	var out []bool
	deferred := func(n *fxgraph.Node) bool {
		i, ok := r.env.slot(n)
		return ok && i < len(out) && out[i]
	}
	for _, n := range nodes {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		o, ok := n.Target().(ops.Overload)
		if !ok {
			if _, isPacket := n.Target().(ops.Packet); isPacket {
				return nil // its overload, and so its mutability, is known only at run time
			}
			continue
		}
		def, ok := r.reg.Op(o)
		if !ok {
			continue // the run reports it, in order
		}
		if def.Schema.IsMutable() {
			return nil
		}
		inputs, constant := 0, true
		n.VisitInputs(func(in *fxgraph.Node) {
			inputs++
			if in.Op() != fxgraph.GetAttr && !deferred(in) {
				constant = false
			}
		})
		if inputs == 0 {
			continue
		}
		if constant {
			if out == nil {
				out = make([]bool, len(r.env.vals))
			}
			out[n.ID()] = true // a node of the run: it has its slot
		}
	}
	return out
}

// evalDeferred computes the deferred node n (r.isDeferred(n)) for its
// first user and records its value.
func (r *runner) evalDeferred(n *fxgraph.Node) (ops.Value, error) {
	cur := r.cur
	r.cur = n
	defer func() { r.cur = cur }()
	r.deferred[n.ID()] = false
	v, err := r.compute(n)
	if err != nil {
		return nil, &deferredError{err}
	}
	// The run's loop skips n, so it releases here what n used last: a
	// deferred constant that only n reads (a chain of them) would
	// otherwise stay until the run ends.
	r.releaseInputs(n, r.position[n.ID()])
	return v, nil
}

// isDeferred reports whether n is a deferred node not computed yet.
func (r *runner) isDeferred(n *fxgraph.Node) bool {
	i, ok := r.env.slot(n)
	return ok && i < len(r.deferred) && r.deferred[i]
}

// deferredError carries a deferred node's failure through its user's
// evaluation, so that the run reports it as the node's own, as a run in
// program order does.
type deferredError struct{ err error }

func (e *deferredError) Error() string { return e.err.Error() }
func (e *deferredError) Unwrap() error { return e.err }

// ownError returns a deferred node's failure found in err, or err as the
// failure of node n.
func (r *runner) ownError(n *fxgraph.Node, err error) error {
	var de *deferredError
	if errors.As(err, &de) {
		return de.err
	}
	return r.nodeErr(n, err)
}
