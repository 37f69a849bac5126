package fxgraph

import (
	"errors"
	"fmt"
)

// ErrHasMeta is returned by [Graph.ReplaceAllUsesWithMeta] when the
// replacement node already carries metadata (FX's AssertionError for
// replace_all_uses_with(..., propagate_meta=True)).
var ErrHasMeta = errors.New("replacement node already has metadata")

// ReplaceAllUsesWithMeta is torch.fx's
// n.replace_all_uses_with(with, delete_user_cb, propagate_meta=True): it
// copies n's metadata onto with (a copy sharing no slices or maps with
// n's, values inside Extra shared, as FX copies meta key by key), then
// rewrites every use of n to with as [Graph.ReplaceAllUsesWith] does,
// skipping users for which keep returns true, and returns the changed
// users in first-use order.
//
// It fails, changing nothing, when with already has metadata (wrapping
// [ErrHasMeta]), when either node is nil, erased or belongs to another
// graph.
func (g *Graph) ReplaceAllUsesWithMeta(n, with *Node, keep func(user *Node) bool) ([]*Node, error) {
	for _, x := range []struct {
		role string
		n    *Node
	}{{"node", n}, {"replacement", with}} {
		switch {
		case x.n == nil:
			return nil, fmt.Errorf("fxgraph: replace all uses with meta: %s is nil", x.role)
		case x.n.graph != g:
			return nil, fmt.Errorf("fxgraph: replace all uses of %s with %s: %s %s belongs to another graph", n, with, x.role, x.n)
		case x.n.erased:
			return nil, fmt.Errorf("fxgraph: replace all uses of %s with %s: %s %s is erased", n, with, x.role, x.n)
		}
	}
	if !with.Meta.IsZero() {
		return nil, fmt.Errorf("fxgraph: replace all uses of %s with %s: want a replacement without metadata, got %s with meta keys %v: %w",
			n, with, with, metaKeys(*with.Meta), ErrHasMeta)
	}
	g.SaveMeta(with)
	*with.Meta = n.Meta.Clone()
	return g.ReplaceAllUsesWith(n, with, keep), nil
}

// metaKeys names the non-empty entries of m, typed fields first (by FX's
// key names) then Extra keys in sorted order, for error messages.
func metaKeys(m Meta) []string {
	var keys []string
	for _, f := range []struct {
		key string
		set bool
	}{
		{"stack_trace", m.StackTrace != ""},
		{"nn_module_stack", len(m.NNModuleStack) > 0},
		{"source_fn_stack", len(m.SourceFnStack) > 0},
		{"torch_fn", len(m.TorchFn) > 0},
		{"custom", m.Custom != ""},
		{"from_node", m.FromNode != ""},
		{"numeric_debug_handle", m.NumericDebugHandle != 0},
	} {
		if f.set {
			keys = append(keys, f.key)
		}
	}
	return append(keys, m.ExtraKeys()...)
}
