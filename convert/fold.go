package convert

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

var (
	bnDefault     = ops.MustOverload("aten.batch_norm.default")
	bnNoTraining  = ops.MustOverload("aten._native_batch_norm_legit_no_training.default")
	linearDefault = ops.MustOverload("aten.linear.default")
	bnPresent     = ops.NewTargetSet(bnDefault, bnNoTraining,
		ops.MustOverload("aten._native_batch_norm_legit.default"),
		ops.MustOverload("aten.cudnn_batch_norm.default"),
		ops.MustOverload("aten.miopen_batch_norm.default"))
	convTargets = ops.NewTargetSet(
		ops.MustOverload("aten.conv1d.default"), ops.MustOverload("aten.conv2d.default"), ops.MustOverload("aten.conv3d.default"),
		ops.MustOverload("aten.conv1d.padding"), ops.MustOverload("aten.conv2d.padding"), ops.MustOverload("aten.conv3d.padding"))
	convTransposeTargets = ops.NewTargetSet(
		ops.MustOverload("aten.conv_transpose1d.default"), ops.MustOverload("aten.conv_transpose2d.input"), ops.MustOverload("aten.conv_transpose3d.input"),
		ops.MustPacket("aten.conv_transpose1d"), ops.MustPacket("aten.conv_transpose2d"), ops.MustPacket("aten.conv_transpose3d"))
)

// FoldBatchNorm folds every inference batch norm that follows a convolution
// into the convolution's weight and bias (spec section 3.7, torchao's
// _fuse_conv_bn_), then every one that follows a linear whose input has at
// most 2 dims (_fuse_linear_bn_). The fused tensors replace the attributes
// behind the weight and bias get_attr nodes; a convolution without bias gets
// a new parameter "<weight target>_bias". The batch norm nodes go, with
// every node DCE then finds dead. Arguments that are not get_attr nodes are
// an error wrapping ErrFold.
//
// Convolutions are aten.conv1d/2d/3d (.default, .padding) and
// aten.conv_transpose1d.default, conv_transpose2d.input and
// conv_transpose3d.input (or their packets); a transposed convolution's
// weight is scaled along axis 1. The fold needs no schema for them, but the
// default registry has none (nor kernels), so a graph holding them cannot be
// calibrated with it. A weight get_attr node shared by several
// convolutions is folded for the first batch norm only; later batch norms
// on it are removed without folding, as torchao does. A linear whose input
// has more than 2 dimensions is not folded (pytorch/ao#4116).
func FoldBatchNorm(g *fxgraph.Graph, reg *ops.Registry) error {
	if reg == nil {
		reg = ops.Default()
	}
	if !hasBatchNorm(g) {
		return nil
	}
	for _, linear := range []bool{false, true} {
		folded := map[*fxgraph.Node]bool{}
		changed := false
		for _, bn := range g.Nodes() {
			if bn.Erased() || bn.Op() != fxgraph.CallFunction {
				continue
			}
			t := bn.Target()
			if t != bnDefault && t != bnNoTraining {
				continue
			}
			prod, ok := bn.Arg(0).(*fxgraph.Node)
			if !ok || prod.Op() != fxgraph.CallFunction {
				continue
			}
			isConv, isT := convTargets.Has(prod.Target()), convTransposeTargets.Has(prod.Target())
			isLinear := prod.Target() == linearDefault
			if linear != isLinear || (!linear && !isConv && !isT) {
				continue
			}
			if isLinear {
				in, _ := prod.Arg(0).(*fxgraph.Node)
				if in != nil {
					if tt, ok := in.TensorType(); ok && tt.Rank() > 2 {
						continue // pytorch/ao#4116: not fusing linear+bn for ndim > 2
					}
				}
			}
			if err := foldOne(g, reg, bn, prod, isT, isLinear, folded); err != nil {
				return err
			}
			changed = true
		}
		if changed {
			g.EliminateDeadCode(reg, nil)
		}
	}
	return nil
}

func foldOne(g *fxgraph.Graph, reg *ops.Registry, bn, conv *fxgraph.Node, transposed, isLinear bool, folded map[*fxgraph.Node]bool) error {
	o := bn.Target().(ops.Overload)
	sch, ok := reg.Schema(o)
	if !ok {
		return fmt.Errorf("node %q: %w: no schema for %s", bn.Name(), ErrFold, o)
	}
	full, err := sch.Normalize(bn.Args(), bn.Kwargs())
	if err != nil {
		return fmt.Errorf("node %q: %w: %w", bn.Name(), ErrFold, err)
	}
	epsIdx := 7
	if o == bnNoTraining {
		epsIdx = 6
	}
	eps, ok := full[epsIdx].(float64)
	if !ok {
		return fmt.Errorf("node %q: %w: eps: want a float literal, got %T", bn.Name(), ErrFold, full[epsIdx])
	}
	getAttr := func(owner *fxgraph.Node, what string, v ops.Value, optional bool) (*fxgraph.Node, *tensor.Tensor, error) {
		if v == nil && optional {
			return nil, nil, nil
		}
		n, ok := v.(*fxgraph.Node)
		if !ok || n.Op() != fxgraph.GetAttr {
			return nil, nil, fmt.Errorf("node %q: %w: %s: expected get_attr node, got %v", owner.Name(), ErrFold, what, v)
		}
		a, ok := g.Attr(n.TargetName())
		t, ok2 := a.(*tensor.Tensor)
		if !ok || !ok2 {
			return nil, nil, fmt.Errorf("node %q: %w: %s: attribute %q is not a tensor", owner.Name(), ErrFold, what, n.TargetName())
		}
		if t.DType() != tensor.Float32 {
			return nil, nil, fmt.Errorf("node %q: %w: %s: want float32, got %s", owner.Name(), ErrFold, what, t.DType())
		}
		return n, t, nil
	}
	wNode, w, err := getAttr(conv, "weight", conv.Arg(1), false)
	if err != nil {
		return err
	}
	var convBias ops.Value
	if len(conv.Args()) > 2 {
		convBias = conv.Arg(2)
	}
	bNode, b, err := getAttr(conv, "bias", convBias, true)
	if err != nil {
		return err
	}
	_, bnW, err := getAttr(bn, "weight", full[1], true)
	if err != nil {
		return err
	}
	_, bnB, err := getAttr(bn, "bias", full[2], true)
	if err != nil {
		return err
	}
	_, mean, err := getAttr(bn, "running_mean", full[3], false)
	if err != nil {
		return err
	}
	_, variance, err := getAttr(bn, "running_var", full[4], false)
	if err != nil {
		return err
	}
	if !folded[wNode] {
		folded[wNode] = true
		chAxis := 0
		if transposed {
			chAxis = 1
		}
		if w.Dim() <= chAxis {
			return fmt.Errorf("node %q: %w: weight of rank %d", conv.Name(), ErrFold, w.Dim())
		}
		C := w.Size(chAxis)
		vec := func(t *tensor.Tensor, def float32, what string) ([]float32, error) {
			if t == nil {
				out := make([]float32, C)
				for i := range out {
					out[i] = def
				}
				return out, nil
			}
			d, err := tensor.Data[float32](t.Contiguous())
			if err != nil {
				return nil, err
			}
			if len(d) != C {
				return nil, fmt.Errorf("node %q: %w: %s has %d elements, want %d channels", bn.Name(), ErrFold, what, len(d), C)
			}
			return d, nil
		}
		cb, err := vec(b, 0, "conv bias")
		if err != nil {
			return err
		}
		gw, err := vec(bnW, 1, "bn weight")
		if err != nil {
			return err
		}
		gb, err := vec(bnB, 0, "bn bias")
		if err != nil {
			return err
		}
		rm, err := vec(mean, 0, "running_mean")
		if err != nil {
			return err
		}
		rv, err := vec(variance, 0, "running_var")
		if err != nil {
			return err
		}
		r := make([]float32, C)
		s := make([]float32, C)
		nb := make([]float32, C)
		for c := 0; c < C; c++ {
			sum := rv[c] + float32(eps)
			sq := float32(math.Sqrt(float64(sum)))
			r[c] = 1 / sq
			s[c] = gw[c] * r[c]
			if isLinear {
				nb[c] = float32(float32((cb[c]-rm[c])*s[c]) + gb[c])
			} else {
				nb[c] = float32(float32(float32((cb[c]-rm[c])*r[c])*gw[c]) + gb[c])
			}
		}
		wd, err := tensor.Data[float32](w.Contiguous())
		if err != nil {
			return err
		}
		shape := w.Shape()
		inner := 1
		for _, d := range shape[chAxis+1:] {
			inner *= d
		}
		outer := 1
		for _, d := range shape[:chAxis] {
			outer *= d
		}
		nw := make([]float32, len(wd))
		for o := 0; o < outer; o++ {
			for c := 0; c < C; c++ {
				base := (o*C + c) * inner
				for i := 0; i < inner; i++ {
					nw[base+i] = wd[base+i] * s[c]
				}
			}
		}
		wt, err := tensor.FromData(tensor.Float32, shape, nw)
		if err != nil {
			return err
		}
		g.SetAttr(wNode.TargetName(), wt)
		bt, err := tensor.FromData(tensor.Float32, []int{C}, nb)
		if err != nil {
			return err
		}
		if bNode != nil {
			g.SetAttr(bNode.TargetName(), bt)
		} else {
			path := wNode.TargetName() + "_bias"
			g.SetAttr(path, bt)
			restore := g.InsertingBefore(conv)
			bn2 := g.GetAttr(path, ops.Plain(tensor.Float32, int64(C)))
			restore()
			args := append([]ops.Value(nil), conv.Args()...)
			if len(args) < 3 {
				args = append(args, nil)
			}
			args[2] = bn2
			g.SetArgs(conv, args...)
		}
	}
	if o == bnDefault {
		g.ReplaceAllUsesWith(bn, conv, nil)
	} else {
		for _, u := range bn.Users() {
			if u.Op() == fxgraph.CallFunction && u.Target() == ops.GetItem {
				if i, ok := u.Arg(1).(int64); ok && i == 0 {
					g.ReplaceAllUsesWith(u, conv, nil)
				}
			}
		}
	}
	return nil
}

// hasBatchNorm reports whether g calls a batch norm the folds look for.
func hasBatchNorm(g *fxgraph.Graph) bool {
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction && bnPresent.Has(n.Target()) {
			return true
		}
	}
	return false
}
