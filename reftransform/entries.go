package reftransform

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Entry is one rewrite of torchao's _REWRITE_INFO_LIST: a pattern, the
// replacement built for each match, filters, the literal mode and an
// optional hook run on each applied replacement (port_metadata_fn).
type Entry struct {
	// Name identifies the entry in Result.Stats and errors.
	Name string
	// Pattern is the q/dq subgraph to find (torchao's pattern function,
	// traced).
	Pattern *match.Pattern
	// Replace builds the reference-representation graph for each match.
	Replace match.Replacer
	// Filters must all accept a match for it to be replaced.
	Filters []match.Filter
	// IgnoreLiterals makes the pattern's literal arguments match any
	// literal or node (torchao's ignore_literals), so one pattern covers
	// every scale, zero point and quant range.
	IgnoreLiterals bool

	// Post, when set, is called on each applied replacement.
	Post func(g *fxgraph.Graph, r match.Replaced) error
}

var (
	entriesOnce sync.Once
	entries     []Entry
	entriesErr  error
)

// Entries returns the rewrite entries in the order torchao applies them
// (torchao-pt2e.md 6.2): dynamic_linear, int4_dynamic_linear_2d,
// int4_dynamic_linear_3d, static_linear, static_conv2d, add_relu, add,
// max_pool2d, quantize_per_tensor, dequantize_per_tensor,
// quantize_per_channel, dequantize_per_channel. The entries are built once
// and shared; do not modify them.
func Entries() ([]Entry, error) {
	entriesOnce.Do(func() { entries, entriesErr = buildEntries() })
	return entries, entriesErr
}

func buildEntries() ([]Entry, error) {
	type spec struct {
		name    string
		pattern func(b *match.Builder) ops.Value
		repl    func(r *rb) ops.Value
		filters []match.Filter
		ignore  bool
		post    func(g *fxgraph.Graph, r match.Replaced) error
	}
	specs := []spec{
		{name: "dynamic_linear", pattern: patDynamicLinear, repl: refDynamicLinear},
		{name: "int4_dynamic_linear_2d", pattern: patInt4(2), repl: refInt4, filters: []match.Filter{filterInt4}, ignore: true, post: portInt4Meta},
		{name: "int4_dynamic_linear_3d", pattern: patInt4(3), repl: refInt4, filters: []match.Filter{filterInt4}, ignore: true, post: portInt4Meta},
		{name: "static_linear", pattern: patStaticLinear, repl: refStaticLinear},
		{name: "static_conv2d", pattern: patStaticConv, repl: refStaticConv},
		{name: "add_relu", pattern: patAdd(true), repl: refAddRelu},
		{name: "add", pattern: patAdd(false), repl: refAdd},
		{name: "max_pool2d", pattern: patMaxPool, repl: refMaxPool},
		{name: "quantize_per_tensor", pattern: patQuantizePerTensor, repl: refQuantizePerTensor},
		{name: "dequantize_per_tensor", pattern: patDequantizePerTensor, repl: refDequantizePerTensor},
		{name: "quantize_per_channel", pattern: patQuantizePerChannel, repl: refQuantizePerChannel},
		{name: "dequantize_per_channel", pattern: patDequantizePerChannel, repl: refDequantizePerChannel},
	}
	out := make([]Entry, 0, len(specs))
	for _, s := range specs {
		p, err := match.NewPattern(s.pattern)
		if err != nil {
			return nil, fmt.Errorf("reftransform: entry %s: %w", s.name, err)
		}
		out = append(out, Entry{Name: s.name, Pattern: p, Replace: replacer(s.repl), Filters: s.filters, IgnoreLiterals: s.ignore, Post: s.post})
	}
	return out, nil
}

// phs adds placeholders with the given names.
func phs(b *match.Builder, names ...string) []*fxgraph.Node {
	out := make([]*fxgraph.Node, len(names))
	for i, n := range names {
		out[i] = b.Placeholder(n)
	}
	return out
}

var i8 = tensor.Int8

// dq and q are the per-tensor packets as remove_tensor_overload leaves them.
func dq(b *match.Builder, x, s, z, lo, hi ops.Value) *fxgraph.Node {
	return b.Call(pDequantizePerTensor, x, s, z, lo, hi, i8)
}

func q(b *match.Builder, x, s, z, lo, hi ops.Value) *fxgraph.Node {
	return b.Call(pQuantizePerTensor, x, s, z, lo, hi, i8)
}

// --- entry 1: dynamic int8 linear -------------------------------------

// placeholders: 0 x, 1 x_qmin, 2 x_qmax, 3 x_eps, 4 w, 5 w_scale, 6 w_zp,
// 7 w_qmin, 8 w_qmax, 9 bias.
func patDynamicLinear(b *match.Builder) ops.Value {
	p := phs(b, "x_fp32", "x_quant_min", "x_quant_max", "x_eps", "weight_i8", "weight_scale", "weight_zero_point", "weight_quant_min", "weight_quant_max", "bias_fp32")
	cq := b.Call(tChooseQParams, p[0], p[1], p[2], p[3], i8)
	s := b.Call(ops.GetItem, cq, int64(0))
	z := b.Call(ops.GetItem, cq, int64(1))
	xq := q(b, p[0], s, z, p[1], p[2])
	xd := dq(b, xq, s, z, p[1], p[2])
	wd := dq(b, p[4], p[5], p[6], p[7], p[8])
	return b.Call(tLinear, xd, wd, p[9])
}

func refDynamicLinear(r *rb) ops.Value {
	cq := r.call("choose_qparams", tChooseQParams, r.v(0), r.v(1), r.v(2), r.v(3), i8)
	s := r.call("getitem", ops.GetItem, cq, int64(0))
	z := r.call("getitem_1", ops.GetItem, cq, int64(1))
	x := r.arith("div", "div", r.v(0), s)
	x = r.call("round_1", tRound, x)
	x = r.to("to", x, tensor.Int32)
	x = r.arith("add", "add", x, z)
	// torch.clamp with the Python-int bounds of the example inputs
	// traces to clamp.default; the weight bounds are tensors there.
	x = r.clampDefault("clamp", x, r.v(1), r.v(2))
	x = r.to("to_1", x, i8)
	w := r.clampPacket("clamp_1", r.v(4), r.v(7), r.v(8))
	x16 := r.to("to_2", x, tensor.Int16)
	w16 := r.to("to_3", w, tensor.Int16)
	acc := r.outDType("out_dtype", tLinear, tensor.Int32, r.arith("sub", "sub", x16, z), r.arith("sub_1", "sub", w16, r.v(6)), nil)
	biasScale := r.arith("mul", "mul", s, r.v(5))
	if r.v(9) != nil {
		bias := r.outDType("out_dtype_1", ops.MustOverload("aten.div.Tensor"), tensor.Int32, r.v(9), biasScale)
		acc = r.arith("add_1", "add", acc, bias)
	}
	scale := r.arith("mul_1", "mul", s, r.v(5))
	return r.arith("mul_2", "mul", acc, scale)
}

// --- entries 2, 3: int4 groupwise dynamic linear ------------------------

// patInt4 is _qdq_dynamic_quantized_linear_4bit_groupwise with .default
// torchao targets, for a rank-2 or rank-3 activation. Placeholders: 0 x,
// 1 eps, 2 weight_i4, 3 weight_scale, 4 weight_zero_point, 5 bias,
// 6 group_size (the weight block size, bound from the graph). The
// per-token block literal is ignored (IgnoreLiterals) but fixes the rank.
func patInt4(rank int) func(b *match.Builder) ops.Value {
	return func(b *match.Builder) ops.Value {
		p := phs(b, "x_fp32", "x_eps", "weight_i4", "weight_scale", "weight_zero_point", "bias_fp32", "group_size")
		block := ops.List{int64(1), int64(32)}
		if rank == 3 {
			block = ops.List{int64(1), int64(1), int64(32)}
		}
		cq := b.Call(tAffineChoose, p[0], "ASYMMETRIC", block, i8, int64(-128), int64(127), p[1], tensor.Float32, tensor.Int32)
		s := b.Call(ops.GetItem, cq, int64(0))
		z := b.Call(ops.GetItem, cq, int64(1))
		xq := b.Name("act_quantize", b.Call(tAffineQuantize, p[0], block, s, z, i8, int64(-128), int64(127)))
		xd := b.Call(tAffineDequantize, xq, block, s, z, i8, int64(-128), int64(127), tensor.Float32)
		wd := b.Name("weight_dequantize", b.Call(tAffineDequantize, p[2], p[6], p[3], p[4], i8, int64(-8), int64(7)))
		return b.Name("linear", b.Call(tLinear, xd, wd, p[5]))
	}
}

// normalized returns n's arguments bound to its schema (defaults filled).
func normalized(n *fxgraph.Node) ([]ops.Value, bool) {
	o, ok := n.Target().(ops.Overload)
	if !ok {
		return nil, false
	}
	s, ok := ops.Default().Schema(o)
	if !ok {
		return nil, false
	}
	args, err := s.Normalize(n.Args(), n.Kwargs())
	return args, err == nil
}

// filterInt4 checks, by role, that the weight dequantize has the int4 range
// [-8, 7] on int8 storage and that the activation quantize produces int8.
func filterInt4(m *match.Match, _ *fxgraph.Graph, _ *match.Pattern) bool {
	wd, xq := m.Node("weight_dequantize"), m.Node("act_quantize")
	if wd == nil || xq == nil {
		return false
	}
	wa, ok1 := normalized(wd)
	qa, ok2 := normalized(xq)
	if !ok1 || !ok2 || len(wa) < 7 || len(qa) < 5 {
		return false
	}
	weightIsInt4 := ops.LiteralEqual(wa[4], i8) && ops.LiteralEqual(wa[5], int64(-8)) && ops.LiteralEqual(wa[6], int64(7))
	actIsInt8 := ops.LiteralEqual(qa[4], i8)
	return weightIsInt4 && actIsInt8
}

// refInt4 calls torchao.reference_dqlinear_int4. With one group per row
// (group size = K) the weight's scale and zero point are 1-D, [N]; the op
// in torchao broadcasts a 1-D scale as [1, N] (channel n would read the
// scale of group n of row 0), so the replacement first views both as
// [N, 1], which is what they mean, and the written program computes in
// PyTorch what fxquant's interpreter computes.
func refInt4(r *rb) ops.Value {
	scale, zp := r.asColumn("view", 3), r.asColumn("view_1", 4)
	return r.call("reference_dqlinear_int4", tReferenceDQLinear, r.v(0), r.v(1), r.v(2), scale, zp, r.v(5), r.v(6))
}

// asColumn returns placeholder i's value, viewed as [N, 1] when the graph
// value it was bound to is a 1-D tensor of N elements.
func (r *rb) asColumn(name string, i int) ops.Value {
	n, ok := r.bound(i).(*fxgraph.Node)
	if !ok {
		return r.v(i)
	}
	t, ok := n.Type().(ops.TensorType)
	if !ok || t.Rank() != 1 || t.Shape[0] < 0 {
		return r.v(i)
	}
	v := r.call(name, tView, r.v(i), ops.List{t.Shape[0], int64(1)})
	if vn, ok := v.(*fxgraph.Node); ok {
		vn.SetType(ops.TensorType{Shape: []int64{t.Shape[0], 1}, Elem: t.Elem})
	}
	return v
}

// Int4PassName is the pass name recorded in the from_node of the
// reference_dqlinear_int4 node, as torchao writes it.
const Int4PassName = "ReplaceInt4DynamicQuantWithCustomOp"

// nodeSource is one entry of a from_node record, laid out as torch.export
// serialises it.
type nodeSource struct {
	Name     string          `json:"name"`
	Target   string          `json:"target"`
	GraphID  int64           `json:"graph_id"`
	PassName string          `json:"pass_name"`
	Action   string          `json:"action"`
	FromNode json.RawMessage `json:"from_node"`
}

// portInt4Meta gives the new nodes the linear's metadata and a from_node
// record naming the linear and the pass (torchao's port_metadata_fn); the
// replacement is the reference_dqlinear_int4 node and, for a 1-D weight
// scale, the views before it.
func portInt4Meta(g *fxgraph.Graph, r match.Replaced) error {
	refs := 0
	for _, n := range r.Replacements {
		if n.Target() == tReferenceDQLinear {
			refs++
		}
	}
	if refs != 1 || len(r.Match.ReturningNodes) != 1 {
		return fmt.Errorf("int4 rewrite: want one reference_dqlinear_int4 node for one linear, got %d for %d", refs, len(r.Match.ReturningNodes))
	}
	lin := r.Match.ReturningNodes[0]
	prev := json.RawMessage("[]")
	if lin.Meta.FromNode != "" && json.Valid([]byte(lin.Meta.FromNode)) {
		prev = json.RawMessage(lin.Meta.FromNode)
	}
	rec, err := json.Marshal([]nodeSource{{Name: lin.Name(), Target: lin.Target().String(), PassName: Int4PassName, Action: "replace", FromNode: prev}})
	if err != nil {
		return fmt.Errorf("int4 rewrite: from_node of %q: %w", lin.Name(), err)
	}
	for _, n := range r.Replacements {
		*n.Meta = lin.Meta.Clone()
		n.Meta.FromNode = string(rec)
	}
	return nil
}

// --- entry 4: static linear ---------------------------------------------

// placeholders: 0 x_i8, 1 x_scale, 2 x_zp, 3 x_qmin, 4 x_qmax, 5 w_i8,
// 6 w_scale, 7 w_zp, 8 w_qmin, 9 w_qmax, 10 bias, 11 out_scale,
// 12 out_zp, 13 out_qmin, 14 out_qmax.
var staticNames = []string{"x_i8", "x_scale", "x_zero_point", "x_quant_min", "x_quant_max", "weight_i8", "weight_scale", "weight_zero_point", "weight_quant_min", "weight_quant_max", "bias_fp32", "out_scale", "out_zero_point", "out_quant_min", "out_quant_max"}

func patStaticLinear(b *match.Builder) ops.Value {
	p := phs(b, staticNames...)
	xd := dq(b, p[0], p[1], p[2], p[3], p[4])
	wd := dq(b, p[5], p[6], p[7], p[8], p[9])
	out := b.Call(tLinear, xd, wd, p[10])
	return q(b, out, p[11], p[12], p[13], p[14])
}

// staticAcc is the shared integer accumulation of the static linear and
// conv references; conv adds its literal arguments and the bias unsqueeze.
func refStaticAcc(r *rb, op ops.Overload, extra []ops.Value, unsqueeze bool) ops.Value {
	x := r.clampPacket("clamp", r.v(0), r.v(3), r.v(4))
	w := r.clampPacket("clamp_1", r.v(5), r.v(8), r.v(9))
	x16 := r.to("to", x, tensor.Int16)
	w16 := r.to("to_1", w, tensor.Int16)
	args := append([]ops.Value{r.arith("sub", "sub", x16, r.v(2)), r.arith("sub_1", "sub", w16, r.v(7)), nil}, extra...)
	acc := r.outDType("out_dtype", op, tensor.Int32, args...)
	if r.v(10) != nil {
		bias := r.outDType("out_dtype_1", ops.MustOverload("aten.div.Tensor"), tensor.Int32, r.v(10), r.arith("mul", "mul", r.v(1), r.v(6)))
		if unsqueeze {
			bias = r.call("unsqueeze", tUnsqueeze, bias, int64(-1))
			bias = r.call("unsqueeze_1", tUnsqueeze, bias, int64(-1))
		}
		acc = r.arith("add", "add", acc, bias)
	}
	ratio := r.arith("div", "div", r.arith("mul_1", "mul", r.v(1), r.v(6)), r.v(11))
	acc = r.outDType("out_dtype_2", ops.MustOverload("aten.mul.Tensor"), tensor.Int32, acc, ratio)
	acc = r.arith("add_1", "add", acc, r.v(12))
	acc = r.clampPacket("clamp_2", acc, r.v(13), r.v(14))
	return r.to("to_2", acc, i8)
}

func refStaticLinear(r *rb) ops.Value { return refStaticAcc(r, tLinear, nil, false) }

// --- entry 5: static conv2d ------------------------------------------------

// Placeholders 0-14 as static linear, then the convolution's literals
// 15 stride, 16 padding, 17 dilation, 18 transposed, 19 output_padding,
// 20 groups.
func patStaticConv(b *match.Builder) ops.Value {
	p := phs(b, append(append([]string{}, staticNames...), "stride", "padding", "dilation", "transposed", "output_padding", "groups")...)
	xd := dq(b, p[0], p[1], p[2], p[3], p[4])
	wd := dq(b, p[5], p[6], p[7], p[8], p[9])
	out := b.Call(tConvolution, xd, wd, p[10], p[15], p[16], p[17], p[18], p[19], p[20])
	return q(b, out, p[11], p[12], p[13], p[14])
}

func refStaticConv(r *rb) ops.Value {
	return refStaticAcc(r, tConvolution, []ops.Value{r.v(15), r.v(16), r.v(17), r.v(18), r.v(19), r.v(20)}, true)
}

// --- entries 6, 7: add+relu, add -------------------------------------------

// placeholders: 0 x_i8, 1 x_scale, 2 x_zp, 3 y_i8, 4 y_scale, 5 y_zp,
// 6 out_scale, 7 out_zp, 8 quant_min, 9 quant_max.
func patAdd(relu bool) func(b *match.Builder) ops.Value {
	return func(b *match.Builder) ops.Value {
		p := phs(b, "x_i8", "x_scale", "x_zero_point", "y_i8", "y_scale", "y_zero_point", "out_scale", "out_zero_point", "quant_min", "quant_max")
		xd := dq(b, p[0], p[1], p[2], p[8], p[9])
		yd := dq(b, p[3], p[4], p[5], p[8], p[9])
		out := b.Call(tAddTensor, xd, yd)
		if relu {
			out = b.Call(tRelu, out)
		}
		return q(b, out, p[6], p[7], p[8], p[9])
	}
}

func refAddRelu(r *rb) ops.Value {
	x := r.to("to", r.v(0), tensor.Int32)
	y := r.to("to_1", r.v(3), tensor.Int32)
	mul := ops.MustOverload("aten.mul.Tensor")
	x = r.outDType("out_dtype", mul, tensor.Int32, r.arith("sub", "sub", x, r.v(2)), r.arith("div", "div", r.v(1), r.v(6)))
	y = r.outDType("out_dtype_1", mul, tensor.Int32, r.arith("sub_1", "sub", y, r.v(5)), r.arith("div_1", "div", r.v(4), r.v(6)))
	out := r.arith("add_1", "add", r.arith("add", "add", x, y), r.v(7))
	// clamp(out, out_zero_point, quant_max) with tensor bounds: the packet.
	out = r.clampPacket("clamp", out, r.v(7), r.v(9))
	return r.to("to_2", out, i8)
}

func refAdd(r *rb) ops.Value {
	x := r.to("to", r.v(0), tensor.Int32)
	y := r.to("to_1", r.v(3), tensor.Int32)
	x = r.to("to_2", r.call("round_1", tRound, r.arith("mul", "mul", r.arith("div", "div", r.v(1), r.v(6)), r.arith("sub", "sub", x, r.v(2)))), tensor.Int32)
	y = r.to("to_3", r.call("round_2", tRound, r.arith("mul_1", "mul", r.arith("div_1", "div", r.v(4), r.v(6)), r.arith("sub_1", "sub", y, r.v(5)))), tensor.Int32)
	out := r.arith("add_1", "add", r.arith("add", "add", x, y), r.v(7))
	// quant_min/max are Python literals inside the function: clamp.default.
	out = r.clampDefault("clamp", out, int64(-128), int64(127))
	return r.to("to_4", out, i8)
}

// --- entry 8: max_pool2d -----------------------------------------------------

// placeholders: 0 x_i8, 1 x_scale, 2 x_zp, 3 x_qmin, 4 x_qmax,
// 5 out_scale, 6 out_zp, 7 out_qmin, 8 out_qmax, then the pooling
// literals 9 kernel_size, 10 stride, 11 padding, 12 dilation,
// 13 ceil_mode.
func patMaxPool(b *match.Builder) ops.Value {
	p := phs(b, "x_i8", "x_scale", "x_zero_point", "x_quant_min", "x_quant_max", "out_scale", "out_zero_point", "out_quant_min", "out_quant_max",
		"kernel_size", "stride", "padding", "dilation", "ceil_mode")
	xd := dq(b, p[0], p[1], p[2], p[3], p[4])
	mp := b.Call(tMaxPoolIdx, xd, p[9], p[10], p[11], p[12], p[13])
	out := b.Call(ops.GetItem, mp, int64(0))
	return q(b, out, p[5], p[6], p[7], p[8])
}

func refMaxPool(r *rb) ops.Value {
	x := r.clampPacket("clamp", r.v(0), r.v(3), r.v(4))
	x = r.to("to", x, tensor.Int32)
	mp := r.call("max_pool2d_with_indices", tMaxPoolIdx, r.arith("sub", "sub", x, r.v(2)), r.v(9), r.v(10), r.v(11), r.v(12), r.v(13))
	out := r.call("getitem", ops.GetItem, mp, int64(0))
	// out_i32 * (x_scale / out_scale) + out_zero_point stays float; the
	// final cast to int8 truncates.
	o := r.arith("mul", "mul", out, r.arith("div", "div", r.v(1), r.v(5)))
	o = r.arith("add", "add", o, r.v(6))
	o = r.clampPacket("clamp_1", o, r.v(7), r.v(8))
	return r.to("to_1", o, i8)
}

// --- entries 9-12: quantize / dequantize ----------------------------------

func patQuantizePerTensor(b *match.Builder) ops.Value {
	p := phs(b, "x_fp32", "scale", "zero_point", "quant_min", "quant_max")
	return q(b, p[0], p[1], p[2], p[3], p[4])
}

func refQuantizePerTensor(r *rb) ops.Value {
	x := r.arith("div", "div", r.v(0), r.v(1))
	x = r.call("round_1", tRound, x)
	x = r.to("to", x, tensor.Int32)
	x = r.arith("add", "add", x, r.v(2))
	x = r.clampPacket("clamp", x, r.v(3), r.v(4))
	return r.to("to_1", x, i8)
}

func patDequantizePerTensor(b *match.Builder) ops.Value {
	p := phs(b, "x_i8", "scale", "zero_point", "quant_min", "quant_max")
	return dq(b, p[0], p[1], p[2], p[3], p[4])
}

func refDequantizePerTensor(r *rb) ops.Value {
	x := r.clampPacket("clamp", r.v(0), r.v(3), r.v(4))
	x = r.to("to", x, tensor.Float32)
	x = r.arith("sub", "sub", x, r.v(2))
	x = r.arith("mul", "mul", x, r.v(1))
	return r.to("to_1", x, tensor.Float32)
}

func patQuantizePerChannel(b *match.Builder) ops.Value {
	p := phs(b, "x_fp32", "scales", "zero_points", "ch_axis", "quant_min", "quant_max")
	return b.Call(pQuantizePerChannel, p[0], p[1], p[2], p[3], p[4], p[5], i8)
}

func refQuantizePerChannel(r *rb) ops.Value {
	x := r.call("transpose", tTranspose, r.v(0), r.v(3), int64(-1))
	x = r.arith("div", "div", x, r.v(1))
	x = r.call("round_1", tRound, x)
	x = r.to("to", x, tensor.Int32)
	x = r.arith("add", "add", x, r.v(2))
	x = r.clampDefault("clamp", x, r.v(4), r.v(5))
	x = r.call("transpose_1", tTranspose, x, r.v(3), int64(-1))
	return r.to("to_1", x, i8)
}

func patDequantizePerChannel(b *match.Builder) ops.Value {
	p := phs(b, "x_i8", "scales", "zero_points", "ch_axis", "quant_min", "quant_max")
	return b.Call(pDequantizePerChannel, p[0], p[1], p[2], p[3], p[4], p[5], i8)
}

func refDequantizePerChannel(r *rb) ops.Value {
	x := r.clampDefault("clamp", r.v(0), r.v(4), r.v(5))
	x = r.call("transpose", tTranspose, x, r.v(3), int64(-1))
	x = r.to("to", x, tensor.Int32)
	x = r.arith("sub", "sub", x, r.v(2))
	x = r.to("to_1", x, tensor.Float32)
	x = r.arith("mul", "mul", x, r.v(1))
	return r.call("transpose_1", tTranspose, x, r.v(3), int64(-1))
}
