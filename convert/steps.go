package convert

import (
	"github.com/fxquant/fxquant/constfold"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/metadata"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/reftransform"
)

// convertSteps are the steps of Convert after observer replacement, in the
// order of spec section 3.5: duplicate dequantize, metadata porting, the
// optional mutable-buffer fold, constant folding constrained to ops.QuantizeOps (_QUANT_OPS),
// reference representation.
var convertSteps = []convertStep{
	{name: DuplicateDQPassName, run: func(g *fxgraph.Graph, _ *ops.Registry, _ ConvertOptions) error {
		_, err := DuplicateDQ(g)
		return err
	}},
	{name: metadata.PassName, run: func(g *fxgraph.Graph, _ *ops.Registry, _ ConvertOptions) error {
		_, err := metadata.PortNodeMetaForQDQ(g, metadata.Options{Annotation: PortMetadataAnnotation})
		return err
	}},
	{name: MutableBufferPassName, when: func(o ConvertOptions) bool { return !o.NoFoldQuantize && o.FoldQuantizeIntoMutableBuffers }, run: func(g *fxgraph.Graph, reg *ops.Registry, o ConvertOptions) error {
		_, err := FoldQuantizeIntoMutableBuffers(g, reg, o.Buffers)
		return err
	}},
	{name: constfold.PassName, when: func(o ConvertOptions) bool { return !o.NoFoldQuantize }, run: func(g *fxgraph.Graph, reg *ops.Registry, _ ConvertOptions) error {
		_, err := constfold.ConstantFold(g, constfold.Options{Registry: reg, Constraint: constfold.QuantNodeConstraint})
		return err
	}},
	{name: "reference_representation", when: func(o ConvertOptions) bool { return o.ReferenceRepresentation }, run: func(g *fxgraph.Graph, _ *ops.Registry, _ ConvertOptions) error {
		_, err := reftransform.Run(g)
		return err
	}},
}
