package fxgraph

// This file is the one adapter to github.com/dominikbraun/graph. Its
// algorithms are quadratic in v0.23.0 (TopologicalSort rescans every
// vertex per step; PreventCycles runs a DFS per edge), so fxgraph never
// uses it on a whole model inside a pass: whole-graph order and cycle
// checks are linear in verify.go. It serves small selections — a pattern,
// a match, a region to look at — and tests that cross-check fxgraph's own
// order against an independent implementation.

import (
	"errors"
	"fmt"

	dgraph "github.com/dominikbraun/graph"
)

// MaxViewNodes bounds DependencyView: larger selections are refused, since
// the library's algorithms are quadratic.
const MaxViewNodes = 2000

// DependencyView returns the dependencies among nodes as a directed
// dominikbraun/graph keyed by node ID: one vertex per node, one edge from
// each input to each user within the selection (repeated uses collapse to
// one edge, since the library keeps one edge per ordered pair). Inputs
// outside the selection are left out. It fails for more than MaxViewNodes
// nodes, a nil or repeated node.
func DependencyView(nodes []*Node) (dgraph.Graph[int, *Node], error) {
	if len(nodes) > MaxViewNodes {
		return nil, fmt.Errorf("fxgraph: dependency view of %d nodes: at most %d", len(nodes), MaxViewNodes)
	}
	g := dgraph.New(func(n *Node) int { return n.id }, dgraph.Directed())
	in := make(map[*Node]bool, len(nodes))
	for _, n := range nodes {
		if n == nil {
			return nil, errors.New("fxgraph: dependency view: nil node")
		}
		if in[n] {
			return nil, fmt.Errorf("fxgraph: dependency view: node %s given twice", n)
		}
		in[n] = true
		if err := g.AddVertex(n); err != nil {
			return nil, fmt.Errorf("fxgraph: dependency view: %s: %w", n, err)
		}
	}
	for _, n := range nodes {
		for _, src := range n.InputNodes() {
			if !in[src] {
				continue
			}
			if err := g.AddEdge(src.id, n.id); err != nil && !errors.Is(err, dgraph.ErrEdgeAlreadyExists) {
				return nil, fmt.Errorf("fxgraph: dependency view: edge %s -> %s: %w", src, n, err)
			}
		}
	}
	return g, nil
}

// TopoOrder returns the selection in a dependency order computed by the
// library (ties broken by node ID), or an error naming a cycle among them.
// Use it on small selections only (see MaxViewNodes).
func TopoOrder(nodes []*Node) ([]*Node, error) {
	g, err := DependencyView(nodes)
	if err != nil {
		return nil, err
	}
	ids, err := dgraph.StableTopologicalSort(g, func(a, b int) bool { return a < b })
	if err != nil {
		return nil, fmt.Errorf("fxgraph: topological order: %w", err)
	}
	out := make([]*Node, len(ids))
	for i, id := range ids {
		n, err := g.Vertex(id)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}
