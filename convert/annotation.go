package convert

import (
	"errors"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/tensor"
)

// AnnotationKey is the node metadata key (fxgraph.Meta.Extra) under which a
// quantizer stores a node's *QuantizationAnnotation, torchao's
// Q_ANNOTATION_KEY.
const AnnotationKey = "quantization_annotation"

// Sentinel errors of the annotation model, prepare, calibration and convert.
// Returned errors wrap one of them where it applies.
var (
	// ErrAnnotation: an annotation is malformed (a spec on a node that is
	// not an argument of the annotated node, a node of another graph, a
	// kwarg node, an invalid range).
	ErrAnnotation = errors.New("bad quantization annotation")
	// ErrSharedSpec: a SharedQuantizationSpec or DerivedQuantizationSpec
	// points at an edge or node that has no spec, or whose observer does
	// not exist yet.
	ErrSharedSpec = errors.New("bad shared quantization spec")
	// ErrObserver: an observer cannot be built or converted (no data,
	// bad configuration).
	ErrObserver = errors.New("observer failure")
	// ErrBatch: a calibration batch does not fit the graph's inputs.
	ErrBatch = errors.New("bad calibration batch")
	// ErrFold: conv+BN or linear+BN folding found a malformed pattern.
	ErrFold = errors.New("cannot fold batch norm")
	// ErrMutableBuffer: a buffer that matches the mutable-buffer fold
	// pattern cannot be folded (section 3.6).
	ErrMutableBuffer = errors.New("cannot fold quantization into mutable buffer")
	// ErrOptions: an invalid combination of options.
	ErrOptions = errors.New("invalid options")
)

// QSpec is one of the quantization spec kinds: *QuantizationSpec,
// *FixedQParamsQuantizationSpec, *SharedQuantizationSpec or
// *DerivedQuantizationSpec. A nil QSpec means "not quantized".
type QSpec interface {
	isQSpec()
}

// ObserverCtor builds the observer for a QuantizationSpec (torchao's
// observer_or_fake_quant_ctr called through with_args): the spec's dtype,
// quant_min, quant_max, qscheme, is_dynamic (and ch_axis for per-channel
// observers) override the constructor's own defaults, even when unset.
type ObserverCtor func(spec *QuantizationSpec) (observers.Observer, error)

// QuantizationSpec describes how one edge or output is quantized: torchao's
// QuantizationSpec.
type QuantizationSpec struct {
	// DType is the quantized dtype (torch.int8, torch.uint8, ...); the
	// observer is built with it and convert's quantize nodes use it.
	DType observers.DType
	// Observer builds the observer; required.
	Observer ObserverCtor
	// QuantMin and QuantMax are the range; nil is None (the dtype's full
	// range). Prepare rejects QuantMin > QuantMax.
	QuantMin, QuantMax *int64
	// QScheme is the quantization scheme (per_tensor_affine,
	// per_channel_symmetric, ...); QSchemeUnset is None.
	QScheme observers.QScheme
	// ChAxis is the channel axis of a per-channel scheme; nil is None.
	// Prepare rejects a negative axis.
	ChAxis *int
	// IsDynamic asks for qparams computed at run time (choose_qparams in
	// the converted graph) instead of from calibration.
	IsDynamic bool
}

// FixedQParamsQuantizationSpec quantizes with fixed scale and zero point.
type FixedQParamsQuantizationSpec struct {
	// DType is the quantized dtype of the fixed-qparams quantize nodes.
	DType observers.DType
	// Scale is the fixed scale every quantize node of the edge gets.
	Scale float64
	// ZeroPoint is the fixed zero point.
	ZeroPoint int64
	// QuantMin and QuantMax are the range; nil is None (the dtype's full
	// range).
	QuantMin, QuantMax *int64
	// QScheme is the quantization scheme; QSchemeUnset is None.
	QScheme observers.QScheme
	// IsDynamic is carried for torchao parity; fixed qparams are never
	// computed at run time.
	IsDynamic bool
}

// SharedQuantizationSpec shares the observer of another edge or node output.
type SharedQuantizationSpec struct {
	// EdgeOrNode is the edge or node output whose observer is shared; it
	// must have a spec of its own (or share one), else Prepare fails with
	// ErrSharedSpec.
	EdgeOrNode EdgeOrNode
}

// DeriveQParamsFunc computes the derived scale and zero point from the
// observers of DerivedQuantizationSpec.DerivedFrom, in that order.
type DeriveQParamsFunc func(obs []observers.Observer) (scale, zeroPoint *tensor.Tensor, err error)

// DerivedQuantizationSpec derives its qparams from other observers (for
// example a bias scale = input scale * weight scale).
type DerivedQuantizationSpec struct {
	// DerivedFrom lists the edges and node outputs whose observers
	// DeriveQParams reads, in the order it receives them; each must have
	// an observer, else Prepare fails with ErrSharedSpec.
	DerivedFrom []EdgeOrNode
	// DeriveQParams computes the scale and zero point at convert time.
	DeriveQParams DeriveQParamsFunc
	// DType is the quantized dtype (torch.int32 for a bias).
	DType observers.DType
	// QuantMin and QuantMax are the range; nil is None.
	QuantMin, QuantMax *int64
	// QScheme is the quantization scheme; a per-channel scheme needs
	// ChAxis.
	QScheme observers.QScheme
	// ChAxis is the channel axis of a per-channel scheme; nil is None.
	ChAxis *int
	// IsDynamic is carried for torchao parity (section 3.1).
	IsDynamic bool
}

func (*QuantizationSpec) isQSpec()             {}
func (*FixedQParamsQuantizationSpec) isQSpec() {}
func (*SharedQuantizationSpec) isQSpec()       {}
func (*DerivedQuantizationSpec) isQSpec()      {}

// EdgeOrNode names an input edge (Producer feeding Consumer) or, with a nil
// Consumer, the output value of Producer. It is comparable and works as a
// map key.
type EdgeOrNode struct {
	// Producer is the node whose value flows on the edge, or whose output
	// is meant.
	Producer *fxgraph.Node
	// Consumer is the node that takes Producer as an argument; nil for a
	// node output.
	Consumer *fxgraph.Node
}

// Edge returns the input edge from producer to consumer.
func Edge(producer, consumer *fxgraph.Node) EdgeOrNode {
	return EdgeOrNode{Producer: producer, Consumer: consumer}
}

// NodeOutput returns the output value of n.
func NodeOutput(n *fxgraph.Node) EdgeOrNode { return EdgeOrNode{Producer: n} }

// IsEdge reports whether e is an input edge rather than a node output.
func (e EdgeOrNode) IsEdge() bool { return e.Consumer != nil }

// String prints "(%a, %b)" for an edge and "%a" for a node output.
func (e EdgeOrNode) String() string {
	if e.IsEdge() {
		return fmt.Sprintf("(%s, %s)", e.Producer, e.Consumer)
	}
	return fmt.Sprint(e.Producer)
}

// InputQSpec is one entry of QuantizationAnnotation.InputQSpecMap.
type InputQSpec struct {
	// Input is the argument node; it must be a positional argument of the
	// annotated node (directly or inside a list or tuple).
	Input *fxgraph.Node
	// Spec is the spec of the edge (Input, annotated node); nil leaves
	// the edge unobserved.
	Spec QSpec
}

// QuantizationAnnotation is what a quantizer attaches to a node (torchao's
// QuantizationAnnotation): specs for its input edges, in insertion order,
// and for its output.
type QuantizationAnnotation struct {
	// InputQSpecMap holds one entry per annotated input node, in the order
	// they were added; use SetInput to add or replace one.
	InputQSpecMap []InputQSpec
	// OutputQSpec is the spec of the node's output; nil for none.
	OutputQSpec QSpec
	// NoImplicitSharing is allow_implicit_sharing=False.
	NoImplicitSharing bool
	// Annotated is torchao's _annotated flag: the node was claimed by an
	// annotator and later annotators leave it alone.
	Annotated bool
}

// SetInput sets the spec of input in, keeping the position of an existing
// entry (as a Python dict assignment does).
func (a *QuantizationAnnotation) SetInput(in *fxgraph.Node, s QSpec) {
	for i := range a.InputQSpecMap {
		if a.InputQSpecMap[i].Input == in {
			a.InputQSpecMap[i].Spec = s
			return
		}
	}
	a.InputQSpecMap = append(a.InputQSpecMap, InputQSpec{Input: in, Spec: s})
}

// Input returns the spec of input in and whether it has an entry.
func (a *QuantizationAnnotation) Input(in *fxgraph.Node) (QSpec, bool) {
	for _, e := range a.InputQSpecMap {
		if e.Input == in {
			return e.Spec, true
		}
	}
	return nil, false
}

// Valid is torchao's is_valid_annotation: a has an input spec entry or an
// output spec.
func (a *QuantizationAnnotation) Valid() bool {
	return a != nil && (len(a.InputQSpecMap) > 0 || a.OutputQSpec != nil)
}

// Annotation returns n's annotation, or nil.
func Annotation(n *fxgraph.Node) *QuantizationAnnotation {
	v, ok := n.Meta.Get(AnnotationKey)
	if !ok {
		return nil
	}
	a, _ := v.(*QuantizationAnnotation)
	return a
}

// SetAnnotation stores a on n (nil removes it).
func SetAnnotation(n *fxgraph.Node, a *QuantizationAnnotation) {
	if a == nil {
		if n.Meta.Extra != nil {
			delete(n.Meta.Extra, AnnotationKey)
		}
		return
	}
	n.Meta.Set(AnnotationKey, a)
}

// annotationOf returns n's annotation, creating an empty one.
func annotationOf(n *fxgraph.Node) *QuantizationAnnotation {
	a := Annotation(n)
	if a == nil {
		a = &QuantizationAnnotation{}
		SetAnnotation(n, a)
	}
	return a
}

// AnnotateInput sets the spec of the edge (in, n), creating n's annotation
// if needed (torchao's annotate_input_qspec_map).
func AnnotateInput(n, in *fxgraph.Node, s QSpec) {
	annotationOf(n).SetInput(in, s)
}

// AnnotateOutput sets n's output spec, creating its annotation if needed
// (torchao's annotate_output_qspec).
func AnnotateOutput(n *fxgraph.Node, s QSpec) {
	annotationOf(n).OutputQSpec = s
}

// IsAnnotated reports whether some annotator has claimed n.
func IsAnnotated(n *fxgraph.Node) bool {
	a := Annotation(n)
	return a != nil && a.Annotated
}

// MarkAnnotated sets the Annotated flag on each node, creating annotations.
func MarkAnnotated(nodes ...*fxgraph.Node) {
	for _, n := range nodes {
		if n != nil {
			annotationOf(n).Annotated = true
		}
	}
}

// Quantizer annotates a graph for Prepare (torchao's Quantizer).
type Quantizer interface {
	// TransformForAnnotation may rewrite the graph before annotation
	// (through Graph methods); most quantizers do nothing.
	TransformForAnnotation(g *fxgraph.Graph) error
	// Annotate attaches QuantizationAnnotations to nodes.
	Annotate(g *fxgraph.Graph) error
	// Validate checks the annotated graph.
	Validate(g *fxgraph.Graph) error
}

// ComposableQuantizer is torchao's ComposableQuantizer: it runs several
// quantizers one after another, every TransformForAnnotation in order, then
// every Annotate, then every Validate. An earlier quantizer's annotation
// wins when a later one respects the Annotated flag. After each Annotate
// it applies torchao's conflict rule: a quantizer may add annotations and
// change an existing annotation in place (MarkAnnotated), but replacing or
// removing one an earlier quantizer made is an error wrapping
// ErrAnnotation that names the quantizer and the node ("quantizer 1
// (EmbeddingQuantizer) has changed annotations on node "embedding""), as
// torchao's RuntimeError.
type ComposableQuantizer []Quantizer

// TransformForAnnotation runs each quantizer's transform in order.
func (c ComposableQuantizer) TransformForAnnotation(g *fxgraph.Graph) error {
	for i, q := range c {
		if err := q.TransformForAnnotation(g); err != nil {
			return fmt.Errorf("quantizer %d: %w", i, err)
		}
	}
	return nil
}

// Annotate runs each quantizer's Annotate in order, checking after each
// that no annotation recorded so far was replaced or removed.
func (c ComposableQuantizer) Annotate(g *fxgraph.Graph) error {
	seen := map[*fxgraph.Node]*QuantizationAnnotation{}
	for i, q := range c {
		if err := q.Annotate(g); err != nil {
			return fmt.Errorf("quantizer %d: %w", i, err)
		}
		if err := recordAnnotations(g, seen, i, q); err != nil {
			return err
		}
	}
	return nil
}

// Validate runs each quantizer's Validate in order.
func (c ComposableQuantizer) Validate(g *fxgraph.Graph) error {
	for i, q := range c {
		if err := q.Validate(g); err != nil {
			return fmt.Errorf("quantizer %d: %w", i, err)
		}
	}
	return nil
}

// RemapNodes returns a copy of a whose edges, nodes and shared or derived
// specs refer to mapNode's nodes. It implements fxgraph.NodeRefHolder, so
// fxgraph.Graph.Clone gives a cloned graph's annotations the clone's nodes.
func (a *QuantizationAnnotation) RemapNodes(mapNode func(*fxgraph.Node) *fxgraph.Node) any {
	mapN := func(n *fxgraph.Node) *fxgraph.Node {
		if n == nil {
			return nil
		}
		return mapNode(n)
	}
	mapEON := func(e EdgeOrNode) EdgeOrNode {
		return EdgeOrNode{Producer: mapN(e.Producer), Consumer: mapN(e.Consumer)}
	}
	mapSpec := func(s QSpec) QSpec {
		switch s := s.(type) {
		case *SharedQuantizationSpec:
			return &SharedQuantizationSpec{EdgeOrNode: mapEON(s.EdgeOrNode)}
		case *DerivedQuantizationSpec:
			d := *s
			d.DerivedFrom = make([]EdgeOrNode, len(s.DerivedFrom))
			for i, e := range s.DerivedFrom {
				d.DerivedFrom[i] = mapEON(e)
			}
			return &d
		}
		return s
	}
	b := &QuantizationAnnotation{
		OutputQSpec:       mapSpec(a.OutputQSpec),
		NoImplicitSharing: a.NoImplicitSharing,
		Annotated:         a.Annotated,
	}
	for _, e := range a.InputQSpecMap {
		b.InputQSpecMap = append(b.InputQSpecMap, InputQSpec{Input: mapN(e.Input), Spec: mapSpec(e.Spec)})
	}
	return b
}
