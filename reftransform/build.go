package reftransform

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Targets used by patterns and replacements.
var (
	tChooseQParams     = ops.MustOverload("quantized_decomposed.choose_qparams.tensor")
	tLinear            = ops.MustOverload("aten.linear.default")
	tConvolution       = ops.MustOverload("aten.convolution.default")
	tAddTensor         = ops.MustOverload("aten.add.Tensor")
	tRelu              = ops.MustOverload("aten.relu.default")
	tMaxPoolIdx        = ops.MustOverload("aten.max_pool2d_with_indices.default")
	tRound             = ops.MustOverload("aten.round.default")
	tTo                = ops.MustOverload("aten.to.dtype")
	tClampDefault      = ops.MustOverload("aten.clamp.default")
	tTranspose         = ops.MustOverload("aten.transpose.int")
	tUnsqueeze         = ops.MustOverload("aten.unsqueeze.default")
	tView              = ops.MustOverload("aten.view.default")
	tOutDType          = ops.MustOverload("higher_order.out_dtype.default")
	tAffineChoose      = ops.MustOverload("torchao.choose_qparams_affine.default")
	tAffineQuantize    = ops.MustOverload("torchao.quantize_affine.default")
	tAffineDequantize  = ops.MustOverload("torchao.dequantize_affine.default")
	tReferenceDQLinear = ops.MustOverload("torchao.reference_dqlinear_int4.default")
)

// rb builds one replacement graph for one match, node for node as
// torch.export traces torchao's replacement function (same targets, order
// and names): placeholders bound to literals are inlined as those
// literals, as torch.fx's replace_pattern substitutes them.
type rb struct {
	b    *match.Builder
	m    *match.Match
	vals []ops.Value
	err  error
}

// newRB creates one placeholder per binding of m, in order.
func newRB(b *match.Builder, m *match.Match) *rb {
	r := &rb{b: b, m: m, vals: make([]ops.Value, len(m.PlaceholderNodes))}
	for i, v := range m.PlaceholderNodes {
		ph := b.Placeholder(fmt.Sprintf("arg%d", i))
		if _, isNode := v.(*fxgraph.Node); isNode {
			r.vals[i] = ph
		} else {
			r.vals[i] = v
		}
	}
	return r
}

func (r *rb) v(i int) ops.Value { return r.vals[i] }

// bound returns the graph value placeholder i of the match was bound to.
func (r *rb) bound(i int) ops.Value { return r.m.PlaceholderNodes[i] }

func (r *rb) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// call adds a call and names it as torch.export names the traced
// replacement's node (div, round_1, to, ...).
func (r *rb) call(name string, t ops.Target, args ...ops.Value) ops.Value {
	n := r.b.Call(t, args...)
	if n.Name() != name {
		r.b.Graph().Rename(n, name)
	}
	return n
}

func (r *rb) to(name string, x ops.Value, d tensor.DType) ops.Value {
	return r.call(name, tTo, x, d)
}

// arith adds aten.<op>.Tensor(a, b) for op in add, sub, mul, div, as
// torch.export records the replacement's Python arithmetic. Either operand
// may be a literal bound from the match (a Python scalar): PyTorch wraps
// it into a 0-dim tensor ("wrapped number"), so torchao's graphs hold
// aten.div.Tensor(%x, 0.024) and even aten.div.Tensor(0.008, 0.019) when
// both operands were bound to literals; nothing is computed here.
func (r *rb) arith(name, op string, a, b ops.Value) ops.Value {
	if a == nil || b == nil {
		r.fail("replacement %s: %s of %v and %v: want tensors or numbers", name, op, a, b)
		return nil
	}
	return r.call(name, ops.Packet{NS: "aten", Name: op}.Overload("Tensor"), a, b)
}

// outDType adds higher_order.out_dtype(op, d, args...). The op argument
// is the operator value itself (an ops.Overload), as torchao's traced
// graph holds the OpOverload object: its listing shows
// <OpOverload(op='aten.linear', overload='default')>.
func (r *rb) outDType(name string, op ops.Overload, d tensor.DType, args ...ops.Value) ops.Value {
	return r.call(name, tOutDType, append([]ops.Value{op, d}, args...)...)
}

// clampPacket is torch.ops.aten.clamp traced with tensor bounds:
// clamp.Tensor, which remove_tensor_overload_for_qdq_ops turns into the
// packet aten.clamp.
func (r *rb) clampPacket(name string, x, lo, hi ops.Value) ops.Value {
	return r.call(name, pClamp, x, lo, hi)
}

// clampDefault is clamp traced with Python-number bounds: clamp.default.
func (r *rb) clampDefault(name string, x, lo, hi ops.Value) ops.Value {
	return r.call(name, tClampDefault, x, lo, hi)
}

// replacer turns a builder function over rb into a match.Replacer.
func replacer(fn func(r *rb) ops.Value) match.Replacer {
	return func(m *match.Match, _ *fxgraph.Graph, _ *match.Pattern) (*fxgraph.Graph, error) {
		var r *rb
		g, err := match.NewGraph(func(b *match.Builder) ops.Value {
			r = newRB(b, m)
			return fn(r)
		})
		if err == nil && r != nil && r.err != nil {
			err = r.err
		}
		return g, err
	}
}
