package fxgraph

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNameTableMatchesMap runs random sets and lookups on a nameTable and
// on Go's map side by side, through growth from empty (3,000 names: the
// groups double and split) and from reserved sizes, and checks every
// answer, the length, the iteration, the table's structure and that a
// clone is independent.
func TestNameTableMatchesMap(t *testing.T) {
	for _, reserve := range []int{0, 1000, 20000} {
		rng := rand.New(rand.NewPCG(3, uint64(reserve)))
		var tab nameTable
		if reserve > 0 {
			tab.reserve(reserve)
		}
		ref := map[string]int{}
		name := func() string { return "n" + strconv.Itoa(rng.IntN(3000)) }
		for step := range 20000 {
			k := name()
			if rng.IntN(2) == 0 {
				tab.set(k, step)
				ref[k] = step
			}
			got, ok := tab.get(k)
			want, wantOK := ref[k]
			require.Equal(t, wantOK, ok, "step %d: get(%q) found", step, k)
			require.Equal(t, want, got, "step %d: get(%q)", step, k)
			require.Equal(t, len(ref), tab.len())
			if step%5000 == 0 {
				c := tab.clone()
				for i := range 2000 { // enough to split the clone's groups
					c.set("only_in_clone_"+strconv.Itoa(i), 1)
				}
				_, ok := tab.get("only_in_clone_0")
				require.False(t, ok, "a clone shares no slots")
				require.Equal(t, len(ref), tab.len())
				checkNameTable(t, &tab)
				checkNameTable(t, &c)
			}
		}
		all := map[string]int{}
		for k, v := range tab.all() {
			_, dup := all[k]
			require.False(t, dup, "%q yielded twice", k)
			all[k] = v
		}
		require.Equal(t, ref, all)
		checkNameTable(t, &tab)
	}
	var empty nameTable
	_, ok := empty.get("x")
	require.False(t, ok)
	require.Zero(t, empty.len())
	c := empty.clone() // a namespace clones its table before any name
	c.set("x", 1)
	owner, ok := c.get("x")
	require.True(t, ok)
	require.Equal(t, 1, owner)
	require.Zero(t, empty.len())
	far := int64(math.MaxInt32) + 1
	c.set("far", int(far)) // an owner beyond int32 is kept as unknown
	owner, ok = c.get("far")
	require.True(t, ok)
	require.Zero(t, owner)
}

// checkNameTable checks a nameTable's structure: each group is a run of
// directory entries as long as its depth says, its size a power of two
// within bounds and at most 3/4 full, its count right, and each name in
// the group its hash picks.
func checkNameTable(t *testing.T, tab *nameTable) {
	t.Helper()
	require.Len(t, tab.dir, 1<<tab.depth)
	total := 0
	for j := 0; j < len(tab.dir); {
		g := tab.dir[j]
		run := 1 << (tab.depth - g.depth)
		require.Zero(t, j%run, "a group's run starts on a multiple of its length")
		for k := j; k < j+run; k++ {
			require.Same(t, g, tab.dir[k], "directory entry %d", k)
		}
		size := len(g.slots)
		require.Zero(t, size&(size-1), "a power-of-two group")
		require.True(t, size >= minGroupSlots && size <= maxGroupSlots, "group size %d", size)
		require.LessOrEqual(t, 4*g.n, 3*size)
		n := 0
		for _, s := range g.slots {
			if s.hash != 0 {
				n++
				require.Same(t, g, tab.group(s.hash), "%q is in the group its hash picks", s.name)
			}
		}
		require.Equal(t, g.n, n)
		total += n
		j += run
	}
	require.Equal(t, tab.len(), total)
}
