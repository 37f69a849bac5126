package fxgraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// txState is everything a rolled-back transaction must give back, written
// out: the printed graph, then per node its name, type, target, metadata,
// use records (user and slot, in order), users and uses counts, then the
// attributes (path and value identity) and the names a few candidates
// would get next (asked of a clone, whose namespace is a copy). It also
// checks the list of unused nodes: every live node without uses must be
// in it.
//
// With same, attribute values are compared by identity (for a graph
// against its own earlier state); else by shape (for graphs edited apart).
func txState(t *testing.T, g *Graph, same bool) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(Format(g))
	for n := range g.All() {
		fmt.Fprintf(&b, "%s %v %s %+v uses[", n.name, n.typ, n.TargetName(), *n.Meta)
		for _, u := range n.Uses() {
			fmt.Fprintf(&b, "%s/%d ", u.User.name, u.Slot)
		}
		fmt.Fprintf(&b, "] users=%v n=%d\n", irNames(n.Users()), n.NumUses())
		if n.NumUses() == 0 {
			require.True(t, n.inUnused, "%s has no uses but is not in the unused list", n)
		}
		if !g.InTransaction() {
			require.Zero(t, n.jflags, "%s keeps journal flags", n)
		}
	}
	for _, p := range g.AttrNames() {
		a, _ := g.Attr(p)
		if same {
			fmt.Fprintf(&b, "attr %s %p\n", p, a)
		} else {
			fmt.Fprintf(&b, "attr %s %v\n", p, a.(*tensor.Tensor).Shape())
		}
	}
	c, _ := g.Clone()
	for _, cand := range []string{"add", "relu", "add_3", "relu_1", "sum", "mix", "x", "_param0", "copy_", "add_07"} {
		fmt.Fprintf(&b, "next %s -> %s\n", cand, c.names.create(cand, 0))
	}
	fmt.Fprintf(&b, "fresh attr %s len=%d\n", g.FreshAttrName("_param"), g.Len())
	return b.String()
}

// txEdit makes one random edit of g through its methods (all kinds a
// rewrite uses) and describes it. Given equal graphs and equal generator
// states it makes the same edit.
func txEdit(t *testing.T, rng *rand.Rand, g *Graph, reg *ops.Registry) string {
	t.Helper()
	nodes := g.Nodes()
	pos := make(map[*Node]int, len(nodes))
	for i, n := range nodes {
		pos[n] = i
	}
	isF32 := func(n *Node) bool { return n.Type() != nil && n.Type().Equal(irF32) }
	f32Before := func(limit int) *Node {
		var c []*Node
		for _, n := range nodes[:limit] {
			if isF32(n) {
				c = append(c, n)
			}
		}
		return c[rng.IntN(len(c))]
	}
	calls := slices.DeleteFunc(slices.Clone(nodes), func(n *Node) bool { return n.Op() != CallFunction })
	p := rng.IntN(len(nodes) - 1)
	switch op := rng.IntN(16); {
	case op <= 2:
		restore := g.InsertingAfter(nodes[p])
		defer restore()
		var n *Node
		switch rng.IntN(3) {
		case 0:
			n = g.Call(irRelu, f32Before(p+1))
		case 1:
			n = g.CallKw(irAdd, []ops.Value{f32Before(p + 1), f32Before(p + 1)}, []Kwarg{{Name: "alpha", Value: int64(rng.IntN(3))}})
		default:
			n = g.CreateNode(CallFunction, irAdd, "", []ops.Value{f32Before(p + 1), f32Before(p + 1)}, nil, []string{"add_3", "relu_1", "sum", "add_07"}[rng.IntN(4)], nil)
		}
		n.SetType(irF32)
		return "create " + n.Name()
	case op == 3 && len(calls) > 0:
		n := calls[rng.IntN(len(calls))]
		if !isF32(n) {
			return "nothing"
		}
		m := f32Before(pos[n])
		g.ReplaceAllUsesWith(n, m, nil)
		return fmt.Sprintf("rauw %s -> %s", n, m)
	case op == 4:
		for _, n := range calls {
			if n.NumUses() == 0 && rng.IntN(2) == 0 {
				require.NoError(t, g.Erase(n))
				return "erase " + n.Name()
			}
		}
		return "nothing"
	case op == 5 && len(calls) > 0:
		n := calls[rng.IntN(len(calls))]
		lo, hi := moveRange(n, nodes, pos)
		anchor := nodes[lo+rng.IntN(hi-lo+1)]
		if rng.IntN(2) == 0 {
			require.NoError(t, g.MoveBefore(n, anchor))
		} else if anchor != nodes[len(nodes)-1] {
			require.NoError(t, g.MoveAfter(n, nodes[max(lo, pos[anchor]-1)]))
		}
		return "move " + n.Name()
	case op == 6 && len(calls) > 0:
		n := calls[rng.IntN(len(calls))]
		if len(n.Args()) == 0 || !isF32(n) {
			return "nothing"
		}
		i := rng.IntN(len(n.Args()))
		if _, ok := n.Arg(i).(*Node); !ok {
			return "nothing"
		}
		require.NoError(t, g.SetArg(n, i, f32Before(pos[n])))
		if n.Target() == irAdd {
			switch rng.IntN(3) {
			case 0:
				g.SetKwarg(n, "alpha", int64(rng.IntN(5)))
			case 1:
				g.DeleteKwarg(n, "alpha")
			}
		}
		return "set arg of " + n.Name()
	case op == 7:
		out := nodes[len(nodes)-1]
		if len(calls) > 0 {
			g.SetArgs(out, ops.Tuple{calls[rng.IntN(len(calls))], nodes[0]})
		}
		return "set output"
	case op == 8 && len(calls) > 0:
		n := calls[rng.IntN(len(calls))]
		return "rename " + g.Rename(n, []string{"add", "relu_1", "renamed", "sum"}[rng.IntN(4)])
	case op == 9 && len(calls) > 0:
		n := calls[rng.IntN(len(calls))]
		n.SetType(ops.Plain(tensor.Float32, 2, 3))
		g.SetTarget(n, n.Target())
		if n.Target() == irRelu {
			g.SetTarget(n, irSum)
			g.SetTarget(n, irRelu)
		}
		return "retype " + n.Name()
	case op == 10:
		restore := g.InsertingAfter(nodes[p])
		defer restore()
		path := g.FreshAttrName("_param")
		g.SetAttr(path, tensor.MustZeros(tensor.Float32, 2, 3))
		n := g.GetAttr(path, irF32)
		return "get_attr " + n.Name()
	case op == 11:
		if names := g.AttrNames(); len(names) > 0 {
			path := names[rng.IntN(len(names))]
			read := slices.ContainsFunc(nodes, func(n *Node) bool { return n.Op() == GetAttr && n.TargetName() == path })
			if !read && rng.IntN(2) == 0 {
				g.DeleteAttr(path)
				return "delete attr " + path
			}
			g.SetAttr(path, tensor.MustZeros(tensor.Float32, 2, 3))
			return "reset attr " + path
		}
		return "nothing"
	case op == 12 && len(calls) > 0:
		n := calls[rng.IntN(len(calls))]
		g.SaveMeta(n)
		n.Meta.StackTrace = fmt.Sprintf("edit %d", rng.IntN(100))
		n.Meta.Set("k", rng.IntN(5))
		return "meta " + n.Name()
	case op == 13 && len(calls) > 0:
		// constant folding's move: a new node takes over an erased one's
		// uses and name.
		n := calls[rng.IntN(len(calls))]
		if !isF32(n) {
			return "nothing"
		}
		restore := g.InsertingBefore(n)
		m := g.Call(irRelu, f32Before(pos[n]))
		restore()
		m.SetType(irF32)
		g.ReplaceAllUsesWith(n, m, func(u *Node) bool { return u == m })
		require.NoError(t, g.Erase(n))
		require.NoError(t, g.InheritName(m, n))
		return "fold " + n.Name()
	case op == 14 && len(calls) > 0:
		n := calls[rng.IntN(len(calls))]
		if !isF32(n) {
			return "nothing"
		}
		restore := g.InsertingAfter(n)
		m := g.Call(irRelu, n)
		restore()
		m.SetType(irF32)
		_, err := g.ReplaceAllUsesWithMeta(n, m, func(u *Node) bool { return u == m })
		require.NoError(t, err)
		return "wrap " + n.Name()
	default:
		return fmt.Sprintf("dce %v", g.EliminateDeadCode(reg, nil))
	}
}

// txGraph returns a graph built by edits made outside any transaction.
func txGraph(t *testing.T, rng *rand.Rand, reg *ops.Registry, edits int) *Graph {
	g := New()
	x := g.Placeholder("x", irF32)
	g.Placeholder("y", irF32)
	g.SetOutput(ops.Tuple{x})
	for range edits {
		txEdit(t, rng, g, reg)
	}
	return g
}

// TestRollbackRestoresEverything makes random edits inside a transaction,
// with nested transactions committed or rolled back at random, rolls the
// outer one back, and requires the graph's full state as before. Then the
// same edits on the rolled-back graph and on a clone taken before give the
// same graph, names included.
func TestRollbackRestoresEverything(t *testing.T) {
	reg := irRegistry(t)
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		g := txGraph(t, rng, reg, 10+int(seed))
		require.NoError(t, Verify(g, irOpts(t)))
		before := txState(t, g, true)
		ref, _ := g.Clone()

		g.Begin()
		depth := 1
		var log []string
		for range 5 + rng.IntN(40) {
			switch k := rng.IntN(10); {
			case k == 0:
				g.Begin()
				depth++
				log = append(log, "begin")
			case k == 1 && depth > 1:
				g.Commit()
				depth--
				log = append(log, "commit")
			case k == 2 && depth > 1:
				g.Rollback()
				depth--
				log = append(log, "rollback")
			default:
				log = append(log, txEdit(t, rng, g, reg))
			}
		}
		for ; depth > 1; depth-- {
			g.Commit()
		}
		g.Rollback()
		require.False(t, g.InTransaction())
		require.Equal(t, before, txState(t, g, true), "seed %d after %v", seed, log)
		require.NoError(t, Verify(g, irOpts(t)), "seed %d after %v", seed, log)

		// Later edits see the graph as it was: the same names come out.
		r1, r2 := rand.New(rand.NewPCG(seed, 9)), rand.New(rand.NewPCG(seed, 9))
		for i := range 30 {
			e1, e2 := txEdit(t, r1, g, reg), txEdit(t, r2, ref, reg)
			require.Equal(t, e2, e1, "seed %d, edit %d after the rollback", seed, i)
		}
		sameGraphs(t, ref, g, "seed %d", seed)
	}
}

// TestInnerRollbackKeepsOuterEdits checks that an inner rollback undoes
// only its own edits: the graph is as the outer edits alone leave it,
// and committing the outer transaction keeps them.
func TestInnerRollbackKeepsOuterEdits(t *testing.T) {
	reg := irRegistry(t)
	for seed := range uint64(30) {
		g, ref, r1, r2 := txTwins(t, reg, seed, 11, 12, 3)
		g.Begin()
		sameEdits(t, r1, r2, g, ref, reg, 10)
		mid := txState(t, g, true)
		g.Begin()
		r3 := rand.New(rand.NewPCG(seed, 13))
		for range 15 {
			txEdit(t, r3, g, reg)
		}
		g.Rollback()
		require.Equal(t, mid, txState(t, g, true), "seed %d: inner rollback", seed)
		sameEdits(t, r1, r2, g, ref, reg, 10)
		g.Commit()
		sameGraphs(t, ref, g, "seed %d: committed", seed)
	}
}

// TestCommitKeepsEdits checks that a committed transaction leaves the
// graph as the same edits without one do.
func TestCommitKeepsEdits(t *testing.T) {
	reg := irRegistry(t)
	for seed := range uint64(30) {
		g, ref, r1, r2 := txTwins(t, reg, seed, 5, 8, 4)
		g.Begin()
		sameEdits(t, r1, r2, g, ref, reg, 40)
		g.Commit()
		sameGraphs(t, ref, g, "seed %d", seed)
	}
}

// TestRollbackOfBatchedNames covers names made during a BatchNames batch
// (pending, not yet in the name table) and a batch flushed inside the
// transaction.
func TestRollbackOfBatchedNames(t *testing.T) {
	g, _ := irChain()
	before := txState(t, g, true)
	for _, flushInside := range []bool{true, false} {
		done := g.BatchNames()
		g.Begin()
		for range 3 {
			g.Call(irRelu, g.First()).SetType(irF32)
		}
		if flushInside {
			done()
		}
		g.Rollback()
		done()
		require.Equal(t, before, txState(t, g, true), "flush inside %v", flushInside)
	}
}

// TestTransactionWithoutBegin checks that Commit and Rollback without a
// transaction do nothing and that ReplaceWith refuses to run inside one.
func TestTransactionWithoutBegin(t *testing.T) {
	g, _ := irChain()
	before := txState(t, g, true)
	g.Commit()
	g.Rollback()
	require.Equal(t, before, txState(t, g, true))
	c, _ := g.Clone()
	g.Begin()
	require.PanicsWithError(t, errInTransaction("ReplaceWith").Error(), func() { g.ReplaceWith(c) })
	g.Rollback()
}

// TestNameTableRemove removes names in random order from tables of
// several sizes and checks each lookup against a map.
func TestNameTableRemove(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{5, 100, 3000} {
		var tb nameTable
		want := map[string]int{}
		var names []string
		for i := range size {
			name := fmt.Sprintf("n%d_%d", rng.IntN(size), i)
			tb.set(name, i+1)
			want[name] = i + 1
			names = append(names, name)
		}
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for k, name := range names {
			if k%2 == 0 {
				tb.remove(name)
				delete(want, name)
			}
		}
		tb.remove("absent")
		require.Equal(t, len(want), tb.len())
		for _, name := range names {
			owner, ok := tb.get(name)
			w, wok := want[name]
			require.Equal(t, wok, ok, name)
			require.Equal(t, w, owner, name)
		}
	}
}

// TestAtomic checks that Atomic keeps the edits of a function that
// succeeds and undoes those of one that fails or panics.
func TestAtomic(t *testing.T) {
	g, n := irChain()
	before := txState(t, g, true)
	errStop := fmt.Errorf("stop")
	require.ErrorIs(t, g.Atomic(func() error {
		g.ReplaceAllUsesWith(n["add"], n["relu"], nil)
		return errStop
	}), errStop)
	require.Equal(t, before, txState(t, g, true))
	require.PanicsWithValue(t, "boom", func() {
		_ = g.Atomic(func() error {
			g.ReplaceAllUsesWith(n["add"], n["relu"], nil)
			panic("boom")
		})
	})
	require.False(t, g.InTransaction())
	require.Equal(t, before, txState(t, g, true))
	require.NoError(t, g.Atomic(func() error {
		g.ReplaceAllUsesWith(n["add"], n["relu"], nil)
		return nil
	}))
	require.False(t, g.InTransaction())
	require.Zero(t, n["add"].NumUses())
}

// moveRange is the range of positions in nodes (pos maps each node to its
// position) that n can move to without a use coming before its
// definition.
func moveRange(n *Node, nodes []*Node, pos map[*Node]int) (lo, hi int) {
	for _, in := range n.InputNodes() {
		lo = max(lo, pos[in]+1)
	}
	hi = len(nodes) - 1
	for _, u := range n.Users() {
		hi = min(hi, pos[u])
	}
	return lo, hi
}

// sameEdits makes n random edits to g, drawn from r1, and n to ref, drawn
// from r2, and requires each pair to be the same edit.
// txTwins builds a random graph of size nodes (stream graphStream of
// seed) and a clone of it, with two copies of edit stream editStream for
// [sameEdits] on them.
func txTwins(t *testing.T, reg *ops.Registry, seed, graphStream uint64, size int, editStream uint64) (g, ref *Graph, r1, r2 *rand.Rand) {
	t.Helper()
	g = txGraph(t, rand.New(rand.NewPCG(seed, graphStream)), reg, size)
	ref, _ = g.Clone()
	return g, ref, rand.New(rand.NewPCG(seed, editStream)), rand.New(rand.NewPCG(seed, editStream))
}

// sameGraphs checks that g is in ref's state and verifies.
func sameGraphs(t *testing.T, ref, g *Graph, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, txState(t, ref, false), txState(t, g, false), msgAndArgs...)
	require.NoError(t, Verify(g, irOpts(t)))
}

func sameEdits(t *testing.T, r1, r2 *rand.Rand, g, ref *Graph, reg *ops.Registry, n int) {
	t.Helper()
	for range n {
		require.Equal(t, txEdit(t, r2, ref, reg), txEdit(t, r1, g, reg))
	}
}
