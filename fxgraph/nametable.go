package fxgraph

import (
	"hash/maphash"
	"iter"
	"math"
)

// nameTable maps each reserved name to its owner (see namespace.used). It
// is a hash table that keeps each name's hash beside it, so that growing
// never reads a name again: Go's map rehashes every key string as it
// grows, which on a graph whose names no longer fit in the cache is a
// cache miss per name; at 60,000 nodes that growth was a tenth of
// building the graph. Names are never removed.
//
// Like Go's map it grows in small steps: the top bits of a hash pick a
// group from a directory (extendible hashing), and a group is a small
// open-addressing table that doubles, or once at maxGroupSlots splits in
// two, when it gets full. No single insertion rehashes more than one
// group.
type nameTable struct {
	seed  maphash.Seed
	dir   []*nameGroup // 1 << depth entries; a group fills a run of them
	depth uint
	n     int
}

// nameGroup is one group: the names whose hashes start with the same
// depth bits, in slots indexed by the hash's low bits.
type nameGroup struct {
	slots []nameSlot // a power of two long
	n     int
	depth uint
}

// nameSlot is one entry, 24 bytes. It keeps 32 bits of the name's hash:
// the directory reads its top bits and the group its low bits, which
// leaves room for 2^22 groups of maxGroupSlots. hash 0 marks an empty
// slot (a name whose hash is 0 is stored as 1). owner is the namespace's
// owner (1 + a node id), or 0, "unknown", beyond int32.
type nameSlot struct {
	hash  uint32
	owner int32
	name  string
}

const (
	minGroupSlots = 8
	maxGroupSlots = 1024
)

// groupFull reports whether a group of size slots holding n names must grow
// before it takes another: at most 3/4 of the slots are used.
func groupFull(n, size int) bool { return 4*(n+1) > 3*size }

func (t *nameTable) hash(name string) uint32 {
	if h := uint32(maphash.String(t.seed, name)); h != 0 {
		return h
	}
	return 1
}

// group returns the group for hash h (a shift by 32 is 0 in Go).
func (t *nameTable) group(h uint32) *nameGroup { return t.dir[h>>(32-t.depth)] }

// len returns the number of names.
func (t *nameTable) len() int { return t.n }

// get returns name's owner.
func (t *nameTable) get(name string) (owner int, ok bool) {
	if t.n == 0 {
		return 0, false
	}
	h := t.hash(name)
	g := t.group(h)
	mask := uint32(len(g.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &g.slots[i]
		if s.hash == h && s.name == name {
			return int(s.owner), true
		}
		if s.hash == 0 {
			return 0, false
		}
	}
}

// set records name with owner, replacing its owner if it is present.
func (t *nameTable) set(name string, owner int) {
	if len(t.dir) == 0 {
		t.reserve(0)
	}
	if owner < 0 || owner > math.MaxInt32 {
		owner = 0
	}
	h := t.hash(name)
	g := t.group(h)
	mask := uint32(len(g.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &g.slots[i]
		if s.hash == 0 {
			break
		}
		if s.hash == h && s.name == name {
			s.owner = int32(owner)
			return
		}
	}
	for groupFull(g.n, len(g.slots)) {
		if len(g.slots) < maxGroupSlots {
			g.resize(2 * len(g.slots))
		} else {
			t.split(g)
		}
		g = t.group(h)
	}
	g.put(nameSlot{hash: h, owner: int32(owner), name: name})
	t.n++
}

// put stores s, whose name g does not hold, in g, which has room.
func (g *nameGroup) put(s nameSlot) {
	mask := uint32(len(g.slots) - 1)
	i := s.hash & mask
	for g.slots[i].hash != 0 {
		i = (i + 1) & mask
	}
	g.slots[i] = s
	g.n++
}

// resize moves g's names into size slots.
func (g *nameGroup) resize(size int) {
	old := g.slots
	g.slots, g.n = make([]nameSlot, size), 0
	for _, s := range old {
		if s.hash != 0 {
			g.put(s)
		}
	}
}

// split replaces g by two groups that tell its names apart by the next
// bit of their hashes, doubling the directory when g's run is one entry.
func (t *nameTable) split(g *nameGroup) {
	if g.depth == t.depth {
		dir := make([]*nameGroup, 2*len(t.dir))
		for j := range dir {
			dir[j] = t.dir[j>>1]
		}
		t.dir, t.depth = dir, t.depth+1
	}
	bit := 31 - g.depth
	halves := [2]*nameGroup{
		{slots: make([]nameSlot, maxGroupSlots), depth: g.depth + 1},
		{slots: make([]nameSlot, maxGroupSlots), depth: g.depth + 1},
	}
	for _, s := range g.slots {
		if s.hash != 0 {
			halves[s.hash>>bit&1].put(s)
		}
	}
	// g's run of directory entries: its lower half gets the names whose
	// bit is 0.
	shift := t.depth - 1 - g.depth
	for j, d := range t.dir {
		if d == g {
			t.dir[j] = halves[j>>shift&1]
		}
	}
}

// reserve makes an empty table ready for about n names without splitting.
// It does nothing to a table in use.
func (t *nameTable) reserve(n int) {
	if t.n != 0 {
		return
	}
	if t.seed == (maphash.Seed{}) {
		t.seed = maphash.MakeSeed()
	}
	depth, size := uint(0), minGroupSlots
	for groupFull(n>>depth, size) {
		if size < maxGroupSlots {
			size *= 2
		} else {
			depth++
		}
	}
	t.dir, t.depth = make([]*nameGroup, 1<<depth), depth
	for j := range t.dir {
		t.dir[j] = &nameGroup{slots: make([]nameSlot, size), depth: depth}
	}
}

// groups yields each group once: a group's directory entries are a run.
func (t *nameTable) groups() iter.Seq[*nameGroup] {
	return func(yield func(*nameGroup) bool) {
		for j, g := range t.dir {
			if (j == 0 || t.dir[j-1] != g) && !yield(g) {
				return
			}
		}
	}
}

// all yields every name and its owner, in no particular order.
func (t *nameTable) all() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for g := range t.groups() {
			for i := range g.slots {
				if s := &g.slots[i]; s.hash != 0 && !yield(s.name, int(s.owner)) {
					return
				}
			}
		}
	}
}

// clone returns an independent copy.
func (t *nameTable) clone() nameTable {
	c := *t
	if len(t.dir) == 0 {
		return c
	}
	c.dir = make([]*nameGroup, len(t.dir))
	size := 0
	for g := range t.groups() {
		size += len(g.slots)
	}
	slots := make([]nameSlot, 0, size) // one allocation for all groups
	var last, copied *nameGroup
	for j, g := range t.dir {
		if g != last {
			last = g
			k := len(slots)
			slots = append(slots, g.slots...)
			copied = &nameGroup{slots: slots[k:len(slots):len(slots)], n: g.n, depth: g.depth}
		}
		c.dir[j] = copied
	}
	return c
}

// remove deletes name, if present (an undone transaction releases the
// names it reserved). The names after it in its probe run move back
// (backward-shift deletion), so lookups never need tombstones.
func (t *nameTable) remove(name string) {
	if t.n == 0 {
		return
	}
	h := t.hash(name)
	g := t.group(h)
	mask := uint32(len(g.slots) - 1)
	i := h & mask
	for {
		s := &g.slots[i]
		if s.hash == 0 {
			return
		}
		if s.hash == h && s.name == name {
			break
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; g.slots[j].hash != 0; j = (j + 1) & mask {
		// The name at j may fill the hole at i unless its home slot k
		// lies cyclically in (i, j].
		k := g.slots[j].hash & mask
		stays := (i < j && i < k && k <= j) || (i > j && (i < k || k <= j))
		if !stays {
			g.slots[i] = g.slots[j]
			i = j
		}
	}
	g.slots[i] = nameSlot{}
	g.n--
	t.n--
}
