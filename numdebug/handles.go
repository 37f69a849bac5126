package numdebug

import (
	"encoding/json"

	"github.com/fxquant/fxquant/fxgraph"
)

// takesHandle reports whether GenerateHandles gives n a handle: every node
// but placeholders and the output, as torchao's bfs_trace_with_node_process
// visits them, and but get_attr nodes: torchao numbers the nodes of the
// ExportedProgram's graph, where parameters and buffers are placeholders,
// and the get_attr nodes ep.module() creates for them carry no handle.
func takesHandle(n *fxgraph.Node) bool {
	switch n.Op() {
	case fxgraph.Placeholder, fxgraph.Output, fxgraph.GetAttr:
		return false
	}
	return true
}

// GenerateHandles is torchao's generate_numeric_debug_handle: it finds the
// largest handle already in g, then gives every node without one (but
// placeholders, get_attr nodes and the output) the next number, in graph
// order, starting at that largest handle + 1 (so 1 on a fresh graph). It
// returns how many handles it assigned. Call it on the float graph before
// prepare; prepare, convert, the reference rewrites and constant folding
// carry the handles to the nodes they create from a handled node.
func GenerateHandles(g *fxgraph.Graph) int {
	next := 0
	for n := range g.All() {
		if takesHandle(n) {
			next = max(next, n.Meta.NumericDebugHandle)
		}
	}
	next++
	assigned := 0
	for n := range g.All() {
		if takesHandle(n) && n.Meta.NumericDebugHandle == 0 {
			g.SaveMeta(n)
			n.Meta.NumericDebugHandle = next
			next++
			assigned++
		}
	}
	return assigned
}

// Handles maps each numeric debug handle of g to the nodes that hold it,
// in graph order.
func Handles(g *fxgraph.Graph) map[int][]*fxgraph.Node {
	m := map[int][]*fxgraph.Node{}
	for n := range g.All() {
		if h := n.Meta.NumericDebugHandle; h != 0 {
			m[h] = append(m[h], n)
		}
	}
	return m
}

// nodeSource is the part of a from_node entry the debugger reads.
type nodeSource struct {
	Name     string       `json:"name"`
	GraphID  int64        `json:"graph_id"`
	FromNode []nodeSource `json:"from_node"`
}

// sourceKey names a node's greatest ancestor: torchao's
// NodeSourceDebugInfo (name, graph_id).
type sourceKey struct {
	name    string
	graphID int64
}

// greatestAncestor follows a from_node record to its root, taking the last
// entry at every level, as torchao's _get_greatest_ancestor_node_source.
func greatestAncestor(fromNode string) (sourceKey, bool) {
	if fromNode == "" {
		return sourceKey{}, false
	}
	var src []nodeSource
	if err := json.Unmarshal([]byte(fromNode), &src); err != nil || len(src) == 0 {
		return sourceKey{}, false
	}
	s := src[len(src)-1]
	for len(s.FromNode) > 0 {
		s = s.FromNode[len(s.FromNode)-1]
	}
	return sourceKey{s.Name, s.GraphID}, true
}

// AdoptHandles gives the nodes of quant that have no handle the handle of
// the float node they descend from, found as torchao's current debugger
// finds it: by the greatest ancestor of the node's from_node record (name
// and graph id). This is what a program quantized by torchao needs: its
// quantize and dequantize nodes carry only from_node, while the nodes
// torch.export re-traced keep meta["custom"]'s handle.
//
// An ancestor is known to hold handle h when a float node with h has it
// as greatest ancestor, or when a quant node that kept h has it. A float
// program saved right after export has no from_node records: its nodes are
// the roots themselves, named by their name and the graph id that quant's
// handled nodes' roots reveal. It returns how many nodes it gave a handle.
func AdoptHandles(float, quant *fxgraph.Graph) int {
	byRoot := map[sourceKey]int{}
	byName := map[string]int{} // float nodes without from_node: their own root
	graphs := map[int64]bool{} // graph ids of the roots of quant's handled nodes
	for n := range float.All() {
		h := n.Meta.NumericDebugHandle
		if h == 0 {
			continue
		}
		if k, ok := greatestAncestor(n.Meta.FromNode); ok {
			byRoot[k] = h
		} else {
			byName[n.Name()] = h
		}
	}
	for n := range quant.All() {
		if h := n.Meta.NumericDebugHandle; h != 0 {
			if k, ok := greatestAncestor(n.Meta.FromNode); ok {
				if _, dup := byRoot[k]; !dup {
					byRoot[k] = h
				}
				graphs[k.graphID] = true
			}
		}
	}
	adopted := 0
	for n := range quant.All() {
		if n.Meta.NumericDebugHandle != 0 || !takesHandle(n) {
			continue
		}
		k, ok := greatestAncestor(n.Meta.FromNode)
		if !ok {
			continue
		}
		h, ok := byRoot[k]
		if !ok && graphs[k.graphID] {
			h, ok = byName[k.name]
		}
		if ok {
			quant.SaveMeta(n)
			n.Meta.NumericDebugHandle = h
			adopted++
		}
	}
	return adopted
}
