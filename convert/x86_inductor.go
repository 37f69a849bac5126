package convert

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
)

// X86InductorConfigOptions are the arguments of torchao's
// get_default_x86_inductor_quantization_config.
type X86InductorConfigOptions struct {
	// QAT asks for the fake-quantize config (is_qat=True): every observer
	// is a FusedMovingAvgObsFakeQuantize, for PrepareQAT. Dynamic QAT (a
	// plain FakeQuantize) is not supported.
	QAT bool
	// Dynamic computes activation qparams at run time (a PlaceholderObserver
	// instead of a HistogramObserver, is_dynamic=True).
	Dynamic bool
	// ReduceRange limits activations to 0..127 (for CPUs without VNNI).
	ReduceRange bool
}

// X86InductorQuantizationConfig is torchao's
// get_default_x86_inductor_quantization_config: uint8 per_tensor_affine
// activations (0..255, or 0..127 with ReduceRange) observed by a
// HistogramObserver (static) or a PlaceholderObserver (dynamic), the same
// spec for inputs and outputs, int8 per_channel_symmetric weights
// (-128..127, axis 0) observed by a PerChannelMinMaxObserver, no bias spec
// and eps 2**-12 everywhere (xnnpackEps, the XNNPACK configs' eps).
//
// With QAT (is_qat=True) the same specs are observed by
// FusedMovingAvgObsFakeQuantize (FusedFakeQuantizeCtor): a
// MovingAverageMinMaxObserver for activations, a
// MovingAveragePerChannelMinMaxObserver for weights, and the config's
// IsQAT is set. Dynamic QAT is an error wrapping ErrQAT.
func X86InductorQuantizationConfig(o X86InductorConfigOptions) (*QuantizationConfig, error) {
	if o.QAT && o.Dynamic {
		return nil, fmt.Errorf("%w: dynamic QAT (is_dynamic=True, is_qat=True) is not supported", ErrQAT)
	}
	qmax := int64(255)
	if o.ReduceRange {
		qmax = 127
	}
	act := &QuantizationSpec{
		DType: observers.UInt8, QuantMin: observers.Int(0), QuantMax: observers.Int(qmax),
		QScheme: observers.PerTensorAffine, IsDynamic: o.Dynamic,
	}
	switch {
	case o.QAT:
		act.Observer = FusedFakeQuantizeCtor(observers.Config{Eps: xnnpackEps})
	case o.Dynamic:
		act.Observer = PlaceholderObserverCtor(observers.PlaceholderConfig{Eps: xnnpackEps})
	default:
		act.Observer = HistogramObserverCtor(observers.Config{Eps: xnnpackEps})
	}
	zero := 0
	w := &QuantizationSpec{
		DType: observers.Int8, QuantMin: observers.Int(-128), QuantMax: observers.Int(127),
		QScheme: observers.PerChannelSymmetric, ChAxis: &zero,
		Observer: PerChannelMinMaxObserverCtor(observers.Config{Eps: xnnpackEps}),
	}
	if o.QAT {
		w.Observer = FusedFakeQuantizeCtor(observers.Config{Eps: xnnpackEps})
	}
	return &QuantizationConfig{InputActivation: act, OutputActivation: act, Weight: w, IsQAT: o.QAT}, nil
}

// X86InductorLinearDynamicFP16Config is torchao's
// get_x86_inductor_linear_dynamic_fp16_config: no activation specs and a
// float16 weight observed by a PlaceholderObserver, so convert turns the
// weight into float16 and back (fp32 input * fp16 weight -> fp32 output).
// torchao uses it per module type, e.g.
// SetModuleType("torch.nn.modules.linear.Linear", X86InductorLinearDynamicFP16Config()).
func X86InductorLinearDynamicFP16Config() *QuantizationConfig {
	return &QuantizationConfig{Weight: &QuantizationSpec{
		DType:    observers.Float16,
		Observer: PlaceholderObserverCtor(observers.PlaceholderConfig{}),
	}}
}

// The operator sets of x86_inductor_quantizer.py.
var (
	x86MaxPool2d  = ops.MustOverload("aten.max_pool2d.default")
	x86AvgPool2d  = ops.MustOverload("aten.avg_pool2d.default")
	x86Flatten    = ops.MustOverload("aten.flatten.using_ints")
	x86Conv1d     = ops.MustOverload("aten.conv1d.default")
	x86Conv2d     = ops.MustOverload("aten.conv2d.default")
	x86Matmul     = ops.MustOverload("aten.matmul.default")
	x86Int8In8Out = ops.NewTargetSet(x86MaxPool2d, catDefault, x86AvgPool2d, aapDefault, x86Flatten)
	// x86Propagation is propagation_quantizable_ops.
	x86Propagation = x86Int8In8Out
	// x86DefaultQuantizable is default_quantizable_ops.
	x86DefaultQuantizable = ops.NewTargetSet(x86MaxPool2d, catDefault, x86AvgPool2d, aapDefault, x86Flatten,
		x86Conv1d, x86Conv2d, linearDefault, mulTensor)
	// x86Quantizable is quantizable_ops.
	x86Quantizable = ops.NewTargetSet(x86MaxPool2d, catDefault, x86AvgPool2d, aapDefault, x86Flatten,
		x86Conv1d, x86Conv2d, linearDefault, mulTensor, x86Matmul)
)

// x86ModuleFunctionOps is _map_module_function_to_aten_operator_type: the
// module classes and functions set_module_type_qconfig and
// set_function_type_qconfig accept, and the operator each one configures.
// (torchao lists nn.Conv2d for both conv1d and conv2d; the later entry,
// conv2d, wins, and nn.Conv1d is not accepted.)
var x86ModuleFunctionOps = map[string]ops.Overload{
	"torch.nn.functional.conv1d":                 x86Conv1d,
	"torch.nn.modules.conv.Conv2d":               x86Conv2d,
	"torch.nn.functional.conv2d":                 x86Conv2d,
	"torch.nn.modules.linear.Linear":             linearDefault,
	"torch.nn.functional.linear":                 linearDefault,
	"torch.nn.modules.pooling.MaxPool2d":         x86MaxPool2d,
	"torch.nn.functional.max_pool2d":             x86MaxPool2d,
	"torch.cat":                                  catDefault,
	"torch.nn.modules.pooling.AvgPool2d":         x86AvgPool2d,
	"torch.nn.functional.avg_pool2d":             x86AvgPool2d,
	"torch.nn.modules.pooling.AdaptiveAvgPool2d": aapDefault,
	"torch.nn.functional.adaptive_avg_pool2d":    aapDefault,
	"torch.flatten":                              x86Flatten,
	"torch.matmul":                               x86Matmul,
	"torch.mul":                                  mulTensor,
}

// X86InductorQuantizer is torchao's X86InductorQuantizer
// (x86_inductor_quantizer.py): conv/linear fusion patterns with unary and
// binary (add) post-ops, mul, matmul (operator config only), propagation of
// int8 through max_pool2d, cat, avg_pool2d, adaptive_avg_pool2d and
// flatten, and the output observers of those int8-in-int8-out ops.
//
// Configurations apply in torchao's order: every SetModuleName config (in
// the order names were first set), every operator config (SetModuleType /
// SetFunctionType, in the order their operators were first set), then the
// global config. Each pass annotates a pattern only when none of its nodes
// is annotated yet and its filter accepts the pattern's nodes: all from the
// module (module name), exactly one node of the operator (operator type),
// exactly one node of default_quantizable_ops (global). A nil config marks
// the patterns it claims as not quantized.
//
// As in torchao, patterns are found through get_source_partitions (see
// [sourcePartitions] for torch 2.14's fallback to nn_module_stack, and
// torch_fn names for add): a linear inside nn.MultiheadAttention, which is
// not an nn.Linear call, is not annotated, while `x + y` is found as an add.
//
// Unlike the XNNPACK quantizer, conv and linear get no output spec: their
// outputs are observed where a quantized consumer reads them.
type X86InductorQuantizer struct {
	// Global is the global config (nil: only per-module and per-operator
	// configs apply).
	Global *QuantizationConfig
	// Warnings collects what torchao would warn about: configs skipped
	// because they mix static and dynamic (or QAT and non-QAT), and module
	// or function types it cannot configure.
	Warnings []string

	moduleName   []moduleConfig
	operatorType []operatorConfig
}

// NewX86InductorQuantizer returns a quantizer with no configuration;
// SetGlobal gives it torchao's usual one.
func NewX86InductorQuantizer() *X86InductorQuantizer { return &X86InductorQuantizer{} }

func isDynamicConfig(c *QuantizationConfig) (dyn, set bool) {
	if c == nil || c.InputActivation == nil {
		return false, false
	}
	return c.InputActivation.IsDynamic, true
}

// needSkip is _need_skip_config: a config whose QAT or dynamic state
// differs from the configs already set is skipped.
func (q *X86InductorQuantizer) needSkip(c *QuantizationConfig) bool {
	if c == nil {
		return false
	}
	var all []*QuantizationConfig
	for _, e := range q.moduleName {
		all = append(all, e.config)
	}
	for _, e := range q.operatorType {
		all = append(all, e.config)
	}
	all = append(all, q.Global)
	var qat, dyn *bool
	for _, o := range all {
		if o == nil {
			continue
		}
		if qat == nil {
			v := o.IsQAT
			qat = &v
		}
		if d, ok := isDynamicConfig(o); ok && dyn == nil {
			dyn = &d
		}
	}
	skip := false
	if qat != nil && *qat != c.IsQAT {
		q.Warnings = append(q.Warnings, "mixed QAT and non-QAT quantization config is not supported")
		skip = true
	}
	if d, ok := isDynamicConfig(c); ok && dyn != nil && *dyn != d {
		q.Warnings = append(q.Warnings, "mixed dynamic and static quantization config is not supported")
		skip = true
	}
	return skip
}

// SetGlobal sets the global config (set_global) unless it mixes static
// and dynamic or QAT and non-QAT with the configs already set; it returns q.
func (q *X86InductorQuantizer) SetGlobal(c *QuantizationConfig) *X86InductorQuantizer {
	if q.needSkip(c) {
		q.Warnings = append(q.Warnings, "skip the global quantization config")
		return q
	}
	q.Global = c
	return q
}

// SetModuleName sets the config of the module with fully qualified name
// name and everything inside it (set_module_name_qconfig); it returns q.
func (q *X86InductorQuantizer) SetModuleName(name string, c *QuantizationConfig) *X86InductorQuantizer {
	if q.needSkip(c) {
		q.Warnings = append(q.Warnings, fmt.Sprintf("skip the quantization config for %s", name))
		return q
	}
	q.moduleName = setModuleConfig(q.moduleName, name, c)
	return q
}

// SetModuleType sets the config of the operator a module class stands for
// (set_module_type_qconfig), by qualified class name
// ("torch.nn.modules.conv.Conv2d"): Conv2d, Linear, MaxPool2d, AvgPool2d,
// AdaptiveAvgPool2d. Other classes are ignored with a warning. It returns q.
func (q *X86InductorQuantizer) SetModuleType(typ string, c *QuantizationConfig) *X86InductorQuantizer {
	return q.setTypeConfig("module", typ, c)
}

// SetFunctionType sets the config of the operator a function stands for
// (set_function_type_qconfig), by qualified name: torch.nn.functional's
// conv1d, conv2d, linear, max_pool2d, avg_pool2d, adaptive_avg_pool2d, and
// torch.cat, torch.flatten, torch.matmul, torch.mul. Other functions are
// ignored with a warning. It returns q.
func (q *X86InductorQuantizer) SetFunctionType(fn string, c *QuantizationConfig) *X86InductorQuantizer {
	return q.setTypeConfig("function", fn, c)
}

func (q *X86InductorQuantizer) setTypeConfig(kind, name string, c *QuantizationConfig) *X86InductorQuantizer {
	if q.needSkip(c) {
		q.Warnings = append(q.Warnings, fmt.Sprintf("skip the quantization config for %s", name))
		return q
	}
	op, ok := x86ModuleFunctionOps[name]
	if !ok {
		q.Warnings = append(q.Warnings, fmt.Sprintf("%s: unable to customize quantization config for %s by X86InductorQuantizer", kind, name))
		return q
	}
	q.operatorType = setOperatorConfig(q.operatorType, op, c)
	return q
}

// TransformForAnnotation does nothing (torchao's default).
func (q *X86InductorQuantizer) TransformForAnnotation(*fxgraph.Graph) error { return nil }

// Validate accepts every graph.
func (q *X86InductorQuantizer) Validate(*fxgraph.Graph) error { return nil }

// Annotate runs torchao's annotate: each configuration's patterns in
// precedence order, then the output specs of the int8-in-int8-out ops.
// It fails, as torchao raises, on a pattern it cannot read (a partition
// with several outputs, a conv or linear partition ending in another op,
// several default-quantizable ops in one pattern).
func (q *X86InductorQuantizer) Annotate(g *fxgraph.Graph) error {
	a := &x86Annotator{g: g, outPattern: map[*fxgraph.Node]bool{}, partitions: map[string][]sourcePartition{}}
	for _, e := range q.moduleName {
		f := ModuleNameFilter(e.key)
		a.filter = func(nodes []*fxgraph.Node) (bool, error) {
			for _, n := range nodes {
				if !f(n) {
					return false, nil
				}
			}
			return true, nil
		}
		if err := a.annotateWithConfig(e.config); err != nil {
			return err
		}
	}
	for _, e := range q.operatorType {
		op := e.op
		a.filter = oneOfFilter(func(t ops.Target) bool { return t == op }, op)
		if err := a.annotateWithConfig(e.config); err != nil {
			return err
		}
	}
	if q.Global != nil {
		a.filter = oneOfFilter(x86DefaultQuantizable.Has, "default quantizable operations")
		if err := a.annotateWithConfig(q.Global); err != nil {
			return err
		}
	}
	a.annotateInt8InInt8Out()
	return nil
}

// oneOfFilter is the filter of operator and global configs: a pattern
// qualifies when exactly one of its nodes is an operator match accepts;
// several are an error naming what they are.
func oneOfFilter(match func(ops.Target) bool, what any) func([]*fxgraph.Node) (bool, error) {
	return func(nodes []*fxgraph.Node) (bool, error) {
		k := 0
		for _, n := range nodes {
			if n.Op() == fxgraph.CallFunction && match(n.Target()) {
				k++
			}
		}
		if k > 1 {
			return false, fmt.Errorf("%w: several nodes within a single pattern are %s (%s)", ErrAnnotation, what, nodes[0].Name())
		}
		return k == 1, nil
	}
}
