package convert

import (
	"fmt"
	"math"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// QuantizationConfig is torchao's QuantizationConfig: the specs an annotator
// gives an op's input activations, output, weight and bias (nil = not
// quantized).
type QuantizationConfig struct {
	// InputActivation is the spec of an op's activation inputs; its
	// IsDynamic picks the XNNPACK quantizer's dynamic annotators.
	InputActivation *QuantizationSpec
	// OutputActivation is the spec of an op's output (nil for dynamic
	// configs).
	OutputActivation *QuantizationSpec
	// Weight is the spec of a linear's or convolution's weight.
	Weight *QuantizationSpec
	// Bias is the spec of a linear's or convolution's bias (nil in the
	// XNNPACK configs: the bias stays float).
	Bias *QuantizationSpec
	// IsQAT is torchao's is_qat: the config is for quantization-aware
	// training (the x86 quantizer then annotates conv+BatchNorm patterns).
	IsQAT bool
}

// SymmetricConfigOptions are the arguments of
// get_symmetric_quantization_config; use DefaultSymmetricConfigOptions for
// torchao's defaults.
type SymmetricConfigOptions struct {
	// PerChannel quantizes weights per output channel (axis 0,
	// per_channel_symmetric) instead of per tensor.
	PerChannel bool
	// Dynamic computes activation qparams at run time (PlaceholderObserver,
	// no output spec).
	Dynamic bool
	// ActQMin and ActQMax are the activation range (torchao: -128, 127).
	ActQMin, ActQMax int64
	// WeightQMin and WeightQMax are the weight range (torchao: -127, 127).
	WeightQMin, WeightQMax int64
}

// DefaultSymmetricConfigOptions returns torchao's defaults: per-tensor,
// static, activations -128..127, weights -127..127.
func DefaultSymmetricConfigOptions() SymmetricConfigOptions {
	return SymmetricConfigOptions{ActQMin: -128, ActQMax: 127, WeightQMin: -127, WeightQMax: 127}
}

// xnnpackEps is the eps every observer of the XNNPACK config gets: 2**-12.
const xnnpackEps = 0.000244140625

// SymmetricQuantizationConfig is get_symmetric_quantization_config (spec
// section 4, PTQ only): int8 per_tensor_affine activations observed by a
// HistogramObserver (static) or a PlaceholderObserver (dynamic, with no
// output spec), int8 symmetric weights (per-channel on axis 0 or
// per-tensor) observed by a PerChannelMinMaxObserver or MinMaxObserver,
// no bias spec, and eps 2**-12 everywhere.
func SymmetricQuantizationConfig(o SymmetricConfigOptions) *QuantizationConfig {
	act := &QuantizationSpec{
		DType: observers.Int8, QuantMin: observers.Int(o.ActQMin), QuantMax: observers.Int(o.ActQMax),
		QScheme: observers.PerTensorAffine, IsDynamic: o.Dynamic,
	}
	if o.Dynamic {
		act.Observer = PlaceholderObserverCtor(observers.PlaceholderConfig{Eps: xnnpackEps})
	} else {
		act.Observer = HistogramObserverCtor(observers.Config{Eps: xnnpackEps})
	}
	zero := 0
	w := &QuantizationSpec{
		DType: observers.Int8, QuantMin: observers.Int(o.WeightQMin), QuantMax: observers.Int(o.WeightQMax),
		QScheme: observers.PerTensorSymmetric, ChAxis: &zero,
		Observer: MinMaxObserverCtor(observers.Config{Eps: xnnpackEps}),
	}
	if o.PerChannel {
		w.QScheme = observers.PerChannelSymmetric
		w.Observer = PerChannelMinMaxObserverCtor(observers.Config{Eps: xnnpackEps})
	}
	c := &QuantizationConfig{InputActivation: act, Weight: w}
	if !o.Dynamic {
		c.OutputActivation = act
	}
	return c
}

// XNNPACKQuantizer is torchao's test XNNPACKQuantizer (spec section 4):
// TransformForAnnotation turns scalar operands of add and mul into get_attr
// constants, Annotate runs the static annotators (linear_relu, linear,
// conv_relu, conv, conv_transpose_relu, adaptive_avg_pool2d, gru_io_only,
// add_relu, add, mul_relu, mul, cat) or, when the global config's input activation is
// dynamic, the linear annotator, then propagates annotations through shape
// ops.
//
// # Configuration precedence
//
// Configurations apply in torchao's order: every SetModuleName config (in
// the order the names were first set), then every SetModuleType config,
// then the global config restricted to nodes that match none of those names
// and types. An annotator never touches a node an earlier one claimed
// (QuantizationAnnotation.Annotated), so the first configuration that
// annotates a node wins. A nil per-module config leaves that module
// unquantized (the global config still skips it). Modules are matched on
// the nodes' nn_module_stack metadata ([ModuleNameFilter],
// [ModuleTypeFilter]); get_attr nodes usually carry none, so the fused
// annotators (linear_relu, conv_relu), whose filter also sees the weight,
// only apply to them under the global config, as upstream.
// SetOperatorType configs are stored and, as upstream, never used.
type XNNPACKQuantizer struct {
	// Global is the config for nodes no per-module config claims (nil
	// leaves them unquantized); its input activation's IsDynamic picks
	// the static or dynamic annotators.
	Global *QuantizationConfig
	// Filter, when set, limits annotation to nodes it accepts, on top of
	// the per-module filters.
	Filter func(n *fxgraph.Node) bool
	// AnnotateByTarget makes the cat and adaptive_avg_pool2d annotators
	// take every aten.cat.default and aten.adaptive_avg_pool2d.default
	// node. By default they find their nodes as torchao does, through
	// get_source_partitions: torch 2.14's export graphs carry no
	// source_fn_stack, so torchao finds nn.AdaptiveAvgPool2d module calls
	// (through nn_module_stack) but no torch.cat and no
	// F.adaptive_avg_pool2d call, and leaves those unquantized. This option
	// goes beyond torchao: it quantizes them as the annotators' rules say.
	AnnotateByTarget bool

	moduleName   []moduleConfig
	moduleType   []moduleConfig
	operatorType []operatorConfig
}

type moduleConfig struct {
	key    string
	config *QuantizationConfig
}

type operatorConfig struct {
	op     ops.Target
	config *QuantizationConfig
}

// NewXNNPACKQuantizer returns a quantizer with config as the global config.
func NewXNNPACKQuantizer(config *QuantizationConfig) *XNNPACKQuantizer {
	return &XNNPACKQuantizer{Global: config}
}

// SetGlobal sets the global config (set_global) and returns q.
func (q *XNNPACKQuantizer) SetGlobal(c *QuantizationConfig) *XNNPACKQuantizer {
	q.Global = c
	return q
}

func setModuleConfig(list []moduleConfig, key string, c *QuantizationConfig) []moduleConfig {
	for i := range list {
		if list[i].key == key {
			list[i].config = c // a dict assignment keeps the key's position
			return list
		}
	}
	return append(list, moduleConfig{key: key, config: c})
}

// setOperatorConfig is setModuleConfig for operator configs.
func setOperatorConfig(list []operatorConfig, op ops.Target, c *QuantizationConfig) []operatorConfig {
	for i := range list {
		if list[i].op == op {
			list[i].config = c
			return list
		}
	}
	return append(list, operatorConfig{op: op, config: c})
}

// SetModuleName sets the config of the module with fully qualified name
// name ("sub.linear"), matched against every entry of a node's
// nn_module_stack (set_module_name). A nil config leaves the module
// unquantized. It returns q.
func (q *XNNPACKQuantizer) SetModuleName(name string, c *QuantizationConfig) *XNNPACKQuantizer {
	q.moduleName = setModuleConfig(q.moduleName, name, c)
	return q
}

// SetModuleType sets the config of modules of the qualified class name typ
// ("torch.nn.modules.linear.Linear"), matched against every entry of a
// node's nn_module_stack (set_module_type). A nil config leaves such
// modules unquantized. It returns q.
func (q *XNNPACKQuantizer) SetModuleType(typ string, c *QuantizationConfig) *XNNPACKQuantizer {
	q.moduleType = setModuleConfig(q.moduleType, typ, c)
	return q
}

// SetOperatorType stores a config for an operator (set_operator_type). As
// in torchao, Annotate does not use it. It returns q.
func (q *XNNPACKQuantizer) SetOperatorType(op ops.Target, c *QuantizationConfig) *XNNPACKQuantizer {
	q.operatorType = setOperatorConfig(q.operatorType, op, c)
	return q
}

// OperatorTypeConfig returns the config stored by SetOperatorType for op.
func (q *XNNPACKQuantizer) OperatorTypeConfig(op ops.Target) (*QuantizationConfig, bool) {
	for _, e := range q.operatorType {
		if e.op == op {
			return e.config, true
		}
	}
	return nil, false
}

// selfPrefix is the prefix older capture APIs put on nn_module_stack paths;
// module-name filters strip it.
const selfPrefix = "L['self']."

// ModuleNameFilter is torchao's _get_module_name_filter: it accepts a node
// when some entry of its nn_module_stack has the path name, after removing
// a leading "L['self'].". A node without nn_module_stack is rejected.
func ModuleNameFilter(name string) func(n *fxgraph.Node) bool {
	return func(n *fxgraph.Node) bool {
		for _, e := range n.Meta.NNModuleStack {
			if strings.TrimPrefix(e.Path, selfPrefix) == name {
				return true
			}
		}
		return false
	}
}

// ModuleTypeFilter is torchao's _get_module_type_filter: it accepts a node
// when some entry of its nn_module_stack has the qualified class name typ.
func ModuleTypeFilter(typ string) func(n *fxgraph.Node) bool {
	return func(n *fxgraph.Node) bool {
		for _, e := range n.Meta.NNModuleStack {
			if e.Type == typ {
				return true
			}
		}
		return false
	}
}

// notModuleFilter is _get_not_module_type_or_name_filter.
func notModuleFilter(types, names []string) func(n *fxgraph.Node) bool {
	var fs []func(*fxgraph.Node) bool
	for _, t := range types {
		fs = append(fs, ModuleTypeFilter(t))
	}
	for _, m := range names {
		fs = append(fs, ModuleNameFilter(m))
	}
	return func(n *fxgraph.Node) bool {
		for _, f := range fs {
			if f(n) {
				return false
			}
		}
		return true
	}
}

// xnnAnnotator runs the annotators with one filter.
type xnnAnnotator struct {
	filter   func(n *fxgraph.Node) bool
	byTarget bool // XNNPACKQuantizer.AnnotateByTarget
}

var (
	addTensor  = ops.MustOverload("aten.add.Tensor")
	addTensor_ = ops.MustOverload("aten.add_.Tensor")
	mulTensor  = ops.MustOverload("aten.mul.Tensor")
	mulTensor_ = ops.MustOverload("aten.mul_.Tensor")
	reluTarget = ops.NewTargetSet(ops.MustOverload("aten.relu.default"), ops.MustOverload("aten.relu_.default"))
	catDefault = ops.MustOverload("aten.cat.default")
	aapDefault = ops.MustOverload("aten.adaptive_avg_pool2d.default")
	convAnnot  = ops.NewTargetSet(ops.MustOverload("aten.conv1d.default"), ops.MustOverload("aten.conv2d.default"))
	shareOps   = ops.NewTargetSet(
		ops.MustOverload("aten.relu.default"), ops.MustOverload("aten.hardtanh.default"), ops.MustOverload("aten.hardtanh_.default"),
		ops.MustOverload("aten.max_pool2d.default"), ops.MustOverload("aten.mean.default"), ops.MustOverload("aten.mean.dim"),
		ops.MustOverload("aten.permute.default"), ops.MustOverload("aten.permute_copy.default"), ops.MustOverload("aten.squeeze.dim"),
		ops.MustOverload("aten.squeeze_copy.dim"), aapDefault, ops.MustOverload("aten.view_copy.default"),
		ops.MustOverload("aten.view.default"), ops.MustOverload("aten.slice_copy.Tensor"), ops.MustOverload("aten.flatten.using_ints"))
)

// TransformForAnnotation is _convert_scalars_to_attrs: every non-node
// positional argument of aten.add.Tensor and aten.mul.Tensor becomes a
// get_attr of a new 0-dim float32 attribute _tensor_constant_<i>.
func (q *XNNPACKQuantizer) TransformForAnnotation(g *fxgraph.Graph) error {
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction || (n.Target() != addTensor && n.Target() != mulTensor) {
			continue
		}
		args := append([]ops.Value(nil), n.Args()...)
		changed := false
		for i, a := range args {
			if _, isNode := a.(*fxgraph.Node); isNode {
				continue
			}
			var f float64
			switch v := a.(type) {
			case float64:
				f = v
			case int64:
				f = float64(v)
			case bool:
				if v {
					f = 1
				}
			default:
				return fmt.Errorf("node %q: %w: arg %d: want a number or a node, got %T", n.Name(), ErrAnnotation, i, a)
			}
			name := g.FreshAttrName("_tensor_constant_")
			t, err := tensor.FromData(tensor.Float32, []int{}, []float32{float32(f)})
			if err != nil {
				return err
			}
			g.SetAttr(name, t)
			restore := g.InsertingBefore(n)
			args[i] = g.GetAttr(name, ops.Plain(tensor.Float32))
			restore()
			changed = true
		}
		if changed {
			g.SetArgs(n, args...)
		}
	}
	return nil
}

// Validate accepts every graph.
func (q *XNNPACKQuantizer) Validate(*fxgraph.Graph) error { return nil }

// Annotate runs the annotators of each configuration in precedence order
// (per module name, per module type, then global), then
// propagate_annotation. Whether the static or the dynamic annotators run
// is decided by the global config alone, as upstream.
func (q *XNNPACKQuantizer) Annotate(g *fxgraph.Graph) error {
	dynamic := q.Global != nil && q.Global.InputActivation != nil && q.Global.InputActivation.IsDynamic
	run := func(c *QuantizationConfig, filter func(*fxgraph.Node) bool) error {
		if c == nil {
			return nil
		}
		user := q.Filter
		a := &xnnAnnotator{byTarget: q.AnnotateByTarget, filter: func(n *fxgraph.Node) bool {
			return (user == nil || user(n)) && (filter == nil || filter(n))
		}}
		return a.annotateAll(g, c, dynamic)
	}
	var names, types []string
	for _, e := range q.moduleName {
		names = append(names, e.key)
		if err := run(e.config, ModuleNameFilter(e.key)); err != nil {
			return err
		}
	}
	for _, e := range q.moduleType {
		types = append(types, e.key)
		if err := run(e.config, ModuleTypeFilter(e.key)); err != nil {
			return err
		}
	}
	var global func(*fxgraph.Node) bool
	if len(names)+len(types) > 0 {
		global = notModuleFilter(types, names)
	}
	if err := run(q.Global, global); err != nil {
		return err
	}
	PropagateAnnotation(g)
	return nil
}

func (q *xnnAnnotator) annotateAll(g *fxgraph.Graph, c *QuantizationConfig, dynamic bool) error {
	if dynamic {
		q.annotateLinear(g, c)
		return nil
	}
	q.annotateLinearRelu(g, c)
	q.annotateLinear(g, c)
	q.annotateConvRelu(g, c)
	q.annotateConv(g, c)
	if err := q.annotateAdaptiveAvgPool(g, c); err != nil {
		return err
	}
	if err := q.annotateGRUIOOnly(g, c); err != nil {
		return err
	}
	q.annotateBinary(g, c, addTensor, addTensor_, true)
	q.annotateBinary(g, c, addTensor, addTensor_, false)
	q.annotateBinary(g, c, mulTensor, mulTensor_, true)
	q.annotateBinary(g, c, mulTensor, mulTensor_, false)
	return q.annotateCat(g, c)
}

func (q *xnnAnnotator) ok(nodes ...*fxgraph.Node) bool {
	if q.filter == nil {
		return true
	}
	for _, n := range nodes {
		if n != nil && !q.filter(n) {
			return false
		}
	}
	return true
}

func anyAnnotated(nodes ...*fxgraph.Node) bool {
	for _, n := range nodes {
		if n != nil && IsAnnotated(n) {
			return true
		}
	}
	return false
}

func qs(s *QuantizationSpec) QSpec {
	if s == nil {
		return nil
	}
	return s
}

// weightedInputs annotates act, weight and bias inputs of a linear or conv
// node; it returns the weight and bias nodes.
func weightedInputs(a *QuantizationAnnotation, n *fxgraph.Node, c *QuantizationConfig) (w, b *fxgraph.Node) {
	if act, ok := n.Arg(0).(*fxgraph.Node); ok {
		a.SetInput(act, qs(c.InputActivation))
	}
	if wn, ok := n.Arg(1).(*fxgraph.Node); ok {
		a.SetInput(wn, qs(c.Weight))
		w = wn
	}
	if len(n.Args()) > 2 {
		if bn, ok := n.Arg(2).(*fxgraph.Node); ok {
			a.SetInput(bn, qs(c.Bias))
			b = bn
		}
	}
	return w, b
}

// annotateLinear is torchao's linear annotator: the filter and the
// already-annotated check look at the linear node alone, and the specs go
// into the node's existing annotation if it has one
// (annotate_input_qspec_map).
func (q *xnnAnnotator) annotateLinear(g *fxgraph.Graph, c *QuantizationConfig) {
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction || n.Target() != linearDefault || !q.ok(n) || anyAnnotated(n) {
			continue
		}
		a := annotationOf(n)
		w, b := weightedInputs(a, n, c)
		a.OutputQSpec = qs(c.OutputActivation)
		a.Annotated = true
		MarkAnnotated(w, b)
	}
}

// annotateConv is torchao's conv annotator: the partition is the conv node,
// its weight and its bias, and the conv is skipped when any of them is
// annotated or rejected by the filter (a weight get_attr without
// nn_module_stack fails a module filter, so set_module_name and
// set_module_type configs leave such convs alone, as in torchao).
func (q *xnnAnnotator) annotateConv(g *fxgraph.Graph, c *QuantizationConfig) {
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction || !convAnnot.Has(n.Target()) {
			continue
		}
		a := &QuantizationAnnotation{}
		w, b := weightedInputs(a, n, c)
		if anyAnnotated(n, w, b) || !q.ok(n, w, b) {
			continue
		}
		a.OutputQSpec = qs(c.OutputActivation)
		a.Annotated = true
		SetAnnotation(n, a)
		MarkAnnotated(w, b)
	}
}

func (q *xnnAnnotator) annotateLinearRelu(g *fxgraph.Graph, c *QuantizationConfig) {
	q.annotateWeightedRelu(g, c, func(t ops.Target) bool { return t == linearDefault })
}

func (q *xnnAnnotator) annotateConvRelu(g *fxgraph.Graph, c *QuantizationConfig) {
	q.annotateWeightedRelu(g, c, func(t ops.Target) bool { return convTargets.Has(t) || convTransposeTargets.Has(t) })
}

func (q *xnnAnnotator) annotateWeightedRelu(g *fxgraph.Graph, c *QuantizationConfig, match func(ops.Target) bool) {
	for _, relu := range g.Nodes() {
		if relu.Op() != fxgraph.CallFunction || !reluTarget.Has(relu.Target()) {
			continue
		}
		op, ok := relu.Arg(0).(*fxgraph.Node)
		if !ok || op.Op() != fxgraph.CallFunction || !match(op.Target()) || op.NumUsers() > 1 {
			continue
		}
		a := &QuantizationAnnotation{Annotated: true}
		w, b := weightedInputs(a, op, c)
		if anyAnnotated(relu, op, w, b) || !q.ok(relu, op, w, b) {
			continue
		}
		SetAnnotation(op, a)
		SetAnnotation(relu, &QuantizationAnnotation{OutputQSpec: qs(c.OutputActivation), Annotated: true})
		MarkAnnotated(w, b)
	}
}

// isLargeScalar is _is_input_large_scalar: a get_attr of one element whose
// magnitude exceeds histc's limit.
func isLargeScalar(g *fxgraph.Graph, n *fxgraph.Node) bool {
	if n.Op() != fxgraph.GetAttr {
		return false
	}
	v, _ := g.Attr(n.TargetName())
	t, ok := v.(*tensor.Tensor)
	if !ok || t.Numel() != 1 {
		return false
	}
	f, err := t.Float64s()
	return err == nil && math.Abs(f[0]) > 3.4028235e15
}

// isNonFloat is _is_input_non_float_tensor: no tensor type, or not float32.
func isNonFloat(n *fxgraph.Node) bool {
	tt, ok := n.Type().(ops.TensorType)
	return !ok || tt.DType() != tensor.Float32
}

func (q *xnnAnnotator) annotateBinary(g *fxgraph.Graph, c *QuantizationConfig, op, opInPlace ops.Overload, withRelu bool) {
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		bin, outNode := n, n
		if withRelu {
			if !reluTarget.Has(n.Target()) {
				continue
			}
			p, ok := n.Arg(0).(*fxgraph.Node)
			if !ok || p.Op() != fxgraph.CallFunction || p.NumUsers() > 1 {
				continue
			}
			bin = p
		}
		if bin.Target() != op && bin.Target() != opInPlace {
			continue
		}
		if anyAnnotated(bin, outNode) || !q.ok(bin, outNode) {
			continue
		}
		a := &QuantizationAnnotation{Annotated: true}
		skip := false
		for i := 0; i < 2 && i < len(bin.Args()); i++ {
			in, ok := bin.Arg(i).(*fxgraph.Node)
			if !ok {
				continue
			}
			if isLargeScalar(g, in) || isNonFloat(in) {
				skip = true
				break
			}
			a.SetInput(in, qs(c.InputActivation))
		}
		if skip {
			continue
		}
		if withRelu {
			SetAnnotation(bin, a)
			SetAnnotation(outNode, &QuantizationAnnotation{OutputQSpec: qs(c.OutputActivation), Annotated: true})
		} else {
			a.OutputQSpec = qs(c.OutputActivation)
			SetAnnotation(bin, a)
		}
	}
}

// partitionOps returns the nodes an annotator that finds its op through
// get_source_partitions handles, in torchao's order: the first output node
// of each partition of the wanted sources (see [sourcePartitions]), or,
// under AnnotateByTarget, every call_function node of target. A
// partition whose output is another op is an error, as in torchao.
func (q *xnnAnnotator) partitionOps(g *fxgraph.Graph, wanted []source, target ops.Overload) ([]*fxgraph.Node, error) {
	var out []*fxgraph.Node
	if q.byTarget {
		for _, n := range g.Nodes() {
			if n.Op() == fxgraph.CallFunction && n.Target() == target && q.ok(n) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	for _, p := range sourcePartitions(g, wanted) {
		if !q.ok(p.nodes...) || len(p.outputs) == 0 {
			continue
		}
		n := p.outputs[0]
		if n.Op() != fxgraph.CallFunction || n.Target() != target {
			return nil, fmt.Errorf("convert: node %q: the source partition of %s ends in %s, not %s", n.Name(), wantedName(wanted), n.Target(), target)
		}
		out = append(out, n)
	}
	return out, nil
}

func wantedName(ws []source) string {
	var names []string
	for _, w := range ws {
		names = append(names, w.module+w.fn)
	}
	return strings.Join(names, " or ")
}

func (q *xnnAnnotator) annotateAdaptiveAvgPool(g *fxgraph.Graph, c *QuantizationConfig) error {
	nodes, err := q.partitionOps(g, []source{srcAdaptiveAvgPool2d, srcFAdaptiveAvgPool2d}, aapDefault)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if anyAnnotated(n) {
			continue
		}
		in, ok := n.Arg(0).(*fxgraph.Node)
		if !ok {
			continue
		}
		var inSpec QSpec = qs(c.InputActivation)
		if ia := Annotation(in); ia != nil && ia.Annotated && ia.OutputQSpec != nil {
			inSpec = &SharedQuantizationSpec{EdgeOrNode: NodeOutput(in)}
		}
		a := &QuantizationAnnotation{Annotated: true, OutputQSpec: &SharedQuantizationSpec{EdgeOrNode: Edge(in, n)}}
		a.SetInput(in, inSpec)
		SetAnnotation(n, a)
	}
	return nil
}

func (q *xnnAnnotator) annotateCat(g *fxgraph.Graph, c *QuantizationConfig) error {
	nodes, err := q.partitionOps(g, []source{srcCat}, catDefault)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if anyAnnotated(n) {
			continue
		}
		inputs, _ := ops.Sequence(n.Arg(0))
		if len(inputs) == 0 {
			continue
		}
		in0, ok := inputs[0].(*fxgraph.Node)
		if !ok {
			continue
		}
		a := &QuantizationAnnotation{Annotated: true}
		a.SetInput(in0, qs(c.InputActivation))
		shared := &SharedQuantizationSpec{EdgeOrNode: Edge(in0, n)}
		for _, v := range inputs[1:] {
			in, ok := v.(*fxgraph.Node)
			if !ok {
				continue
			}
			if _, has := a.Input(in); !has {
				a.SetInput(in, shared)
			}
		}
		a.OutputQSpec = shared
		SetAnnotation(n, a)
	}
	return nil
}

// PropagateAnnotation is torchao's propagate_annotation: each unannotated
// shape-preserving op (relu, hardtanh, max_pool2d, mean, permute, squeeze,
// adaptive_avg_pool2d, view, slice_copy, flatten) whose first argument has
// an output spec shares that argument's observer for its input and output.
func PropagateAnnotation(g *fxgraph.Graph) {
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction || !shareOps.Has(n.Target()) {
			continue
		}
		prev, ok := n.Arg(0).(*fxgraph.Node)
		if !ok {
			continue
		}
		pa := Annotation(prev)
		if pa == nil || pa.OutputQSpec == nil || IsAnnotated(n) {
			continue
		}
		shared := &SharedQuantizationSpec{EdgeOrNode: NodeOutput(prev)}
		a := &QuantizationAnnotation{OutputQSpec: shared, Annotated: true}
		a.SetInput(prev, shared)
		SetAnnotation(n, a)
	}
}

// Int4GroupwiseQuantizer annotates every aten.linear.default for int4
// groupwise dynamic quantization (the pt2e fixtures' int4 quantizer):
// input 0 as dynamic per-token asymmetric int8 (an
// AffineQuantizedPlaceholderObserver with eps = float32 eps, float32 scale
// and int32 zero point), input 1 as symmetric int4 (-8..7 in int8) per
// group of GroupSize through an AffineQuantizedMinMaxObserver with default
// eps and dtypes. The bias and the output stay float.
type Int4GroupwiseQuantizer struct {
	// GroupSize is the number of consecutive weight elements along the
	// input-feature axis that share one scale; it must be positive.
	GroupSize int
	// OwnActivationChains gives each linear its own dynamic activation
	// chain (choose_qparams, quantize, dequantize). By default, as in
	// torchao, linears that read the same tensor share one observer and
	// so one chain (a decoder's wq, wk and wv; w1 and w3), and the
	// reference rewrite, which needs a dequantize with one user, skips
	// them. With this option every linear is rewritten to
	// reference_dqlinear_int4, which goes beyond torchao.
	OwnActivationChains bool
}

// TransformForAnnotation does nothing.
func (Int4GroupwiseQuantizer) TransformForAnnotation(*fxgraph.Graph) error { return nil }

// Validate accepts every graph.
func (Int4GroupwiseQuantizer) Validate(*fxgraph.Graph) error { return nil }

// Annotate annotates the linears.
func (q Int4GroupwiseQuantizer) Annotate(g *fxgraph.Graph) error {
	if q.GroupSize <= 0 {
		return fmt.Errorf("%w: int4 group size must be positive, got %d", ErrAnnotation, q.GroupSize)
	}
	eps := observers.Float32Eps
	act := &QuantizationSpec{
		DType: observers.Int8, QuantMin: observers.Int(-128), QuantMax: observers.Int(127), IsDynamic: true,
		Observer: AffineQuantizedPlaceholderObserverCtor(observers.AffineConfig{
			MappingType: observers.Asymmetric, TargetDType: tensor.Int8, Granularity: observers.PerToken{},
			Eps: &eps, ScaleDType: tensor.Float32, ZeroPointDType: tensor.Int32,
		}),
	}
	w := &QuantizationSpec{
		DType: observers.Int8, QuantMin: observers.Int(-8), QuantMax: observers.Int(7),
		Observer: AffineQuantizedMinMaxObserverCtor(observers.AffineConfig{
			MappingType: observers.Symmetric, TargetDType: tensor.Int8, Granularity: observers.PerGroup{GroupSize: q.GroupSize},
		}),
	}
	for _, n := range g.Nodes() {
		if n.Op() != fxgraph.CallFunction || n.Target() != linearDefault || anyAnnotated(n) {
			continue
		}
		x, ok1 := n.Arg(0).(*fxgraph.Node)
		wn, ok2 := n.Arg(1).(*fxgraph.Node)
		if !ok1 || !ok2 {
			continue
		}
		a := &QuantizationAnnotation{Annotated: true, NoImplicitSharing: q.OwnActivationChains}
		a.SetInput(x, act)
		a.SetInput(wn, w)
		SetAnnotation(n, a)
	}
	return nil
}
