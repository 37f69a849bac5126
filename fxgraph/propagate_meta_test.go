package fxgraph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
)

// 1.4 and 9.1.11: replace_all_uses_with(q, propagate_meta=True) copies n's
// meta onto q, key by key, and rewrites the uses; onto a q that already
// has meta it fails (FX's AssertionError) and changes nothing.
func TestReplaceAllUsesWithMeta(t *testing.T) {
	// build: x -> relu -> add(relu, relu) -> output, plus q = sum(x) that
	// takes relu's place.
	build := func() (*Graph, map[string]*Node) {
		g, n := irChain()
		*n["relu"].Meta = Meta{
			StackTrace:         "File model.py, line 3",
			NNModuleStack:      []ModuleStackEntry{{Key: "L__self___act", Path: "act", Type: "torch.nn.modules.activation.ReLU"}},
			SourceFnStack:      []SourceFn{{Name: "act", Target: "torch.nn.modules.activation.ReLU"}},
			TorchFn:            []string{"relu_1", "function.relu"},
			Custom:             `{"k": 1}`,
			NumericDebugHandle: 7,
		}
		n["relu"].Meta.Set("val", "fake tensor")
		restore := g.InsertingAfter(n["relu"])
		q := g.Call(irSum, n["x"])
		restore()
		q.SetType(irF32)
		n["q"] = q
		return g, n
	}

	t.Run("copies meta and rewrites uses", func(t *testing.T) {
		g, n := build()
		changed, err := g.ReplaceAllUsesWithMeta(n["relu"], n["q"], nil)
		require.NoError(t, err)
		assert.Equal(t, []*Node{n["add"]}, changed)
		assert.Equal(t, []ops.Value{n["q"], n["q"]}, n["add"].Args())
		assert.Equal(t, 0, n["relu"].NumUses())
		assert.Equal(t, "File model.py, line 3", n["q"].Meta.StackTrace)
		assert.Equal(t, []ModuleStackEntry{{Key: "L__self___act", Path: "act", Type: "torch.nn.modules.activation.ReLU"}}, n["q"].Meta.NNModuleStack)
		assert.Equal(t, []SourceFn{{Name: "act", Target: "torch.nn.modules.activation.ReLU"}}, n["q"].Meta.SourceFnStack)
		assert.Equal(t, []string{"relu_1", "function.relu"}, n["q"].Meta.TorchFn)
		assert.Equal(t, `{"k": 1}`, n["q"].Meta.Custom)
		assert.Equal(t, 7, n["q"].Meta.NumericDebugHandle)
		v, ok := n["q"].Meta.Get("val")
		assert.True(t, ok)
		assert.Equal(t, "fake tensor", v)
		// The source keeps its meta (FX copies, it does not move).
		assert.Equal(t, 7, n["relu"].Meta.NumericDebugHandle)
		// The copy shares no map or slice with the source.
		n["q"].Meta.Set("extra", 1)
		n["q"].Meta.NNModuleStack[0].Path = "changed"
		_, ok = n["relu"].Meta.Get("extra")
		assert.False(t, ok, "Extra map is a copy")
		assert.Equal(t, "act", n["relu"].Meta.NNModuleStack[0].Path, "module stack is a copy")
		require.NoError(t, Verify(g, irOpts(t)))
	})

	t.Run("keep skips users", func(t *testing.T) {
		g, n := build()
		changed, err := g.ReplaceAllUsesWithMeta(n["relu"], n["q"], func(u *Node) bool { return u == n["add"] })
		require.NoError(t, err)
		assert.Empty(t, changed)
		assert.Equal(t, []ops.Value{n["relu"], n["relu"]}, n["add"].Args())
		assert.Equal(t, 7, n["q"].Meta.NumericDebugHandle, "meta is copied even when no use changes, as in FX")
		require.NoError(t, Verify(g, irOpts(t)))
	})

	t.Run("empty source meta", func(t *testing.T) {
		g, n := build()
		*n["relu"].Meta = Meta{}
		changed, err := g.ReplaceAllUsesWithMeta(n["relu"], n["q"], nil)
		require.NoError(t, err)
		assert.Equal(t, []*Node{n["add"]}, changed)
		assert.True(t, n["q"].Meta.IsZero())
	})

	fails := []struct {
		name string
		prep func(g *Graph, n map[string]*Node) (node, with *Node)
		want string
		meta bool // wraps ErrHasMeta
	}{
		{"replacement has extra meta", func(g *Graph, n map[string]*Node) (*Node, *Node) {
			n["q"].Meta.Set("val", 1)
			return n["relu"], n["q"]
		}, `replace all uses of %relu_default with %sum_default: want a replacement without metadata, got %sum_default with meta keys [val]`, true},
		{"replacement has typed meta", func(g *Graph, n map[string]*Node) (*Node, *Node) {
			n["q"].Meta.StackTrace = "here"
			n["q"].Meta.NumericDebugHandle = 3
			return n["relu"], n["q"]
		}, `with meta keys [stack_trace numeric_debug_handle]`, true},
		{"nil replacement", func(g *Graph, n map[string]*Node) (*Node, *Node) {
			return n["relu"], nil
		}, "replacement is nil", false},
		{"erased replacement", func(g *Graph, n map[string]*Node) (*Node, *Node) {
			require.NoError(t, g.Erase(n["q"]))
			return n["relu"], n["q"]
		}, "replacement %sum_default is erased", false},
		{"node of another graph", func(g *Graph, n map[string]*Node) (*Node, *Node) {
			_, m := irChain()
			return m["relu"], n["q"]
		}, "node %relu_default belongs to another graph", false},
	}
	for _, tt := range fails {
		t.Run(tt.name, func(t *testing.T) {
			g, n := build()
			node, with := tt.prep(g, n)
			before := Format(g)
			changed, err := g.ReplaceAllUsesWithMeta(node, with, nil)
			require.Error(t, err)
			assert.Nil(t, changed)
			assert.Contains(t, err.Error(), tt.want)
			if tt.meta {
				assert.ErrorIs(t, err, ErrHasMeta)
			}
			assert.Equal(t, before, Format(g), "nothing changed")
			assert.Equal(t, []ops.Value{n["relu"], n["relu"]}, n["add"].Args())
		})
	}
}

// impureModule is a call_module attribute whose IsImpure answer is fixed
// (torch.fx's _is_impure module attribute).
type impureModule struct{ impure bool }

func (m impureModule) Forward(args []ops.Value) (ops.Value, error) { return args[0], nil }
func (m impureModule) IsImpure() bool                              { return m.impure }

// pureModule is a call_module attribute without an IsImpure method.
type pureModule struct{}

func (pureModule) Forward(args []ops.Value) (ops.Value, error) { return args[0], nil }

// 9.1.12: DCE keeps an unused random op (impure_random: FX lists
// torch.rand, bernoulli, ... as impure whatever the flag says; here the
// registry row is marked impure) and an unused call_module whose module
// reports IsImpure() true; it removes an unused call_module whose module
// says false or has no IsImpure method.
func TestEliminateDeadCodeRandomAndModules(t *testing.T) {
	reg := irRegistry(t)
	bern, err := reg.RegisterSchema("aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", nil, nil)
	require.NoError(t, err)
	bern.Impure = true
	rand, err := reg.RegisterSchema("aten::rand_like(Tensor self, *, ScalarType? dtype=None) -> Tensor", nil, nil)
	require.NoError(t, err)
	rand.Impure = true

	tests := []struct {
		name   string
		build  func(g *Graph, x *Node) *Node // returns the unused node under test
		erased bool
	}{
		{"random op bernoulli", func(g *Graph, x *Node) *Node { return g.Call(bern.Target, x) }, false},
		{"random op rand_like", func(g *Graph, x *Node) *Node { return g.Call(rand.Target, x) }, false},
		{"module IsImpure true", func(g *Graph, x *Node) *Node {
			g.SetAttr("obs", impureModule{impure: true})
			return g.CallModule("obs", x)
		}, false},
		{"module IsImpure false", func(g *Graph, x *Node) *Node {
			g.SetAttr("obs", impureModule{impure: false})
			return g.CallModule("obs", x)
		}, true},
		{"module without IsImpure", func(g *Graph, x *Node) *Node {
			g.SetAttr("obs", pureModule{})
			return g.CallModule("obs", x)
		}, true},
		{"pure op", func(g *Graph, x *Node) *Node { return g.Call(irRelu, x) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			x := g.Placeholder("x", irF32)
			n := tt.build(g, x)
			// A dead pure chain on top of n: relu(n) is removed either way.
			r := g.Call(irRelu, n)
			g.SetOutput(ops.Tuple{x})
			require.NoError(t, Verify(g, VerifyOptions{Registry: reg}))

			assert.Equal(t, !tt.erased, n.IsImpure(reg))
			assert.True(t, g.EliminateDeadCode(reg, nil), "the dead relu goes")
			assert.True(t, r.Erased())
			assert.Equal(t, tt.erased, n.Erased())
			require.NoError(t, Verify(g, VerifyOptions{Registry: reg}))
			assert.False(t, g.EliminateDeadCode(reg, nil), "second run changes nothing")
		})
	}
}
