package pt2

import (
	"fmt"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestSiteText checks that the site stack spells locations as the
// writer's fmt.Sprintf calls did, for each kind of site and nested ones.
func TestSiteText(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x\"é", ops.Plain(tensor.Float32, 2))
	ov := ops.MustOverload("aten.cat.default")
	e := &encoder{}

	node := e.root(site{kind: siteNode, node: x, ov: ov})
	base := fmt.Sprintf("node %q (%s)", x.Name(), ov)
	arg := e.child(node, site{kind: siteArg, text: "tensors"})
	idx := e.child(arg, site{kind: siteIndex, i: 3})
	key := e.child(idx, site{kind: siteKey, text: "k\n"})
	want := fmt.Sprintf("%s[%q]", fmt.Sprintf("%s[%d]", fmt.Sprintf("%s: argument %q", base, "tensors"), 3), "k\n")
	if got := e.loc(key); got != want {
		t.Errorf("nested: %s, want %s", got, want)
	}
	e.drop(idx)
	pos := e.child(arg, site{kind: sitePositional, i: 1})
	if got, want := e.loc(pos), fmt.Sprintf("%s: %s", fmt.Sprintf("%s: argument %q", base, "tensors"), fmt.Sprintf("positional argument %d", 1)); got != want {
		t.Errorf("positional after drop: %s, want %s", got, want)
	}
	for _, c := range []struct {
		s    site
		want string
	}{
		{site{kind: siteSymNode, node: x, text: "add"}, fmt.Sprintf("node %q (operator.%s)", x.Name(), "add")},
		{site{kind: siteInput, text: "p_w"}, fmt.Sprintf("input %q", "p_w")},
		{site{kind: siteOutput, i: 2}, fmt.Sprintf("output %d", 2)},
	} {
		if got := e.loc(e.root(c.s)); got != c.want {
			t.Errorf("%s, want %s", got, c.want)
		}
	}
}
