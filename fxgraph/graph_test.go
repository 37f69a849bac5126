package fxgraph

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// fx-graph.md 9.1.1: nested args find every input node, in depth-first
// order of first appearance, and each input lists the user.
func TestInputNodesNested(t *testing.T) {
	g := New()
	a, b, c, d := g.Placeholder("a", nil), g.Placeholder("b", nil), g.Placeholder("c", nil), g.Placeholder("d", nil)
	n := g.Call(ops.MustPacket("aten.foo"), a, ops.List{b, ops.Dict{Keys: []string{"k"}, Values: []ops.Value{c}}}, ops.Slice{Start: d})
	assert.Equal(t, []string{"a", "b", "c", "d"}, irNames(n.InputNodes()))
	for _, in := range []*Node{a, b, c, d} {
		assert.Equal(t, []string{n.Name()}, irNames(in.Users()), "users of %s", in)
	}
	// Slots number the references depth first: a=0, b=1, c=2, d=3.
	assert.Equal(t, 3, d.Uses()[0].Slot)
}

// 9.1.2: x + x gives x one user and two uses; all_input_nodes == [x].
func TestSelfAddOneUserTwoUses(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	add := g.Call(irAdd, x, x)
	assert.Equal(t, 1, x.NumUsers())
	assert.Equal(t, 2, x.NumUses())
	assert.Equal(t, []*Node{add}, x.Users())
	assert.Equal(t, []*Node{x}, add.InputNodes())
}

// 9.1.3: reassigning args moves the node to the end of each input's users.
func TestReassignMovesUserToEnd(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	u1 := g.Call(irRelu, x)
	u2 := g.Call(irRelu, x)
	require.Equal(t, []*Node{u1, u2}, x.Users())
	g.SetArgs(u1, x)
	assert.Equal(t, []*Node{u2, u1}, x.Users())
	require.NoError(t, g.SetArg(u2, 0, x))
	assert.Equal(t, []*Node{u1, u2}, x.Users())
}

// 9.1.4 and 2.4: erasing a node with users fails and names the users;
// erasing twice is harmless; erasing a node of another graph fails.
func TestEraseWithUsers(t *testing.T) {
	g, n := irChain()
	err := g.Erase(n["relu"])
	require.ErrorIs(t, err, ErrHasUsers)
	assert.Contains(t, err.Error(), "%relu")
	assert.Contains(t, err.Error(), "%add")
	assert.Equal(t, 4, g.Len())

	require.NoError(t, g.Erase(n["output"]))
	require.NoError(t, g.Erase(n["add"]))
	require.NoError(t, g.Erase(n["add"]), "erasing twice")
	assert.True(t, n["add"].Erased())
	assert.Equal(t, 0, n["relu"].NumUses())

	other := New()
	assert.Error(t, other.Erase(n["x"]))
}

// The error for many users caps the list it prints.
func TestEraseWithManyUsersCapsList(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	for range 10 {
		g.Call(irRelu, x)
	}
	err := g.Erase(x)
	require.ErrorIs(t, err, ErrHasUsers)
	assert.Contains(t, err.Error(), "10 users")
	assert.Contains(t, err.Error(), "...")
	assert.NotContains(t, err.Error(), "relu_default_9")
}

// 9.1.5: erasing the current node during iteration, forward or backward,
// is safe and skips it.
func TestEraseDuringIteration(t *testing.T) {
	for _, backward := range []bool{false, true} {
		t.Run(map[bool]string{false: "forward", true: "backward"}[backward], func(t *testing.T) {
			g := New()
			x := g.Placeholder("x", nil)
			var dead []*Node
			for range 3 {
				dead = append(dead, g.Call(irRelu, x))
			}
			g.SetOutput(x)
			it := g.All()
			if backward {
				it = g.Backward()
			}
			var seen []string
			for n := range it {
				seen = append(seen, n.Name())
				if n.Op() == CallFunction {
					require.NoError(t, g.Erase(n))
				}
			}
			want := []string{"x", "relu_default", "relu_default_1", "relu_default_2", "output"}
			if backward {
				slices.Reverse(want)
			}
			assert.Equal(t, want, seen)
			assert.Equal(t, []string{"x", "output"}, irNames(g.Nodes()))
			require.NoError(t, Verify(g, VerifyOptions{SkipSchema: true}))
		})
	}
}

// 9.1.6 and 2.2: three nodes created inside InsertingAfter(n) come out in
// reverse order; InsertingBefore keeps creation order; restore works.
func TestInsertionPoints(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	out := g.SetOutput(x)

	restore := g.InsertingAfter(x)
	a := g.Call(irRelu, x)
	b := g.Call(irRelu, x)
	c := g.Call(irRelu, x)
	restore()
	assert.Equal(t, []*Node{x, c, b, a, out}, g.Nodes())

	restore = g.InsertingBefore(out)
	d := g.Call(irSum, x)
	e := g.Call(irSum, x)
	restore()
	assert.Equal(t, []*Node{x, c, b, a, d, e, out}, g.Nodes())

	// 9.1.7: with no insertion point, new nodes go after the output.
	f := g.Call(irSum, x)
	assert.Equal(t, f, g.Last())

	restore = g.InsertingBefore(nil)
	h := g.Placeholder("y", nil)
	restore()
	assert.Equal(t, h, g.First())
}

// 1.6 and 9.1.10: the naming table.
func TestNames(t *testing.T) {
	add := ops.MustPacket("aten.add")
	sum := ops.MustPacket("aten.sum")
	tests := []struct {
		name  string
		build func(g *Graph) []*Node
		want  []string
	}{
		{"packet add", func(g *Graph) []*Node {
			return []*Node{g.Call(add), g.Call(add), g.Call(add)}
		}, []string{"add", "add_1", "add_2"}},
		{"builtin sum", func(g *Graph) []*Node {
			return []*Node{g.Call(sum), g.Call(sum), g.Call(sum)}
		}, []string{"sum_1", "sum_2", "sum_3"}},
		{"builtins and keywords", func(g *Graph) []*Node {
			var out []*Node
			for _, s := range []string{"slice", "max", "min", "abs", "pow", "round", "all", "any", "for", "torch", "inf", "device"} {
				out = append(out, g.Call(ops.Packet{NS: "aten", Name: s}))
			}
			return out
		}, []string{"slice_1", "max_1", "min_1", "abs_1", "pow_1", "round_1", "all_1", "any_1", "for_1", "torch_1", "inf_1", "device_1"}},
		{"overload default", func(g *Graph) []*Node {
			return []*Node{g.Call(irQuant), g.Call(irQuant)}
		}, []string{"quantize_per_tensor_default", "quantize_per_tensor_default_1"}},
		{"overload Tensor", func(g *Graph) []*Node {
			return []*Node{g.Call(irAdd), g.Call(irAdd)}
		}, []string{"add_tensor", "add_tensor_1"}},
		{"overload dim_IntList", func(g *Graph) []*Node {
			return []*Node{g.Call(ops.MustOverload("aten.sum.dim_IntList"))}
		}, []string{"sum_dim_int_list"}},
		{"call_module path", func(g *Graph) []*Node {
			return []*Node{g.CallModule("layer1.0.conv")}
		}, []string{"layer1_0_conv"}},
		{"snake-cased placeholder", func(g *Graph) []*Node {
			return []*Node{g.Placeholder("inputTensor", nil)}
		}, []string{"input_tensor"}},
		{"explicit add_5 then add", func(g *Graph) []*Node {
			a5 := g.CreateNode(CallFunction, add, "", nil, nil, "add_5", nil)
			return []*Node{a5, g.Call(add), g.Call(add)}
		}, []string{"add_5", "add", "add_6"}},
		{"no reuse after erase", func(g *Graph) []*Node {
			a := g.Call(add)
			if err := g.Erase(a); err != nil {
				panic(err)
			}
			return []*Node{g.Call(add), g.Call(add)}
		}, []string{"add_1", "add_2"}},
		{"illegal characters", func(g *Graph) []*Node {
			return []*Node{
				g.CreateNode(CallFunction, add, "", nil, nil, "a-b.c", nil),
				g.CreateNode(CallFunction, add, "", nil, nil, "1abc", nil),
				g.CreateNode(CallFunction, add, "", nil, nil, "", nil),
				g.CreateNode(GetAttr, nil, "", nil, nil, "", nil),
				g.CreateNode(CallFunction, add, "", nil, nil, "_3", nil),
				g.CreateNode(CallFunction, add, "", nil, nil, "_3", nil),
			}
		}, []string{"a_b_c", "_1abc", "add", "_unnamed", "_3", "_3_1"}},
		{"dunder target", func(g *Graph) []*Node {
			return []*Node{g.CreateNode(CallMethod, nil, "__getitem__", nil, nil, "", nil)}
		}, []string{"getitem"}},
		// node_copy uses the source's name: copying add_1 when add and
		// add_1 exist probes from base_count["add_1"] = 0, giving add_2.
		{"copy of a suffixed name", func(g *Graph) []*Node {
			a, a1 := g.Call(add), g.Call(add)
			c, err := g.NodeCopy(a1, func(m *Node) (ops.Value, error) { return m, nil })
			if err != nil {
				panic(err)
			}
			return []*Node{a, a1, c}
		}, []string{"add", "add_1", "add_2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			assert.Equal(t, tt.want, irNames(tt.build(g)))
		})
	}
}

// Rename goes through the namespace.
func TestRename(t *testing.T) {
	g := New()
	a := g.Call(ops.MustPacket("aten.add"))
	b := g.Call(ops.MustPacket("aten.mul"))
	assert.Equal(t, "add_1", g.Rename(b, "add"))
	assert.Equal(t, "add", a.Name())
}

// 1.4 and 9.1.11: ReplaceAllUsesWith with a keep filter, and the self-loop
// it avoids.
func TestReplaceAllUsesWith(t *testing.T) {
	build := func() (*Graph, *Node, *Node, *Node, *Node) {
		g := New()
		x := g.Placeholder("x", nil)
		n := g.Call(irRelu, x)
		u1 := g.Call(irAdd, n, n)
		u2 := g.Call(irSum, n)
		q := g.Call(irRelu, n) // q consumes n
		g.SetOutput(ops.Tuple{u1, u2, q})
		return g, n, u1, u2, q
	}
	t.Run("keep filter", func(t *testing.T) {
		g, n, u1, u2, q := build()
		changed := g.ReplaceAllUsesWith(n, q, func(u *Node) bool { return u == q })
		assert.Equal(t, []*Node{u1, u2}, changed)
		assert.Equal(t, []*Node{q}, n.Users())
		assert.Equal(t, []ops.Value{q, q}, u1.Args())
		// q moved before its new users, so the graph is valid again.
		require.NoError(t, g.MoveBefore(q, u1))
		require.NoError(t, Verify(g, VerifyOptions{Registry: irRegistry(t)}))
	})
	t.Run("no filter makes a self loop", func(t *testing.T) {
		g, n, _, _, q := build()
		g.ReplaceAllUsesWith(n, q, nil)
		assert.Equal(t, []ops.Value{q}, q.Args())
		err := Verify(g, VerifyOptions{SkipSchema: true})
		irFind(t, err, ErrCycle, q.Name())
	})
}

// ReplaceInputWith rewrites every occurrence, nested ones included.
func TestReplaceInputWith(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	y := g.Placeholder("y", nil)
	n := g.CallKw(ops.MustPacket("aten.foo"), []ops.Value{x, ops.List{x, y}}, []Kwarg{{Name: "k", Value: ops.Tuple{x}}})
	g.ReplaceInputWith(n, x, y)
	assert.Equal(t, "%y, [%y, %y]", irValues(n.Args()))
	assert.Equal(t, "k=(%y)", irKwargs(n.Kwargs()))
	assert.Equal(t, 0, x.NumUses())
	assert.Equal(t, 4, y.NumUses())
	assert.Equal(t, []*Node{n}, y.Users())
}

// 2.5: NodeCopy maps arguments; GraphCopy binds nodes in valMap and
// returns the mapped output; Clone is an independent equal copy.
func TestCopies(t *testing.T) {
	t.Run("node copy", func(t *testing.T) {
		g, n := irChain()
		h := New()
		y := h.Placeholder("y", irF32)
		c, err := h.NodeCopy(n["add"], func(m *Node) (ops.Value, error) { return y, nil })
		require.NoError(t, err)
		assert.Equal(t, "add_tensor", c.Name())
		assert.Equal(t, []ops.Value{y, y}, c.Args())
		assert.True(t, ops.TypesEqual(irF32, c.Type()))
		assert.Equal(t, 2, y.NumUses())
		_, err = h.NodeCopy(n["add"], func(m *Node) (ops.Value, error) { return nil, errors.New("unmapped") })
		assert.Error(t, err)
		_ = g
	})
	t.Run("graph copy", func(t *testing.T) {
		g, n := irChain()
		h := New()
		y := h.Placeholder("y", irF32)
		valMap := map[*Node]*Node{n["x"]: y}
		out, err := h.GraphCopy(g, valMap)
		require.NoError(t, err)
		h.SetOutput(out)
		assert.Equal(t, []string{"y", "relu_default", "add_tensor", "output"}, irNames(h.Nodes()))
		assert.Equal(t, ops.Tuple{valMap[n["add"]]}, out)
		require.NoError(t, Verify(h, irOpts(t)))
		// An unmapped placeholder would be copied; a reference to a node
		// that was never mapped is an error.
		_, err = New().GraphCopy(g, map[*Node]*Node{n["relu"]: y})
		require.NoError(t, err)
	})
	t.Run("clone", func(t *testing.T) {
		g, n := irChain()
		g.SetAttr("w", 1)
		c, m := g.Clone()
		assert.Equal(t, irDump(g), irDump(c))
		require.NoError(t, Verify(c, irOpts(t)))
		// Independent: edits to the clone do not touch the original.
		cr := m[n["relu"]]
		g2 := c.Call(irRelu, cr)
		assert.Equal(t, 1, n["relu"].NumUsers())
		assert.Equal(t, 2, cr.NumUsers())
		// The clone's namespace is its own copy.
		assert.Equal(t, "relu_default_1", g2.Name())
		assert.Equal(t, "relu_default_1", g.Call(irRelu, n["x"]).Name())
	})
	t.Run("clone keeps references it did not copy", func(t *testing.T) {
		g := New()
		x := g.Placeholder("x", nil)
		h := New()
		foreign := h.Placeholder("f", nil) // the same id as x
		require.Equal(t, x.ID(), foreign.ID())
		gone := g.Call(irRelu, x)
		require.NoError(t, g.Erase(gone))
		a := g.Call(irAdd, foreign, ops.List{x, gone})
		c, m := g.Clone()
		ca := m[a]
		assert.Same(t, foreign, ca.Arg(0), "a node of another graph stays")
		assert.Equal(t, ops.List{m[x], gone}, ca.Arg(1), "an erased node stays; x becomes its copy")
		assert.Equal(t, []*Node{ca}, m[x].Users())
		assert.Zero(t, foreign.NumUses())
		assert.Len(t, c.Nodes(), 2)
	})
	t.Run("clone keeps use order", func(t *testing.T) {
		g := New()
		x := g.Placeholder("x", nil)
		u1 := g.Call(irRelu, x)
		u2 := g.Call(irRelu, x)
		g.SetArgs(u1, x) // users of x: u2, u1
		g.SetOutput(ops.Tuple{u1, u2})
		c, m := g.Clone()
		assert.Equal(t, []*Node{m[u2], m[u1]}, m[x].Users())
		require.NoError(t, Verify(c, VerifyOptions{SkipSchema: true}))
	})
}

// 1.7, 2.7 and 9.1.12: DCE keeps impure nodes and removes a dead pure
// chain in one backward pass; get_attr and call_method are pure.
func TestEliminateDeadCode(t *testing.T) {
	reg := irRegistry(t)
	g := New()
	x := g.Placeholder("x", irF32)
	unused := g.Placeholder("unused", irF32)
	g.SetAttr("w", 1)
	w := g.GetAttr("w", irF32)
	c := g.Call(irCopy, x, x)
	as := g.Call(irAssert, int64(1), "msg")
	si := g.Call(irSetItem, x, int64(0), int64(1))
	m := g.CreateNode(CallMethod, nil, "mul_", []ops.Value{x, x}, nil, "", nil)
	r1 := g.Call(irRelu, x)
	r2 := g.Call(irRelu, r1)
	r3 := g.Call(irRelu, r2)
	live := g.Call(irSum, x)
	g.SetOutput(live)

	assert.True(t, g.EliminateDeadCode(reg, nil))
	for _, n := range []*Node{w, m, r1, r2, r3} {
		assert.True(t, n.Erased(), "%s erased", n)
	}
	for _, n := range []*Node{x, unused, c, as, si, live} {
		assert.False(t, n.Erased(), "%s kept", n)
	}
	assert.Equal(t, []string{"x", "unused", "copy__default", "_assert_scalar_default", "setitem", "sum_default", "output"}, irNames(g.Nodes()))
	assert.False(t, g.EliminateDeadCode(reg, nil), "second run changes nothing")

	// A purity override keeps what it says.
	r := g.Call(irRelu, x)
	require.NoError(t, g.MoveBefore(r, live))
	assert.False(t, g.EliminateDeadCode(reg, func(n *Node) bool { return n == r || n.IsImpure(reg) }))
	assert.False(t, r.Erased())
}

// 1.3: SetArg and InsertArg bounds; SetKwarg/DeleteKwarg keep uses right.
func TestArgEdits(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	y := g.Placeholder("y", nil)
	n := g.Call(irAdd, x, x)
	tests := []struct {
		name string
		do   func() error
		ok   bool
	}{
		{"set arg -1", func() error { return g.SetArg(n, -1, y) }, false},
		{"set arg 2 of 2", func() error { return g.SetArg(n, 2, y) }, false},
		{"set arg 1", func() error { return g.SetArg(n, 1, y) }, true},
		{"insert at -1", func() error { return g.InsertArg(n, -1, y) }, false},
		{"insert at 3 of 2", func() error { return g.InsertArg(n, 3, y) }, false},
		{"insert at end", func() error { return g.InsertArg(n, 2, int64(1)) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "%add_tensor")
		})
	}
	assert.Equal(t, "%x, %y, int64(1)", irValues(n.Args()))
	assert.Equal(t, 1, x.NumUses())
	g.SetKwarg(n, "alpha", y)
	assert.Equal(t, 2, y.NumUses())
	g.SetKwarg(n, "alpha", int64(2))
	assert.Equal(t, 1, y.NumUses())
	g.DeleteKwarg(n, "alpha")
	assert.Empty(t, n.Kwargs())
	require.NoError(t, Verify(withOutput(g, n), VerifyOptions{SkipSchema: true}))
}

func withOutput(g *Graph, n *Node) *Graph {
	g.SetOutput(n)
	return g
}

// MoveBefore/MoveAfter reorder and reject nodes of other graphs.
func TestMove(t *testing.T) {
	g := New()
	a := g.Placeholder("a", nil)
	b := g.Placeholder("b", nil)
	c := g.Placeholder("c", nil)
	require.NoError(t, g.MoveBefore(c, a))
	assert.Equal(t, []*Node{c, a, b}, g.Nodes())
	require.NoError(t, g.MoveAfter(c, b))
	assert.Equal(t, []*Node{a, b, c}, g.Nodes())
	require.NoError(t, g.MoveAfter(a, b))
	assert.Equal(t, []*Node{b, a, c}, g.Nodes())
	require.NoError(t, g.MoveBefore(a, a))
	assert.Equal(t, 3, g.Len())
	other := New()
	o := other.Placeholder("o", nil)
	assert.Error(t, g.MoveBefore(o, a))
	assert.Error(t, g.MoveAfter(o, c))
}

// ReplaceWith moves another graph's contents in and empties it.
func TestReplaceWith(t *testing.T) {
	g, n := irChain()
	c, _ := g.Clone()
	c.Call(irSum, c.First())
	want := irDump(c)
	g.ReplaceWith(c)
	assert.Equal(t, want, irDump(g))
	assert.Equal(t, 0, c.Len())
	assert.True(t, n["x"].Erased(), "old nodes are marked erased")
	for m := range g.All() {
		assert.Equal(t, g, m.Graph())
	}
	g.Call(irRelu, g.First())
	assert.Equal(t, 6, g.Len())
}

// Use lists stay right when one node has many users and they are
// rewired or erased (the tombstone path).
func TestManyUsersRewire(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	y := g.Placeholder("y", nil)
	var users []*Node
	for range 100 {
		users = append(users, g.Call(irAdd, x, x))
	}
	g.SetOutput(ops.List{users[0]})
	changed := g.ReplaceAllUsesWith(x, y, func(u *Node) bool { return u == users[50] })
	assert.Len(t, changed, 99)
	assert.Equal(t, 2, x.NumUses())
	assert.Equal(t, 198, y.NumUses())
	assert.Equal(t, 99, y.NumUsers())
	require.NoError(t, Verify(g, VerifyOptions{SkipSchema: true}))
	for _, u := range users[1:] {
		require.NoError(t, g.Erase(u))
		if u == users[30] {
			require.NoError(t, Verify(g, VerifyOptions{SkipSchema: true}))
		}
	}
	assert.Equal(t, 2, y.NumUses())
	assert.Equal(t, []*Node{users[0]}, y.Users())
	require.NoError(t, Verify(g, VerifyOptions{SkipSchema: true}))
}

// 9.2.14 as far as the IR is concerned: a packet and its overload are
// different targets, and FindNodes tells them apart.
func TestPacketIsNotOverload(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	p := g.Call(ops.MustPacket("aten.linear"), x)
	o := g.Call(ops.MustOverload("aten.linear.default"), x)
	assert.Equal(t, []*Node{p}, g.FindNodes(CallFunction, ops.MustPacket("aten.linear")))
	assert.Equal(t, []*Node{o}, g.FindNodes(CallFunction, ops.MustOverload("aten.linear.default")))
	assert.Equal(t, "linear", p.Name())
	assert.Equal(t, "linear_default", o.Name())
}

// Types are part of nodes and survive copies.
func TestTypesOnNodes(t *testing.T) {
	g := New()
	q, err := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, 0.5, 3)
	require.NoError(t, err)
	typ := ops.TensorType{Shape: []int64{4}, Elem: q}
	x := g.Placeholder("x", typ)
	c, _ := g.Clone()
	assert.True(t, ops.TypesEqual(typ, c.First().Type()))
	x.SetType(irF32)
	assert.False(t, ops.TypesEqual(x.Type(), c.First().Type()))
}

// The attribute store keeps first-set order across deletions, and
// FreshAttrName gives the smallest free index, also after a deletion.
func TestAttrStore(t *testing.T) {
	g := New()
	for i := range 6 {
		g.SetAttr(g.FreshAttrName("_frozen_param"), i)
	}
	assert.Equal(t, "_frozen_param6", g.FreshAttrName("_frozen_param"))
	g.DeleteAttr("_frozen_param1")
	g.DeleteAttr("_frozen_param3")
	g.DeleteAttr("missing")
	assert.Equal(t, "_frozen_param1", g.FreshAttrName("_frozen_param"))
	g.SetAttr("_frozen_param0", "again") // overwrite keeps the place
	g.DeleteAttr("_frozen_param4")
	g.SetAttr("_frozen_param4", "back") // deleted and set again: new place
	g.DeleteAttr("_frozen_param5")      // compaction happens here
	assert.Equal(t, []string{"_frozen_param0", "_frozen_param2", "_frozen_param4"}, g.AttrNames())
	v, ok := g.Attr("_frozen_param0")
	assert.True(t, ok)
	assert.Equal(t, "again", v)
	c, _ := g.Clone()
	assert.Equal(t, g.AttrNames(), c.AttrNames())
}

// Users stays distinct and in first-use order when users reference a node
// many times (past the short scan) and edits interleave.
func TestUsersManyReferences(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	y := g.Placeholder("y", nil)
	many := make(ops.List, 40)
	for i := range many {
		many[i] = x
	}
	a := g.Call(ops.MustPacket("aten.cat"), ops.List{y, many})
	b := g.Call(irRelu, x)
	c := g.Call(ops.MustPacket("aten.cat"), many, x)
	assert.Equal(t, []*Node{a, b, c}, x.Users())
	assert.Equal(t, 3, x.NumUsers())
	assert.Equal(t, 82, x.NumUses())
	g.SetArgs(a, ops.List{y, many}) // a moves to the end
	assert.Equal(t, []*Node{b, c, a}, x.Users())
	assert.Equal(t, []*Node{x}, c.InputNodes())
	assert.Equal(t, []*Node{y, x}, a.InputNodes())
}

// NumUsers counts each user once on a hub with many uses: users that
// name the hub twice, users erased (tombstoned records) and a user that
// comes to name it twice through ReplaceAllUsesWith.
func TestNumUsersHub(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	y := g.Placeholder("y", nil)
	var users []*Node
	for i := range 60 {
		if i%3 == 0 {
			users = append(users, g.Call(irAdd, x, x)) // two uses, one user
		} else {
			users = append(users, g.Call(irRelu, x))
		}
	}
	assert.Equal(t, 80, x.NumUses())
	assert.Equal(t, 60, x.NumUsers())
	for _, u := range users[:10] { // 4 of them (0, 3, 6, 9) name x twice
		require.NoError(t, g.Erase(u))
	}
	assert.Equal(t, 80-14, x.NumUses())
	assert.Equal(t, 50, x.NumUsers())
	mixed := g.Call(irAdd, y, x) // add(x, x) once y's uses move to x
	g.ReplaceAllUsesWith(y, x, nil)
	assert.Equal(t, 80-14+2, x.NumUses())
	assert.Equal(t, 51, x.NumUsers())
	assert.Len(t, x.Users(), 51)
	assert.Contains(t, x.Users(), mixed)
}

// VisitInputs visits every reference, in args then kwargs slot order: a
// node passed twice twice, where InputNodes lists it once.
func TestVisitInputs(t *testing.T) {
	g := New()
	x, y := g.Placeholder("x", nil), g.Placeholder("y", nil)
	n := g.CallKw(irAdd, []ops.Value{x, ops.List{y, x}}, []Kwarg{{Name: "alpha", Value: y}})
	var got []*Node
	n.VisitInputs(func(in *Node) { got = append(got, in) })
	assert.Equal(t, []string{"x", "y", "x", "y"}, irNames(got))
	assert.Equal(t, []string{"x", "y"}, irNames(n.InputNodes()))
	assert.Zero(t, testing.AllocsPerRun(10, func() { n.VisitInputs(func(*Node) {}) }))
}
