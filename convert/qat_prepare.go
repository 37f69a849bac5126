package convert

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// FakeQuantize is torchao's FusedMovingAvgObsFakeQuantize as prepare
// inserts it for a QAT config (SymmetricQATConfig): a moving-average
// observer plus the fake-quantize arguments. In fxquant it observes like its
// observer (fxquant does not train); PrepareQAT then writes it as an
// aten.fused_moving_avg_obs_fake_quant node with its state as buffers, the
// form PyTorch trains.
type FakeQuantize struct {
	// Observer is the MovingAverageMinMaxObserver (per tensor) or
	// MovingAveragePerChannelMinMaxObserver (per channel). FakeQuantize
	// observes, computes qparams (FakeQuantize.calculate_qparams) and
	// plans its convert as it does; only Class is its own.
	observers.Observer
	// QuantMin and QuantMax are the quant range.
	QuantMin, QuantMax int64
	// ChAxis is the channel axis, -1 for a per-tensor fake quantizer.
	ChAxis int64
	// PerChannel and Symmetric are the op's per_row_fake_quant and
	// symmetric_quant arguments.
	PerChannel, Symmetric bool
	// AveragingConstant is the observer's averaging constant (0.01).
	AveragingConstant float64
	// Eps is the observer's eps buffer.
	Eps float32
}

var _ observers.Observer = (*FakeQuantize)(nil)

// Class returns "FusedMovingAvgObsFakeQuantize".
func (f *FakeQuantize) Class() string { return "FusedMovingAvgObsFakeQuantize" }

// FusedFakeQuantizeCtor returns a constructor of FakeQuantize
// (FusedMovingAvgObsFakeQuantize.with_args(observer=MovingAverage...,
// **base)): a per-channel spec gets a MovingAveragePerChannelMinMaxObserver,
// a per-tensor one a MovingAverageMinMaxObserver.
func FusedFakeQuantizeCtor(base observers.Config) ObserverCtor {
	return func(s *QuantizationSpec) (observers.Observer, error) {
		perChannel := s.QScheme.IsPerChannel()
		c := specConfig(base, s, perChannel)
		var o observers.Observer
		var err error
		if perChannel {
			o, err = observers.NewMovingAveragePerChannelMinMaxObserver(c)
		} else {
			o, err = observers.NewMovingAverageMinMaxObserver(c)
		}
		if err != nil {
			return nil, err
		}
		if s.QuantMin == nil || s.QuantMax == nil {
			return nil, fmt.Errorf("%w: FusedMovingAvgObsFakeQuantize needs quant_min and quant_max", ErrQAT)
		}
		f := &FakeQuantize{Observer: o, QuantMin: *s.QuantMin, QuantMax: *s.QuantMax, ChAxis: -1,
			PerChannel: perChannel, AveragingConstant: 0.01, Eps: float32(observers.Float32Eps)}
		if c.AveragingConstant != 0 {
			f.AveragingConstant = c.AveragingConstant
		}
		if c.Eps != 0 {
			f.Eps = float32(c.Eps)
		}
		f.Symmetric = s.QScheme.IsSymmetric()
		if perChannel {
			f.ChAxis = int64(c.ChAxis)
		}
		return f, nil
	}
}

// SymmetricQATConfig is get_symmetric_quantization_config(is_qat=True):
// the config of SymmetricQuantizationConfig with every observer replaced by
// a FusedMovingAvgObsFakeQuantize (FusedFakeQuantizeCtor, eps 2**-12).
// Dynamic QAT (a plain FakeQuantize) is not supported: o.Dynamic is an
// error.
func SymmetricQATConfig(o SymmetricConfigOptions) (*QuantizationConfig, error) {
	if o.Dynamic {
		return nil, fmt.Errorf("%w: dynamic QAT (is_dynamic=True, is_qat=True) is not supported", ErrQAT)
	}
	c := SymmetricQuantizationConfig(o)
	act := *c.InputActivation
	act.Observer = FusedFakeQuantizeCtor(observers.Config{Eps: xnnpackEps})
	w := *c.Weight
	w.Observer = FusedFakeQuantizeCtor(observers.Config{Eps: xnnpackEps})
	return &QuantizationConfig{InputActivation: &act, OutputActivation: &act, Weight: &w}, nil
}

// qatFusion is a quantizer as prepare_qat_pt2e runs it: its own
// transform, annotation and validation, then after validation the conv+BN
// fusion of _fuse_conv_bn_qat.
type qatFusion struct{ Quantizer }

func (w qatFusion) Validate(g *fxgraph.Graph) error {
	if err := w.Quantizer.Validate(g); err != nil {
		return err
	}
	return FuseConvBNQAT(g)
}

// xnnpackQAT is an XNNPACKQuantizer with a QAT config, as torchao's QAT
// annotation runs it: the conv_bn(_relu) annotators first, then the static
// ones.
type xnnpackQAT struct {
	*XNNPACKQuantizer
	reg *ops.Registry
}

func (w xnnpackQAT) Annotate(g *fxgraph.Graph) error {
	a := &xnnAnnotator{byTarget: w.AnnotateByTarget, filter: w.Filter}
	c := w.Global
	if c != nil {
		g.EliminateDeadCode(w.reg, nil) // as _do_annotate_conv_bn does
		for _, p := range []struct{ relu, transposed bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
			a.annotateConvBN(g, c, p.relu, p.transposed)
		}
	}
	return w.XNNPACKQuantizer.Annotate(g)
}

// annotateConvBN is _do_annotate_conv_bn: conv -> batch_norm (-> relu or
// relu_), the conv and batch norm used only inside the pattern. The conv
// gets the input activation, weight and bias specs, the pattern's output
// the output activation spec; conv, weight and bias are claimed.
func (q *xnnAnnotator) annotateConvBN(g *fxgraph.Graph, c *QuantizationConfig, relu, transposed bool) {
	for _, bn := range g.Nodes() {
		if bn.Erased() || bn.Op() != fxgraph.CallFunction || bn.Target() != bnDefault {
			continue
		}
		conv, isT, ok := convInto(bn)
		if !ok || isT != transposed {
			continue
		}
		out := bn
		if relu {
			us := bn.Users()
			if len(us) != 1 || us[0].Op() != fxgraph.CallFunction || !reluTarget.Has(us[0].Target()) {
				continue
			}
			out = us[0]
		}
		w, _ := conv.Arg(1).(*fxgraph.Node)
		var b *fxgraph.Node
		if len(conv.Args()) > 2 {
			b, _ = conv.Arg(2).(*fxgraph.Node)
		}
		partition := []*fxgraph.Node{conv, w}
		if b != nil {
			partition = append(partition, b)
		}
		if anyAnnotated(partition...) || !q.ok(partition...) {
			continue
		}
		a := &QuantizationAnnotation{Annotated: true}
		weightedInputs(a, conv, c)
		SetAnnotation(conv, a)
		SetAnnotation(out, &QuantizationAnnotation{OutputQSpec: qs(c.OutputActivation), Annotated: true})
		MarkAnnotated(partition...)
	}
}

// FuseConvBNQAT is torchao's _fuse_conv_bn_qat: every conv -> batch_norm
// (aten.batch_norm.default; the conv used only by it, its weight a node)
// becomes the graph that simulates the fold during training
// (nniqat.ConvBn2d._forward_approximate):
//
//	sf = bn_weight / sqrt(running_var + 1e-05)
//	y  = conv(x, conv_weight * sf.reshape(w_shape), zeros_like(conv_bias) | None) / sf.reshape(b_shape)
//	[y = y + conv_bias.reshape(b_shape)]
//	batch_norm(y, bn_weight, bn_bias, running_mean, running_var, True, 0.1, 1e-05, False)
//
// w_shape is -1 on the weight's output-channel axis (1 for a transposed
// conv), b_shape -1 on axis 1. The new nodes go right before the batch
// norm, the conv moves there too; the batch norm takes the pattern's
// literals, as torchao's replacement does. The conv's annotation is
// re-keyed to its new weight (and bias) arguments. On error g is unchanged.
func FuseConvBNQAT(g *fxgraph.Graph) error {
	return g.Atomic(func() error {
		for _, bn := range g.Nodes() {
			if bn.Erased() || bn.Op() != fxgraph.CallFunction || bn.Target() != bnDefault || len(bn.Args()) < 5 {
				continue
			}
			conv, isT, ok := convInto(bn)
			if !ok || len(conv.Args()) < 2 {
				continue
			}
			var bnArgs [5]*fxgraph.Node
			all := true
			for i := 1; i < 5; i++ {
				n, ok := bn.Arg(i).(*fxgraph.Node)
				all = all && ok && n != nil
				bnArgs[i] = n
			}
			x, ok1 := conv.Arg(0).(*fxgraph.Node)
			w, ok2 := conv.Arg(1).(*fxgraph.Node)
			if !all || !ok1 || !ok2 || x == nil || w == nil {
				continue
			}
			var bias *fxgraph.Node
			if len(conv.Args()) > 2 && conv.Arg(2) != nil {
				if bias, ok = conv.Arg(2).(*fxgraph.Node); !ok {
					continue
				}
			}
			tt, ok := w.TensorType()
			if !ok || tt.Rank() < 2 {
				return fmt.Errorf("node %q: %w: the conv weight %q has no known rank", conv.Name(), ErrQAT, w.Name())
			}
			rank := tt.Rank()
			wShape, bShape := make(ops.List, rank), make(ops.List, rank)
			for i := range wShape {
				wShape[i], bShape[i] = int64(1), int64(1)
			}
			wAxis := 0
			if isT {
				wAxis = 1
			}
			wShape[wAxis], bShape[1] = int64(-1), int64(-1)
			bnW, bnB, rm, rv := bnArgs[1], bnArgs[2], bnArgs[3], bnArgs[4]

			restore := g.InsertingBefore(bn)
			add := g.Call(addTensor, rv, 1e-05)
			sq := g.Call(sqrtDefault, add)
			sf := g.Call(divTensor, bnW, sq)
			r0 := g.Call(reshapeOp, sf, wShape)
			mul := g.Call(mulTensor, w, r0)
			var zeros *fxgraph.Node
			if bias != nil {
				zeros = g.CallKw(zerosLikeOp, []ops.Value{bias}, []fxgraph.Kwarg{
					{Name: "dtype", Value: tensor.Float32}, {Name: "pin_memory", Value: false}})
				if bt, ok := bias.TensorType(); ok { // zeros_like has no result-type rule
					zeros.SetType(ops.Plain(tensor.Float32, bt.Shape...))
				}
			}
			restore()
			if err := g.MoveBefore(conv, bn); err != nil {
				return fmt.Errorf("node %q: %w", conv.Name(), err)
			}
			// torchao's replacement conv has (x, w, bias-or-None) and the
			// original's literal arguments; export drops a trailing None.
			args := append([]ops.Value(nil), conv.Args()...)
			args[1] = mul
			if zeros != nil {
				if len(args) < 3 {
					args = append(args, nil)
				}
				args[2] = zeros
			} else if len(args) > 2 {
				args[2] = nil
			}
			g.SetArgs(conv, args...)
			restore = g.InsertingBefore(bn)
			r1 := g.Call(reshapeOp, sf, bShape)
			y := g.Call(divTensor, conv, r1)
			if bias != nil {
				r2 := g.Call(reshapeOp, bias, bShape)
				y = g.Call(addTensor, y, r2)
			}
			restore()
			g.SetArgs(bn, y, bnW, bnB, rm, rv, true, 0.1, 1e-05, false)
			g.SetKwargs(bn, nil)
			if a := annotationOf(conv); a != nil {
				na := *a
				na.InputQSpecMap = nil
				old := a.InputQSpecMap
				if len(old) > 0 {
					na.SetInput(x, old[0].Spec)
				}
				if len(old) > 1 {
					na.SetInput(mul, old[1].Spec)
				}
				if len(old) > 2 && zeros != nil {
					na.SetInput(zeros, old[2].Spec)
				}
				SetAnnotation(conv, &na)
			}
		}
		return nil
	})
}

// QATOptions configures PrepareQAT.
type QATOptions struct {
	// PrepareOptions are prepare's options (SkipBNFold is ignored: QAT
	// never folds batch norms at prepare).
	PrepareOptions
	// PresizePerChannel writes a per-channel fake quantizer's min_val,
	// max_val, scale and zero_point with their channel count C already
	// (min_val +inf, max_val -inf, scale 1, zero_point 0, each [C]), where
	// torchao starts from empty min_val/max_val and [1] scale/zero_point
	// that the op resizes on its first call. A program PyTorch loaded
	// with torch.export.load cannot resize them ("Trying to resize storage
	// that is not resizable"), so only a presized program trains after
	// loading; its first step then gives the state torchao's in-memory
	// model has after its first step. Off by default: the graph then equals
	// torchao's prepared graph exactly.
	PresizePerChannel bool
}

// PrepareQAT is prepare_qat_pt2e: q's transform_for_annotation and
// annotation, the conv+BN fold simulation (FuseConvBNQAT), and one
// FusedMovingAvgObsFakeQuantize per observed edge or output, numbered as
// prepare numbers observers. No batch norm is folded (prepare_qat_pt2e
// does not call _fuse_conv_bn_).
//
// q is one of:
//   - an *XNNPACKQuantizer whose global config is a QAT config
//     (SymmetricQATConfig): its conv_bn(_relu) annotators run before the
//     static ones, as torchao's QAT annotation does. Per-module configs
//     (SetModuleName, SetModuleType) are not supported.
//   - an *X86InductorQuantizer with QAT configs
//     (X86InductorQuantizationConfig with QAT): its own annotation, which
//     annotates the conv+BatchNorm patterns of a QAT config.
//
// Then each fake quantizer is written as PyTorch traces it
// (MaterializeFakeQuants), so that the graph, written with
// pt2.(*Program).WithGraph, is a program PyTorch loads and trains.
// On error g is unchanged.
func PrepareQAT(g *fxgraph.Graph, q Quantizer, opts QATOptions) error {
	reg := opts.Registry
	if reg == nil {
		reg = ops.Default()
	}
	var wq Quantizer
	switch q := q.(type) {
	case *XNNPACKQuantizer:
		if q == nil {
			return fmt.Errorf("prepare qat: nil quantizer")
		}
		if len(q.moduleName)+len(q.moduleType) > 0 {
			return fmt.Errorf("prepare qat: %w: per-module configs are not supported", ErrQAT)
		}
		wq = qatFusion{xnnpackQAT{q, reg}}
	case *X86InductorQuantizer:
		if q == nil {
			return fmt.Errorf("prepare qat: nil quantizer")
		}
		wq = qatFusion{q}
	case nil:
		return fmt.Errorf("prepare qat: nil quantizer")
	default:
		return fmt.Errorf("prepare qat: %w: quantizer %T: QAT supports the XNNPACK and x86 inductor quantizers", ErrQAT, q)
	}
	po := opts.PrepareOptions
	po.SkipBNFold = true
	c, _ := g.Clone()
	if err := PrepareWithOptions(c, wq, po); err != nil {
		return fmt.Errorf("prepare qat: %w", err)
	}
	fxgraph.InferMissingTypes(c, reg) // the fusion's nodes, which fake quantizers take the type of
	n, err := MaterializeFakeQuants(c, opts.PresizePerChannel)
	if err != nil {
		return fmt.Errorf("prepare qat: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("prepare qat: %w: the quantizer inserted no fake quantizer (is its config a QAT config?)", ErrQAT)
	}
	fxgraph.InferMissingTypes(c, reg)
	g.ReplaceWith(c)
	return nil
}

// MaterializeFakeQuants replaces every call_module node of a FakeQuantize
// attribute "activation_post_process_N" by what torch.export traces for
// the module: aten.fused_moving_avg_obs_fake_quant.default(x,
// observer_enabled, fake_quant_enabled, min_val, max_val, scale,
// zero_point, averaging_constant, quant_min, quant_max, ch_axis
// [, per_row_fake_quant, symmetric_quant]) (the trailing two only when
// either is true, as export drops trailing defaults), its state as graph
// attributes under the module's path: fake_quant_enabled and
// observer_enabled int64 [1] = 1, scale float32 [1] = 1, zero_point int32
// [1] = 0, activation_post_process.eps float32 [1], and
// activation_post_process.min_val / max_val, float32 scalars +inf / -inf
// (per tensor) or empty [0] tensors (per channel), as torchao initializes
// them (presize: see QATOptions.PresizePerChannel). Call_module nodes of
// one FakeQuantize instance (a shared observer group, which torchao
// registers under several names) share one state, named after the last of
// them in program order, as torch.export names it (the other names stay
// as aliases of the same tensors that no node reads). An unused get_attr
// node keeps eps in the program. It returns how many it replaced; on error
// g is unchanged.
func MaterializeFakeQuants(g *fxgraph.Graph, presize bool) (int, error) {
	count := 0
	err := g.Atomic(func() error {
		// Nodes whose attributes hold the same FakeQuantize (a shared
		// observer group: torchao registers the one module under several
		// names) share one state; torch.export names it after the last of
		// them in program order, as the fixtures record.
		var order []*FakeQuantize
		groups := map[*FakeQuantize][]*fxgraph.Node{}
		for _, n := range g.Nodes() {
			if n.Erased() || n.Op() != fxgraph.CallModule {
				continue
			}
			v, _ := g.Attr(n.TargetName())
			f, ok := v.(*FakeQuantize)
			if !ok {
				continue
			}
			if x, ok := n.Arg(0).(*fxgraph.Node); !ok || x == nil || len(n.Args()) != 1 {
				return fmt.Errorf("fake quantize node %q: %w: want one node argument", n.Name(), ErrQAT)
			}
			if groups[f] == nil {
				order = append(order, f)
			}
			groups[f] = append(groups[f], n)
		}
		for _, f := range order {
			group := groups[f]
			n, x := group[0], group[0].Arg(0).(*fxgraph.Node)
			name := group[len(group)-1].TargetName()
			for _, m := range group {
				g.DeleteAttr(m.TargetName())
			}
			inf, ninf := float32(math.Inf(1)), float32(math.Inf(-1))
			// The shapes match the data: MustFromData cannot fail.
			type buf struct {
				path string
				t    *tensor.Tensor
			}
			bufs := []buf{
				{"fake_quant_enabled", tensor.MustFromData(tensor.Int64, []int{1}, []int64{1})},
				{"observer_enabled", tensor.MustFromData(tensor.Int64, []int{1}, []int64{1})},
				{"scale", tensor.MustFromData(tensor.Float32, []int{1}, []float32{1})},
				{"zero_point", tensor.MustFromData(tensor.Int32, []int{1}, []int32{0})},
				{"activation_post_process.eps", tensor.MustFromData(tensor.Float32, []int{1}, []float32{f.Eps})},
				{"activation_post_process.min_val", tensor.MustFromData(tensor.Float32, []int{}, []float32{inf})},
				{"activation_post_process.max_val", tensor.MustFromData(tensor.Float32, []int{}, []float32{ninf})},
			}
			if f.PerChannel && !presize {
				bufs[5].t = tensor.MustFromData(tensor.Float32, []int{0}, []float32{})
				bufs[6].t = tensor.MustFromData(tensor.Float32, []int{0}, []float32{})
			} else if f.PerChannel {
				tt, ok := x.TensorType()
				ax := int(f.ChAxis)
				if ok && ax < 0 {
					ax += tt.Rank()
				}
				if !ok || ax < 0 || ax >= tt.Rank() || tt.Shape[ax] < 0 {
					return fmt.Errorf("fake quantize node %q: %w: the channel count of its input %q is unknown", n.Name(), ErrQAT, x.Name())
				}
				C := int(tt.Shape[ax])
				fill := func(v float32) []float32 {
					d := make([]float32, C)
					for i := range d {
						d[i] = v
					}
					return d
				}
				bufs[2].t = tensor.MustFromData(tensor.Float32, []int{C}, fill(1))
				bufs[3].t = tensor.MustFromData(tensor.Int32, []int{C}, make([]int32, C))
				bufs[5].t = tensor.MustFromData(tensor.Float32, []int{C}, fill(inf))
				bufs[6].t = tensor.MustFromData(tensor.Float32, []int{C}, fill(ninf))
			}
			nodes := map[string]*fxgraph.Node{}
			restore := g.InsertingBefore(n)
			for _, b := range bufs {
				t := b.t
				p := name + "." + b.path
				g.SetAttr(p, t)
				nodes[b.path] = g.GetAttr(p, tensorTypeOf(t))
				// The module's other names alias the same tensors (written
				// as one storage), read by no node, as torch.export keeps them.
				for _, m := range group[:len(group)-1] {
					if m.TargetName() != name {
						g.SetAttr(m.TargetName()+"."+b.path, t)
						g.GetAttr(m.TargetName()+"."+b.path, tensorTypeOf(t))
					}
				}
			}
			restore()
			for _, n := range group {
				x := n.Arg(0).(*fxgraph.Node)
				args := []ops.Value{x, nodes["observer_enabled"], nodes["fake_quant_enabled"],
					nodes["activation_post_process.min_val"], nodes["activation_post_process.max_val"],
					nodes["scale"], nodes["zero_point"], f.AveragingConstant, f.QuantMin, f.QuantMax, f.ChAxis}
				if f.PerChannel || f.Symmetric {
					args = append(args, f.PerChannel, f.Symmetric)
				}
				restore := g.InsertingBefore(n)
				fq := g.Call(FusedFakeQuantize, args...)
				restore()
				fq.SetType(x.Type())
				*fq.Meta = n.Meta.Clone()
				g.ReplaceAllUsesWith(n, fq, nil)
				if err := g.Erase(n); err != nil {
					return fmt.Errorf("fake quantize node %q: %w", n.Name(), err)
				}
				count++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return count, nil
}
