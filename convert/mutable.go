package convert

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// MutableBufferPassName names FoldQuantizeIntoMutableBuffers in Convert's
// errors.
const MutableBufferPassName = "fold_quantize_into_mutable_buffers"

var copyDefault = ops.MustOverload("aten.copy_.default")

// staticQParams is _QParams: (scale, zero_point, quant_min, quant_max,
// dtype) of a quantize/dequantize_per_tensor.default node.
type staticQParams struct {
	scale      float64
	zp         int64
	qmin, qmax int64
	dtype      tensor.DType
}

// normalizedArgs returns n's arguments in schema order, or false.
func normalizedArgs(reg *ops.Registry, n *fxgraph.Node) ([]ops.Value, *ops.Schema, bool) {
	o, ok := n.Target().(ops.Overload)
	if !ok {
		return nil, nil, false
	}
	sch, ok := reg.Schema(o)
	if !ok {
		return nil, nil, false
	}
	full, err := sch.Normalize(n.Args(), n.Kwargs())
	if err != nil {
		return nil, nil, false
	}
	return full, sch, true
}

// qparamsOf is _static_qparams: the literal qparams of n when it calls
// target, read from its schema-normalized arguments; false when n calls
// another target or an argument has the wrong type.
func qparamsOf(reg *ops.Registry, n *fxgraph.Node, target ops.Overload) (staticQParams, bool) {
	if n.Op() != fxgraph.CallFunction || n.Target() != target {
		return staticQParams{}, false
	}
	full, _, ok := normalizedArgs(reg, n)
	if !ok || len(full) < 6 {
		return staticQParams{}, false
	}
	var q staticQParams
	var ok1, ok2, ok3, ok4, ok5 bool
	q.scale, ok1 = full[1].(float64)
	q.zp, ok2 = full[2].(int64)
	q.qmin, ok3 = full[3].(int64)
	q.qmax, ok4 = full[4].(int64)
	q.dtype, ok5 = full[5].(tensor.DType)
	return q, ok1 && ok2 && ok3 && ok4 && ok5
}

// sameNodeSet reports whether users holds exactly the nodes of want.
func sameNodeSet(users []*fxgraph.Node, want ...*fxgraph.Node) bool {
	for _, u := range users {
		if !slices.Contains(want, u) {
			return false
		}
	}
	for _, w := range want {
		if !slices.Contains(users, w) {
			return false
		}
	}
	return true
}

// storageKey identifies a tensor's backing array (StorageWeakRef).
func storageKey(t *tensor.Tensor) uintptr {
	v := reflect.ValueOf(t.Storage())
	if v.Kind() != reflect.Slice || v.Len() == 0 {
		return 0
	}
	return v.Pointer()
}

// FoldQuantizeIntoMutableBuffers is torchao's
// _fold_quantize_into_mutable_buffers (spec section 3.6), run by Convert
// when ConvertOptions.FoldQuantizeIntoMutableBuffers is set. buffers lists
// the registered buffers' attribute paths in registration order. For each
// buffer with exactly one get_attr node B whose structure is
//
//	B -> quantize_per_tensor.default (q_in) -> one dequantize_per_tensor.default
//	     with the same static qparams (its only user)
//	B -> aten.copy_.default(B, src) with no users, src a dequantize_per_tensor
//	     of a quantize_per_tensor (q_out) with equal qparams, every user of
//	     q_out such a dequantize
//
// (and no other users of B), the buffer's float storage is replaced by its
// quantization with q_out's qparams, the input dequantize reads B with
// q_out's qparams, copy_ writes q_out, and B and copy_ take the integer
// type. Buffers that do not match, or are not floating point, are left
// alone. A matching buffer that shares storage with another buffer, whose
// node has no tensor type (torch's FakeTensor val), or whose quantized
// storage would change shape or strides is an error naming it. It reports
// whether anything changed; dead code is then removed.
func FoldQuantizeIntoMutableBuffers(g *fxgraph.Graph, reg *ops.Registry, buffers []string) (bool, error) {
	if reg == nil {
		reg = ops.Default()
	}
	values := map[string]*tensor.Tensor{}
	for _, b := range buffers {
		if v, ok := g.Attr(b); ok {
			if t, ok := v.(*tensor.Tensor); ok {
				values[b] = t
			}
		}
	}
	changed := false
	for _, target := range buffers {
		value, ok := values[target]
		if !ok {
			continue
		}
		var nodes []*fxgraph.Node
		for n := range g.All() {
			if n.Op() == fxgraph.GetAttr && n.TargetName() == target {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) != 1 {
			continue
		}
		buf := nodes[0]
		var qIns []*fxgraph.Node
		for _, u := range buf.Users() {
			if u.Op() == fxgraph.CallFunction && u.Target() == qPerTensor {
				qIns = append(qIns, u)
			}
		}
		if len(qIns) != 1 {
			continue
		}
		qIn := qIns[0]
		inQP, ok := qparamsOf(reg, qIn, qPerTensor)
		if !ok {
			continue
		}
		var inDQs []*fxgraph.Node
		for _, u := range qIn.Users() {
			if qp, ok := qparamsOf(reg, u, dqPerTensor); ok && qp == inQP {
				inDQs = append(inDQs, u)
			}
		}
		if len(inDQs) != 1 || !sameNodeSet(qIn.Users(), inDQs[0]) {
			continue
		}
		inDQ := inDQs[0]
		var copies []*fxgraph.Node
		for _, u := range buf.Users() {
			if u.Op() == fxgraph.CallFunction && u.Target() == copyDefault && len(u.Args()) > 0 && u.Arg(0) == ops.Value(buf) && u.NumUsers() == 0 {
				copies = append(copies, u)
			}
		}
		if len(copies) != 1 || !sameNodeSet(buf.Users(), qIn, copies[0]) {
			continue
		}
		cp := copies[0]
		cpArgs, _, ok := normalizedArgs(reg, cp)
		if !ok || len(cpArgs) < 2 {
			continue
		}
		outDQ, ok := cpArgs[1].(*fxgraph.Node)
		if !ok {
			continue
		}
		outDQP, ok := qparamsOf(reg, outDQ, dqPerTensor)
		if !ok {
			continue
		}
		outDQArgs, _, _ := normalizedArgs(reg, outDQ)
		qOut, ok := outDQArgs[0].(*fxgraph.Node)
		if !ok {
			continue
		}
		outQP, ok := qparamsOf(reg, qOut, qPerTensor)
		if !ok || outQP != outDQP {
			continue
		}
		var outDQs []*fxgraph.Node
		for _, u := range qOut.Users() {
			if qp, ok := qparamsOf(reg, u, dqPerTensor); ok && qp == outQP {
				outDQs = append(outDQs, u)
			}
		}
		if len(outDQs) == 0 || !sameNodeSet(qOut.Users(), outDQs...) {
			continue
		}
		if !value.DType().IsFloat() {
			continue
		}
		key := storageKey(value)
		var aliases []string
		for _, other := range buffers {
			if ov, ok := values[other]; ok && other != target && key != 0 && storageKey(ov) == key {
				aliases = append(aliases, other)
			}
		}
		if len(aliases) > 0 {
			slices.Sort(aliases)
			return changed, fmt.Errorf("%w %q: it aliases registered buffers %q", ErrMutableBuffer, target, aliases)
		}
		if _, ok := buf.Type().(ops.TensorType); !ok {
			return changed, fmt.Errorf("%w %q: get_attr node %q has no tensor type (torch: no FakeTensor val)", ErrMutableBuffer, target, buf.Name())
		}
		qt, err := kernels.QuantizePerTensor(value, outQP.scale, outQP.zp, outQP.qmin, outQP.qmax, outQP.dtype)
		if err != nil {
			return changed, fmt.Errorf("%w %q: quantize: %w", ErrMutableBuffer, target, err)
		}
		if !slices.Equal(qt.Shape(), value.Shape()) || !slices.Equal(qt.Strides(), value.Strides()) {
			return changed, fmt.Errorf("%w %q: quantization changed its shape or stride (%v/%v -> %v/%v)", ErrMutableBuffer, target,
				value.Shape(), value.Strides(), qt.Shape(), qt.Strides())
		}
		g.SetAttr(target, qt)
		dqArgs, dqSch, _ := normalizedArgs(reg, inDQ)
		dqArgs[0] = buf
		dqArgs[1], dqArgs[2], dqArgs[3], dqArgs[4], dqArgs[5] = outQP.scale, outQP.zp, outQP.qmin, outQP.qmax, outQP.dtype
		args, kwargs := dqSch.Split(dqArgs)
		g.SetArgs(inDQ, args...)
		g.SetKwargs(inDQ, kwargs)
		if err := g.SetArg(cp, 1, qOut); err != nil {
			return changed, fmt.Errorf("%w %q: node %q: %w", ErrMutableBuffer, target, cp.Name(), err)
		}
		it := tensorTypeOf(qt)
		buf.SetType(it)
		cp.SetType(it)
		changed = true
	}
	if changed {
		g.EliminateDeadCode(reg, nil)
	}
	return changed, nil
}
