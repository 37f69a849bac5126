package fxgraph

import (
	"fmt"

	"github.com/fxquant/fxquant/ops"
)

// LiftedInput ties one lifted placeholder of an exported program to the
// state it stands for (a parameter, buffer or tensor constant). User
// inputs are not listed.
type LiftedInput struct {
	// Placeholder is the placeholder's name, e.g. "p_fc1_weight".
	Placeholder string
	// Target is the attribute path of the state, e.g. "fc1.weight"; the
	// graph's attribute store must hold it.
	Target string
}

// Mutation is one mutating output of an exported program: a returned
// value that torch writes back into a buffer, parameter or user input.
type Mutation struct {
	// Value is the name of the returned node, e.g. "add_1".
	Value string
	// Target is the mutated attribute path ("bn1.num_batches_tracked"),
	// or the user input's placeholder name when FromUserInput is set.
	Target string
	// FromUserInput marks a USER_INPUT_MUTATION.
	FromUserInput bool
}

var copyInPlace = ops.Overload{Packet: ops.Packet{NS: "aten", Name: "copy_"}, Name: "default"}

// Unlift is the core of torch's ExportedProgram.module() (torchao-pt2e.md
// section 3.8) on a graph whose parameters, buffers and constants are
// placeholders. It returns a copy of g; g is not modified.
//
// In the copy, each lifted placeholder is replaced by a get_attr node of
// its target, inserted right after the placeholder (so they end up at the
// top of the graph, in input order), named from the target as FX names it
// ("fc1.weight" gives node fc1_weight), with the placeholder's type and
// metadata. Each mutation becomes aten.copy_.default(<the target's
// get_attr or input placeholder>, <value>) before the output, and the
// output then returns only the remaining (user) outputs as a tuple.
// Mutations are matched to the output's results in order, each to the
// first result of its Value not already claimed, so a value returned both
// as a mutation and as a user output stays a user output once (torch puts
// mutations first). No _guards_fn node is added.
//
// Errors name the lifted input or mutation: a placeholder that does not
// exist, an attribute missing from g's store, a mutation whose value the
// output does not return or whose target has no get_attr or input.
func Unlift(g *Graph, lifted []LiftedInput, mutations []Mutation) (*Graph, error) {
	c, _ := g.Clone()
	byName := map[string]*Node{}
	for n := range c.All() {
		byName[n.Name()] = n
	}
	attrNode := map[string]*Node{}
	for _, l := range lifted {
		ph, ok := byName[l.Placeholder]
		if !ok || ph.Op() != Placeholder || ph.Erased() {
			return nil, fmt.Errorf("unlift: lifted input %q: no placeholder of that name", l.Placeholder)
		}
		if _, ok := c.Attr(l.Target); !ok {
			return nil, fmt.Errorf("unlift: lifted input %q: attribute %q is not in the graph", l.Placeholder, l.Target)
		}
		restore := c.InsertingAfter(ph)
		ga := c.GetAttr(l.Target, ph.Type())
		restore()
		*ga.Meta = ph.Meta.Clone()
		c.ReplaceAllUsesWith(ph, ga, nil)
		if err := c.Erase(ph); err != nil {
			return nil, fmt.Errorf("unlift: placeholder %q: %w", l.Placeholder, err)
		}
		attrNode[l.Target] = ga
	}
	if len(mutations) == 0 {
		return c, nil
	}
	out, ok := c.OutputNode()
	if !ok {
		return nil, fmt.Errorf("unlift: graph has no output node")
	}
	results := ops.AsSequence(out.Arg(0))
	claimed := make([]bool, len(results))
	restore := c.InsertingBefore(out)
	defer restore()
	for _, m := range mutations {
		i := -1
		for j, r := range results {
			if n, ok := r.(*Node); ok && !claimed[j] && n.Name() == m.Value {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("unlift: mutation of %q: the output returns no (unclaimed) node %q", m.Target, m.Value)
		}
		claimed[i] = true
		var dst *Node
		if m.FromUserInput {
			if n := byName[m.Target]; n != nil && n.Op() == Placeholder && !n.Erased() {
				dst = n
			}
		} else {
			dst = attrNode[m.Target]
		}
		if dst == nil {
			return nil, fmt.Errorf("unlift: mutation of %q by node %q: no get_attr or input of that name", m.Target, m.Value)
		}
		c.Call(copyInPlace, dst, results[i])
	}
	var keep ops.Tuple
	for j, r := range results {
		if !claimed[j] {
			keep = append(keep, r)
		}
	}
	c.SetArgs(out, keep)
	return c, nil
}
