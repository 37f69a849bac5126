package fxgraph

// This file holds the few Graph internals the text parser needs beyond
// the public edit methods, to build a graph of many nodes in one go.

// growNames sizes an empty graph's name table for about n names, so that
// a parse that reserves a name per node does not rehash the table over
// and over as it grows. It does nothing once names are in use.
func (g *Graph) growNames(n int) {
	if g.names.used.len() == 0 {
		g.names.used.reserve(n)
	}
}

// nameOwner returns the id of the node for which g's namespace reserved
// name (the parser's lookup from a name to its node, which saves a second
// table of every name).
func (g *Graph) nameOwner(name string) (id int, ok bool) {
	owner, ok := g.names.used.get(name)
	return owner - 1, ok
}
