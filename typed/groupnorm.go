package typed

import (
	"fmt"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Targets of the GroupNorm fold.
var (
	atenReshape      = ops.MustOverload("aten.reshape.default")
	atenView         = ops.MustOverload("aten.view.default")
	atenInstanceNorm = ops.MustOverload("aten.instance_norm.default")
	atenGroupNorm    = ops.MustOverload("aten.group_norm.default")
	atenMul          = ops.MustOverload("aten.mul.Tensor")
	atenAdd          = ops.MustOverload("aten.add.Tensor")
)

// GroupNormFold folds reshape → instance_norm → reshape into one
// aten.group_norm (typed-rewrites.md 2.4), in both forms:
//
//	reshape(X, [N, G, ...]) → instance_norm(s[G], b[G]) → reshape(X.shape)
//	... → reshape(X.shape) → mul(g_c) → add(h_c)      (trailing affine)
//
// It checks, before anything changes: both reshapes are reshape/view with
// static shapes; the batch is preserved; G ≥ 1 divides C = X.shape[1];
// the inner element count is (C/G)·S; the bottom reshape restores X's
// shape; instance_norm uses input statistics without running buffers;
// s and b are constants (or None) of shape [G]; in the trailing form,
// the mul/add constants broadcast as [C] along axis 1 and are float32 or
// quantized constants (read as the real values their types give them),
// and each intermediate value has a single user; no value inside the
// chain rounds to a quantized type other than the result contract
// (unless AllowRequantDrop), so the fold is exact up to float rounding.
// The channel axis is
// checked explicitly: aten.instance_norm and aten.group_norm normalise
// [N, C, *] per index of axis 1, so the top reshape must group X's axis 1
// (G divides C); a reshape whose groups cut along a later axis (a
// [N, 1, C, L] or otherwise split layout) and trailing constants that
// broadcast along another axis (channels-last) are refused.
//
// gamma and beta repeat each group value K = C/G times (never tiling), the
// trailing form gives gamma[c] = g_c[c]·s[c/K] and beta[c] =
// g_c[c]·b[c/K] + h_c[c], eps is copied bit for bit, and the group_norm
// node's type is the result contract of the value it replaces (the bottom
// reshape's, or the add's), built with ops.ContractType. Quantized
// gamma/beta keep their element types, per-axis ones with the scales
// repeated like the data ([ExpandQuantParams]).
type GroupNormFold struct {
	// Registry supplies the schemas the match normalises arguments
	// with; nil means ops.Default().
	Registry *ops.Registry
	// AllowRequantDrop lets the fold apply when a value inside the
	// matched chain is itself quantized with a type other than the
	// result contract (a requantization step, such as the mul of a
	// trailing-affine chain carrying its own q/dq pair). The group_norm
	// cannot reproduce that intermediate rounding, so the folded graph
	// may differ from the unfolded one by more than 1 LSB of the result
	// type; by default such chains are refused with the reason.
	AllowRequantDrop bool
}

// Name returns "groupnorm_fold".
func (GroupNormFold) Name() string { return "groupnorm_fold" }

// ConstData is a constant a plan creates: its tensor and static type.
type ConstData struct {
	Tensor *tensor.Tensor // the constant's value
	Type   ops.TensorType // its static type, the get_attr node's type
}

// GroupNormPlan is a matched GroupNorm fold: everything Apply needs.
type GroupNormPlan struct {
	// Replaces is the value the group_norm replaces: the bottom reshape,
	// or the add of the trailing form.
	Replaces *fxgraph.Node
	// Input is X, the top reshape's data operand.
	Input *fxgraph.Node
	// NumGroups is G.
	NumGroups int64
	// Eps is instance_norm's eps, bit for bit.
	Eps float64
	// Gamma and Beta are the per-channel [C] constants; nil for None.
	Gamma, Beta *ConstData
	// Result is the group_norm's type: the contract of Replaces.
	Result ops.TensorType
	// Chain lists the matched nodes from Replaces upwards, with the old
	// constants, erased by Apply when nothing else uses them.
	Chain []*fxgraph.Node
}

// isReshape reports whether n is aten.reshape or aten.view.
func isReshape(n *fxgraph.Node) bool {
	return n != nil && n.Op() == fxgraph.CallFunction && (n.Target() == atenReshape || n.Target() == atenView)
}

// staticType returns n's tensor type if it is fully static.
func staticType(n *fxgraph.Node) (ops.TensorType, string) {
	tt, ok := n.TensorType()
	if !ok || tt.Elem == nil {
		return tt, fmt.Sprintf("%q has no tensor type", n.Name())
	}
	if !tt.Static() {
		return tt, fmt.Sprintf("%q has dynamic dimensions %s", n.Name(), tt)
	}
	return tt, ""
}

// constOf returns the constant tensor and type a get_attr node reads; for
// nil it returns nil.
func constOf(v ops.Value, what string) (*ConstData, string) {
	if v == nil {
		return nil, ""
	}
	n, ok := v.(*fxgraph.Node)
	if !ok || n.Op() != fxgraph.GetAttr {
		return nil, fmt.Sprintf("%s is not a constant (get_attr)", what)
	}
	a, _ := n.Graph().Attr(n.TargetName())
	t, ok := a.(*tensor.Tensor)
	if !ok || t == nil {
		return nil, fmt.Sprintf("%s: attribute %q is not a tensor", what, n.TargetName())
	}
	tt, ok := n.TensorType()
	if !ok || tt.Elem == nil {
		return nil, fmt.Sprintf("%s %q has no tensor type", what, n.Name())
	}
	if tt.DType() != t.DType() || !equalShape(tt.Shape, t.Shape()) {
		return nil, fmt.Sprintf("%s %q: type %s does not describe its tensor %s%v", what, n.Name(), tt, t.DType(), t.Shape())
	}
	return &ConstData{Tensor: t, Type: tt}, ""
}

func equalShape(a []int64, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != int64(b[i]) {
			return false
		}
	}
	return true
}

// normChain is a matched reshape → instance_norm → reshape.
type normChain struct {
	bottom, in, top, x *fxgraph.Node
	xt                 ops.TensorType
	g, k               int64
	eps                float64
	s, b               *ConstData
}

// matchChain checks every condition of 2.4 on the chain ending at bottom.
func matchChain(bottom *fxgraph.Node, reg *ops.Registry) (*normChain, string) {
	if !isReshape(bottom) {
		return nil, ""
	}
	in, ok := bottom.Arg(0).(*fxgraph.Node)
	if !ok || in.Op() != fxgraph.CallFunction || in.Target() != atenInstanceNorm {
		return nil, ""
	}
	top, ok := in.Arg(0).(*fxgraph.Node)
	if !ok || !isReshape(top) {
		return nil, fmt.Sprintf("instance_norm %q does not read a reshape", in.Name())
	}
	x, ok := top.Arg(0).(*fxgraph.Node)
	if !ok {
		return nil, fmt.Sprintf("reshape %q does not read a node", top.Name())
	}
	c := &normChain{bottom: bottom, in: in, top: top, x: x}
	var why string
	var rt, it, bt ops.TensorType
	if c.xt, why = staticType(x); why != "" {
		return nil, why
	}
	if rt, why = staticType(top); why != "" {
		return nil, why
	}
	if it, why = staticType(in); why != "" {
		return nil, why
	}
	if bt, why = staticType(bottom); why != "" {
		return nil, why
	}
	if c.xt.Rank() < 2 || rt.Rank() < 3 {
		return nil, fmt.Sprintf("want input rank >= 2 and reshaped rank >= 3, got %s and %s", c.xt, rt)
	}
	if rt.Shape[0] != c.xt.Shape[0] {
		return nil, fmt.Sprintf("reshape %q changes the batch: %v -> %v", top.Name(), c.xt.Shape, rt.Shape)
	}
	C, G := c.xt.Shape[1], rt.Shape[1]
	if G < 1 {
		return nil, fmt.Sprintf("reshape %q: want at least one group, got %d", top.Name(), G)
	}
	if ax := groupAxis(c.xt.Shape, G); ax != normChannelAxis {
		where := "no axis"
		if ax > 0 {
			where = fmt.Sprintf("axis %d", ax)
		}
		return nil, fmt.Sprintf("%d groups do not divide the %d channels of axis %d: reshape %q groups %v along %s, not the channel axis %d", G, C, normChannelAxis, top.Name(), c.xt.Shape, where, normChannelAxis)
	}
	c.g, c.k = G, C/G
	S, T := int64(1), int64(1)
	for _, d := range c.xt.Shape[2:] {
		S *= d
	}
	for _, d := range rt.Shape[2:] {
		T *= d
	}
	if T != c.k*S {
		return nil, fmt.Sprintf("reshape %q: inner size %d, want (C/G)·S = %d", top.Name(), T, c.k*S)
	}
	if !slices.Equal(it.Shape, rt.Shape) {
		return nil, fmt.Sprintf("instance_norm %q: shape %v differs from its input's %v", in.Name(), it.Shape, rt.Shape)
	}
	if !slices.Equal(bt.Shape, c.xt.Shape) {
		return nil, fmt.Sprintf("reshape %q gives %v, not the input's shape %v", bottom.Name(), bt.Shape, c.xt.Shape)
	}
	s, ok := reg.Schema(atenInstanceNorm)
	if !ok {
		return nil, "aten.instance_norm is not in the registry"
	}
	full, err := s.Normalize(in.Args(), in.Kwargs())
	if err != nil {
		return nil, fmt.Sprintf("instance_norm %q: %v", in.Name(), err)
	}
	if use, _ := full[5].(bool); !use {
		return nil, fmt.Sprintf("instance_norm %q uses running statistics", in.Name())
	}
	if full[3] != nil || full[4] != nil {
		return nil, fmt.Sprintf("instance_norm %q has running buffers", in.Name())
	}
	eps, ok := full[7].(float64)
	if !ok {
		return nil, fmt.Sprintf("instance_norm %q: eps is not a float literal", in.Name())
	}
	c.eps = eps
	if c.s, why = constOf(full[1], "instance_norm weight"); why != "" {
		return nil, why
	}
	if c.b, why = constOf(full[2], "instance_norm bias"); why != "" {
		return nil, why
	}
	for _, p := range []*ConstData{c.s, c.b} {
		if p != nil && !slices.Equal(p.Type.Shape, []int64{G}) {
			return nil, fmt.Sprintf("instance_norm affine constant %s, want shape [%d]", p.Type, G)
		}
	}
	return c, ""
}

// normChannelAxis is the channel axis of aten.instance_norm (per channel
// of its input) and of aten.group_norm (groups of channels): both
// normalise [N, C, *] along axis 1.
const normChannelAxis = 1

// groupAxis returns the axis of x (shape [N, ...]) that a row-major
// reshape to [N, groups, ...] cuts into groups: the first axis a ≥ 1 such
// that each group (prod(x[1:])/groups elements) holds whole slices along
// a, that is, its size is a multiple of prod(x[a+1:]). It returns 1
// exactly when groups divides x[1], and -1 when groups does not divide
// prod(x[1:]).
func groupAxis(x []int64, groups int64) int {
	total := int64(1)
	for _, d := range x[1:] {
		total *= d
	}
	if groups < 1 || total%groups != 0 {
		return -1
	}
	m := total / groups
	inner := total
	for a := 1; a < len(x); a++ {
		if x[a] == 0 {
			return -1
		}
		inner /= x[a]
		if m%inner == 0 {
			return a
		}
	}
	return -1
}

// Match checks root for either form of the fold. Read-only.
func (p GroupNormFold) Match(root *fxgraph.Node) (Plan, string) {
	if root == nil || root.Erased() || root.Op() != fxgraph.CallFunction {
		return nil, ""
	}
	reg := p.Registry
	if reg == nil {
		reg = ops.Default()
	}
	if root.Target() == atenAdd {
		return p.matchTrailing(root, reg)
	}
	c, why := matchChain(root, reg)
	if c == nil {
		return nil, why
	}
	bt, _ := root.TensorType()
	if why := p.requantGuard(bt, c, c.in); why != "" {
		return nil, why
	}
	plan := &GroupNormPlan{Replaces: root, Input: c.x, NumGroups: c.g, Eps: c.eps,
		Chain: []*fxgraph.Node{c.bottom, c.in, c.top}}
	var err error
	if c.s != nil {
		if plan.Gamma, err = RepeatPerGroup(c.s, c.g, c.k); err != nil {
			return nil, err.Error()
		}
	}
	if c.b != nil {
		if plan.Beta, err = RepeatPerGroup(c.b, c.g, c.k); err != nil {
			return nil, err.Error()
		}
	}
	plan.Chain = append(plan.Chain, nodeArgs(c.in, 1, 2)...)
	if plan.Result, err = ops.ContractType(bt, bt.Shape); err != nil {
		return nil, err.Error()
	}
	return plan, ""
}

// requantGuard refuses (unless AllowRequantDrop) a chain in which one of
// the inner values is quantized with an element type other than the
// result contract's: the unfolded graph rounds there, the group_norm
// cannot. An inner value with the contract's own element type is fine
// when only views follow it (the reshape keeps the stored integers).
//
// On the input side, the top reshape must keep X's element type exactly:
// a reshape typed otherwise quantizes (or requantizes) the values the
// instance_norm reads, while the group_norm reads X itself.
func (p GroupNormFold) requantGuard(contract ops.TensorType, c *normChain, inner ...*fxgraph.Node) string {
	if p.AllowRequantDrop {
		return ""
	}
	if tt, ok := c.top.TensorType(); ok && tt.IsQuantized() && (c.xt.Elem == nil || !c.xt.Elem.Equal(tt.Elem)) {
		return fmt.Sprintf("reshape %q quantizes its input inside the chain (%s to %s): the group_norm reads %q unrounded and could differ by more than 1 LSB of %s (set AllowRequantDrop to fold anyway)", c.top.Name(), c.xt.Elem, tt.Elem, c.x.Name(), contract.Elem)
	}
	for _, n := range inner {
		tt, ok := n.TensorType()
		if !ok || !tt.IsQuantized() {
			continue
		}
		if contract.Elem != nil && contract.Elem.Equal(tt.Elem) && n.Target() == atenInstanceNorm && len(inner) == 1 {
			continue
		}
		return fmt.Sprintf("%q is quantized (%s) inside the chain: the group_norm would drop that rounding step and could differ by more than 1 LSB of %s (set AllowRequantDrop to fold anyway)", n.Name(), tt.Elem, contract.Elem)
	}
	return ""
}

// nodeArgs returns the node arguments of n at the given positions.
func nodeArgs(n *fxgraph.Node, idx ...int) []*fxgraph.Node {
	var out []*fxgraph.Node
	for _, i := range idx {
		if a, ok := n.Arg(i).(*fxgraph.Node); ok {
			out = append(out, a)
		}
	}
	return out
}

// matchTrailing checks add(mul(reshape(IN(reshape(X))), g_c), h_c).
func (p GroupNormFold) matchTrailing(add *fxgraph.Node, reg *ops.Registry) (Plan, string) {
	if len(add.Args()) != 2 {
		return nil, ""
	}
	if a, ok := add.Kwarg("alpha"); ok && !ops.LiteralEqual(a, int64(1)) && !ops.LiteralEqual(a, 1.0) {
		return nil, ""
	}
	var mul *fxgraph.Node
	var hv ops.Value
	for i := 0; i < 2; i++ {
		if m, ok := add.Arg(i).(*fxgraph.Node); ok && m.Op() == fxgraph.CallFunction && m.Target() == atenMul {
			mul, hv = m, add.Arg(1-i)
			break
		}
	}
	if mul == nil || len(mul.Args()) != 2 || len(mul.Kwargs()) != 0 {
		return nil, ""
	}
	var bottom *fxgraph.Node
	var gv ops.Value
	for i := 0; i < 2; i++ {
		if r, ok := mul.Arg(i).(*fxgraph.Node); ok && isReshape(r) {
			if in, ok := r.Arg(0).(*fxgraph.Node); ok && in.Op() == fxgraph.CallFunction && in.Target() == atenInstanceNorm {
				bottom, gv = r, mul.Arg(1-i)
				break
			}
		}
	}
	if bottom == nil {
		return nil, ""
	}
	c, why := matchChain(bottom, reg)
	if c == nil {
		return nil, why
	}
	if bottom.NumUsers() != 1 || mul.NumUsers() != 1 {
		return nil, fmt.Sprintf("reshape %q or mul %q has other users", bottom.Name(), mul.Name())
	}
	at, why := staticType(add)
	if why != "" {
		return nil, why
	}
	if !slices.Equal(at.Shape, c.xt.Shape) {
		return nil, fmt.Sprintf("add %q gives %v, not the input's shape %v", add.Name(), at.Shape, c.xt.Shape)
	}
	if why := p.requantGuard(at, c, c.in, c.bottom, mul); why != "" {
		return nil, why
	}
	gc, why := constOf(gv, "mul constant")
	if gc == nil {
		if why == "" {
			why = "mul constant is None"
		}
		return nil, why
	}
	hc, why := constOf(hv, "add constant")
	if hc == nil {
		if why == "" {
			why = "add constant is None"
		}
		return nil, why
	}
	C := c.xt.Shape[1]
	gcv, why := channelVector(gc, c.xt.Rank(), C)
	if why != "" {
		return nil, why
	}
	hcv, why := channelVector(hc, c.xt.Rank(), C)
	if why != "" {
		return nil, why
	}
	sv, bv := make([]float64, c.g), make([]float64, c.g)
	for i := range sv {
		sv[i] = 1
	}
	for _, x := range []struct {
		d   *ConstData
		out []float64
	}{{c.s, sv}, {c.b, bv}} {
		if x.d == nil {
			continue
		}
		f, why := realValues(x.d)
		if why != "" {
			return nil, "instance_norm affine constant: " + why
		}
		copy(x.out, f)
	}
	// gamma[c] = g_c[c]·s[c/K] and beta[c] = g_c[c]·b[c/K] + h_c[c], each
	// rounded once to float32; with s ≡ 1 and b ≡ 0 (instance_norm
	// without affine) they are g_c and h_c exactly.
	gamma, beta := make([]float32, C), make([]float32, C)
	for ch := int64(0); ch < C; ch++ {
		grp := ch / c.k
		gamma[ch] = float32(gcv[ch] * sv[grp])
		beta[ch] = float32(gcv[ch]*bv[grp] + hcv[ch])
	}
	res, err := ops.ContractType(at, at.Shape)
	if err != nil {
		return nil, err.Error()
	}
	shape := []int{int(C)}
	plan := &GroupNormPlan{Replaces: add, Input: c.x, NumGroups: c.g, Eps: c.eps, Result: res,
		Gamma: &ConstData{Tensor: tensor.MustFromData(tensor.Float32, shape, gamma), Type: ops.Plain(tensor.Float32, C)},
		Beta:  &ConstData{Tensor: tensor.MustFromData(tensor.Float32, shape, beta), Type: ops.Plain(tensor.Float32, C)},
		Chain: []*fxgraph.Node{add, mul, c.bottom, c.in, c.top},
	}
	plan.Chain = append(plan.Chain, nodeArgs(add, 0, 1)...)
	plan.Chain = append(plan.Chain, nodeArgs(mul, 0, 1)...)
	plan.Chain = append(plan.Chain, nodeArgs(c.in, 1, 2)...)
	return plan, ""
}

// channelVector reads a constant that broadcasts against [N, C, *] (of
// the given rank) as a per-channel vector along the channel axis 1:
// right-aligned, size C at axis 1 and 1 everywhere else. Quantized
// constants are read as the real values their type gives them
// ([realValues]).
func channelVector(d *ConstData, rank int, C int64) ([]float64, string) {
	sh := d.Type.Shape
	if len(sh) > rank || len(sh) < rank-1 {
		return nil, fmt.Sprintf("trailing constant %s does not broadcast along the channel axis %d of rank %d", d.Type, normChannelAxis, rank)
	}
	off := rank - len(sh)
	for i, s := range sh {
		want := int64(1)
		if i+off == normChannelAxis {
			want = C
		}
		if s != want {
			return nil, fmt.Sprintf("trailing constant %s is not [C] along the channel axis %d (C = %d)", d.Type, normChannelAxis, C)
		}
	}
	f, why := realValues(d)
	if why != "" {
		return nil, "trailing constant: " + why
	}
	return f, ""
}

// realValues returns the real values of a constant as float32 values
// (widened to float64): a plain float32 constant as stored, a quantized
// one dequantized with its own element type by the same kernels the
// interpreter runs for dequantize_per_tensor and dequantize_per_channel
// ((q − zp)·scale in float32), so the folded constants hold exactly the
// numbers the unfolded graph computed with. Other dtypes are refused.
func realValues(d *ConstData) ([]float64, string) {
	t := d.Tensor
	var (
		out *tensor.Tensor
		err error
	)
	switch e := d.Type.Elem.(type) {
	case ops.Scalar:
		if e.DType != tensor.Float32 {
			return nil, fmt.Sprintf("%s is not float32", d.Type)
		}
		out = t
	case ops.UniformQuantized:
		if e.Expressed != tensor.Float32 {
			return nil, fmt.Sprintf("%s is not expressed in float32", d.Type)
		}
		out, err = kernels.DequantizePerTensor(t, e.Scale, e.ZeroPoint, e.StorageMin, e.StorageMax, e.StorageType, tensor.Float32)
	case ops.UniformQuantizedPerAxis:
		if e.Expressed != tensor.Float32 {
			return nil, fmt.Sprintf("%s is not expressed in float32", d.Type)
		}
		var st, zt *tensor.Tensor
		if st, zt, err = perAxisParams(e); err == nil {
			out, err = kernels.DequantizePerChannel(t, st, zt, int64(e.Axis), e.StorageMin, e.StorageMax, e.StorageType, tensor.Float32)
		}
	default:
		return nil, fmt.Sprintf("%s has no real values", d.Type)
	}
	if err != nil {
		return nil, fmt.Sprintf("dequantize %s: %v", d.Type, err)
	}
	f, err := out.Float64s()
	if err != nil {
		return nil, err.Error()
	}
	return f, ""
}

// perAxisParams returns the scale and zero-point tensors of a per-axis
// element type: float32 scales when every scale is a float32 value (as
// observers produce them), float64 otherwise, and int64 zero points.
func perAxisParams(e ops.UniformQuantizedPerAxis) (scales, zeroPoints *tensor.Tensor, err error) {
	n := len(e.Scales)
	f32 := true
	for _, s := range e.Scales {
		if float64(float32(s)) != s {
			f32 = false
		}
	}
	if f32 {
		f := make([]float32, n)
		for i, s := range e.Scales {
			f[i] = float32(s)
		}
		scales, err = tensor.FromData(tensor.Float32, []int{n}, f)
	} else {
		scales, err = tensor.FromData(tensor.Float64, []int{n}, append([]float64(nil), e.Scales...))
	}
	if err != nil {
		return nil, nil, err
	}
	zeroPoints, err = tensor.FromData(tensor.Int64, []int{n}, append([]int64(nil), e.ZeroPoints...))
	return scales, zeroPoints, err
}

// Apply creates the expanded constants and the group_norm node before the
// replaced value, replaces it (type-checked) and erases the chain nodes
// nothing else uses. It checks the result contract before creating
// anything.
func (p *GroupNormPlan) Apply(rw *Rewriter) error {
	if err := rw.CheckReplace(p.Replaces, p.Result); err != nil {
		return err
	}
	restore := rw.InsertBefore(p.Replaces)
	defer restore()
	var gamma, beta ops.Value
	if p.Gamma != nil {
		gamma = rw.Constant("_typed_gn_weight_", p.Gamma.Tensor, p.Gamma.Type)
	}
	if p.Beta != nil {
		beta = rw.Constant("_typed_gn_bias_", p.Beta.Tensor, p.Beta.Type)
	}
	gn := rw.Call(atenGroupNorm, []ops.Value{p.Input, p.NumGroups, gamma, beta, p.Eps}, nil, p.Result)
	if err := rw.Replace(p.Replaces, gn); err != nil {
		return err
	}
	return rw.EraseIfDead(p.Chain...)
}

// RepeatPerGroup expands a per-group constant [G] to per-channel [C]
// (C = G·K) by repeating each group's value K times: out[c] = in[c/K]
// (numpy.repeat, never tiling). The data keeps its dtype; the element type
// is re-derived by [ExpandQuantParams].
func RepeatPerGroup(src *ConstData, groups, perGroup int64) (*ConstData, error) {
	if src == nil || src.Tensor == nil {
		return nil, fmt.Errorf("typed: repeat per group: no constant")
	}
	if groups < 1 || perGroup < 1 || src.Tensor.Numel() != int(groups) {
		return nil, fmt.Errorf("typed: repeat per group: constant %s%v, want %d values", src.Tensor.DType(), src.Tensor.Shape(), groups)
	}
	col, err := src.Tensor.Contiguous().Reshape(int(groups), 1)
	if err != nil {
		return nil, fmt.Errorf("typed: repeat per group: %w", err)
	}
	wide, err := col.Expand(int(groups), int(perGroup))
	if err != nil {
		return nil, fmt.Errorf("typed: repeat per group: %w", err)
	}
	out, err := wide.Contiguous().Reshape(int(groups * perGroup))
	if err != nil {
		return nil, fmt.Errorf("typed: repeat per group: %w", err)
	}
	out = out.Contiguous()
	elem, err := ExpandQuantParams(src.Type.Elem, groups, perGroup)
	if err != nil {
		return nil, err
	}
	typ, err := ops.MakeType([]int64{groups * perGroup}, elem)
	if err != nil {
		return nil, err
	}
	return &ConstData{Tensor: out, Type: typ}, nil
}

// ExpandQuantParams returns the element type of a per-group constant
// expanded per channel by [RepeatPerGroup]: plain and per-tensor element
// types are kept; a per-axis type along axis 0 has each scale and zero
// point repeated perGroup times. A per-axis type along another axis, or
// with the wrong number of scales, is refused.
func ExpandQuantParams(elem ops.Element, groups, perGroup int64) (ops.Element, error) {
	pa, ok := elem.(ops.UniformQuantizedPerAxis)
	if !ok {
		return elem, nil
	}
	if pa.Axis != 0 || int64(len(pa.Scales)) != groups {
		return nil, fmt.Errorf("typed: expand %s to %d groups of %d: want a per-axis type along axis 0 with %d scales", pa, groups, perGroup, groups)
	}
	scales := make([]float64, 0, groups*perGroup)
	zps := make([]int64, 0, groups*perGroup)
	for g := range pa.Scales {
		for range perGroup {
			scales = append(scales, pa.Scales[g])
			zps = append(zps, pa.ZeroPoints[g])
		}
	}
	return ops.NewUniformQuantizedPerAxis(pa.StorageType, pa.StorageMin, pa.StorageMax, pa.Expressed, 0, scales, zps)
}
