package typed

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// The q/dq overloads that have a quantized element type: per tensor (with
// literal or constant-tensor qparams) and per channel.
var (
	qPerTensor        = ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	dqPerTensor       = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default")
	qPerTensorTensor  = ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor")
	dqPerTensorTensor = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.tensor")
	qPerChannel       = ops.MustOverload("quantized_decomposed.quantize_per_channel.default")
	dqPerChannel      = ops.MustOverload("quantized_decomposed.dequantize_per_channel.default")
	// torchao's affine ops, in the .default form convert_pt2e inserts and
	// the packet form older torchao snapshots inserted. They have a
	// quantized element type when their block size is per tensor or per
	// axis and the zero point is an integer constant ([ElementOf]).
	qAffine        = ops.MustOverload("torchao.quantize_affine.default")
	dqAffine       = ops.MustOverload("torchao.dequantize_affine.default")
	qAffinePacket  = ops.MustPacket("torchao.quantize_affine")
	dqAffinePacket = ops.MustPacket("torchao.dequantize_affine")
)

// qdqPackets are the packets whose nodes are quantize/dequantize steps of
// some kind; a node calling one of them is never treated as compute.
var qdqPackets = map[ops.Packet]bool{
	ops.MustPacket("quantized_decomposed.quantize_per_tensor"):          true,
	ops.MustPacket("quantized_decomposed.dequantize_per_tensor"):        true,
	ops.MustPacket("quantized_decomposed.quantize_per_channel"):         true,
	ops.MustPacket("quantized_decomposed.dequantize_per_channel"):       true,
	ops.MustPacket("quantized_decomposed.quantize_per_token"):           true,
	ops.MustPacket("quantized_decomposed.dequantize_per_token"):         true,
	ops.MustPacket("quantized_decomposed.quantize_per_channel_group"):   true,
	ops.MustPacket("quantized_decomposed.dequantize_per_channel_group"): true,
	ops.MustPacket("torchao.quantize_affine"):                           true,
	ops.MustPacket("torchao.dequantize_affine"):                         true,
}

// isQDQ reports whether n calls any quantize or dequantize op.
func isQDQ(n *fxgraph.Node) bool {
	if n == nil || n.Op() != fxgraph.CallFunction {
		return false
	}
	p, ok := ops.PacketOf(n.Target())
	return ok && qdqPackets[p]
}

// isQuantizeOp reports whether t is one of the quantize targets that may
// have a quantized element type (decomposed per tensor and per channel,
// torchao.quantize_affine in both forms).
func isQuantizeOp(t ops.Target) bool {
	return t == qPerTensor || t == qPerTensorTensor || t == qPerChannel || t == qAffine || t == qAffinePacket
}

// isDequantizeOp reports whether t is one of the dequantize targets that
// may have a quantized element type.
func isDequantizeOp(t ops.Target) bool {
	return t == dqPerTensor || t == dqPerTensorTensor || t == dqPerChannel || t == dqAffine || t == dqAffinePacket
}

// isAffine reports whether t is a torchao affine quantize or dequantize.
func isAffine(t ops.Target) bool {
	return t == qAffine || t == dqAffine || t == qAffinePacket || t == dqAffinePacket
}

// isDequantizeAny reports whether n calls any dequantize op (liftable or
// not).
func isDequantizeAny(n *fxgraph.Node) bool {
	if !isQDQ(n) {
		return false
	}
	p, _ := ops.PacketOf(n.Target())
	return p.Name == "dequantize_per_tensor" || p.Name == "dequantize_per_channel" ||
		p.Name == "dequantize_per_token" || p.Name == "dequantize_per_channel_group" || p.Name == "dequantize_affine"
}

// ElementOf returns the quantized element type that the quantize or
// dequantize node n applies: its storage dtype and range, expressed dtype,
// scale(s) and zero point(s), read from literal arguments or from the
// tensors of get_attr arguments. torchao.quantize_affine and
// dequantize_affine (.default or packet) have one when their block size
// covers the whole input (per tensor: ops.UniformQuantized) or is 1 along
// exactly one axis and the full size along the others (per axis along
// that axis: ops.UniformQuantizedPerAxis); a None zero point reads as
// zeros, and None quant_min/quant_max as the dtype's bounds. It fails,
// saying why, for q/dq nodes with no such type: other ops, per-group,
// per-token and other blocked affine layouts, dynamic qparams (computed
// at run time), float zero points, and parameters the quantized types
// reject.
func ElementOf(n *fxgraph.Node, reg *ops.Registry) (ops.Element, error) {
	if reg == nil {
		reg = ops.Default()
	}
	if n == nil || n.Op() != fxgraph.CallFunction {
		return nil, fmt.Errorf("typed: %v: not a call_function node", n)
	}
	t := n.Target()
	if !isQuantizeOp(t) && !isDequantizeOp(t) {
		if isQDQ(n) {
			return nil, fmt.Errorf("typed: node %q (%s): no quantized element type for this op (per-group, per-token, affine or packet form)", n.Name(), t)
		}
		return nil, fmt.Errorf("typed: node %q (%s): not a quantize/dequantize op", n.Name(), t)
	}
	var o ops.Overload
	switch x := t.(type) {
	case ops.Overload:
		o = x
	case ops.Packet:
		r, err := reg.Resolve(x, n.Args(), n.Kwargs())
		if err != nil {
			return nil, fmt.Errorf("typed: node %q (%s): %w", n.Name(), t, err)
		}
		o = r
	}
	s, ok := reg.Schema(o)
	if !ok {
		return nil, fmt.Errorf("typed: node %q: %s is not in the registry", n.Name(), o)
	}
	full, err := s.Normalize(n.Args(), n.Kwargs())
	if err != nil {
		return nil, fmt.Errorf("typed: node %q (%s): %w", n.Name(), o, err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("typed: node %q (%s): %s", n.Name(), o, fmt.Sprintf(format, a...))
	}
	// Expressed type: the dequantize's out_dtype, or the quantize input's
	// float dtype; float32 by default.
	expressed := tensor.Float32
	if isDequantizeOp(t) {
		if d, ok := full[len(s.Args)-1].(tensor.DType); ok {
			expressed = d
		}
	} else if in, ok := n.Arg(0).(*fxgraph.Node); ok {
		if tt, ok := in.TensorType(); ok && tt.Elem != nil {
			if sc, ok := tt.Elem.(ops.Scalar); ok && sc.DType.IsFloat() {
				expressed = sc.DType
			}
		}
	}
	if o == qAffine || o == dqAffine {
		return affineElement(n, full, expressed, bad)
	}
	if o == qPerChannel || o == dqPerChannel {
		scales, err := constTensor(n, full[1], "scales")
		if err != nil {
			return nil, err
		}
		if scales == nil {
			return nil, bad("argument \"scales\": want a constant tensor, got None")
		}
		sv, err := scales.Float64s()
		if err != nil || !scales.DType().IsFloat() {
			return nil, bad("argument \"scales\": want a float tensor, got %s", scales.DType())
		}
		zps := make([]int64, len(sv))
		zt, err := constTensor(n, full[2], "zero_points")
		if err != nil {
			return nil, err
		}
		if zt != nil {
			if zt.DType().IsFloat() {
				return nil, bad("argument \"zero_points\": float zero points have no quantized element type")
			}
			if zps, err = zt.Int64s(); err != nil || len(zps) != len(sv) {
				return nil, bad("argument \"zero_points\": want %d integer zero points, got %d", len(sv), zt.Numel())
			}
		}
		axis, ok1 := full[3].(int64)
		lo, ok2 := full[4].(int64)
		hi, ok3 := full[5].(int64)
		d, ok4 := full[6].(tensor.DType)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, bad("want literal axis, quant_min, quant_max and dtype")
		}
		if axis < 0 {
			in, _ := n.Arg(0).(*fxgraph.Node)
			tt, ok := in.TensorType()
			if !ok {
				return nil, bad("negative axis %d needs the input's rank", axis)
			}
			axis += int64(tt.Rank())
		}
		e, err := ops.NewUniformQuantizedPerAxis(d, lo, hi, expressed, int(axis), sv, zps)
		if err != nil {
			return nil, bad("%v", err)
		}
		return e, nil
	}
	var scale float64
	var zp int64
	switch v := full[1].(type) {
	case float64:
		scale = v
	case *fxgraph.Node:
		st, err := constTensor(n, v, "scale")
		if err != nil {
			return nil, err
		}
		f, err := st.Float64s()
		if err != nil || len(f) != 1 || !st.DType().IsFloat() {
			return nil, bad("argument \"scale\": want one float, got %s[%d]", st.DType(), st.Numel())
		}
		scale = f[0]
	default:
		return nil, bad("argument \"scale\": want a float or a constant tensor, got %T", v)
	}
	switch v := full[2].(type) {
	case int64:
		zp = v
	case *fxgraph.Node:
		zt, err := constTensor(n, v, "zero_point")
		if err != nil {
			return nil, err
		}
		if zt.DType().IsFloat() {
			return nil, bad("argument \"zero_point\": float zero points have no quantized element type")
		}
		z, err := zt.Int64s()
		if err != nil || len(z) != 1 {
			return nil, bad("argument \"zero_point\": want one integer, got %d values", zt.Numel())
		}
		zp = z[0]
	default:
		return nil, bad("argument \"zero_point\": want an int or a constant tensor, got %T", v)
	}
	lo, ok1 := full[3].(int64)
	hi, ok2 := full[4].(int64)
	d, ok3 := full[5].(tensor.DType)
	if !ok1 || !ok2 || !ok3 {
		return nil, bad("want literal quant_min, quant_max and dtype")
	}
	e, err := ops.NewUniformQuantized(d, lo, hi, expressed, scale, zp)
	if err != nil {
		return nil, bad("%v", err)
	}
	return e, nil
}

// constTensor returns the tensor a get_attr argument reads; nil for None.
// Any other node (a run-time value) is refused as dynamic.
func constTensor(n *fxgraph.Node, v ops.Value, name string) (*tensor.Tensor, error) {
	if v == nil {
		return nil, nil
	}
	ref, ok := v.(*fxgraph.Node)
	if !ok {
		return nil, fmt.Errorf("typed: node %q (%s): argument %q: want a constant tensor, got %T", n.Name(), n.Target(), name, v)
	}
	if ref.Op() != fxgraph.GetAttr {
		return nil, fmt.Errorf("typed: node %q (%s): argument %q comes from %q (%s): dynamic qparams have no quantized element type", n.Name(), n.Target(), name, ref.Name(), ref.Op())
	}
	a, ok := n.Graph().Attr(ref.TargetName())
	t, isT := a.(*tensor.Tensor)
	if !ok || !isT || t == nil {
		return nil, fmt.Errorf("typed: node %q (%s): argument %q: attribute %q is not a tensor", n.Name(), n.Target(), name, ref.TargetName())
	}
	return t, nil
}

// expressedOf returns the expressed (float) dtype of a quantized element.
func expressedOf(e ops.Element) (tensor.DType, bool) {
	switch q := e.(type) {
	case ops.UniformQuantized:
		return q.Expressed, true
	case ops.UniformQuantizedPerAxis:
		return q.Expressed, true
	}
	return tensor.Unknown, false
}

// isQuantized reports whether t is a tensor type with a quantized element.
func isQuantized(t ops.Type) bool {
	tt, ok := t.(ops.TensorType)
	return ok && tt.IsQuantized()
}

// affineElement reads the element type of a torchao affine quantize or
// dequantize node from its normalised arguments (input, block_size,
// scale, zero_point, dtype, quant_min, quant_max[, output_dtype]).
func affineElement(n *fxgraph.Node, full []ops.Value, expressed tensor.DType, bad func(string, ...any) error) (ops.Element, error) {
	in, _ := n.Arg(0).(*fxgraph.Node)
	if in == nil {
		return nil, bad("argument \"input\": want a node")
	}
	it, ok := in.TensorType()
	if !ok || it.Elem == nil || !it.Static() {
		return nil, bad("input %q needs a static tensor type to read the block size against", in.Name())
	}
	bl, _ := ops.Sequence(full[1])
	if len(bl) != len(it.Shape) {
		return nil, bad("argument \"block_size\": want %d literal sizes for input %v, got %v", len(it.Shape), it.Shape, full[1])
	}
	axis := -1
	for i, v := range bl {
		b, ok := v.(int64)
		if !ok {
			return nil, bad("argument \"block_size\": want literal ints, got %v", full[1])
		}
		if b == it.Shape[i] {
			continue
		}
		if b != 1 || axis >= 0 {
			return nil, bad("block_size %v over input %v is per-group or blocked, not per tensor or per axis: no quantized element type", bl, it.Shape)
		}
		axis = i
	}
	want := 1
	if axis >= 0 {
		want = int(it.Shape[axis])
	}
	st, err := constTensor(n, full[2], "scale")
	if err != nil {
		return nil, err
	}
	if st == nil || !st.DType().IsFloat() || st.Numel() != want {
		return nil, bad("argument \"scale\": want a float constant with %d values, got %v", want, st)
	}
	sv, err := st.Contiguous().Float64s()
	if err != nil {
		return nil, bad("argument \"scale\": %v", err)
	}
	zps := make([]int64, want)
	zt, err := constTensor(n, full[3], "zero_point")
	if err != nil {
		return nil, err
	}
	if zt != nil {
		if zt.DType().IsFloat() {
			return nil, bad("argument \"zero_point\": float zero points have no quantized element type")
		}
		if zt.Numel() != want {
			return nil, bad("argument \"zero_point\": want %d integer zero points, got %d", want, zt.Numel())
		}
		if zps, err = zt.Contiguous().Int64s(); err != nil {
			return nil, bad("argument \"zero_point\": %v", err)
		}
	}
	d, ok := full[4].(tensor.DType)
	if !ok {
		return nil, bad("want a literal dtype, got %v", full[4])
	}
	var lo, hi *int64
	for i, p := range []**int64{&lo, &hi} {
		switch v := full[5+i].(type) {
		case nil:
		case int64:
			*p = &v
		default:
			return nil, bad("want literal quant_min and quant_max, got %v and %v", full[5], full[6])
		}
	}
	qmin, qmax, err := kernels.AffineBounds(d, lo, hi)
	if err != nil {
		return nil, bad("%v", err)
	}
	if axis < 0 {
		e, err := ops.NewUniformQuantized(d, qmin, qmax, expressed, sv[0], zps[0])
		if err != nil {
			return nil, bad("%v", err)
		}
		return e, nil
	}
	e, err := ops.NewUniformQuantizedPerAxis(d, qmin, qmax, expressed, axis, sv, zps)
	if err != nil {
		return nil, bad("%v", err)
	}
	return e, nil
}
