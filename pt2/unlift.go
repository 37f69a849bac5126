package pt2

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
)

// LiftedInputs returns the inputs of the signature that stand for state
// (parameters, buffers and tensor constants), in input order, as
// [fxgraph.Unlift] takes them: placeholder name and attribute FQN. User
// and constant inputs are not listed. It fails when one of them has no
// stored value in Graph's attribute store (a bare JSON program carries no
// weights), naming the input.
func (p *Program) LiftedInputs() ([]fxgraph.LiftedInput, error) {
	var out []fxgraph.LiftedInput
	for _, s := range p.Signature.Inputs {
		switch s.Kind {
		case Parameter, Buffer, TensorConstant:
			if p.Graph == nil {
				return nil, fmt.Errorf("pt2: unlift: program has no graph")
			}
			if _, ok := p.Graph.Attr(s.Target); !ok {
				return nil, fmt.Errorf("pt2: unlift: %s %q (input %q) has no stored value; a bare JSON program carries no weights, read a .pt2 archive",
					s.Kind, s.Target, s.Name)
			}
			out = append(out, fxgraph.LiftedInput{Placeholder: s.Name, Target: s.Target})
		}
	}
	return out, nil
}

// Mutations returns the mutating outputs of the signature (buffer,
// parameter and user-input mutations), in output order, as
// [fxgraph.Unlift] takes them. A user-input mutation's target is turned
// from its serialized name into the placeholder's node name.
func (p *Program) Mutations() []fxgraph.Mutation {
	var out []fxgraph.Mutation
	var placeholderNamed func(string) string
	for _, s := range p.Signature.Outputs {
		switch s.Kind {
		case BufferMutation, ParameterMutation:
			out = append(out, fxgraph.Mutation{Value: s.Name, Target: s.Target})
		case UserInputMutation:
			if placeholderNamed == nil {
				placeholderNamed = p.placeholderNames()
			}
			out = append(out, fxgraph.Mutation{Value: s.Name, Target: placeholderNamed(s.Target), FromUserInput: true})
		}
	}
	return out
}

// placeholderNames returns a function giving the node name of the
// placeholder whose serialized name is ser (the first, in graph order), or
// ser itself when there is none. It reads the graph once, so a caller
// looking up every signature entry stays linear in the graph.
func (p *Program) placeholderNames() func(ser string) string {
	byName := map[string]string{}
	if p.Graph != nil {
		for _, n := range p.Graph.Placeholders() {
			ser := p.SerializedName(n)
			if _, dup := byName[ser]; !dup {
				byName[ser] = n.Name()
			}
		}
	}
	return func(ser string) string {
		if name, ok := byName[ser]; ok {
			return name
		}
		return ser
	}
}

// Unlifted returns the program's graph as torch's ExportedProgram.module()
// gives it to prepare_pt2e (torchao-pt2e.md section 3.8): a copy of Graph
// in which each parameter, buffer and tensor-constant placeholder is a
// get_attr node of its FQN (named from it: "fc1.weight" gives node
// fc1_weight) right where the placeholder was, each buffer, parameter or
// user-input mutation is an aten.copy_.default before the output, and the
// output returns only the remaining outputs. User inputs and constant
// inputs stay placeholders. No _guards_fn node is added. p is not
// modified; the copy shares the attribute values.
//
// Errors name the signature entry: state without a stored value (see
// [Program.LiftedInputs]), or an entry that does not match the graph.
func (p *Program) Unlifted() (*fxgraph.Graph, error) {
	if p.Graph == nil {
		return nil, fmt.Errorf("pt2: unlift: program has no graph")
	}
	lifted, err := p.LiftedInputs()
	if err != nil {
		return nil, err
	}
	g, err := fxgraph.Unlift(p.Graph, lifted, p.Mutations())
	if err != nil {
		return nil, fmt.Errorf("pt2: %w", err) // "pt2: unlift: ..."
	}
	return g, nil
}
