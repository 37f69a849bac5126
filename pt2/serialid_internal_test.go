package pt2

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// refStdSet is the former model of the unordered_set's order: the list
// as a slice, a scan for the bucket's first element on every insert and a
// map-based rehash (quadratic, but simple). The rehash policy is the
// shared one, through pol.
type refStdSet struct {
	pol    *stdStringSet // nextResize and buckets only
	hashes []uint64
}

func (s *refStdSet) rehash(n uint64) {
	type node struct {
		h    uint64
		next int
	}
	nodes := make([]node, 0, len(s.hashes))
	head := -1
	before := map[uint64]int{}
	for _, h := range s.hashes {
		b := h % n
		idx := len(nodes)
		if prev, ok := before[b]; ok {
			if prev < 0 {
				nodes = append(nodes, node{h: h, next: head})
				head = idx
			} else {
				nodes = append(nodes, node{h: h, next: nodes[prev].next})
				nodes[prev].next = idx
			}
			continue
		}
		nodes = append(nodes, node{h: h, next: head})
		if head >= 0 {
			before[nodes[head].h%n] = idx
		}
		head = idx
		before[b] = -1
	}
	var out []uint64
	for i := head; i >= 0; i = nodes[i].next {
		out = append(out, nodes[i].h)
	}
	s.hashes = out
	s.pol.buckets = n
}

func (s *refStdSet) insert(h uint64) {
	if n, ok := s.pol.needRehash(uint64(len(s.hashes))); ok {
		s.rehash(n)
	}
	b := h % s.pol.buckets
	for i, x := range s.hashes {
		if x%s.pol.buckets == b {
			s.hashes = slices.Insert(s.hashes, i, h)
			return
		}
	}
	s.hashes = slices.Insert(s.hashes, 0, h)
}

// TestStdStringSetMatchesReference checks the linked-list set against the
// slice model on record names like the writer's and on random strings,
// across many rehashes.
func TestStdStringSetMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 5, 13, 14, 50, 97, 1000, 6010} {
		set := newStdStringSet()
		ref := &refStdSet{pol: newStdStringSet()}
		for i := range n {
			var name string
			if i%3 == 0 {
				name = fmt.Sprintf("r%x", rng.Uint64())
			} else {
				name = fmt.Sprintf("data/weights/weight_%d", i)
			}
			set.insert(name)
			ref.insert(stdHashBytes([]byte(name), 0xc70f6907))
		}
		if got := set.iterationOrder(); !slices.Equal(got, ref.hashes) {
			t.Fatalf("%d names: iteration order differs from the reference", n)
		}
	}
}
