package pt2

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// WithGraph returns a program that holds g, an unlifted graph derived from
// p's (for example p.Unlifted() after prepare, calibrate and convert), with
// p's signature toward its user: the same user inputs in the same order and
// as many user outputs, so that PyTorch runs the written program on the
// inputs it ran p on. The graph's get_attr tensors are lifted again when the
// program is written: those that p lifted keep their names and kinds,
// and new ones (folded weights, observers' scales) become buffers named as
// torch.export names them.
//
// As torchao's convert ends with GraphModule.delete_all_unused_submodules,
// parameters and buffers of a submodule that no get_attr or call_module
// path of g goes through are dropped (a batch norm's after the conv-bn
// fold), while a used submodule keeps all of them. Attributes of the root
// module always stay.
//
// Every value node of g must have a type, or one its op's result rule
// derives (fxgraph.InferMissingTypes fills them in g); otherwise WithGraph
// fails naming the node. p itself is not changed; the new program shares
// p's pass-through fields.
func (p *Program) WithGraph(g *fxgraph.Graph) (*Program, error) {
	if g == nil {
		return nil, fmt.Errorf("pt2: WithGraph: nil graph")
	}
	q := *p // shallow copy: keep the pass-through fields
	q.Graph = g
	q.Unreadable = nil
	used := map[string]bool{}
	for n := range g.All() {
		if n.Op() == fxgraph.GetAttr || n.Op() == fxgraph.CallModule {
			path := ""
			for part := range strings.SplitSeq(n.TargetName(), ".") {
				if path != "" {
					path += "."
				}
				path += part
				used[path] = true
			}
		}
	}
	q.LiftSpecs = map[string]InputSpec{}
	for _, s := range p.Signature.Inputs {
		switch s.Kind {
		case Parameter, Buffer, TensorConstant:
			owner := ""
			if i := strings.LastIndex(s.Target, "."); i >= 0 {
				owner = s.Target[:i]
			}
			if owner != "" && !used[owner] && !used[s.Target] {
				continue
			}
			q.LiftSpecs[s.Target] = InputSpec{Kind: s.Kind, Name: s.Name, Persistent: s.Persistent}
		}
	}
	var sig Signature
	var floatIn, gotIn []string
	for _, ph := range g.Placeholders() {
		sig.Inputs = append(sig.Inputs, InputSpec{Kind: UserInput, Name: ph.Name()})
		gotIn = append(gotIn, ph.Name())
	}
	on, ok := g.OutputNode()
	if !ok {
		return nil, fmt.Errorf("pt2: WithGraph: the graph has no output node")
	}
	for i, v := range ops.AsSequence(on.Arg(0)) {
		n, ok := v.(*fxgraph.Node)
		if !ok {
			return nil, fmt.Errorf("pt2: WithGraph: output %d of the graph is %T, want a node", i, v)
		}
		sig.Outputs = append(sig.Outputs, OutputSpec{Kind: UserOutput, Name: n.Name()})
	}
	for _, s := range p.Signature.Inputs {
		if s.Kind == UserInput {
			floatIn = append(floatIn, s.Name)
		}
	}
	nOut := 0
	for _, s := range p.Signature.Outputs {
		if s.Kind == UserOutput {
			nOut++
		}
	}
	if !slices.Equal(gotIn, floatIn) {
		return nil, fmt.Errorf("pt2: WithGraph: the graph's inputs %v differ from the program's user inputs %v", gotIn, floatIn)
	}
	if len(sig.Outputs) != nOut {
		return nil, fmt.Errorf("pt2: WithGraph: the graph returns %d values, the program %d user outputs", len(sig.Outputs), nOut)
	}
	q.Signature = sig
	if err := fillTypes(g); err != nil {
		return nil, fmt.Errorf("pt2: WithGraph: %w", err)
	}
	return &q, nil
}

// fillTypes gives every untyped value of g the type its op's result-type
// rule derives, so that the writer, which needs a TensorMeta for every
// value, can write any node. A value node whose type cannot be derived is
// an error naming it.
func fillTypes(g *fxgraph.Graph) error {
	if _, left := fxgraph.InferMissingTypes(g, nil); left == 0 {
		return nil
	}
	for n := range g.All() {
		switch n.Op() {
		case fxgraph.Placeholder, fxgraph.GetAttr, fxgraph.CallFunction:
			if n.Type() != nil {
				continue
			}
			if n.Op() == fxgraph.CallFunction {
				_, err := fxgraph.InferType(n, nil)
				return fmt.Errorf("node %q (%s): cannot compute its type: %w", n.Name(), n.Target(), err)
			}
			return fmt.Errorf("node %q (%s): has no type", n.Name(), n.TargetName())
		}
	}
	return nil
}
