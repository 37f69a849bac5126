package convert

import (
	"fmt"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ConvertOptions configures Convert. The zero value is convert_pt2e with
// fold_quantize=True and no reference representation.
type ConvertOptions struct {
	// Registry supplies schemas and kernels; nil means ops.Default().
	Registry *ops.Registry
	// NoFoldQuantize is fold_quantize=False: the weight quantize nodes stay.
	NoFoldQuantize bool
	// ReferenceRepresentation is use_reference_representation=True.
	ReferenceRepresentation bool
	// PacketAffineOps makes affine observers insert the packets
	// torchao.choose_qparams_affine / quantize_affine / dequantize_affine,
	// as the torchao snapshot did, instead of their .default overloads.
	PacketAffineOps bool
	// FoldQuantizeIntoMutableBuffers is fold_quantize_into_mutable_buffers:
	// before constant folding, quantize registered buffers that are read
	// through q/dq and written back with copy_ into their storage
	// (FoldQuantizeIntoMutableBuffers, section 3.6). It needs fold_quantize:
	// setting it with NoFoldQuantize is an error wrapping ErrOptions.
	FoldQuantizeIntoMutableBuffers bool
	// Buffers lists the attribute paths of the registered buffers, in
	// registration order, for FoldQuantizeIntoMutableBuffers.
	Buffers []string
	// FromNodeGraphID is the graph_id written in the from_node records of
	// the q/dq nodes that replace observers. PyTorch writes the Python id
	// of the prepared graph, which cannot be reproduced; the default is 0.
	FromNodeGraphID int64
}

// Targets convert inserts.
var (
	qPerTensor        = ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	dqPerTensor       = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default")
	qPerTensorTensor  = ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor")
	dqPerTensorTensor = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.tensor")
	qPerChannel       = ops.MustOverload("quantized_decomposed.quantize_per_channel.default")
	dqPerChannel      = ops.MustOverload("quantized_decomposed.dequantize_per_channel.default")
	chooseQParams     = ops.MustOverload("quantized_decomposed.choose_qparams.tensor")
	chooseQParamsSym  = ops.MustOverload("quantized_decomposed.choose_qparams_symmetric.tensor")
	convertNoFuse     = ops.MustOverload("quantized_decomposed.convert_element_type.no_fuse")
	chooseAffine      = ops.MustPacket("torchao.choose_qparams_affine")
	quantizeAffine    = ops.MustPacket("torchao.quantize_affine")
	dequantizeAffine  = ops.MustPacket("torchao.dequantize_affine")
)

// Convert is convert_pt2e (spec section 3.5) on a prepared and calibrated
// graph. Its steps, in order:
//
//  1. every observer call_module node is replaced per section 2.4 (the
//     observer's convert plan), then dead code is removed and the observer
//     attributes are dropped;
//  2. duplicate dequantize (DuplicateDQ);
//  3. metadata porting;
//  4. unless NoFoldQuantize, the mutable-buffer fold when
//     FoldQuantizeIntoMutableBuffers is set, then constant folding
//     constrained to ops.QuantizeOps (_QUANT_OPS);
//  5. if ReferenceRepresentation, the reference representation rewrite.
//
// Convert works on a clone and swaps it in only on success: on error g is
// unchanged. An observer that saw no data, or whose plan fails, is an error
// wrapping ErrObserver that names the observer node.
func Convert(g *fxgraph.Graph, opts ConvertOptions) error {
	reg := opts.Registry
	if reg == nil {
		reg = ops.Default()
	}
	if opts.FoldQuantizeIntoMutableBuffers && opts.NoFoldQuantize {
		return fmt.Errorf("convert: %w: fold_quantize_into_mutable_buffers=True requires fold_quantize=True", ErrOptions)
	}
	c, _ := g.Clone()
	if err := ReplaceObservers(c, opts); err != nil { // resets steps
		return fmt.Errorf("convert: %w", err)
	}
	for _, st := range convertSteps {
		if st.when != nil && !st.when(opts) {
			continue
		}
		if err := stepThen(func() error { return st.run(c, reg, opts) }); err != nil {
			return fmt.Errorf("convert: %s: %w", st.name, err)
		}
	}
	// The nodes convert and its passes created carry no type yet: derive
	// each from its op's result-type rule (existing types stay as they are).
	fxgraph.InferMissingTypes(c, reg)
	if err := step(); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	g.ReplaceWith(c)
	return nil
}

// convertStep is one step of Convert after observer replacement.
type convertStep struct {
	name string
	when func(ConvertOptions) bool
	run  func(g *fxgraph.Graph, reg *ops.Registry, opts ConvertOptions) error
}

// ReplaceObservers is step 1 of Convert (_convert_to_reference_decomposed_fx):
// each observer node is replaced by the nodes of its observer's convert plan,
// inserted right before it; its users are rewired to the final dequantize
// (or to its input, for a removed observer) and it is erased. Then dead code
// is eliminated and the observer attributes no node uses are deleted. It
// edits g in place, all or nothing: on error g is left exactly as it was
// (the edits run in a transaction, see [fxgraph.Graph.Begin]).
func ReplaceObservers(g *fxgraph.Graph, opts ConvertOptions) error {
	steps.Store(0) // its observers are Convert's first steps
	return g.Atomic(func() error { return replaceObservers(g, opts) })
}

// replaceObservers is ReplaceObservers, inside its transaction.
func replaceObservers(g *fxgraph.Graph, opts ConvertOptions) error {
	reg := opts.Registry
	if reg == nil {
		reg = ops.Default()
	}
	for _, n := range g.Nodes() {
		if n.Erased() {
			continue
		}
		o, ok := isObserverNode(g, n)
		if !ok {
			continue
		}
		err := step()
		if err == nil {
			err = replaceObserver(g, n, o, opts)
		}
		if err != nil {
			if in, ok := n.Arg(0).(*fxgraph.Node); ok && in != nil {
				return fmt.Errorf("observer node %q (%s) of node %q: %w", n.Name(), o.Class(), in.Name(), err)
			}
			return fmt.Errorf("observer node %q (%s): %w", n.Name(), o.Class(), err)
		}
	}
	g.EliminateDeadCode(reg, nil)
	used := map[string]bool{}
	for n := range g.All() {
		if n.Op() == fxgraph.CallModule || n.Op() == fxgraph.GetAttr {
			used[n.TargetName()] = true
		}
	}
	for _, name := range g.AttrNames() {
		if v, _ := g.Attr(name); !used[name] {
			if _, isObs := v.(observers.Observer); isObs {
				g.DeleteAttr(name)
			}
		}
	}
	return nil
}

// scopeOf is node_name_to_scope: the last path component of the innermost
// nn_module_stack entry, or "".
func scopeOf(n *fxgraph.Node) string {
	st := n.Meta.NNModuleStack
	if len(st) == 0 {
		return ""
	}
	p := st[len(st)-1].Path
	if i := strings.LastIndex(p, "."); i >= 0 {
		p = p[i+1:]
	}
	return p
}

func replaceObserver(g *fxgraph.Graph, obsNode *fxgraph.Node, o observers.Observer, opts ConvertOptions) error {
	if len(obsNode.Args()) != 1 {
		return fmt.Errorf("%w: want one argument, got %d", ErrObserver, len(obsNode.Args()))
	}
	x, ok := obsNode.Arg(0).(*fxgraph.Node)
	if !ok {
		return fmt.Errorf("%w: argument is not a node", ErrObserver)
	}
	plan, err := o.Plan()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrObserver, err)
	}
	restore := g.InsertingBefore(obsNode)
	defer restore()
	var dqKw []fxgraph.Kwarg
	if tt, ok := x.Type().(ops.TensorType); ok && tt.DType() != tensor.Float32 {
		dqKw = []fxgraph.Kwarg{{Name: "out_dtype", Value: tt.DType()}}
	}
	// fromObserver gives q and dq the from_node record of nodes created from
	// the observer and its numeric debug handle (torchao: the observer's
	// from_node, and before that its handle); it returns dq.
	fromObserver := func(q, dq *fxgraph.Node) *fxgraph.Node {
		fromNode := observerFromNode(obsNode, opts.FromNodeGraphID)
		handle := obsNode.Meta.NumericDebugHandle
		q.Meta.FromNode, dq.Meta.FromNode = fromNode, fromNode
		q.Meta.NumericDebugHandle, dq.Meta.NumericDebugHandle = handle, handle
		return dq
	}
	var final *fxgraph.Node
	switch plan.Kind {
	case observers.PlanRemove:
		g.ReplaceAllUsesWith(obsNode, x, nil)
		return g.Erase(obsNode)
	case observers.PlanPerTensor:
		q := g.Call(qPerTensor, x, plan.Scale, plan.ZeroPoint, plan.QuantMin, plan.QuantMax, plan.Dtype)
		dq := g.CallKw(dqPerTensor, []ops.Value{q, plan.Scale, plan.ZeroPoint, plan.QuantMin, plan.QuantMax, plan.Dtype}, dqKw)
		final = fromObserver(q, dq)
	case observers.PlanPerChannel:
		scope := scopeOf(x)
		sName := g.FreshAttrName(scope + "_scale_")
		g.SetAttr(sName, plan.ScaleTensor)
		zName := g.FreshAttrName(scope + "_zero_point_")
		g.SetAttr(zName, plan.ZeroPointTensor)
		s := g.GetAttr(sName, tensorTypeOf(plan.ScaleTensor))
		z := g.GetAttr(zName, tensorTypeOf(plan.ZeroPointTensor))
		axis := int64(plan.Axis)
		q := g.Call(qPerChannel, x, s, z, axis, plan.QuantMin, plan.QuantMax, plan.Dtype)
		dq := g.CallKw(dqPerChannel, []ops.Value{q, s, z, axis, plan.QuantMin, plan.QuantMax, plan.Dtype}, dqKw)
		final = fromObserver(q, dq)
	case observers.PlanDynamic:
		choose := chooseQParams
		if plan.Symmetric {
			choose = chooseQParamsSym
		}
		cq := g.Call(choose, x, plan.QuantMin, plan.QuantMax, plan.Eps, plan.Dtype)
		s := g.Call(ops.GetItem, cq, int64(0))
		z := g.Call(ops.GetItem, cq, int64(1))
		q := g.Call(qPerTensorTensor, x, s, z, plan.QuantMin, plan.QuantMax, plan.Dtype)
		dq := g.CallKw(dqPerTensorTensor, []ops.Value{q, s, z, plan.QuantMin, plan.QuantMax, plan.Dtype}, dqKw)
		final = fromObserver(q, dq)
	case observers.PlanFloat16:
		a := g.Call(convertNoFuse, x, tensor.Float16)
		final = g.Call(convertNoFuse, a, tensor.Float32)
	case observers.PlanAffineStatic, observers.PlanAffineDynamic:
		final = insertAffine(g, x, plan, opts.PacketAffineOps)
	default:
		return fmt.Errorf("%w: unknown convert plan %s", ErrObserver, plan.Kind)
	}
	g.ReplaceAllUsesWith(obsNode, final, nil)
	return g.Erase(obsNode)
}

// affineTarget returns the packet or its .default overload.
func affineTarget(p ops.Packet, packet bool) ops.Target {
	if packet {
		return p
	}
	return p.Default()
}

// insertAffine is AffineQuantizedObserverBase.convert.
func insertAffine(g *fxgraph.Graph, x *fxgraph.Node, plan observers.ConvertPlan, packet bool) *fxgraph.Node {
	block := make(ops.Tuple, len(plan.BlockSize))
	for i, b := range plan.BlockSize {
		block[i] = b
	}
	var qmin, qmax ops.Value = plan.QuantMin, plan.QuantMax
	if plan.QuantRangeNone {
		qmin, qmax = nil, nil
	}
	var s, z ops.Value
	if plan.Kind == observers.PlanAffineStatic {
		sName := g.FreshAttrName("_scale")
		g.SetAttr(sName, plan.ScaleTensor)
		sn := g.GetAttr(sName, tensorTypeOf(plan.ScaleTensor))
		s = sn
		if plan.ZeroPointTensor != nil {
			zName := g.FreshAttrName("_zero_point")
			g.SetAttr(zName, plan.ZeroPointTensor)
			z = g.GetAttr(zName, tensorTypeOf(plan.ZeroPointTensor))
		}
	} else {
		var eps ops.Value = plan.Eps
		if plan.EpsNone {
			eps = nil
		}
		dt := func(d tensor.DType) ops.Value {
			if d == tensor.Unknown {
				return nil
			}
			return d
		}
		cq := g.Call(affineTarget(chooseAffine, packet), x, plan.MappingType.String(), block, plan.Dtype, qmin, qmax, eps, dt(plan.ScaleDType), dt(plan.ZeroPointDType))
		s = g.Call(ops.GetItem, cq, int64(0))
		z = g.Call(ops.GetItem, cq, int64(1))
	}
	q := g.Call(affineTarget(quantizeAffine, packet), x, block, s, z, plan.Dtype, qmin, qmax)
	return g.CallKw(affineTarget(dequantizeAffine, packet), []ops.Value{q, block, s, z, plan.Dtype, qmin, qmax},
		[]fxgraph.Kwarg{{Name: "output_dtype", Value: plan.OutputDType}})
}

func tensorTypeOf(t *tensor.Tensor) ops.Type {
	if t == nil {
		return nil
	}
	shape := make([]int64, t.Dim())
	for i, d := range t.Shape() {
		shape[i] = int64(d)
	}
	return ops.Plain(t.DType(), shape...)
}
