package typed_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/typed"
)

var (
	qpt      = ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	dqpt     = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default")
	reshape  = ops.MustOverload("aten.reshape.default")
	instNorm = ops.MustOverload("aten.instance_norm.default")
	groupNrm = ops.MustOverload("aten.group_norm.default")
	mulT     = ops.MustOverload("aten.mul.Tensor")
	addT     = ops.MustOverload("aten.add.Tensor")
)

// The types of typed-rewrites.md 2.6.
var (
	tin  = mustUQ(0.02, -3)
	tout = mustUQ(0.08, 5)
)

func mustUQ(scale float64, zp int64) ops.UniformQuantized {
	q, err := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, scale, zp)
	if err != nil {
		panic(err)
	}
	return q
}

// chain describes a reshape → instance_norm → reshape graph in lifted
// form (quantized when in/out are set, float otherwise).
type chain struct {
	x        []int64 // input shape [N, C, ...]
	reshaped []int64 // top reshape result
	bottom   []int64 // bottom reshape result; nil means x
	gamma    []float32
	beta     []float32
	// gammaQ, when set, makes gamma an int8 constant of this (per-axis)
	// quantized type holding gammaInts.
	gammaQ      ops.Element
	gammaInts   []int8
	gammaInput  bool // gamma is a graph input (not a constant)
	eps         float64
	noStats     bool // use_input_stats=False with running buffers
	in, out     ops.Element
	trailing    bool
	gc, hc      []float32 // [C,1,...] trailing constants
	addOut      ops.Element
	dynamicBatc bool
	// inOut, when set, is instance_norm's result element type (else out).
	inOut ops.Element
	// topElem, when set, is the top reshape's element type (else the
	// input's).
	topElem ops.Element
	// cshape overrides the trailing constants' shape [C, 1, ...].
	cshape []int64
	// gcQ/hcQ, when set, make the trailing constants int8 constants of
	// these quantized types holding gcInts/hcInts (gc/hc are ignored).
	gcQ, hcQ       ops.Element
	gcInts, hcInts []int8
}

func shapeInt(s []int64) []int {
	o := make([]int, len(s))
	for i, d := range s {
		o[i] = int(d)
	}
	return o
}

func elemOr(e ops.Element) ops.Element {
	if e == nil {
		return ops.Scalar{DType: tensor.Float32}
	}
	return e
}

func mustType(t *testing.T, shape []int64, e ops.Element) ops.TensorType {
	t.Helper()
	tt, err := ops.MakeType(shape, elemOr(e))
	require.NoError(t, err)
	return tt
}

// build returns the lifted graph and its nodes by role.
func (c chain) build(t *testing.T) (*fxgraph.Graph, map[string]*fxgraph.Node) {
	t.Helper()
	g := fxgraph.New()
	nodes := map[string]*fxgraph.Node{}
	bottomShape := c.bottom
	if bottomShape == nil {
		bottomShape = c.x
	}
	xt := ops.Plain(tensor.Float32, c.x...)
	if c.dynamicBatc {
		xt = ops.TensorType{Shape: append([]int64{ops.DynamicDim}, c.x[1:]...), Elem: ops.Scalar{DType: tensor.Float32}, Syms: append([]string{"s0"}, make([]string, len(c.x)-1)...)}
	}
	x := g.Placeholder("x", xt)
	var gammaV, betaV ops.Value
	G := c.reshaped[1]
	if c.gammaInput {
		gammaV = g.Placeholder("gamma", ops.Plain(tensor.Float32, G))
	}
	src := x
	if c.in != nil {
		src = g.Call(qpt, x, c.in.(ops.UniformQuantized).Scale, c.in.(ops.UniformQuantized).ZeroPoint, int64(-128), int64(127), tensor.Int8)
		src.SetType(mustType(t, c.x, c.in))
	}
	if c.gamma != nil && !c.gammaInput {
		g.SetAttr("in_weight", tensor.F32([]int{int(G)}, c.gamma...))
		gammaV = g.GetAttr("in_weight", ops.Plain(tensor.Float32, G))
	}
	if c.gammaQ != nil {
		g.SetAttr("in_weight_q", tensor.MustFromData(tensor.Int8, []int{int(G)}, c.gammaInts))
		gammaV = g.GetAttr("in_weight_q", mustType(t, []int64{G}, c.gammaQ))
	}
	if c.beta != nil {
		g.SetAttr("in_bias", tensor.F32([]int{int(G)}, c.beta...))
		betaV = g.GetAttr("in_bias", ops.Plain(tensor.Float32, G))
	}
	var rm, rv ops.Value
	if c.noStats {
		g.SetAttr("rm", tensor.F32([]int{int(G)}, make([]float32, G)...))
		g.SetAttr("rv", tensor.F32([]int{int(G)}, make([]float32, G)...))
		rm = g.GetAttr("rm", ops.Plain(tensor.Float32, G))
		rv = g.GetAttr("rv", ops.Plain(tensor.Float32, G))
	}
	top := g.Call(reshape, src, toList(c.reshaped))
	srcT, _ := src.TensorType()
	if c.dynamicBatc {
		top.SetType(ops.TensorType{Shape: append([]int64{ops.DynamicDim}, c.reshaped[1:]...), Elem: srcT.Elem, Syms: append([]string{"s0"}, make([]string, len(c.reshaped)-1)...)})
	} else if c.topElem != nil {
		top.SetType(mustType(t, c.reshaped, c.topElem))
	} else {
		tt, err := ops.ViewType(srcT, c.reshaped)
		require.NoError(t, err)
		top.SetType(tt)
	}
	in := g.Call(instNorm, top, gammaV, betaV, rm, rv, !c.noStats, 0.1, c.eps, false)
	inElem := c.out
	if c.inOut != nil {
		inElem = c.inOut
	}
	in.SetType(mustType(t, c.reshaped, inElem))
	bottom := g.Call(reshape, in, toList(bottomShape))
	bottom.SetType(mustType(t, bottomShape, c.out))
	last := bottom
	nodes["x"], nodes["top"], nodes["in"], nodes["bottom"] = x, top, in, bottom
	if c.trailing {
		C := c.x[1]
		cshape := append([]int64{C}, make([]int64, len(c.x)-2)...)
		for i := 1; i < len(cshape); i++ {
			cshape[i] = 1
		}
		if c.cshape != nil {
			cshape = c.cshape
		}
		constant := func(name string, f []float32, q ops.Element, ints []int8) *fxgraph.Node {
			if q == nil {
				g.SetAttr(name, tensor.MustFromData(tensor.Float32, shapeInt(cshape), f))
				return g.GetAttr(name, ops.Plain(tensor.Float32, cshape...))
			}
			g.SetAttr(name, tensor.MustFromData(tensor.Int8, shapeInt(cshape), ints))
			return g.GetAttr(name, mustType(t, cshape, q))
		}
		gc := constant("gc", c.gc, c.gcQ, c.gcInts)
		hc := constant("hc", c.hc, c.hcQ, c.hcInts)
		mul := g.Call(mulT, bottom, gc)
		mul.SetType(mustType(t, c.x, c.out))
		add := g.Call(addT, mul, hc)
		add.SetType(mustType(t, c.x, c.addOut))
		nodes["mul"], nodes["add"] = mul, add
		last = add
	}
	ret := last
	if lt, _ := last.TensorType(); lt.IsQuantized() {
		q := lt.Elem.(ops.UniformQuantized)
		ret = g.Call(dqpt, last, q.Scale, q.ZeroPoint, int64(-128), int64(127), tensor.Int8)
		ret.SetType(ops.Plain(tensor.Float32, lt.Shape...))
	}
	g.SetOutput(ops.Tuple{ret})
	if !c.dynamicBatc { // the reshape literals are static; only the guard matters there
		require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)), fxgraph.Format(g))
	}
	return g, nodes
}

func toList(s []int64) ops.List {
	l := make(ops.List, len(s))
	for i, d := range s {
		l[i] = d
	}
	return l
}

// input returns deterministic, non-uniform data in about [-2, 2], with
// the first channel constant (variance 0, so eps dominates).
func input(shape []int64) *tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	per := n / int(shape[0]) / int(shape[1])
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((i*29+7)%41-20) / 10
		if (i/per)%int(shape[1]) == 0 {
			v[i] = 0.75
		}
	}
	return tensor.MustFromData(tensor.Float32, shapeInt(shape), v)
}

func runOne(t *testing.T, g *fxgraph.Graph, x *tensor.Tensor) []float32 {
	t.Helper()
	out, err := runTyped(t, g, []*tensor.Tensor{x}, interp.Options{})
	require.NoError(t, err)
	require.Len(t, out, 1)
	f, err := tensor.Data[float32](out[0].(*tensor.Tensor).Contiguous())
	require.NoError(t, err)
	return f
}

func groupNormNode(t *testing.T, g *fxgraph.Graph) *fxgraph.Node {
	t.Helper()
	gns := g.FindNodes(fxgraph.CallFunction, groupNrm)
	require.Len(t, gns, 1, fxgraph.Format(g))
	return gns[0]
}

func constValues(t *testing.T, g *fxgraph.Graph, v ops.Value) []float64 {
	t.Helper()
	n, ok := v.(*fxgraph.Node)
	require.True(t, ok)
	a, ok := g.Attr(n.TargetName())
	require.True(t, ok)
	f, err := a.(*tensor.Tensor).Float64s()
	require.NoError(t, err)
	return f
}

func returnType(t *testing.T, g *fxgraph.Graph) ops.Type {
	t.Helper()
	out, ok := g.OutputNode()
	require.True(t, ok)
	return out.Arg(0).(ops.Tuple)[0].(*fxgraph.Node).Type()
}

// The 2.6 case: N=2, C=12, G=3 (K=4), H=5, W=7, signed non-uniform
// per-group gamma/beta, Tin 0.02:-3, Tout 0.08:5.
func quantCase() chain {
	return chain{
		x: []int64{2, 12, 5, 7}, reshaped: []int64{2, 3, 140},
		gamma: []float32{0.5, 1.5, -2.0}, beta: []float32{0.1, -0.2, 0.3},
		eps: 1e-5, in: tin, out: tout,
	}
}

// TestFoldKeepsResultContract is the regression of the real compiler's
// bug: the folded node must carry the output's type (scale 0.08, zp 5),
// not the input's (scale 0.02, zp -3).
func TestFoldKeepsResultContract(t *testing.T) {
	c := quantCase()
	g, nodes := c.build(t)
	x := input(c.x)
	want := runOne(t, g, x)
	sig := returnType(t, g)
	bottomType := nodes["bottom"].Type()

	res, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Stats["groupnorm_fold"])
	require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)))

	gn := groupNormNode(t, g)
	gt := gn.Type().(ops.TensorType)
	assert.True(t, gt.Equal(bottomType), "full type: %s", ops.TypeDiff(gt, bottomType))
	q := gt.Elem.(ops.UniformQuantized)
	assert.Equal(t, math.Float64bits(0.08), math.Float64bits(q.Scale))
	assert.Equal(t, int64(5), q.ZeroPoint)
	assert.Equal(t, []int64{2, 12, 5, 7}, gt.Shape)
	assert.Equal(t, int64(3), gn.Arg(1))
	assert.Equal(t, math.Float64bits(1e-5), math.Float64bits(gn.Arg(4).(float64)))
	assert.Same(t, nodes["x"].Users()[0], gn.Arg(0), "the group_norm reads the original (quantized) input")
	assert.True(t, ops.TypesEqual(sig, returnType(t, g)), "function signature")
	assert.Empty(t, g.FindNodes(fxgraph.CallFunction, instNorm))
	assert.Empty(t, g.FindNodes(fxgraph.CallFunction, reshape))

	// Repeat, element by element, and not tile.
	repeat := []float64{0.5, 0.5, 0.5, 0.5, 1.5, 1.5, 1.5, 1.5, -2, -2, -2, -2}
	tile := []float64{0.5, 1.5, -2, 0.5, 1.5, -2, 0.5, 1.5, -2, 0.5, 1.5, -2}
	assert.Equal(t, repeat, constValues(t, g, gn.Arg(2)))
	assert.NotEqual(t, tile, constValues(t, g, gn.Arg(2)))
	b := []float32{0.1, 0.1, 0.1, 0.1, -0.2, -0.2, -0.2, -0.2, 0.3, 0.3, 0.3, 0.3}
	bv := constValues(t, g, gn.Arg(3))
	for i := range b {
		assert.Equal(t, math.Float32bits(b[i]), math.Float32bits(float32(bv[i])), "beta[%d]", i)
	}

	// Numerics: same real function, within 1 LSB of Tout.
	got := runOne(t, g, x)
	require.Len(t, got, len(want))
	for i := range want {
		require.LessOrEqual(t, math.Abs(float64(got[i]-want[i])), 0.08*(1+1e-6), "element %d", i)
	}
}

// TestFoldWrongContractVariant writes the buggy variant (the result type
// built from the input's element type) and shows both checks catch it:
// the rewriter refuses the replacement, naming the pattern and the field,
// and, with the type forced, the numbers are off by far more than 1 LSB.
func TestFoldWrongContractVariant(t *testing.T) {
	c := quantCase()
	g, nodes := c.build(t)
	x := input(c.x)
	want := runOne(t, g, x)
	before := fxgraph.Format(g)

	plan, reason := typed.GroupNormFold{}.Match(nodes["bottom"])
	require.NotNil(t, plan, reason)
	p := plan.(*typed.GroupNormPlan)
	inT, _ := p.Input.TensorType()
	wrong, err := ops.WithElement(p.Result, inT.Elem) // the bug: input's element type
	require.NoError(t, err)
	p.Result = wrong
	err = p.Apply(typed.NewRewriter(g, typed.GroupNormFold{}.Name()))
	require.Error(t, err)
	assert.True(t, errors.Is(err, typed.ErrTypeContract))
	assert.Contains(t, err.Error(), "groupnorm_fold")
	assert.Contains(t, err.Error(), "scale")
	assert.Equal(t, before, fxgraph.Format(g), "a refused plan leaves the graph unchanged")

	// Force the wrong type past the rewriter: the numeric check fails.
	bad, _ := g.Clone()
	bn, _ := bad.NodeByName(nodes["bottom"].Name())
	xn, _ := bad.NodeByName(p.Input.Name())
	restore := bad.InsertingBefore(bn)
	gn := bad.Call(groupNrm, xn, int64(3), nil, nil, 1e-5)
	restore()
	gn.SetType(wrong)
	bad.ReplaceAllUsesWith(bn, gn, nil)
	got := runOne(t, bad, x)
	worst := 0.0
	for i := range want {
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
	}
	assert.Greater(t, worst, 0.08, "the input's contract must not pass the 1-LSB check")
}

// TestFoldFloatTwins runs the float twin of each shape case: the fold
// applies and matches the unfolded graph within foldTol, and a tiled gamma
// would not.
func TestFoldFloatTwins(t *testing.T) {
	cases := []struct {
		name string
		c    chain
		// groups as the test states them (C / K)
		groups int64
	}{
		{"N2_C12_G3_H5_W7", chain{x: []int64{2, 12, 5, 7}, reshaped: []int64{2, 3, 140}, gamma: []float32{0.5, 1.5, -2}, beta: []float32{0.1, -0.2, 0.3}, eps: 1e-5}, 3},
		{"unequal_1x10x3x7_G5", chain{x: []int64{1, 10, 3, 7}, reshaped: []int64{1, 5, 42}, gamma: []float32{0.5, 1.5, -2, 0.8, 3}, beta: []float32{0.1, -0.2, 0.3, 0.4, -0.5}, eps: 1e-3}, 5},
		{"3d_NCD", chain{x: []int64{2, 6, 9}, reshaped: []int64{2, 2, 27}, gamma: []float32{-1, 2}, beta: []float32{0.25, 0}, eps: 1e-5}, 2},
		{"G_equals_C", chain{x: []int64{1, 4, 3, 2}, reshaped: []int64{1, 4, 6}, gamma: []float32{1, 2, 3, 4}, beta: []float32{0, 1, 0, 1}, eps: 1e-5}, 4},
		{"G_is_1", chain{x: []int64{2, 4, 2, 3}, reshaped: []int64{2, 1, 24}, gamma: []float32{1.5}, beta: []float32{-1}, eps: 1e-5}, 1},
		{"no_affine", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := tc.c.build(t)
			x := input(tc.c.x)
			want := runOne(t, g, x)
			res, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true})
			require.NoError(t, err)
			require.True(t, res.Changed, res.Notes)
			gn := groupNormNode(t, g)
			assert.Equal(t, tc.groups, gn.Arg(1))
			assert.True(t, ops.Plain(tensor.Float32, tc.c.x...).Equal(gn.Type()))
			got := runOne(t, g, x)
			requireFoldClose(t, want, got)
			if tc.c.gamma == nil {
				return
			}
			C, G := tc.c.x[1], tc.groups
			K := C / G
			gv := constValues(t, g, gn.Arg(2))
			for ch := int64(0); ch < C; ch++ {
				assert.Equal(t, float64(tc.c.gamma[ch/K]), gv[ch], "gamma[%d] = s[c/K]", ch)
			}
			if K == 1 || G == 1 {
				return // tile and repeat agree
			}
			// A tiled gamma gives different numbers.
			tiled := make([]float32, C)
			for ch := int64(0); ch < C; ch++ {
				tiled[ch] = tc.c.gamma[ch%G]
			}
			gn2 := groupNormNode(t, g)
			g.SetAttr(gn2.Arg(2).(*fxgraph.Node).TargetName(), tensor.F32([]int{int(C)}, tiled...))
			bad := runOne(t, g, x)
			far := false
			for i := range want {
				far = far || math.Abs(float64(bad[i])-float64(want[i])) > foldTol*(1+math.Abs(float64(want[i])))
			}
			assert.True(t, far, "a tiled gamma must fall outside the fold tolerance")
		})
	}
}

// TestFoldNonZeroZeroPoint: 3-D quantized case with non-zero zero points
// on both sides and eps 1e-3; the result type is the output's.
func TestFoldNonZeroZeroPoint(t *testing.T) {
	c := chain{x: []int64{2, 6, 9}, reshaped: []int64{2, 3, 18}, gamma: []float32{0.5, -1, 2}, beta: []float32{0.1, -0.2, 0.3}, eps: 1e-3, in: mustUQ(0.03, 7), out: mustUQ(0.05, -9)}
	g, nodes := c.build(t)
	x := input(c.x)
	want := runOne(t, g, x)
	bt := nodes["bottom"].Type()
	_, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true})
	require.NoError(t, err)
	gn := groupNormNode(t, g)
	assert.True(t, bt.Equal(gn.Type()))
	assert.Equal(t, int64(-9), gn.Type().(ops.TensorType).Elem.(ops.UniformQuantized).ZeroPoint)
	got := runOne(t, g, x)
	for i := range want {
		require.LessOrEqual(t, math.Abs(float64(got[i]-want[i])), 0.05*(1+1e-6), "element %d", i)
	}
}

// TestFoldPerAxisGamma: a per-axis quantized gamma [G] becomes a per-axis
// gamma [C] whose scales and zero points repeat like the data.
func TestFoldPerAxisGamma(t *testing.T) {
	pa, err := ops.NewUniformQuantizedPerAxis(tensor.Int8, -127, 127, tensor.Float32, 0, []float64{0.01, 0.02, 0.03}, []int64{0, 1, -1})
	require.NoError(t, err)
	c := quantCase()
	c.gamma, c.gammaQ, c.gammaInts = nil, pa, []int8{50, 75, -66} // 0.5, 1.48, -1.95
	g, _ := c.build(t)
	x := input(c.x)
	want := runOne(t, g, x)
	_, err = typed.Canonicalize(g, typed.CanonOptions{Debug: true})
	require.NoError(t, err)
	gn := groupNormNode(t, g)
	gamma := gn.Arg(2).(*fxgraph.Node)
	gt := gamma.Type().(ops.TensorType)
	e, ok := gt.Elem.(ops.UniformQuantizedPerAxis)
	require.True(t, ok, "per-axis type kept: %s", gt)
	assert.Equal(t, []int64{12}, gt.Shape)
	assert.Equal(t, 0, e.Axis)
	assert.Equal(t, []float64{0.01, 0.01, 0.01, 0.01, 0.02, 0.02, 0.02, 0.02, 0.03, 0.03, 0.03, 0.03}, e.Scales)
	assert.Equal(t, []int64{0, 0, 0, 0, 1, 1, 1, 1, -1, -1, -1, -1}, e.ZeroPoints)
	assert.Equal(t, int64(-127), e.StorageMin)
	assert.Equal(t, []float64{50, 50, 50, 50, 75, 75, 75, 75, -66, -66, -66, -66}, constValues(t, g, gamma))
	require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)))
	got := runOne(t, g, x)
	for i := range want {
		require.LessOrEqual(t, math.Abs(float64(got[i]-want[i])), 0.08*(1+1e-6), "element %d", i)
	}
}

// TestFoldTrailingAffine: reshape → IN → reshape → mul(g_c) → add(h_c),
// float (numerics) and quantized (the add's contract).
func TestFoldTrailingAffine(t *testing.T) {
	gc := []float32{0.5, 1, -1, 2, 0.25, 3, -0.5, 1.5}
	hc := []float32{0.1, 0, -0.1, 0.2, 0.3, -0.3, 0.4, -0.4}
	t.Run("float", func(t *testing.T) {
		c := chain{x: []int64{2, 8, 3, 5}, reshaped: []int64{2, 4, 30}, gamma: []float32{1, 1, 1, 1}, beta: []float32{0, 0, 0, 0}, eps: 1e-5, trailing: true, gc: gc, hc: hc}
		g, _ := c.build(t)
		x := input(c.x)
		want := runOne(t, g, x)
		res, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true})
		require.NoError(t, err)
		assert.Equal(t, 1, res.Stats["groupnorm_fold"])
		gn := groupNormNode(t, g)
		assert.Empty(t, g.FindNodes(fxgraph.CallFunction, mulT))
		assert.Empty(t, g.FindNodes(fxgraph.CallFunction, addT))
		gv, bv := constValues(t, g, gn.Arg(2)), constValues(t, g, gn.Arg(3))
		for i := range gc {
			assert.Equal(t, float64(gc[i]), gv[i])
			assert.Equal(t, float64(hc[i]), bv[i])
		}
		got := runOne(t, g, x)
		const tol = 1e-5
		for i := range want {
			require.InDelta(t, want[i], got[i], tol, "element %d", i)
		}
	})
	t.Run("float_with_in_affine", func(t *testing.T) {
		c := chain{x: []int64{1, 8, 2, 3}, reshaped: []int64{1, 2, 24}, gamma: []float32{2, -0.5}, beta: []float32{0.5, 1}, eps: 1e-5, trailing: true, gc: gc, hc: hc}
		g, _ := c.build(t)
		x := input(c.x)
		want := runOne(t, g, x)
		_, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true})
		require.NoError(t, err)
		gn := groupNormNode(t, g)
		gv, bv := constValues(t, g, gn.Arg(2)), constValues(t, g, gn.Arg(3))
		s, b := []float64{2, -0.5}, []float64{0.5, 1}
		for ch := range gc {
			// gamma[c] = g_c[c]·s[c/K], beta[c] = g_c[c]·b[c/K] + h_c[c], K = 4.
			assert.Equal(t, float64(float32(float64(gc[ch])*s[ch/4])), gv[ch], "gamma[%d]", ch)
			assert.Equal(t, float64(float32(float64(gc[ch])*b[ch/4]+float64(hc[ch]))), bv[ch], "beta[%d]", ch)
		}
		got := runOne(t, g, x)
		for i := range want {
			require.InDelta(t, want[i], got[i], 1e-5, "element %d", i)
		}
	})
	t.Run("quantized_takes_add_contract", func(t *testing.T) {
		tadd := mustUQ(0.1, 2)
		c := chain{x: []int64{1, 8, 2, 3}, reshaped: []int64{1, 4, 12}, eps: 1e-5, in: tin, out: tout, trailing: true, gc: gc, hc: hc, addOut: tadd}
		g, nodes := c.build(t)
		addType := nodes["add"].Type()
		sig := returnType(t, g)
		// The mul and the instance_norm carry their own types (Tout):
		// folding drops those rounding steps, which the pattern does only
		// when told to.
		_, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true,
			Patterns: []typed.Pattern{typed.GroupNormFold{AllowRequantDrop: true}}})
		require.NoError(t, err)
		gn := groupNormNode(t, g)
		assert.True(t, addType.Equal(gn.Type()), ops.TypeDiff(addType, gn.Type()))
		assert.False(t, nodes["bottom"].Type() != nil && gn.Type().Equal(nodes["bottom"].Type()))
		assert.True(t, sig.Equal(returnType(t, g)))
	})
}

// TestFoldTrailingQuantizedConstants: the trailing-affine form whose mul
// and add constants are quantized (per tensor and per axis) folds
// exactly: the constants are dequantized with their own types, gamma and
// beta are those real values (instance_norm has no affine here), the
// group_norm takes the add's contract, and the output matches the
// unfolded graph within 1 LSB of it. With the intermediates quantized as
// well, the default pattern refuses and leaves the graph byte-identical.
func TestFoldTrailingQuantizedConstants(t *testing.T) {
	tadd := mustUQ(0.1, 2)
	gcQ := mustUQ(0.25, 2)
	hcQ, err := ops.NewUniformQuantizedPerAxis(tensor.Int8, -128, 127, tensor.Float32, 0,
		[]float64{0.05, 0.1, 0.05, 0.1, 0.05, 0.1, 0.05, 0.1}, []int64{0, 1, 0, 1, 0, 1, 0, 1})
	require.NoError(t, err)
	gcInts := []int8{4, 6, -2, 10, 3, 14, 0, 8}                    // (q−2)·0.25 = 0.5, 1, −1, 2, 0.25, 3, −0.5, 1.5
	hcInts := []int8{2, 1, -2, 3, 6, -2, 8, -3}                    // (q−zp_c)·s_c
	wantBeta := []float32{0.1, 0, -0.1, 0.2, 0.3, -0.3, 0.4, -0.4} // hand-dequantized, each rounded to float32
	base := chain{x: []int64{1, 8, 2, 3}, reshaped: []int64{1, 4, 12}, eps: 1e-5, in: tin, trailing: true,
		gcQ: gcQ, gcInts: gcInts, hcQ: hcQ, hcInts: hcInts, addOut: tadd}

	t.Run("float_intermediates_fold", func(t *testing.T) {
		g, nodes := base.build(t)
		x := input(base.x)
		want := runOne(t, g, x)
		addType := nodes["add"].Type()
		sig := returnType(t, g)
		res, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true})
		require.NoError(t, err)
		require.Equal(t, 1, res.Stats["groupnorm_fold"], res.Notes)
		require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)))
		gn := groupNormNode(t, g)
		assert.True(t, addType.Equal(gn.Type()), ops.TypeDiff(addType, gn.Type()))
		assert.True(t, sig.Equal(returnType(t, g)))
		gv, bv := constValues(t, g, gn.Arg(2)), constValues(t, g, gn.Arg(3))
		wantGamma := []float64{0.5, 1, -1, 2, 0.25, 3, -0.5, 1.5}
		assert.Equal(t, wantGamma, gv)
		for i := range wantBeta {
			assert.Equal(t, math.Float32bits(wantBeta[i]), math.Float32bits(float32(bv[i])), "beta[%d] = %g", i, bv[i])
		}
		got := runOne(t, g, x)
		require.Len(t, got, len(want))
		for i := range want {
			require.LessOrEqual(t, math.Abs(float64(got[i]-want[i])), 0.1*(1+1e-6), "element %d", i)
		}
	})
	t.Run("quantized_intermediates_refused", func(t *testing.T) {
		c := base
		c.out = tout // instance_norm, reshape and mul each round to Tout
		g, nodes := c.build(t)
		requireTrailingRefused(t, g, nodes, "inside the chain", "1 LSB")
	})
}

// TestFoldTrailingChannelsLast: trailing constants that broadcast along
// the last axis (a channels-last affine) are not per-channel along the
// channel axis 1, so the trailing form is refused.
func TestFoldTrailingChannelsLast(t *testing.T) {
	c := chain{x: []int64{1, 8, 2, 8}, reshaped: []int64{1, 4, 32}, eps: 1e-5, trailing: true,
		cshape: []int64{8}, gc: []float32{1, 2, 3, 4, 5, 6, 7, 8}, hc: make([]float32, 8)}
	g, nodes := c.build(t)
	requireTrailingRefused(t, g, nodes, "channel axis 1")
}

// requireTrailingRefused checks that the trailing-affine match at the add
// fails with the given reason and leaves the graph byte-identical, and
// that Canonicalize then folds only the inner reshape → instance_norm →
// reshape (exact on its own: its contract is the bottom reshape's type),
// keeping the mul and the add.
func requireTrailingRefused(t *testing.T, g *fxgraph.Graph, nodes map[string]*fxgraph.Node, reasons ...string) {
	t.Helper()
	before := fxgraph.Format(g)
	plan, why := typed.GroupNormFold{}.Match(nodes["add"])
	require.Nil(t, plan)
	for _, r := range reasons {
		assert.Contains(t, why, r)
	}
	assert.Equal(t, before, fxgraph.Format(g), "a refused match leaves the graph byte-identical")

	x := input(nodes["x"].Type().(ops.TensorType).Shape)
	want := runOne(t, g, x)
	bt := nodes["bottom"].Type()
	res, err := typed.Canonicalize(g, typed.CanonOptions{Debug: true})
	require.NoError(t, err)
	require.NotEmpty(t, res.Notes)
	assert.Contains(t, res.Notes[0], reasons[0])
	gn := groupNormNode(t, g)
	assert.True(t, bt.Equal(gn.Type()), ops.TypeDiff(bt, gn.Type()))
	assert.Len(t, g.FindNodes(fxgraph.CallFunction, mulT), 1)
	assert.Len(t, g.FindNodes(fxgraph.CallFunction, addT), 1)
	got := runOne(t, g, x)
	requireFoldClose(t, want, got)
}

// foldTol bounds the float difference between an unfolded
// reshape -> instance_norm -> reshape chain and its group_norm fold. The
// kernels reproduce PyTorch, where instance_norm takes batch_norm's
// statistics and group_norm ATen's RowwiseMoments: the two reduce in
// different orders, so the fold agrees to a few float32 ulps (as it does in
// PyTorch), while a tiled instead of repeated gamma is off by whole units.
const foldTol = 1e-5

func requireFoldClose(t *testing.T, want, got []float32) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		require.LessOrEqual(t, d, foldTol*(1+math.Abs(float64(want[i]))), "element %d: folded %g, unfolded %g", i, got[i], want[i])
	}
}

// TestFoldGuardsLeaveGraphUnchanged: every failing condition leaves the
// printed graph byte-identical and says why in the notes.
func TestFoldGuardsLeaveGraphUnchanged(t *testing.T) {
	pa, err := ops.NewUniformQuantizedPerAxis(tensor.Int8, -127, 127, tensor.Float32, 0, []float64{0.1, 0.2}, []int64{0, 0})
	require.NoError(t, err)
	cases := []struct {
		name   string
		c      chain
		reason string
	}{
		{"batch_changing_reshape", chain{x: []int64{2, 4, 8, 8}, reshaped: []int64{4, 2, 64}, gamma: []float32{1, 2}, beta: []float32{0, 1}, eps: 1e-5}, "changes the batch"},
		{"groups_do_not_divide", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 4, 6}, gamma: []float32{1, 2, 3, 4}, eps: 1e-5}, "do not divide"},
		{"bottom_not_inverse", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, bottom: []int64{1, 6, 4, 1}, eps: 1e-5}, "not the input's shape"},
		{"non_constant_gamma", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, gammaInput: true, eps: 1e-5}, "not a constant"},
		{"running_stats", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, noStats: true, eps: 1e-5}, "running statistics"},
		{"dynamic_batch", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5, dynamicBatc: true}, "dynamic"},
		{"channels_at_axis_2", chain{x: []int64{1, 1, 8, 5}, reshaped: []int64{1, 4, 10}, eps: 1e-5}, "along axis 2, not the channel axis 1"},
		{"groups_split_channels", chain{x: []int64{2, 2, 6, 5}, reshaped: []int64{2, 4, 15}, eps: 1e-5}, "along axis 2, not the channel axis 1"},
		{"top_reshape_requantizes", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5, in: tin, topElem: mustUQ(0.03, 0), out: tout}, "quantizes its input inside the chain"},
		{"top_reshape_quantizes_float_input", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5, topElem: tin, out: tout}, "quantizes its input inside the chain"},
		{"requantized_instance_norm", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5, in: tin, inOut: mustUQ(0.04, 0), out: tout}, "inside the chain"},
		{"per_axis_gamma_wrong_length", chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, gammaQ: pa, gammaInts: []int8{1, 2}, eps: 1e-5}, "want shape [3]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.c.gammaQ != nil {
				// A [2] per-axis gamma for 3 groups: build by hand.
				tc.c.gammaQ = pa
			}
			g, _ := buildNoVerify(t, tc.c)
			before := fxgraph.Format(g)
			res, err := typed.Canonicalize(g, typed.CanonOptions{})
			require.NoError(t, err)
			assert.False(t, res.Changed)
			assert.Equal(t, before, fxgraph.Format(g))
			require.NotEmpty(t, res.Notes)
			assert.Contains(t, res.Notes[0], tc.reason)
		})
	}
}

// buildNoVerify builds a chain whose guard case may not verify (a
// per-axis gamma of the wrong length is still a well-typed constant).
func buildNoVerify(t *testing.T, c chain) (*fxgraph.Graph, map[string]*fxgraph.Node) {
	t.Helper()
	if c.gammaQ == nil {
		return c.build(t)
	}
	pa := c.gammaQ.(ops.UniformQuantizedPerAxis)
	gq := c
	gq.gammaQ = nil
	g, nodes := gq.build(t)
	g.SetAttr("in_weight_q", tensor.MustFromData(tensor.Int8, []int{len(pa.Scales)}, c.gammaInts))
	restore := g.InsertingBefore(nodes["in"])
	w := g.GetAttr("in_weight_q", mustType(t, []int64{int64(len(pa.Scales))}, pa))
	restore()
	require.NoError(t, g.SetArg(nodes["in"], 1, w))
	return g, nodes
}
