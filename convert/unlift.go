package convert

import (
	"github.com/fxquant/fxquant/fxgraph"
)

// LiftedInput ties one lifted placeholder to the parameter, buffer or
// constant it stands for; it is [fxgraph.LiftedInput].
type LiftedInput = fxgraph.LiftedInput

// Mutation is one mutating output of an exported program; it is
// [fxgraph.Mutation].
type Mutation = fxgraph.Mutation

// Unlift is ExportedProgram.module() (torchao-pt2e.md section 3.8) on a
// graph whose parameters, buffers and constants are placeholders: it
// returns a copy in which they are get_attr nodes, with copy_ nodes for
// the mutations. It is [fxgraph.Unlift], kept here beside Prepare, which
// expects its result; g is not modified. For a program read with package
// pt2, (*pt2.Program).Unlifted builds the lists from the graph signature.
func Unlift(g *fxgraph.Graph, lifted []LiftedInput, mutations []Mutation) (*fxgraph.Graph, error) {
	return fxgraph.Unlift(g, lifted, mutations)
}
