package convert

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ErrQAT reports a QAT program ConvertQAT or PrepareQAT cannot take: a
// fake-quantize node whose state is missing or was never observed, or
// arguments of the wrong kind. The error names the node.
var ErrQAT = errors.New("invalid QAT program")

// FusedFakeQuantize is the target a QAT program's fake quantizers have once
// torch.export traces torchao's FusedMovingAvgObsFakeQuantize modules (the
// XNNPACK quantizer's is_qat config): aten.fused_moving_avg_obs_fake_quant
// with the module's state as buffer arguments (observer_enabled,
// fake_quant_enabled, the observer's min_val and max_val, scale,
// zero_point).
var FusedFakeQuantize = ops.MustOverload("aten.fused_moving_avg_obs_fake_quant.default")

var (
	addInplace    = ops.MustOverload("aten.add_.Tensor")
	divTensor     = ops.MustOverload("aten.div.Tensor")
	sqrtDefault   = ops.MustOverload("aten.sqrt.default")
	reshapeOp     = ops.MustOverload("aten.reshape.default")
	zerosLikeOp   = ops.MustOverload("aten.zeros_like.default")
	dropoutOp     = ops.MustOverload("aten.dropout.default")
	dropoutInpl   = ops.MustOverload("aten.dropout_.default")
	batchNorm2dTy = "torch.nn.modules.batchnorm.BatchNorm2d"
)

// ConvertQAT is convert_pt2e on a QAT program after training, read back
// from PyTorch (a prepared program as PrepareQAT writes it, or as
// torch.export.export gives torchao's prepare_qat_pt2e model, trained and
// exported again). Its steps follow torchao's convert_pt2e:
//
//  1. every aten.fused_moving_avg_obs_fake_quant node becomes an observer
//     holding the fake quantizer's trained state (FakeQuantObservers), and
//     the observers become q/dq nodes (ReplaceObservers): the qparams are
//     what FakeQuantize.calculate_qparams computes from the trained
//     min_val and max_val;
//  2. _fold_conv_bn_qat: every simulated conv+BN fold (the graph
//     PrepareQAT's fusion builds) goes back to conv -> batch_norm, the
//     weight q/dq keeping the qparams training gave the scaled weight, and
//     the batch norm is folded into the convolution's weight and bias
//     (FoldBatchNorm's arithmetic); the in-place num_batches_tracked
//     increments of BatchNorm2d modules are removed;
//  3. the rest of Convert (duplicate dequantize, metadata, constant
//     folding of the weight quantize nodes, reference representation).
//
// torchao's flow calls move_exported_model_to_eval before convert_pt2e:
// call MoveToEval first to get the same graph (dropout in eval mode). On
// error g is unchanged.
func ConvertQAT(g *fxgraph.Graph, opts ConvertOptions) error {
	reg := opts.Registry
	if reg == nil {
		reg = ops.Default()
	}
	c, _ := g.Clone()
	n, err := FakeQuantObservers(c, reg)
	if err != nil {
		return fmt.Errorf("convert qat: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("convert qat: %w: no %s node: not a QAT program", ErrQAT, FusedFakeQuantize)
	}
	if err := ReplaceObservers(c, opts); err != nil {
		return fmt.Errorf("convert qat: %w", err)
	}
	if err := FoldConvBNQAT(c, reg); err != nil {
		return fmt.Errorf("convert qat: %w", err)
	}
	if err := Convert(c, opts); err != nil {
		return fmt.Errorf("convert qat: %w", err)
	}
	g.ReplaceWith(c)
	return nil
}

// fakeQuantState is one fused fake-quantize node's arguments.
type fakeQuantState struct {
	x                *fxgraph.Node
	min, max         []float32
	qmin, qmax       int64
	chAxis           int64
	perRow, symmetic bool
	averaging        float64
	prefix           string // the FakeQuantize module path, "" if unknown
}

// readFakeQuant reads n's arguments and state tensors.
func readFakeQuant(g *fxgraph.Graph, reg *ops.Registry, n *fxgraph.Node) (*fakeQuantState, error) {
	full, _, ok := normalizedArgs(reg, n)
	if !ok || len(full) != 13 {
		return nil, fmt.Errorf("%w: arguments do not match the schema of %s", ErrQAT, FusedFakeQuantize)
	}
	st := &fakeQuantState{}
	if st.x, ok = full[0].(*fxgraph.Node); !ok {
		return nil, fmt.Errorf("%w: input: want a node, got %T", ErrQAT, full[0])
	}
	attr := func(i int, what string) (*fxgraph.Node, []float32, error) {
		an, ok := full[i].(*fxgraph.Node)
		if !ok || an.Op() != fxgraph.GetAttr {
			return nil, nil, fmt.Errorf("%w: %s: want a get_attr node (a buffer), got %v", ErrQAT, what, full[i])
		}
		v, _ := g.Attr(an.TargetName())
		t, ok := v.(*tensor.Tensor)
		if !ok || t == nil {
			return nil, nil, fmt.Errorf("%w: %s: attribute %q is not a tensor", ErrQAT, what, an.TargetName())
		}
		if t.DType() != tensor.Float32 {
			return an, nil, nil
		}
		d, err := tensor.Data[float32](t.Contiguous())
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %w", ErrQAT, what, err)
		}
		return an, d, nil
	}
	var err error
	if _, st.min, err = attr(3, "running_min"); err != nil {
		return nil, err
	}
	if _, st.max, err = attr(4, "running_max"); err != nil {
		return nil, err
	}
	scaleNode, _, err := attr(5, "scale")
	if err != nil {
		return nil, err
	}
	if st.min == nil || st.max == nil {
		return nil, fmt.Errorf("%w: running_min/running_max: want float32 buffers", ErrQAT)
	}
	if p, ok := strings.CutSuffix(scaleNode.TargetName(), ".scale"); ok {
		st.prefix = p
	}
	lit := func(i int, what string) (int64, error) {
		v, ok := full[i].(int64)
		if !ok {
			return 0, fmt.Errorf("%w: %s: want an int literal, got %v", ErrQAT, what, full[i])
		}
		return v, nil
	}
	if st.qmin, err = lit(8, "quant_min"); err != nil {
		return nil, err
	}
	if st.qmax, err = lit(9, "quant_max"); err != nil {
		return nil, err
	}
	if st.chAxis, err = lit(10, "ch_axis"); err != nil {
		return nil, err
	}
	if st.averaging, ok = full[7].(float64); !ok {
		return nil, fmt.Errorf("%w: averaging_const: want a float literal, got %v", ErrQAT, full[7])
	}
	if st.perRow, ok = full[11].(bool); !ok {
		return nil, fmt.Errorf("%w: per_row_fake_quant: want a bool literal, got %v", ErrQAT, full[11])
	}
	if st.symmetic, ok = full[12].(bool); !ok {
		return nil, fmt.Errorf("%w: symmetric_quant: want a bool literal, got %v", ErrQAT, full[12])
	}
	return st, nil
}

// observerFor builds the observer torchao's FakeQuantize holds
// (MovingAverageMinMaxObserver, or MovingAveragePerChannelMinMaxObserver
// for a per-row fake quantizer) and gives it the trained min_val and
// max_val. The dtype follows the quant range: [-128, 127] or inside it is
// torch.int8, [0, 255] or inside it torch.uint8 (the XNNPACK configs);
// eps is the observer's eps buffer, "<module>.activation_post_process.eps",
// when the program has it, else PyTorch's default (float32 eps).
func observerFor(g *fxgraph.Graph, st *fakeQuantState) (observers.Observer, error) {
	var dt observers.DType
	switch {
	case st.qmin >= -128 && st.qmax <= 127 && st.qmin < 0:
		dt = observers.Int8
	case st.qmin >= 0 && st.qmax <= 255:
		dt = observers.UInt8
	default:
		return nil, fmt.Errorf("%w: quant range [%d, %d] is neither int8 nor uint8", ErrQAT, st.qmin, st.qmax)
	}
	eps := observers.Float32Eps
	if st.prefix != "" {
		if v, ok := g.Attr(st.prefix + ".activation_post_process.eps"); ok {
			if t, ok := v.(*tensor.Tensor); ok && t.DType() == tensor.Float32 && t.Numel() == 1 {
				d, err := tensor.Data[float32](t.Contiguous())
				if err == nil {
					eps = float64(d[0])
				}
			}
		}
	}
	cfg := observers.Config{DType: dt, QuantMin: observers.Int(st.qmin), QuantMax: observers.Int(st.qmax),
		Eps: eps, AveragingConstant: st.averaging}
	if len(st.min) != len(st.max) {
		return nil, fmt.Errorf("%w: running_min has %d elements, running_max %d", ErrQAT, len(st.min), len(st.max))
	}
	for i := range st.min {
		lo, hi := st.min[i], st.max[i]
		if math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) || lo != lo || hi != hi || lo > hi {
			return nil, fmt.Errorf("%w: min_val %v, max_val %v at %d: the fake quantizer never observed data (train the program before converting)", ErrQAT, lo, hi, i)
		}
	}
	if !st.perRow {
		if len(st.min) != 1 {
			return nil, fmt.Errorf("%w: per-tensor running_min has %d elements, want 1", ErrQAT, len(st.min))
		}
		cfg.QScheme = observers.PerTensorAffine
		if st.symmetic {
			cfg.QScheme = observers.PerTensorSymmetric
		}
		o, err := observers.NewMovingAverageMinMaxObserver(cfg)
		if err != nil {
			return nil, err
		}
		// The first batch a moving-average observer sees sets min_val and
		// max_val: [min, max] sets them to the trained values exactly.
		t, err := tensor.FromData(tensor.Float32, []int{2}, []float32{st.min[0], st.max[0]})
		if err != nil {
			return nil, err
		}
		return o, o.Observe(t)
	}
	if len(st.min) == 0 {
		return nil, fmt.Errorf("%w: per-channel running_min is empty: the fake quantizer never observed data", ErrQAT)
	}
	cfg.QScheme = observers.PerChannelAffine
	if st.symmetic {
		cfg.QScheme = observers.PerChannelSymmetric
	}
	cfg.ChAxis = int(st.chAxis)
	o, err := observers.NewMovingAveragePerChannelMinMaxObserver(cfg)
	if err != nil {
		return nil, err
	}
	C := len(st.min)
	var shape []int
	data := make([]float32, 2*C)
	switch {
	case st.chAxis >= 0:
		for i := int64(0); i < st.chAxis; i++ {
			shape = append(shape, 1)
		}
		shape = append(shape, C, 2)
		for c := 0; c < C; c++ {
			data[2*c], data[2*c+1] = st.min[c], st.max[c]
		}
	case st.chAxis == -1:
		shape = []int{2, C}
		copy(data, st.min)
		copy(data[C:], st.max)
	default:
		return nil, fmt.Errorf("%w: ch_axis %d is not supported (want >= 0 or -1)", ErrQAT, st.chAxis)
	}
	t, err := tensor.FromData(tensor.Float32, shape, data)
	if err != nil {
		return nil, err
	}
	return o, o.Observe(t)
}

// FakeQuantObservers replaces every aten.fused_moving_avg_obs_fake_quant
// node of g by an observer call_module node (attribute
// "activation_post_process_N") holding the fake quantizer's trained state,
// so that ReplaceObservers turns it into the q/dq nodes torchao's convert
// inserts for the FakeQuantize module. It returns how many it replaced.
// All or nothing: on error g is unchanged and the error names the node.
func FakeQuantObservers(g *fxgraph.Graph, reg *ops.Registry) (int, error) {
	if reg == nil {
		reg = ops.Default()
	}
	count := 0
	var prefixes []string
	err := g.Atomic(func() error {
		for _, n := range g.Nodes() {
			if n.Erased() || n.Op() != fxgraph.CallFunction || n.Target() != FusedFakeQuantize {
				continue
			}
			st, err := readFakeQuant(g, reg, n)
			if err != nil {
				return fmt.Errorf("fake quantize node %q: %w", n.Name(), err)
			}
			o, err := observerFor(g, st)
			if err != nil {
				return fmt.Errorf("fake quantize node %q: %w", n.Name(), err)
			}
			name := g.FreshAttrName(ObserverPrefix)
			g.SetAttr(name, o)
			restore := g.InsertingBefore(n)
			on := g.CallModule(name, st.x)
			restore()
			*on.Meta = n.Meta.Clone()
			g.ReplaceAllUsesWith(n, on, nil)
			if err := g.Erase(n); err != nil {
				return fmt.Errorf("fake quantize node %q: %w", n.Name(), err)
			}
			if st.prefix != "" {
				prefixes = append(prefixes, st.prefix+".")
			}
			count++
		}
		// After the loop: a state read by two fake quantizers (a relu and
		// the mean after it, torchao registering one module under two
		// names) keeps its eps buffer for the second.
		dropAttrsUnder(g, prefixes)
		return nil
	})
	if err != nil {
		return 0, err
	}
	g.EliminateDeadCode(reg, nil)
	return count, nil
}

// dropAttrsUnder deletes the attributes under any of prefixes that no
// node reads.
func dropAttrsUnder(g *fxgraph.Graph, prefixes []string) {
	if len(prefixes) == 0 {
		return
	}
	used := map[string]bool{}
	for n := range g.All() {
		if n.Op() == fxgraph.GetAttr && len(n.Users()) > 0 {
			used[n.TargetName()] = true
		}
	}
	for _, name := range g.AttrNames() {
		if used[name] {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				g.DeleteAttr(name)
				break
			}
		}
	}
}

// isCallTo reports whether v is a call_function node of target t.
func isCallTo(v ops.Value, t ops.Target) (*fxgraph.Node, bool) {
	n, ok := v.(*fxgraph.Node)
	if !ok || n == nil || n.Op() != fxgraph.CallFunction || n.Target() != t {
		return nil, false
	}
	return n, true
}

// soleUser reports whether n's only user is u.
func soleUser(n, u *fxgraph.Node) bool {
	us := n.Users()
	return len(us) == 1 && us[0] == u
}

// convInto returns the convolution that is n's argument 0 and has n as
// its only user, and whether it is a transposed one.
func convInto(n *fxgraph.Node) (conv *fxgraph.Node, transposed, ok bool) {
	conv, ok = n.Arg(0).(*fxgraph.Node)
	if !ok || conv == nil || conv.Op() != fxgraph.CallFunction || !soleUser(conv, n) {
		return nil, false, false
	}
	isConv, isT := convTargets.Has(conv.Target()), convTransposeTargets.Has(conv.Target())
	return conv, isT, isConv || isT
}

// qatConvBN is one matched simulated conv+BN fold.
type qatConvBN struct {
	bn, conv, wq, wdq *fxgraph.Node
	weight, bias      *fxgraph.Node // get_attr nodes; bias nil without conv bias
	transposed        bool
}

// matchQATConvBN matches the graph _fuse_conv_bn_qat builds, ending in bn,
// after its weight fake quantizer became q/dq:
//
//	sf = bn_weight / sqrt(running_var + eps)
//	w  = dq(q(conv_weight * sf.reshape(w_shape)))
//	y  = conv(x, w, zeros_like(conv_bias) | None) / sf.reshape(b_shape) [+ conv_bias.reshape(b_shape)]
//	batch_norm(y, bn_weight, bn_bias, running_mean, running_var, ...)
func matchQATConvBN(bn *fxgraph.Node) (*qatConvBN, bool) {
	if len(bn.Args()) < 5 {
		return nil, false
	}
	bnW, ok1 := bn.Arg(1).(*fxgraph.Node)
	rv, ok2 := bn.Arg(4).(*fxgraph.Node)
	if !ok1 || !ok2 || bnW == nil || rv == nil {
		return nil, false
	}
	m := &qatConvBN{bn: bn}
	in, ok := bn.Arg(0).(*fxgraph.Node)
	if !ok || in == nil || !soleUser(in, bn) {
		return nil, false
	}
	div1 := in
	if add, ok := isCallTo(in, addTensor); ok && len(add.Args()) == 2 {
		r, ok := isCallTo(add.Arg(1), reshapeOp)
		if !ok {
			return nil, false
		}
		b, ok := r.Arg(0).(*fxgraph.Node)
		if !ok || b.Op() != fxgraph.GetAttr {
			return nil, false
		}
		m.bias = b
		if div1, ok = add.Arg(0).(*fxgraph.Node); !ok || div1 == nil || !soleUser(div1, add) {
			return nil, false
		}
	}
	d1, ok := isCallTo(div1, divTensor)
	if !ok || len(d1.Args()) != 2 {
		return nil, false
	}
	r1, ok := isCallTo(d1.Arg(1), reshapeOp)
	if !ok {
		return nil, false
	}
	sf, ok := isCallTo(r1.Arg(0), divTensor)
	if !ok || len(sf.Args()) != 2 || sf.Arg(0) != bnW {
		return nil, false
	}
	sq, ok := isCallTo(sf.Arg(1), sqrtDefault)
	if !ok {
		return nil, false
	}
	if a, ok := isCallTo(sq.Arg(0), addTensor); !ok || a.Arg(0) != rv {
		return nil, false
	}
	conv, isT, ok := convInto(d1)
	if !ok || len(conv.Args()) < 2 {
		return nil, false
	}
	m.conv, m.transposed = conv, isT
	var bias ops.Value
	if len(conv.Args()) > 2 {
		bias = conv.Arg(2)
	}
	if m.bias != nil {
		z, ok := isCallTo(bias, zerosLikeOp)
		if !ok || z.Arg(0) != m.bias {
			return nil, false
		}
	} else if bias != nil {
		return nil, false
	}
	wdq, ok := conv.Arg(1).(*fxgraph.Node)
	if !ok || wdq == nil || wdq.Op() != fxgraph.CallFunction || !soleUser(wdq, conv) {
		return nil, false
	}
	if wdq.Target() != dqPerTensor && wdq.Target() != dqPerChannel {
		return nil, false
	}
	wq, ok := wdq.Arg(0).(*fxgraph.Node)
	if !ok || wq == nil || wq.Op() != fxgraph.CallFunction || !soleUser(wq, wdq) {
		return nil, false
	}
	if wq.Target() != qPerTensor && wq.Target() != qPerChannel {
		return nil, false
	}
	mul, ok := isCallTo(wq.Arg(0), mulTensor)
	if !ok || len(mul.Args()) != 2 || !soleUser(mul, wq) {
		return nil, false
	}
	w, ok := mul.Arg(0).(*fxgraph.Node)
	if !ok || w == nil || w.Op() != fxgraph.GetAttr {
		return nil, false
	}
	if r0, ok := isCallTo(mul.Arg(1), reshapeOp); !ok || r0.Arg(0) != sf {
		return nil, false
	}
	m.weight, m.wq, m.wdq = w, wq, wdq
	return m, true
}

// FoldConvBNQAT is torchao's _fold_conv_bn_qat on a graph whose fake
// quantizers are already q/dq nodes: each simulated conv+BN fold becomes
// conv(x, dq(q(conv_weight)), conv_bias) -> batch_norm, keeping the weight
// q/dq arguments (the qparams the scaled weight had in training), and the
// batch norm is folded into the convolution's weight and bias attributes
// (a convolution without bias gets "<weight>_bias"). Then the in-place
// num_batches_tracked increments (aten.add_.Tensor(buffer, 1) in a
// BatchNorm2d module) are removed and dead code is eliminated. Only
// aten.batch_norm.default nodes (the torch 2.14 training IR) are matched.
// On error g is unchanged.
func FoldConvBNQAT(g *fxgraph.Graph, reg *ops.Registry) error {
	if reg == nil {
		reg = ops.Default()
	}
	if !hasBatchNorm(g) {
		return nil
	}
	return g.Atomic(func() error {
		folded := map[*fxgraph.Node]bool{}
		for _, bn := range g.Nodes() {
			if bn.Erased() || bn.Op() != fxgraph.CallFunction || bn.Target() != bnDefault {
				continue
			}
			m, ok := matchQATConvBN(bn)
			if !ok {
				continue
			}
			if err := g.SetArg(m.wq, 0, m.weight); err != nil {
				return fmt.Errorf("node %q: %w", m.wq.Name(), err)
			}
			args := append([]ops.Value(nil), m.conv.Args()...)
			if len(args) < 3 {
				args = append(args, nil)
			}
			args[1] = m.weight // foldOne reads the weight from argument 1
			if m.bias != nil {
				args[2] = m.bias
			} else {
				args[2] = nil
			}
			g.SetArgs(m.conv, args...)
			if err := g.SetArg(bn, 0, m.conv); err != nil {
				return fmt.Errorf("node %q: %w", bn.Name(), err)
			}
			if err := foldOne(g, reg, bn, m.conv, m.transposed, false, folded); err != nil {
				return err
			}
			if err := g.SetArg(m.conv, 1, m.wdq); err != nil {
				return fmt.Errorf("node %q: %w", m.conv.Name(), err)
			}
		}
		for _, n := range g.Nodes() {
			if n.Erased() || n.Op() != fxgraph.CallFunction || n.Target() != addInplace || len(n.Args()) != 2 {
				continue
			}
			a, ok := n.Arg(0).(*fxgraph.Node)
			if !ok || a.Op() != fxgraph.GetAttr {
				continue
			}
			if one, ok := n.Arg(1).(int64); !ok || one != 1 {
				continue
			}
			inBN := false
			for _, e := range n.Meta.NNModuleStack {
				inBN = inBN || e.Type == batchNorm2dTy
			}
			if !inBN || len(n.Users()) > 0 {
				continue
			}
			if err := g.Erase(n); err != nil {
				return fmt.Errorf("node %q: %w", n.Name(), err)
			}
		}
		g.EliminateDeadCode(reg, nil)
		return nil
	})
}
