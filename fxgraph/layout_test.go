package fxgraph

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestNodeLayout checks that a node fills whole 64-byte cache lines and
// that, past the first small chunks, nodes start on a line: a walk that
// reads a node's first line then reads exactly one line per node. The
// layout is planned for 64-bit platforms.
func TestNodeLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the node's layout is planned for 8-byte pointers")
	}
	assert.Zero(t, unsafe.Sizeof(Node{})%64, "node size %d", unsafe.Sizeof(Node{}))
	g := New()
	misaligned := 0
	for range 4 * maxNodeChunk {
		if uintptr(unsafe.Pointer(g.allocNode()))%64 != 0 {
			misaligned++
		}
	}
	// Chunks below 32 KiB carry the allocator's 8-byte header in front;
	// the chunks of maxNodeChunk nodes do not.
	assert.Less(t, misaligned, maxNodeChunk, "misaligned nodes")
}
