package convert

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
)

var embeddingDefault = ops.MustOverload("aten.embedding.default")

// EmbeddingOperatorsConfig is torchao's get_embedding_operators_config: a
// QuantizationConfig with only a weight spec, uint8
// per_channel_affine_float_qparams on axis 0 (no quant_min/quant_max),
// observed by a PerChannelMinMaxObserver with eps 2**-12. Its scales and
// zero points are float32: zero point = -min/scale.
func EmbeddingOperatorsConfig() *QuantizationConfig {
	zero := 0
	return &QuantizationConfig{Weight: &QuantizationSpec{
		DType: observers.UInt8, QScheme: observers.PerChannelAffineFloatQParams, ChAxis: &zero,
		Observer: PerChannelMinMaxObserverCtor(observers.Config{Eps: xnnpackEps}),
	}}
}

// EmbeddingQuantizer is torchao's EmbeddingQuantizer: weight-only,
// per-row quantization of embedding tables. Annotate gives every
// aten.embedding.default node an annotation whose only entry is its
// weight (argument 0) with [EmbeddingOperatorsConfig]'s weight spec; the
// indices and the output stay unquantized. As in torchao the annotation
// does not set the Annotated flag (other quantizers' annotators do not
// look at embedding nodes), and an existing annotation is replaced: in a
// [ComposableQuantizer] that is a conflict when an earlier quantizer
// annotated the node.
//
// After convert (fold_quantize) the table becomes a uint8 _frozen_param
// read through dequantize_per_channel with float32 scales and zero points
// (quant range 0..255).
type EmbeddingQuantizer struct{}

// TransformForAnnotation does nothing.
func (EmbeddingQuantizer) TransformForAnnotation(*fxgraph.Graph) error { return nil }

// Validate accepts every graph.
func (EmbeddingQuantizer) Validate(*fxgraph.Graph) error { return nil }

// Annotate annotates the weight edge of every aten.embedding.default. A
// weight that is not a node (a literal) is an error naming the node.
func (EmbeddingQuantizer) Annotate(g *fxgraph.Graph) error {
	c := EmbeddingOperatorsConfig()
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction || n.Target() != embeddingDefault {
			continue
		}
		w, ok := n.Arg(0).(*fxgraph.Node)
		if !ok {
			return fmt.Errorf("node %q: %w: embedding weight (argument 0) is %T, not a node", n.Name(), ErrAnnotation, n.Arg(0))
		}
		SetAnnotation(n, &QuantizationAnnotation{InputQSpecMap: []InputQSpec{{Input: w, Spec: c.Weight}}})
	}
	return nil
}
