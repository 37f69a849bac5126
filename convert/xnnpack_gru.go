package convert

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
)

// srcGRU is the source of torchao's gru_io_only annotator.
var srcGRU = source{module: "torch.nn.modules.rnn.GRU"}

// annotateGRUIOOnly is the XNNPACK quantizer's gru_io_only annotator: for
// each nn.GRU module call (a source partition; on torch 2.14 exports the
// aten.gru.input node and its two getitems), unless one of its inputs or
// outputs is already claimed, the first user of the input activation gets
// an annotation observing that input, the first user of the hidden state
// an annotation observing the hidden state, both outputs (the output
// sequence and the final hidden state) get the output spec, and every
// node of the partition is marked annotated.
//
// Like torchao it assigns the hidden state's annotation after the input's:
// when both have the same first user (the aten.gru.input node, always on a
// torch 2.14 export), the hidden state's annotation replaces the input's,
// so only the hidden state is observed on the way in. torchao's partition
// lists its inputs from a Python set; fxquant takes them in the order the
// partition's nodes use them (input, then hidden state), which is the
// order torchao's recorded graphs show. A partition with other than two
// outputs (a GRU whose final hidden state is unused) is an error, as
// torchao's assertion.
func (q *xnnAnnotator) annotateGRUIOOnly(g *fxgraph.Graph, c *QuantizationConfig) error {
	for _, p := range sourcePartitions(g, []source{srcGRU}) {
		if !q.ok(p.nodes...) {
			continue
		}
		inputs := partitionInputs(p.nodes)
		if anyAnnotated(inputs...) || anyAnnotated(p.outputs...) {
			continue
		}
		if len(inputs) < 2 {
			return fmt.Errorf("convert: GRU partition at node %q: %w: want an input and a hidden state, got %d inputs", p.nodes[0].Name(), ErrAnnotation, len(inputs))
		}
		if len(p.outputs) != 2 {
			return fmt.Errorf("convert: GRU partition at node %q: %w: expecting GRU to have two outputs, got %d", p.nodes[0].Name(), ErrAnnotation, len(p.outputs))
		}
		for _, in := range inputs[:2] {
			users := in.Users()
			if len(users) == 0 {
				continue
			}
			a := &QuantizationAnnotation{Annotated: true}
			a.SetInput(in, qs(c.InputActivation))
			SetAnnotation(users[0], a)
		}
		for _, out := range p.outputs {
			SetAnnotation(out, &QuantizationAnnotation{OutputQSpec: qs(c.OutputActivation), Annotated: true})
		}
		MarkAnnotated(p.nodes...)
	}
	return nil
}

// partitionInputs lists the nodes a partition's nodes take as direct
// positional arguments from outside it, get_attr nodes excepted (torch's
// SourcePartition.input_nodes), in the order the partition uses them.
func partitionInputs(nodes []*fxgraph.Node) []*fxgraph.Node {
	// skip holds the partition's nodes and the inputs listed so far.
	skip := make(map[*fxgraph.Node]bool, len(nodes))
	for _, n := range nodes {
		skip[n] = true
	}
	var out []*fxgraph.Node
	for _, n := range nodes {
		for _, a := range n.Args() {
			an, ok := a.(*fxgraph.Node)
			if !ok || skip[an] || an.Op() == fxgraph.GetAttr {
				continue
			}
			skip[an] = true
			out = append(out, an)
		}
	}
	return out
}
