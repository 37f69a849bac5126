package fxgraph

import "fmt"

// InheritName gives n the name of old, a node of g that has been erased,
// as torch.fx code does by assigning node.name directly after erase_node
// (constant folding names its new get_attr after the node it replaces).
// The name stays reserved in g's namespace, so later nodes never get it.
// It fails if old is not erased, if either node belongs to another graph,
// or if n is erased.
func (g *Graph) InheritName(n, old *Node) error {
	switch {
	case n == nil || old == nil:
		return fmt.Errorf("fxgraph: inherit name: nil node")
	case n.graph != g || old.graph != g:
		return fmt.Errorf("fxgraph: inherit name %q for %s: both nodes must belong to this graph", old.name, n)
	case !old.erased:
		return fmt.Errorf("fxgraph: inherit name %q for %s: want an erased node, %s is live", old.name, n, old)
	case n.erased:
		return fmt.Errorf("fxgraph: inherit name %q: %s is erased", old.name, n)
	}
	if g.j != nil {
		g.j.names = append(g.j.names, nameRec{n: n, name: n.name})
	}
	n.name = old.name
	return nil
}
