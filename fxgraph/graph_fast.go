package fxgraph

// This file holds Graph methods for passes that edit many nodes in one
// go, such as the pattern rewriter.

// BatchNames makes g enter the names of the nodes it creates into its
// table of reserved names in one batch, when the returned function is
// called, rather than one at a time. Names are handed out exactly as
// without it and stay unique: the namespace still knows them as they are
// created. A rewrite that creates many nodes calls it around its edits:
// the table of a large graph is much larger than the cache, so each entry
// costs a cache miss, and entered together their misses overlap.
//
// Until the function is called, [Verify] may report the new names as not
// reserved; call it before verifying or handing g to other code. Calls
// nest: the function of the outermost call enters the names; calling a
// function twice has no further effect.
func (g *Graph) BatchNames() (done func()) {
	ns := &g.names
	ns.batch++
	called := false
	return func() {
		if called {
			return
		}
		called = true
		if ns := &g.names; ns.batch > 0 {
			ns.batch--
			if ns.batch == 0 {
				ns.flush()
			}
		}
	}
}
