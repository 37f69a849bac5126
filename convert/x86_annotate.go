package convert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// A partType is one entry of find_sequential_partitions' partition_types
// with its equivalent types (torchao's _EQUIVALENT_TYPES): the qualified
// names of module classes and functions, and the method names ("add")
// torch_fn metadata is matched against.
type partType []string

var (
	ptConv1d    = partType{"torch.nn.modules.conv.Conv1d", "torch.nn.functional.conv1d"}
	ptConv2d    = partType{"torch.nn.modules.conv.Conv2d", "torch.nn.functional.conv2d"}
	ptLinear    = partType{"torch.nn.modules.linear.Linear"}
	ptLinearF   = partType{"torch.nn.modules.linear.Linear", "torch.nn.functional.linear"}
	ptBN2d      = partType{"torch.nn.modules.batchnorm.BatchNorm2d", "torch.nn.functional.batch_norm"}
	ptReLU      = partType{"torch.nn.modules.activation.ReLU", "torch.nn.functional.relu", "torch.nn.functional.relu_"}
	ptHardtanh  = partType{"torch.nn.modules.activation.Hardtanh", "torch.nn.functional.hardtanh", "torch.nn.functional.hardtanh_"}
	ptHardswish = partType{"torch.nn.modules.activation.Hardswish"}
	ptReLU6     = partType{"torch.nn.modules.activation.ReLU6"}
	ptSiLU      = partType{"torch.nn.modules.activation.SiLU"}
	ptLeakyReLU = partType{"torch.nn.modules.activation.LeakyReLU"}
	ptTanh      = partType{"torch.nn.modules.activation.Tanh"}
	ptGELU      = partType{"torch.nn.modules.activation.GELU"}
	ptAdd       = partType{"torch.add", "_operator.add", "_operator.iadd", "add", "add_"}
)

// isMethodName reports whether a wanted source is a plain string (a method
// name such as "add"), which torch_fn metadata can match.
func isMethodName(s string) bool { return !strings.Contains(s, ".") }

// getSourcePartitions is torch 2.14's get_source_partitions for the wanted
// sources, flattened as torchao's itertools.chain over the result's values.
// A node joins a partition in one of three ways, tried in this order:
//
//   - it has no source_fn_stack and its torch_fn ("add_1",
//     "method_descriptor.add") names a wanted method name ("add"): the
//     partition is keyed by that name and the torch_fn's first string;
//   - otherwise, if it is a call_function with no source_fn_stack, the
//     class of the innermost nn_module_stack entry is a wanted class: keyed
//     by the class and the module path;
//   - it has a source_fn_stack whose last entry is wanted: keyed by that
//     entry.
//
// Sources and, within each, keys come in first-seen graph order, as
// Python's dicts keep them (see [partitionGroups]).
func getSourcePartitions(g *fxgraph.Graph, wanted partType) []sourcePartition {
	want := map[string]bool{}
	for _, w := range wanted {
		want[w] = true
	}
	groups := newPartitionGroups[string]()
	for _, n := range g.Nodes() {
		m := n.Meta
		if len(m.SourceFnStack) > 0 {
			last := m.SourceFnStack[len(m.SourceFnStack)-1]
			if want[last.Target] {
				groups.add(last.Target, last.Name, n)
			}
			continue
		}
		if len(m.TorchFn) == 2 {
			parts := strings.Split(m.TorchFn[1], ".")
			if len(parts) > 1 && isMethodName(parts[1]) && want[parts[1]] {
				groups.add(parts[1], m.TorchFn[0], n)
				continue
			}
		}
		if n.Op() != fxgraph.CallFunction || len(m.NNModuleStack) == 0 {
			continue
		}
		inner := m.NNModuleStack[len(m.NNModuleStack)-1]
		if want[inner.Type] && !isMethodName(inner.Type) {
			groups.add(inner.Type, inner.Path, n)
		}
	}
	return groups.partitions()
}

// subgraphsConnected is check_subgraphs_connected: some node of a has a
// user in b.
func subgraphsConnected(a, b sourcePartition) bool {
	for i := len(a.nodes) - 1; i >= 0; i-- {
		for _, u := range a.nodes[i].Users() {
			if slices.Contains(b.nodes, u) {
				return true
			}
		}
	}
	return false
}

// findSequentialPartitions is torchao's find_sequential_partitions: the
// tuples of the product of each type's partitions (in itertools.product
// order) in which each partition feeds the next.
func (a *x86Annotator) findSequentialPartitions(types ...partType) [][]sourcePartition {
	lists := make([][]sourcePartition, len(types))
	for i, t := range types {
		lists[i] = a.partitionsOf(t)
	}
	var out [][]sourcePartition
	cur := make([]sourcePartition, 0, len(types))
	var walk func(i int)
	walk = func(i int) {
		if i == len(lists) {
			out = append(out, slices.Clone(cur))
			return
		}
		for _, p := range lists[i] {
			if i > 0 && !subgraphsConnected(cur[i-1], p) {
				continue
			}
			cur = append(cur, p)
			walk(i + 1)
			cur = cur[:i]
		}
	}
	walk(0)
	return out
}

// outputNodes is _get_output_nodes_of_partitions: each partition's single
// output node.
func outputNodes(ps []sourcePartition) ([]*fxgraph.Node, error) {
	out := make([]*fxgraph.Node, len(ps))
	for i, p := range ps {
		if len(p.outputs) != 1 {
			name := "?"
			if len(p.nodes) > 0 {
				name = p.nodes[0].Name()
			}
			return nil, fmt.Errorf("%w: the partition of %q has %d output nodes, want one", ErrAnnotation, name, len(p.outputs))
		}
		out[i] = p.outputs[0]
	}
	return out, nil
}

func multiOutput(ps []sourcePartition) bool {
	for _, p := range ps {
		if len(p.outputs) > 1 {
			return true
		}
	}
	return false
}

// x86Annotator runs the annotators of one X86InductorQuantizer.Annotate.
type x86Annotator struct {
	g *fxgraph.Graph
	// filter is the current configuration's filter over a pattern's nodes.
	filter func(nodes []*fxgraph.Node) (bool, error)
	// outPattern is _is_output_of_quantized_pattern of each annotation.
	outPattern map[*fxgraph.Node]bool
	// partitions caches getSourcePartitions by partType (joined): the
	// annotators ask for the same types again for every pattern and config,
	// and annotating does not change the graph.
	partitions map[string][]sourcePartition
}

// partitionsOf is getSourcePartitions(a.g, t), computed once per type.
func (a *x86Annotator) partitionsOf(t partType) []sourcePartition {
	k := strings.Join(t, "\x00")
	ps, ok := a.partitions[k]
	if !ok {
		ps = getSourcePartitions(a.g, t)
		a.partitions[k] = ps
	}
	return ps
}

func (a *x86Annotator) set(n *fxgraph.Node, ann *QuantizationAnnotation, outPattern bool) {
	ann.Annotated = true
	SetAnnotation(n, ann)
	a.outPattern[n] = outPattern
}

// notQuantize is _annotate_nodes_not_quantize.
func (a *x86Annotator) notQuantize(nodes ...*fxgraph.Node) {
	for _, n := range nodes {
		a.set(n, &QuantizationAnnotation{}, false)
	}
}

// markAnnotated is _mark_nodes_as_annotated.
func (a *x86Annotator) markAnnotated(nodes ...*fxgraph.Node) {
	for _, n := range nodes {
		if Annotation(n) == nil {
			a.outPattern[n] = false
		}
		MarkAnnotated(n)
	}
}

// skip is _skip_annotate.
func (a *x86Annotator) skip(nodes ...*fxgraph.Node) (bool, error) {
	if anyAnnotated(nodes...) {
		return true, nil
	}
	ok, err := a.filter(nodes)
	return !ok, err
}

// isQuantizedOp is _is_quantized_op_pt2e.
func (a *x86Annotator) isQuantizedOp(n *fxgraph.Node) bool {
	return IsAnnotated(n) && a.outPattern[n]
}

func (a *x86Annotator) annotateWithConfig(c *QuantizationConfig) error {
	steps := []func(*QuantizationConfig) error{
		a.conv2dFusion, a.linearBinaryUnary, a.linearUnary, a.linear, a.matmul, a.mulTensor, a.propagate,
	}
	for _, s := range steps {
		if err := s(c); err != nil {
			return err
		}
	}
	return nil
}

// weighted is _annotate_conv_node_helper / _annotate_linear_node_helper.
func (a *x86Annotator) weighted(n *fxgraph.Node, annotateOutput bool, c *QuantizationConfig) error {
	if c == nil {
		a.notQuantize(n)
		return nil
	}
	_, ok1 := n.Arg(0).(*fxgraph.Node)
	_, ok2 := n.Arg(1).(*fxgraph.Node)
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: node %q: the input and weight must be nodes", ErrAnnotation, n.Name())
	}
	ann := &QuantizationAnnotation{}
	weightedInputs(ann, n, c)
	a.set(n, ann, annotateOutput)
	return nil
}

// binaryIndex is _get_input_idx_for_binary_node: the argument of the add
// that is not the conv/linear output; ok is false when neither is.
func binaryIndex(op, bin *fxgraph.Node) (extra *fxgraph.Node, ok bool, err error) {
	arg := func(i int) (*fxgraph.Node, error) {
		v, isNode := bin.Arg(i).(*fxgraph.Node)
		if !isNode {
			return nil, fmt.Errorf("%w: node %q: argument %d of the binary post-op is not a node", ErrAnnotation, bin.Name(), i)
		}
		return v, nil
	}
	if len(bin.Args()) < 2 {
		return nil, false, fmt.Errorf("%w: node %q: a binary post-op needs two arguments", ErrAnnotation, bin.Name())
	}
	a0, err := arg(0)
	if err != nil {
		return nil, false, err
	}
	opIdx := 0
	if a0.Op() != fxgraph.CallFunction || a0 != op {
		a1, err := arg(1)
		if err != nil {
			return nil, false, err
		}
		if a1.Op() != fxgraph.CallFunction || a1 != op {
			return nil, false, nil
		}
		opIdx = 1
	}
	extra, err = arg(1 - opIdx)
	return extra, err == nil, err
}

// binaryPostOp is the check the binary annotators share: pre (the conv or
// linear, or the batch norm after a conv) has the add bin as its only user
// and is one of its arguments, and anchor is a call of target. It returns
// the add's other argument.
func binaryPostOp(pre, bin, anchor *fxgraph.Node, target ops.Target) (extra *fxgraph.Node, ok bool, err error) {
	if pre.NumUsers() != 1 {
		return nil, false, nil
	}
	extra, ok, err = binaryIndex(pre, bin)
	if err != nil || !ok {
		return nil, false, err
	}
	return extra, anchor.Op() == fxgraph.CallFunction && anchor.Target() == target, nil
}

func (a *x86Annotator) conv2dFusion(c *QuantizationConfig) error {
	if c == nil || c.IsQAT {
		if err := a.qatConv2dFusion(c); err != nil {
			return err
		}
	}
	// _annotate_conv2d_binary_unary, then _annotate_conv2d_binary.
	for _, withUnary := range []bool{true, false} {
		if err := a.binaryFusion(c, false, withUnary); err != nil {
			return err
		}
	}
	if err := a.conv2dUnary(c); err != nil {
		return err
	}
	return a.conv2d(c)
}

// binaryFusion is _annotate_conv2d_binary_unary / _annotate_conv2d_binary
// (linear false) and _annotate_linear_binary_unary (linear true): a conv2d
// or an nn.Linear, an add and, withUnary, a ReLU after. The linear skips
// patterns with a multi-output partition, and its add's other input gets no
// spec, where the conv's gets the input activation spec.
func (a *x86Annotator) binaryFusion(c *QuantizationConfig, linear, withUnary bool) error {
	opType, target := ptConv2d, x86Conv2d
	if linear {
		opType, target = ptLinear, linearDefault
	}
	types := []partType{opType, ptAdd}
	if withUnary {
		types = append(types, ptReLU)
	}
	for _, fp := range a.findSequentialPartitions(types...) {
		if linear && multiOutput(fp) {
			continue
		}
		outs, err := outputNodes(fp)
		if err != nil {
			return err
		}
		op, bin := outs[0], outs[1]
		extra, ok, err := binaryPostOp(op, bin, op, target)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		nodes := []*fxgraph.Node{bin, op}
		if withUnary {
			nodes = []*fxgraph.Node{outs[2], bin, op}
		}
		if s, err := a.skip(nodes...); err != nil {
			return err
		} else if s {
			continue
		}
		if c == nil {
			a.notQuantize(nodes...)
			continue
		}
		if err := a.weighted(op, false, c); err != nil {
			return err
		}
		ann := &QuantizationAnnotation{}
		if !linear {
			ann.SetInput(extra, qs(c.InputActivation))
		}
		a.set(bin, ann, !withUnary)
		if withUnary {
			a.set(outs[2], &QuantizationAnnotation{}, true)
		}
	}
	return nil
}

// conv2dUnary is _annotate_conv2d_unary.
func (a *x86Annotator) conv2dUnary(c *QuantizationConfig) error {
	var fused [][]sourcePartition
	for _, p := range [][2]partType{
		{ptConv2d, ptReLU}, {ptConv2d, ptHardtanh}, {ptConv2d, ptHardswish},
		{ptConv2d, ptReLU6}, {ptConv2d, ptSiLU}, {ptConv1d, ptReLU},
	} {
		fused = append(fused, a.findSequentialPartitions(p[0], p[1])...)
	}
	return a.unaryFusion(c, fused, false, x86Conv2d, x86Conv1d)
}

// unaryFusion annotates the op + unary patterns of fused whose op is a call
// of one of targets: the op as a weighted op, the unary post-op as the
// pattern's output. skipMultiOutput drops patterns with a multi-output
// partition (the linear annotator's check).
func (a *x86Annotator) unaryFusion(c *QuantizationConfig, fused [][]sourcePartition, skipMultiOutput bool, targets ...ops.Target) error {
	for _, fp := range fused {
		if skipMultiOutput && multiOutput(fp) {
			continue
		}
		outs, err := outputNodes(fp)
		if err != nil {
			return err
		}
		op, unary := outs[0], outs[1]
		if op.Op() != fxgraph.CallFunction || !slices.Contains(targets, op.Target()) {
			continue
		}
		if s, err := a.skip(unary, op); err != nil {
			return err
		} else if s {
			continue
		}
		if c == nil {
			a.notQuantize(op, unary)
			continue
		}
		if err := a.weighted(op, false, c); err != nil {
			return err
		}
		a.set(unary, &QuantizationAnnotation{}, true)
	}
	return nil
}

// conv2d is _annotate_conv2d.
func (a *x86Annotator) conv2d(c *QuantizationConfig) error {
	for _, p := range a.partitionsOf(ptConv2d) {
		if len(p.outputs) != 1 {
			return fmt.Errorf("%w: conv partition of %q has %d output nodes, want one", ErrAnnotation, p.nodes[0].Name(), len(p.outputs))
		}
		if err := a.weightedAlone(c, p.outputs[0], x86Conv2d, "conv2d"); err != nil {
			return err
		}
	}
	return nil
}

// weightedAlone is the body _annotate_conv2d and _annotate_linear share:
// n, which must be a call of target (an error naming what otherwise), is a
// pattern of its own, annotated as a weighted op with the output spec.
func (a *x86Annotator) weightedAlone(c *QuantizationConfig, n *fxgraph.Node, target ops.Target, what string) error {
	if n.Op() != fxgraph.CallFunction || n.Target() != target {
		return fmt.Errorf("%w: node %q is not an aten %s operator", ErrAnnotation, n.Name(), what)
	}
	if s, err := a.skip(n); err != nil || s {
		return err
	}
	return a.weighted(n, true, c)
}

// linearBinaryUnary is _annotate_linear_binary_unary: linear + add, with
// an optional ReLU after; the add's other input gets no spec.
func (a *x86Annotator) linearBinaryUnary(c *QuantizationConfig) error {
	for _, withUnary := range []bool{true, false} {
		if err := a.binaryFusion(c, true, withUnary); err != nil {
			return err
		}
	}
	return nil
}

// linearUnary is _annotate_linear_unary (ReLU, LeakyReLU, Tanh, GELU).
func (a *x86Annotator) linearUnary(c *QuantizationConfig) error {
	var fused [][]sourcePartition
	for _, u := range []partType{ptReLU, ptLeakyReLU, ptTanh, ptGELU} {
		fused = append(fused, a.findSequentialPartitions(ptLinear, u)...)
	}
	return a.unaryFusion(c, fused, true, linearDefault)
}

// linear is _annotate_linear: every call site of an nn.Linear / F.linear
// partition.
func (a *x86Annotator) linear(c *QuantizationConfig) error {
	for _, p := range a.partitionsOf(ptLinearF) {
		for _, lin := range p.outputs {
			if err := a.weightedAlone(c, lin, linearDefault, "linear"); err != nil {
				return err
			}
		}
	}
	return nil
}

// matmul is _annotate_matmul: both inputs of aten.matmul get the input
// activation spec (only an operator config reaches it: matmul is not a
// default quantizable op).
func (a *x86Annotator) matmul(c *QuantizationConfig) error {
	for _, n := range a.g.Nodes() {
		if n.Op() != fxgraph.CallFunction || n.Target() != x86Matmul {
			continue
		}
		if s, err := a.skip(n); err != nil {
			return err
		} else if s {
			continue
		}
		if c == nil {
			a.notQuantize(n)
			continue
		}
		ann := &QuantizationAnnotation{}
		for _, v := range n.Args() {
			if in, ok := v.(*fxgraph.Node); ok {
				ann.SetInput(in, qs(c.InputActivation))
			}
		}
		a.set(n, ann, true)
	}
	return nil
}

// sameShape reports whether x and y are tensors of the same shape.
func sameShape(x, y *fxgraph.Node) bool {
	tx, ok1 := x.TensorType()
	ty, ok2 := y.TensorType()
	return ok1 && ok2 && slices.Equal(tx.Shape, ty.Shape) && slices.Equal(tx.Syms, ty.Syms)
}

// mulTensor is _annotate_mul_tensor: an aten.mul.Tensor of two tensors of
// the same shape gets the input activation spec on both.
func (a *x86Annotator) mulTensor(c *QuantizationConfig) error {
	for _, n := range a.g.Nodes() {
		if n.Op() != fxgraph.CallFunction || n.Target() != mulTensor {
			continue
		}
		if s, err := a.skip(n); err != nil {
			return err
		} else if s {
			continue
		}
		if c == nil {
			a.notQuantize(n)
			continue
		}
		if len(n.Args()) != 2 {
			return fmt.Errorf("%w: node %q: aten.mul.Tensor with %d arguments", ErrAnnotation, n.Name(), len(n.Args()))
		}
		x, ok1 := n.Arg(0).(*fxgraph.Node)
		y, ok2 := n.Arg(1).(*fxgraph.Node)
		if !ok1 || !ok2 || !sameShape(x, y) {
			continue
		}
		ann := &QuantizationAnnotation{}
		ann.SetInput(x, qs(c.InputActivation))
		ann.SetInput(y, qs(c.InputActivation))
		a.set(n, ann, true)
	}
	return nil
}

// propagate is _annotate_propagation_quantizable_pattern over the graph:
// max_pool2d, cat, avg_pool2d, adaptive_avg_pool2d and flatten take int8
// when their inputs come out of quantized patterns.
func (a *x86Annotator) propagate(c *QuantizationConfig) error {
	allQuantized := func(nodes []*fxgraph.Node) bool {
		for _, n := range nodes {
			if !a.isQuantizedOp(n) {
				return false
			}
		}
		return true
	}
	for _, n := range a.g.Nodes() {
		if n.Op() != fxgraph.CallFunction || !x86Propagation.Has(n.Target()) || IsAnnotated(n) {
			continue
		}
		if s, err := a.skip(n); err != nil {
			return err
		} else if s {
			continue
		}
		if c == nil {
			a.notQuantize(n)
			continue
		}
		inputs := n.InputNodes()
		if len(inputs) == 0 {
			return fmt.Errorf("%w: node %q: %s without an input node", ErrAnnotation, n.Name(), n.Target())
		}
		switch {
		case n.Target() == x86MaxPool2d:
			if !allQuantized(inputs[:1]) {
				continue
			}
			in, ok := n.Arg(0).(*fxgraph.Node)
			if !ok {
				return fmt.Errorf("%w: node %q: the input of max_pool2d is not a node", ErrAnnotation, n.Name())
			}
			ann := &QuantizationAnnotation{}
			ann.SetInput(in, qs(c.InputActivation))
			a.set(n, ann, true)
		case n.Target() == catDefault:
			if !allQuantized(inputs) {
				continue
			}
			if err := a.cat(n, c); err != nil {
				return err
			}
		case n.Target() == x86Flatten && n.NumUsers() > 0 && !slices.ContainsFunc(n.Users(), func(u *fxgraph.Node) bool {
			return u.Op() == fxgraph.CallFunction && x86Quantizable.Has(u.Target())
		}):
			continue
		default:
			if !allQuantized(inputs[:1]) {
				continue
			}
			ann := &QuantizationAnnotation{}
			ann.SetInput(inputs[0], qs(c.InputActivation))
			a.set(n, ann, true)
		}
	}
	return nil
}

// cat is _annotate_cat: the first input gets the input activation spec and
// the others share its observer.
func (a *x86Annotator) cat(n *fxgraph.Node, c *QuantizationConfig) error {
	list, _ := ops.Sequence(n.Arg(0))
	if len(list) == 0 {
		return fmt.Errorf("%w: node %q: cat without inputs", ErrAnnotation, n.Name())
	}
	first, ok := list[0].(*fxgraph.Node)
	if !ok {
		return fmt.Errorf("%w: node %q: the first input of cat is not a node", ErrAnnotation, n.Name())
	}
	ann := &QuantizationAnnotation{}
	ann.SetInput(first, qs(c.InputActivation))
	shared := &SharedQuantizationSpec{EdgeOrNode: Edge(first, n)}
	for _, v := range list[1:] {
		in, ok := v.(*fxgraph.Node)
		if !ok {
			return fmt.Errorf("%w: node %q: an input of cat is not a node", ErrAnnotation, n.Name())
		}
		if _, has := ann.Input(in); !has {
			ann.SetInput(in, shared)
		}
	}
	a.set(n, ann, true)
	return nil
}

// annotateInt8InInt8Out is _annotate_output_for_int8_in_int8_out_pattern
// over the graph: an annotated int8-in-int8-out op that is the output of a
// quantized pattern shares its first input's observer for its output.
func (a *x86Annotator) annotateInt8InInt8Out() {
	for _, n := range a.g.Nodes() {
		if n.Op() != fxgraph.CallFunction || !x86Int8In8Out.Has(n.Target()) || !IsAnnotated(n) || !a.outPattern[n] {
			continue
		}
		var in *fxgraph.Node
		if n.Target() == x86MaxPool2d {
			in, _ = n.Arg(0).(*fxgraph.Node)
		} else if ins := n.InputNodes(); len(ins) > 0 {
			in = ins[0]
		}
		if in == nil {
			continue
		}
		Annotation(n).OutputQSpec = &SharedQuantizationSpec{EdgeOrNode: Edge(in, n)}
	}
}
