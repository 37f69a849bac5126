package convert

import (
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
)

// qatConv2dFusion is _annotate_qat_conv2d_fusion_pattern: the conv +
// BatchNorm patterns torchao annotates when the config is nil or a QAT
// config (prepare_qat_pt2e leaves batch norms in the graph; a PTQ prepare
// has folded them, so these patterns only find batch norms that could not
// be folded). Unlike the PTQ patterns, the pattern's last node gets the
// output activation spec, and every node of the partitions is marked
// annotated.
func (a *x86Annotator) qatConv2dFusion(c *QuantizationConfig) error {
	if err := a.qatConvBNBinary(c, true); err != nil {
		return err
	}
	if err := a.qatConvBNBinary(c, false); err != nil {
		return err
	}
	if err := a.qatConvBNUnary(c); err != nil {
		return err
	}
	return a.qatConvBN(c)
}

func partitionNodes(ps []sourcePartition) []*fxgraph.Node {
	var out []*fxgraph.Node
	for _, p := range ps {
		out = append(out, p.nodes...)
	}
	return out
}

// qatConvBNBinary is _annotate_qat_conv2d_bn_binary_unary (withUnary) and
// _annotate_qat_conv2d_bn_binary.
func (a *x86Annotator) qatConvBNBinary(c *QuantizationConfig, withUnary bool) error {
	types := []partType{ptConv2d, ptBN2d, ptAdd}
	if withUnary {
		types = append(types, ptReLU)
	}
	for _, fp := range a.findSequentialPartitions(types...) {
		outs, err := outputNodes(fp)
		if err != nil {
			return err
		}
		conv, bn, bin := outs[0], outs[1], outs[2]
		extra, ok, err := binaryPostOp(bn, bin, conv, x86Conv2d)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		nodes := []*fxgraph.Node{bin, bn, conv}
		if withUnary {
			nodes = append([]*fxgraph.Node{outs[3]}, nodes...)
		}
		if s, err := a.skip(nodes...); err != nil {
			return err
		} else if s {
			continue
		}
		if err := a.weighted(conv, false, c); err != nil {
			return err
		}
		if c != nil {
			ann := &QuantizationAnnotation{}
			ann.SetInput(extra, qs(c.InputActivation))
			if withUnary {
				a.set(bin, ann, false)
				a.set(outs[3], &QuantizationAnnotation{OutputQSpec: qs(c.OutputActivation)}, true)
			} else {
				ann.OutputQSpec = qs(c.OutputActivation)
				a.set(bin, ann, true)
			}
		} else if withUnary {
			a.notQuantize(bin, outs[3])
		} else {
			a.notQuantize(bin)
		}
		a.markAnnotated(partitionNodes(fp)...)
	}
	return nil
}

// qatConvBNUnary is _annotate_qat_conv2d_bn_unary.
func (a *x86Annotator) qatConvBNUnary(c *QuantizationConfig) error {
	var fused [][]sourcePartition
	for _, u := range []partType{ptReLU, ptHardtanh, ptHardswish, ptReLU6, ptSiLU} {
		fused = append(fused, a.findSequentialPartitions(ptConv2d, ptBN2d, u)...)
	}
	return a.qatConvBNTail(c, fused)
}

// qatConvBN is _annotate_qat_conv2d_bn.
func (a *x86Annotator) qatConvBN(c *QuantizationConfig) error {
	return a.qatConvBNTail(c, a.findSequentialPartitions(ptConv2d, ptBN2d))
}

// qatConvBNTail annotates conv + BatchNorm patterns that end in their last
// partition's output (the unary post-op, or the batch norm itself): the
// conv as a weighted op and that last node with the output spec.
func (a *x86Annotator) qatConvBNTail(c *QuantizationConfig, fused [][]sourcePartition) error {
	for _, fp := range fused {
		outs, err := outputNodes(fp)
		if err != nil {
			return err
		}
		conv, last := outs[0], outs[len(outs)-1]
		if conv.Op() != fxgraph.CallFunction || conv.Target() != x86Conv2d {
			continue
		}
		// The pattern's nodes last to first, as torchao lists them.
		nodes := slices.Clone(outs)
		slices.Reverse(nodes)
		if s, err := a.skip(nodes...); err != nil {
			return err
		} else if s {
			continue
		}
		if err := a.weighted(conv, false, c); err != nil {
			return err
		}
		if c != nil {
			a.set(last, &QuantizationAnnotation{OutputQSpec: qs(c.OutputActivation)}, true)
		} else {
			a.notQuantize(last)
		}
		a.markAnnotated(partitionNodes(fp)...)
	}
	return nil
}
