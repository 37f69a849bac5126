package interp

import (
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// env holds a run's node values by node ID (dense in a graph), with the
// nodes that have one in a list for the in-place ops' alias search: a
// lookup, a store and a release cost an index, not a hash, on the
// interpreter's per-node path. Only the run's nodes have a slot: a node of
// another graph, or an erased one (which may share its ID with a live node
// after Graph.ReplaceWith), never has a value.
type env struct {
	node []*fxgraph.Node // the run's node of each ID, nil for none
	vals []ops.Value
	pos  []int32 // 1 + the node's index in live; 0 without a value
	live []*fxgraph.Node
}

// newEnv returns an empty env for the run's nodes.
func newEnv(nodes []*fxgraph.Node) *env {
	bound := 0
	for _, n := range nodes {
		bound = max(bound, n.ID()+1)
	}
	e := &env{node: make([]*fxgraph.Node, bound), vals: make([]ops.Value, bound), pos: make([]int32, bound)}
	for _, n := range nodes {
		e.node[n.ID()] = n
	}
	return e
}

// slot returns n's index in the env's tables, or false for a node that is
// not one of the run's (of another graph, erased, or created after the
// run began).
func (e *env) slot(n *fxgraph.Node) (int, bool) {
	if n == nil || n.ID() >= len(e.node) || e.node[n.ID()] != n {
		return 0, false
	}
	return n.ID(), true
}

// get returns n's value and whether it has one.
func (e *env) get(n *fxgraph.Node) (ops.Value, bool) {
	i, ok := e.slot(n)
	if !ok || e.pos[i] == 0 {
		return nil, false
	}
	return e.vals[i], true
}

// set gives n the value v.
func (e *env) set(n *fxgraph.Node, v ops.Value) {
	i, ok := e.slot(n)
	if !ok {
		return
	}
	if e.pos[i] == 0 {
		e.live = append(e.live, n)
		e.pos[i] = int32(len(e.live))
	}
	e.vals[i] = v
}

// del drops n's value.
func (e *env) del(n *fxgraph.Node) {
	i, ok := e.slot(n)
	if !ok || e.pos[i] == 0 {
		return
	}
	k := int(e.pos[i]) - 1
	last := e.live[len(e.live)-1]
	e.live[k] = last
	e.pos[last.ID()] = int32(k + 1)
	e.live = e.live[:len(e.live)-1]
	e.pos[i] = 0
	e.vals[i] = nil
}
