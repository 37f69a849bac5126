package convert

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// LiftedInput ties one lifted placeholder of an exported program to the
// state it stands for (a parameter, buffer or tensor constant): the
// placeholder's name ("p_fc1_weight") and the attribute path
// ("fc1.weight"). User inputs are not listed.
type LiftedInput struct {
	Placeholder string
	Target      string
}

// Mutation is one mutating output of an exported program: the returned
// node's name and the buffer path or user-input name it is written to.
// FromUserInput marks a USER_INPUT_MUTATION (Target is then the input's
// placeholder name).
type Mutation struct {
	Value         string
	Target        string
	FromUserInput bool
}

// Unlift is ExportedProgram.module() (spec section 3.8) on a graph whose
// parameters, buffers and constants are placeholders: it returns a copy in
// which each lifted placeholder is replaced by a get_attr node of its target,
// inserted right after the placeholder (so they end up at the top of the
// graph, in input order), named from the target as FX names it
// ("fc1.weight" -> node fc1_weight), with the placeholder's type and metadata.
// Mutations become aten.copy_.default(<buffer get_attr or input>, <value>)
// before the output, and the output then returns only the remaining
// (user) outputs. The attributes must already be in g's attribute store.
// No _guards_fn node is added. g is not modified.
func Unlift(g *fxgraph.Graph, lifted []LiftedInput, mutations []Mutation) (*fxgraph.Graph, error) {
	c, _ := g.Clone()
	byName := map[string]*fxgraph.Node{}
	for n := range c.All() {
		byName[n.Name()] = n
	}
	attrNode := map[string]*fxgraph.Node{}
	for _, l := range lifted {
		ph, ok := byName[l.Placeholder]
		if !ok || ph.Op() != fxgraph.Placeholder {
			return nil, fmt.Errorf("unlift: lifted input %q: no placeholder of that name", l.Placeholder)
		}
		if _, ok := c.Attr(l.Target); !ok {
			return nil, fmt.Errorf("unlift: lifted input %q: attribute %q is not in the graph", l.Placeholder, l.Target)
		}
		restore := c.InsertingAfter(ph)
		ga := c.GetAttr(l.Target, ph.Type())
		restore()
		ga.Meta = ph.Meta.Clone()
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
	mutated := map[string]Mutation{}
	for _, m := range mutations {
		mutated[m.Value] = m
	}
	var keep ops.Tuple
	restore := c.InsertingBefore(out)
	defer restore()
	copyOp := ops.MustOverload("aten.copy_.default")
	for _, r := range results {
		n, ok := r.(*fxgraph.Node)
		m, isMut := mutated[nodeName(n)]
		if !ok || !isMut {
			keep = append(keep, r)
			continue
		}
		var dst *fxgraph.Node
		if m.FromUserInput {
			dst = byName[m.Target]
		} else {
			dst = attrNode[m.Target]
		}
		if dst == nil || dst.Erased() {
			return nil, fmt.Errorf("unlift: mutation of %q by node %q: no get_attr or input of that name", m.Target, m.Value)
		}
		c.Call(copyOp, dst, n)
	}
	c.SetArgs(out, keep)
	return c, nil
}

func nodeName(n *fxgraph.Node) string {
	if n == nil {
		return ""
	}
	return n.Name()
}
