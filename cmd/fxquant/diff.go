package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// cmdDiff prints a structural diff of two graphs and exits 1 when they differ.
func cmdDiff(e *env, args []string) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	allowOpaque := fs.Bool("allow-opaque", false, "read operators the registry does not know")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 2, 2, "A and B"); err != nil {
		return err
	}
	a, err := loadFile(pos[0], *allowOpaque)
	if err != nil {
		return err
	}
	b, err := loadFile(pos[1], *allowOpaque)
	if err != nil {
		return err
	}
	d := diffGraphs(a.graph, b.graph)
	if d.empty() {
		fmt.Fprintf(e.stdout, "graphs are equal (%d nodes)\n", a.graph.Len())
		return nil
	}
	fmt.Fprintf(e.stdout, "--- %s\n+++ %s\n", a.name, b.name)
	d.write(e.stdout)
	return &exitError{code: exitFail}
}

// graphDiff is the result of diffGraphs: the entries in the order they
// are printed (A's program order, with B-only nodes after their
// predecessor's entry), and the counts.
type graphDiff struct {
	entries                 []diffEntry
	added, removed, changed int
}

// diffEntry is one line group of the diff.
type diffEntry struct {
	kind byte // '-' removed, '+' added, '~' changed
	a, b *fxgraph.Node
	why  []string // for changes: which parts differ
}

func (d *graphDiff) empty() bool { return len(d.entries) == 0 }

func (d *graphDiff) write(w io.Writer) {
	for _, en := range d.entries {
		switch en.kind {
		case '-':
			fmt.Fprintf(w, "- %s\n", fxgraph.FormatNode(en.a))
		case '+':
			fmt.Fprintf(w, "+ %s\n", fxgraph.FormatNode(en.b))
		case '~':
			fmt.Fprintf(w, "~ %s -> %s: %s\n", en.a.Name(), en.b.Name(), strings.Join(en.why, ", "))
			fmt.Fprintf(w, "  - %s\n", fxgraph.FormatNode(en.a))
			fmt.Fprintf(w, "  + %s\n", fxgraph.FormatNode(en.b))
		}
	}
	fmt.Fprintf(w, "%d removed, %d added, %d changed\n", d.removed, d.added, d.changed)
}

// diffGraphs compares a and b node by node. Nodes correspond by name
// first; the nodes left over correspond in program order when they have the
// same opcode and target (a renamed node). Corresponding nodes differ when
// their opcode, target, arguments (node references compared through the
// correspondence), keyword arguments or types (where both have one) differ. Users are not
// compared: a change of users shows as a change of the user.
func diffGraphs(a, b *fxgraph.Graph) *graphDiff {
	an, bn := a.Nodes(), b.Nodes()
	ab := map[*fxgraph.Node]*fxgraph.Node{} // a node -> b node
	ba := map[*fxgraph.Node]*fxgraph.Node{}
	byName := map[string]*fxgraph.Node{}
	for _, n := range bn {
		byName[n.Name()] = n
	}
	for _, n := range an {
		if m, ok := byName[n.Name()]; ok && m.Op() == n.Op() {
			ab[n], ba[m] = m, n
		}
	}
	// Leftovers by position: each unmatched a node takes the first later
	// unmatched b node with the same opcode and target.
	var restB []*fxgraph.Node
	for _, n := range bn {
		if _, ok := ba[n]; !ok {
			restB = append(restB, n)
		}
	}
	next := 0
	for _, n := range an {
		if _, ok := ab[n]; ok {
			continue
		}
		for j := next; j < len(restB); j++ {
			m := restB[j]
			if m.Op() == n.Op() && targetString(m) == targetString(n) {
				ab[n], ba[m] = m, n
				next = j + 1
				break
			}
		}
	}

	d := &graphDiff{}
	// B-only nodes are printed after the entry of the nearest earlier b
	// node that has a partner, so additions appear where they are.
	addedAfter := map[*fxgraph.Node][]*fxgraph.Node{} // b anchor (or nil) -> added b nodes
	var anchor *fxgraph.Node
	for _, m := range bn {
		if _, ok := ba[m]; ok {
			anchor = m
			continue
		}
		addedAfter[anchor] = append(addedAfter[anchor], m)
	}
	emitAdded := func(after *fxgraph.Node) {
		for _, m := range addedAfter[after] {
			d.entries = append(d.entries, diffEntry{kind: '+', b: m})
			d.added++
		}
	}
	emitAdded(nil)
	for _, n := range an {
		m, ok := ab[n]
		if !ok {
			d.entries = append(d.entries, diffEntry{kind: '-', a: n})
			d.removed++
			continue
		}
		if why := nodeChanges(n, m, ba); len(why) > 0 {
			d.entries = append(d.entries, diffEntry{kind: '~', a: n, b: m, why: why})
			d.changed++
		}
		emitAdded(m)
	}
	return d
}

func targetString(n *fxgraph.Node) string {
	if t := n.Target(); t != nil {
		return t.String()
	}
	return n.TargetName()
}

// nodeChanges lists what differs between corresponding nodes n (of A) and
// m (of B); ba maps B's nodes to their A partners.
func nodeChanges(n, m *fxgraph.Node, ba map[*fxgraph.Node]*fxgraph.Node) []string {
	var why []string
	if n.Name() != m.Name() {
		why = append(why, "name")
	}
	if n.Op() != m.Op() {
		why = append(why, "op")
	}
	if targetString(n) != targetString(m) {
		why = append(why, "target")
	}
	if !argsEqual(ops.Tuple(n.Args()), ops.Tuple(m.Args()), ba) {
		why = append(why, "args")
	}
	if !kwargsEqual(n.Kwargs(), m.Kwargs(), ba) {
		why = append(why, "kwargs")
	}
	// A graph without types (a fixture listing) says nothing about them:
	// types are compared only where both nodes have one.
	if nt, mt := n.Type(), m.Type(); nt != nil && mt != nil && !ops.TypesEqual(nt, mt) {
		why = append(why, "type")
	}
	return why
}

// argsEqual compares an argument of A with one of B, mapping B's node
// references to their A partners (an unmatched node never equals anything).
func argsEqual(x, y ops.Value, ba map[*fxgraph.Node]*fxgraph.Node) bool {
	unmatched := false
	mapped, err := ops.MapValue(y, func(v ops.Value) (ops.Value, error) {
		if n, ok := v.(*fxgraph.Node); ok {
			if p, ok := ba[n]; ok {
				return p, nil
			}
			unmatched = true
		}
		return v, nil
	})
	if err != nil || unmatched {
		return false
	}
	return ops.LiteralEqual(x, mapped) && sameKinds(x, mapped)
}

// sameKinds reports whether x and y have the same container kinds
// throughout: LiteralEqual treats a list and a tuple of equal elements as
// equal, as FX's matcher does, but a diff should show the change.
func sameKinds(x, y ops.Value) bool {
	switch xv := x.(type) {
	case ops.List:
		yv, ok := y.(ops.List)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for i := range xv {
			if !sameKinds(xv[i], yv[i]) {
				return false
			}
		}
	case ops.Tuple:
		yv, ok := y.(ops.Tuple)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for i := range xv {
			if !sameKinds(xv[i], yv[i]) {
				return false
			}
		}
	case ops.Dict:
		yv, ok := y.(ops.Dict)
		if !ok || len(xv.Values) != len(yv.Values) {
			return false
		}
		for i := range xv.Values {
			if !sameKinds(xv.Values[i], yv.Values[i]) {
				return false
			}
		}
	}
	return true
}

func kwargsEqual(x, y []fxgraph.Kwarg, ba map[*fxgraph.Node]*fxgraph.Node) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Name != y[i].Name || !argsEqual(x[i].Value, y[i].Value, ba) {
			return false
		}
	}
	return true
}
