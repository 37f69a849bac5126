package interp_test

import (
	"errors"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func target(s string) ops.Target { return ops.MustParseTarget(s) }

func ints(v ...int64) ops.List {
	out := make(ops.List, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

// lcg returns n deterministic pseudo-random values in [-1, 1).
func lcg(n int, seed uint64) []float32 {
	out := make([]float32, n)
	s := seed
	for i := range out {
		s = s*6364136223846793005 + 1442695040888963407
		out[i] = float32(int64(s>>40)%2000)/1000 - 1
	}
	return out
}

// param adds a get_attr node for a constant tensor.
func param(g *fxgraph.Graph, name string, shape []int, vals []float32) *fxgraph.Node {
	g.SetAttr(name, tensor.F32(shape, vals...))
	return g.GetAttr(name, nil)
}

func outF32(t *testing.T, v ops.Value) []float32 {
	t.Helper()
	x, ok := v.(*tensor.Tensor)
	require.True(t, ok, "output is %T, want a tensor", v)
	d, err := tensor.Data[float32](x)
	require.NoError(t, err)
	return d
}

func requireClose(t *testing.T, want []float64, got []float32, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		d := math.Abs(float64(got[i]) - want[i])
		if !(d <= tol || d <= tol*math.Abs(want[i])) {
			t.Fatalf("element %d: got %g, want %g (tol %g)", i, got[i], want[i], tol)
		}
	}
}

// TestRunCNN runs conv2d → batch norm → relu → max_pool2d → flatten →
// linear and compares with plain float64 loops.
func TestRunCNN(t *testing.T) {
	const N, C, H, W, O, K, P, classes = 2, 3, 6, 6, 4, 3, 1, 5
	xv := lcg(N*C*H*W, 1)
	cw, cb := lcg(O*C*K*K, 2), lcg(O, 3)
	gamma, beta := lcg(O, 4), lcg(O, 5)
	rmean := lcg(O, 6)
	rvar := make([]float32, O)
	for i, v := range lcg(O, 7) {
		rvar[i] = 0.5 + v*v
	}
	const Hp, Wp = H / 2, W / 2
	feat := O * Hp * Wp
	lw, lb := lcg(classes*feat, 8), lcg(classes, 9)

	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	conv := g.Call(target("aten.conv2d.default"), x, param(g, "conv.weight", []int{O, C, K, K}, cw), param(g, "conv.bias", []int{O}, cb), ints(1, 1), ints(P, P))
	bn := g.Call(target("aten._native_batch_norm_legit_no_training.default"), conv,
		param(g, "bn.weight", []int{O}, gamma), param(g, "bn.bias", []int{O}, beta),
		param(g, "bn.running_mean", []int{O}, rmean), param(g, "bn.running_var", []int{O}, rvar), 0.1, 1e-5)
	bn0 := g.Call(ops.GetItem, bn, int64(0))
	relu := g.Call(target("aten.relu.default"), bn0)
	pool := g.Call(target("aten.max_pool2d.default"), relu, ints(2, 2), ints(2, 2))
	flat := g.Call(target("aten.flatten.using_ints"), pool, int64(1))
	lin := g.Call(target("aten.linear.default"), flat, param(g, "fc.weight", []int{classes, feat}, lw), param(g, "fc.bias", []int{classes}, lb))
	g.SetOutput(ops.Tuple{lin})

	// Reference.
	convOut := make([]float64, N*O*H*W)
	for n := 0; n < N; n++ {
		for o := 0; o < O; o++ {
			for y := 0; y < H; y++ {
				for xx := 0; xx < W; xx++ {
					s := float64(cb[o])
					for c := 0; c < C; c++ {
						for i := 0; i < K; i++ {
							for j := 0; j < K; j++ {
								yy, xj := y-P+i, xx-P+j
								if yy >= 0 && yy < H && xj >= 0 && xj < W {
									s += float64(xv[((n*C+c)*H+yy)*W+xj]) * float64(cw[((o*C+c)*K+i)*K+j])
								}
							}
						}
					}
					// batch norm then relu
					s = (s-float64(rmean[o]))/math.Sqrt(float64(rvar[o])+1e-5)*float64(gamma[o]) + float64(beta[o])
					convOut[((n*O+o)*H+y)*W+xx] = math.Max(s, 0)
				}
			}
		}
	}
	var want []float64
	for n := 0; n < N; n++ {
		pooled := make([]float64, 0, feat)
		for o := 0; o < O; o++ {
			for y := 0; y < Hp; y++ {
				for xx := 0; xx < Wp; xx++ {
					m := math.Inf(-1)
					for i := 0; i < 2; i++ {
						for j := 0; j < 2; j++ {
							m = math.Max(m, convOut[((n*O+o)*H+2*y+i)*W+2*xx+j])
						}
					}
					pooled = append(pooled, m)
				}
			}
		}
		for k := 0; k < classes; k++ {
			s := float64(lb[k])
			for f := 0; f < feat; f++ {
				s += pooled[f] * float64(lw[k*feat+f])
			}
			want = append(want, s)
		}
	}

	var seen []string
	outs, err := interp.Run(g, []*tensor.Tensor{tensor.F32([]int{N, C, H, W}, xv...)}, interp.Options{
		Hook: func(n *fxgraph.Node, v ops.Value) error {
			seen = append(seen, n.Name())
			return nil
		},
		Release: true,
	})
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Equal(t, []int{N, classes}, outs[0].(*tensor.Tensor).Shape())
	// float32 kernels against float64 loops; sums of up to 36 terms.
	const tol = 1e-4
	requireClose(t, want, outF32(t, outs[0]), tol)
	assert.Len(t, seen, g.Len()-1, "the hook sees every node but the output")
	assert.Equal(t, "x", seen[0])
}

// block holds the weights of a pre-norm transformer block with model
// width D, H heads and MLP width F.
type block struct {
	D, H, F                        int
	ln1g, ln1b, ln2g, ln2b         []float32
	wq, bq, wk, bk, wv, bv, wo, bo []float32
	w1, b1, w2, b2                 []float32
}

func newBlock(D, H, F int) block {
	b := block{D: D, H: H, F: F}
	s := uint64(100)
	next := func(n int) []float32 { s++; return lcg(n, s) }
	b.ln1g, b.ln1b, b.ln2g, b.ln2b = next(D), next(D), next(D), next(D)
	b.wq, b.bq, b.wk, b.bk, b.wv, b.bv, b.wo, b.bo = next(D*D), next(D), next(D*D), next(D), next(D*D), next(D), next(D*D), next(D)
	b.w1, b.b1, b.w2, b.b2 = next(F*D), next(F), next(D*F), next(D)
	return b
}

// graph builds the block; explicit selects matmul + softmax attention
// instead of scaled_dot_product_attention.
func (b block) graph(T int, explicit bool) *fxgraph.Graph {
	D, H, F := b.D, b.H, b.F
	hd := D / H
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	ln := func(in *fxgraph.Node, gm, bt []float32, name string) *fxgraph.Node {
		return g.Call(target("aten.layer_norm.default"), in, ints(int64(D)), param(g, name+".weight", []int{D}, gm), param(g, name+".bias", []int{D}, bt))
	}
	lin := func(in *fxgraph.Node, w, bias []float32, out, inF int, name string) *fxgraph.Node {
		return g.Call(target("aten.linear.default"), in, param(g, name+".weight", []int{out, inF}, w), param(g, name+".bias", []int{out}, bias))
	}
	heads := func(in *fxgraph.Node) *fxgraph.Node {
		v := g.Call(target("aten.view.default"), in, ints(1, int64(T), int64(H), int64(hd)))
		return g.Call(target("aten.permute.default"), v, ints(0, 2, 1, 3))
	}
	h1 := ln(x, b.ln1g, b.ln1b, "ln1")
	q := heads(lin(h1, b.wq, b.bq, D, D, "q"))
	k := heads(lin(h1, b.wk, b.bk, D, D, "k"))
	v := heads(lin(h1, b.wv, b.bv, D, D, "v"))
	var att *fxgraph.Node
	if explicit {
		kt := g.Call(target("aten.transpose.int"), k, int64(-2), int64(-1))
		sc := g.Call(target("aten.matmul.default"), q, kt)
		sc = g.Call(target("aten.mul.Scalar"), sc, 1/math.Sqrt(float64(hd)))
		p := g.Call(target("aten.softmax.int"), sc, int64(-1))
		att = g.Call(target("aten.matmul.default"), p, v)
	} else {
		att = g.Call(target("aten.scaled_dot_product_attention.default"), q, k, v)
	}
	merged := g.Call(target("aten.permute.default"), att, ints(0, 2, 1, 3))
	merged = g.Call(target("aten.reshape.default"), merged, ints(1, int64(T), int64(D)))
	res := g.Call(target("aten.add.Tensor"), x, lin(merged, b.wo, b.bo, D, D, "o"))
	h2 := ln(res, b.ln2g, b.ln2b, "ln2")
	mlp := lin(g.Call(target("aten.gelu.default"), lin(h2, b.w1, b.b1, F, D, "fc1")), b.w2, b.b2, D, F, "fc2")
	g.SetOutput(ops.Tuple{g.Call(target("aten.add.Tensor"), res, mlp)})
	return g
}

// reference computes the block with float64 loops.
func (b block) reference(x []float32, T int) []float64 {
	D, H, F := b.D, b.H, b.F
	hd := D / H
	layerNorm := func(in []float64, gm, bt []float32) []float64 {
		out := make([]float64, len(in))
		for t := 0; t < T; t++ {
			row := in[t*D : (t+1)*D]
			var m, v float64
			for _, e := range row {
				m += e
			}
			m /= float64(D)
			for _, e := range row {
				v += (e - m) * (e - m)
			}
			v /= float64(D)
			for i, e := range row {
				out[t*D+i] = (e-m)/math.Sqrt(v+1e-5)*float64(gm[i]) + float64(bt[i])
			}
		}
		return out
	}
	linear := func(in []float64, w, bias []float32, out, inF int) []float64 {
		y := make([]float64, T*out)
		for t := 0; t < T; t++ {
			for o := 0; o < out; o++ {
				s := float64(bias[o])
				for i := 0; i < inF; i++ {
					s += in[t*inF+i] * float64(w[o*inF+i])
				}
				y[t*out+o] = s
			}
		}
		return y
	}
	xf := make([]float64, len(x))
	for i, v := range x {
		xf[i] = float64(v)
	}
	h1 := layerNorm(xf, b.ln1g, b.ln1b)
	q, k, v := linear(h1, b.wq, b.bq, D, D), linear(h1, b.wk, b.bk, D, D), linear(h1, b.wv, b.bv, D, D)
	att := make([]float64, T*D)
	for h := 0; h < H; h++ {
		for i := 0; i < T; i++ {
			sc := make([]float64, T)
			mx := math.Inf(-1)
			for j := 0; j < T; j++ {
				for e := 0; e < hd; e++ {
					sc[j] += q[i*D+h*hd+e] * k[j*D+h*hd+e]
				}
				sc[j] /= math.Sqrt(float64(hd))
				mx = math.Max(mx, sc[j])
			}
			var sum float64
			for j := range sc {
				sc[j] = math.Exp(sc[j] - mx)
				sum += sc[j]
			}
			for e := 0; e < hd; e++ {
				var s float64
				for j := 0; j < T; j++ {
					s += sc[j] / sum * v[j*D+h*hd+e]
				}
				att[i*D+h*hd+e] = s
			}
		}
	}
	o := linear(att, b.wo, b.bo, D, D)
	res := make([]float64, T*D)
	for i := range res {
		res[i] = xf[i] + o[i]
	}
	f1 := linear(layerNorm(res, b.ln2g, b.ln2b), b.w1, b.b1, F, D)
	for i, z := range f1 {
		f1[i] = 0.5 * z * (1 + math.Erf(z/math.Sqrt2))
	}
	f2 := linear(f1, b.w2, b.b2, D, F)
	for i := range res {
		res[i] += f2[i]
	}
	return res
}

func TestRunTransformerBlock(t *testing.T) {
	const T, D, H, F = 5, 8, 2, 16
	b := newBlock(D, H, F)
	xv := lcg(T*D, 42)
	want := b.reference(xv, T)
	for _, tt := range []struct {
		name     string
		explicit bool
	}{{"sdpa", false}, {"matmul softmax", true}} {
		t.Run(tt.name, func(t *testing.T) {
			outs, err := interp.Run(b.graph(T, tt.explicit), []*tensor.Tensor{tensor.F32([]int{1, T, D}, xv...)}, interp.Options{Release: true})
			require.NoError(t, err)
			require.Len(t, outs, 1)
			assert.Equal(t, []int{1, T, D}, outs[0].(*tensor.Tensor).Shape())
			// float32 kernels against float64 loops through two layer
			// norms, attention and a 16-wide MLP.
			const tol = 1e-4
			requireClose(t, want, outF32(t, outs[0]), tol)
		})
	}
}

func TestRunNamedPacketAndModule(t *testing.T) {
	g := fxgraph.New()
	a := g.Placeholder("a", nil)
	b := g.Placeholder("b", nil)
	sum := g.Call(ops.Packet{NS: "aten", Name: "add"}, a, b) // resolves to add.Tensor
	scaled := g.Call(ops.Packet{NS: "aten", Name: "mul"}, sum, 2.0)
	g.SetAttr("obs", &recorder{})
	obs := g.CallModule("obs", scaled)
	g.SetOutput(ops.List{obs, sum})

	outs, err := interp.RunNamed(g, map[string]ops.Value{"a": tensor.F32([]int{2}, 1, 2), "b": tensor.F32([]int{2}, 10, 20)}, interp.Options{})
	require.NoError(t, err)
	require.Len(t, outs, 2)
	assert.Equal(t, []float32{22, 44}, outF32(t, outs[0]))
	assert.Equal(t, []float32{11, 22}, outF32(t, outs[1]))
	m, _ := g.Attr("obs")
	assert.Equal(t, 1, m.(*recorder).calls)

	_, err = interp.RunNamed(g, map[string]ops.Value{"a": tensor.F32([]int{1}, 1), "c": tensor.F32([]int{1}, 1)}, interp.Options{})
	require.ErrorIs(t, err, interp.ErrInputs)
	assert.Contains(t, err.Error(), `"c"`)
}

// recorder is an identity module that counts its calls, like an observer.
type recorder struct{ calls int }

func (r *recorder) Forward(args []ops.Value) (ops.Value, error) {
	r.calls++
	return args[0], nil
}

type panicker struct{}

func (panicker) Forward([]ops.Value) (ops.Value, error) { panic("boom") }

func TestRunErrorsNameTheNode(t *testing.T) {
	noKernel := ops.NewRegistry()
	_, err := noKernel.RegisterSchema("aten::relu(Tensor self) -> Tensor", nil, nil)
	require.NoError(t, err)

	type build func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node
	tests := []struct {
		name     string
		build    build
		input    *tensor.Tensor
		reg      *ops.Registry
		sentinel error
		node     string
		mention  string
	}{
		{"missing kernel", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			return g.Call(target("aten.relu.default"), x)
		}, tensor.F32([]int{1}, 1), noKernel, interp.ErrNoKernel, "relu", "aten.relu.default"},
		{"unknown target", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			return g.Call(target("aten.frobnicate.default"), x)
		}, tensor.F32([]int{1}, 1), nil, interp.ErrUnknownTarget, "frobnicate", "not registered"},
		{"shape mismatch", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			return g.Call(target("aten.linear.default"), x, param(g, "w", []int{3, 4}, make([]float32, 12)))
		}, tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6), nil, tensor.ErrShape, "linear", `"weight"`},
		{"bad dtype", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			return g.Call(target("aten.softmax.int"), x, int64(0))
		}, tensor.MustFromData(tensor.Int32, []int{2}, []int32{1, 2}), nil, kernels.ErrUnsupportedDType, "softmax", "int32"},
		{"bad argument kind", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			return g.Call(target("aten.transpose.int"), x, "zero", int64(1))
		}, tensor.F32([]int{1, 1}, 1), nil, kernels.ErrBadArgument, "transpose", `"dim0"`},
		{"bad schema call", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			return g.Call(target("aten.relu.default"), x, x)
		}, tensor.F32([]int{1}, 1), nil, nil, "relu", "positional"},
		{"getitem out of range", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			mp := g.Call(target("aten.max_pool2d_with_indices.default"), x, ints(1, 1))
			return g.Call(ops.GetItem, mp, int64(2))
		}, tensor.F32([]int{1, 1, 1}, 1), nil, interp.ErrInputs, "getitem", "out of range"},
		{"missing attribute", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			return g.GetAttr("nowhere", nil)
		}, tensor.F32([]int{1}, 1), nil, interp.ErrAttr, "nowhere", "nowhere"},
		{"module panics", func(g *fxgraph.Graph, x *fxgraph.Node) *fxgraph.Node {
			g.SetAttr("bad", panicker{})
			return g.CallModule("bad", x)
		}, tensor.F32([]int{1}, 1), nil, interp.ErrPanic, "bad", "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fxgraph.New()
			x := g.Placeholder("x", nil)
			n := tt.build(g, x)
			g.SetOutput(n)
			_, err := interp.Run(g, []*tensor.Tensor{tt.input}, interp.Options{Registry: tt.reg})
			require.Error(t, err)
			var ne *interp.NodeError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, n.Name(), ne.Node)
			assert.Contains(t, ne.Node, tt.node)
			if tt.sentinel != nil {
				assert.ErrorIs(t, err, tt.sentinel)
			}
			assert.Contains(t, err.Error(), tt.mention)
			assert.Contains(t, err.Error(), `node "`+n.Name()+`"`)
		})
	}
}

func TestRunInputsAndHook(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	r := g.Call(target("aten.relu.default"), x)
	g.SetOutput(r)

	_, err := interp.Run(g, nil, interp.Options{})
	require.ErrorIs(t, err, interp.ErrInputs)
	assert.Contains(t, err.Error(), `node "x"`)

	_, err = interp.Run(g, []*tensor.Tensor{tensor.F32([]int{1}, 1), tensor.F32([]int{1}, 1)}, interp.Options{})
	require.ErrorIs(t, err, interp.ErrInputs)

	stop := errors.New("stop")
	_, err = interp.Run(g, []*tensor.Tensor{tensor.F32([]int{1}, -1)}, interp.Options{Hook: func(n *fxgraph.Node, v ops.Value) error {
		if n == r {
			return stop
		}
		return nil
	}})
	require.ErrorIs(t, err, stop)
	var ne *interp.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, r.Name(), ne.Node)

	in := tensor.F32([]int{2}, -1, 2)
	outs, err := interp.Run(g, []*tensor.Tensor{in}, interp.Options{Release: true})
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 2}, outF32(t, outs[0]))
	assert.Equal(t, []float32{-1, 2}, outF32(t, in), "inputs are not modified")
}

// TestCallModuleOption: Options.CallModule runs call_module nodes in
// place of Forward, with the node, the module and the argument values.
func TestCallModuleOption(t *testing.T) {
	g := fxgraph.New()
	a := g.Placeholder("a", nil)
	rec := &recorder{}
	g.SetAttr("obs", rec)
	obs := g.CallModule("obs", a)
	g.SetOutput(ops.Tuple{obs})
	var got []string
	outs, err := interp.Run(g, []*tensor.Tensor{tensor.F32([]int{2}, 1, 2)}, interp.Options{
		CallModule: func(n *fxgraph.Node, m fxgraph.Module, args []ops.Value) (ops.Value, error) {
			got = append(got, n.Name())
			assert.Same(t, rec, m)
			assert.Equal(t, []float32{1, 2}, outF32(t, args[0]))
			return tensor.F32([]int{1}, 7), nil
		},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"obs"}, got)
	assert.Equal(t, 0, rec.calls, "Forward is not called")
	assert.Equal(t, []float32{7}, outF32(t, outs[0]))
}

// deferGraph is out = relu(x) + w * 2, with c = mul(w, 2), computed
// from a get_attr alone, placed before relu(x).
func deferGraph(w *tensor.Tensor) *fxgraph.Graph {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	g.SetAttr("w", w)
	wn := g.GetAttr("w", nil)
	c := g.Call(ops.MustOverload("aten.mul.Scalar"), wn, 2.0)
	r := g.Call(ops.MustOverload("aten.relu.default"), x)
	out := g.Call(ops.MustOverload("aten.add.Tensor"), r, c)
	g.SetOutput(ops.Tuple{out})
	return g
}

// TestReleaseDefersConstants: with Release, a node computed from
// attributes alone runs when its first user needs it (after relu here,
// which the order of two failures shows), gives the same values, and its
// failure is reported as its own, as in a run in program order.
func TestReleaseDefersConstants(t *testing.T) {
	x := tensor.F32([]int{3}, -1, 0, 2)
	g := deferGraph(tensor.F32([]int{3}, 1, 2, 3))
	want, err := interp.Run(g, []*tensor.Tensor{x}, interp.Options{})
	require.NoError(t, err)
	got, err := interp.Run(g, []*tensor.Tensor{x}, interp.Options{Release: true})
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 8}, outF32(t, got[0]))
	assert.Equal(t, outF32(t, want[0]), outF32(t, got[0]))

	// A string attribute makes the mul fail: the error names the mul,
	// with or without deferral.
	bad := deferGraph(tensor.F32([]int{3}, 1, 2, 3))
	bad.SetAttr("w", "not a tensor")
	_, e1 := interp.Run(bad, []*tensor.Tensor{x}, interp.Options{})
	_, e2 := interp.Run(bad, []*tensor.Tensor{x}, interp.Options{Release: true})
	require.Error(t, e1)
	require.Error(t, e2)
	assert.Equal(t, e1.Error(), e2.Error())
	var ne *interp.NodeError
	require.ErrorAs(t, e2, &ne)
	assert.Equal(t, "mul_scalar", ne.Node)

	// The order shows: relu of a string input fails first when mul is
	// deferred, mul first in program order.
	// With a nil input relu fails too: first when mul is deferred, after
	// mul in program order.
	_, e3 := interp.Run(bad, []*tensor.Tensor{nil}, interp.Options{Release: true})
	require.ErrorAs(t, e3, &ne)
	assert.Equal(t, "relu_default", ne.Node)
	_, e4 := interp.Run(bad, []*tensor.Tensor{nil}, interp.Options{})
	require.ErrorAs(t, e4, &ne)
	assert.Equal(t, "mul_scalar", ne.Node)
}

// TestHookAnyOrder: with HookAnyOrder the constant mul is still deferred
// when a Hook is set, and the Hook sees it when its user needs it (after
// relu); without it the Hook sees program order.
func TestHookAnyOrder(t *testing.T) {
	x := tensor.F32([]int{3}, -1, 0, 2)
	g := deferGraph(tensor.F32([]int{3}, 1, 2, 3))
	order := func(anyOrder bool) []string {
		var seen []string
		_, err := interp.Run(g, []*tensor.Tensor{x}, interp.Options{Release: true, HookAnyOrder: anyOrder,
			Hook: func(n *fxgraph.Node, v ops.Value) error {
				if n.Op() == fxgraph.CallFunction {
					seen = append(seen, n.Name())
				}
				if n.Name() == "mul_scalar" {
					assert.Equal(t, []float32{2, 4, 6}, outF32(t, v))
				}
				return nil
			}})
		require.NoError(t, err)
		return seen
	}
	assert.Equal(t, []string{"mul_scalar", "relu_default", "add_tensor"}, order(false))
	assert.Equal(t, []string{"relu_default", "mul_scalar", "add_tensor"}, order(true))
}

// TestReleaseDeferredChain: with Release, a deferred constant read only
// by another deferred constant (c1 = w * 2, c2 = c1 * 3) is dropped once
// c2 is computed, not kept to the end of the run: by the time the last
// node runs, c1's tensor has been collected.
func TestReleaseDeferredChain(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	g.SetAttr("w", tensor.F32([]int{1024}, make([]float32, 1024)...))
	wn := g.GetAttr("w", nil)
	c1 := g.Call(ops.MustOverload("aten.mul.Scalar"), wn, 2.0)
	c2 := g.Call(ops.MustOverload("aten.mul.Scalar"), c1, 3.0)
	a := g.Call(ops.MustOverload("aten.add.Tensor"), x, c2)
	last := g.Call(ops.MustOverload("aten.relu.default"), a)
	g.SetOutput(ops.Tuple{last})

	var collected atomic.Bool
	released := false
	_, err := interp.Run(g, []*tensor.Tensor{tensor.F32([]int{1024}, make([]float32, 1024)...)}, interp.Options{
		Release: true, HookAnyOrder: true,
		Hook: func(n *fxgraph.Node, v ops.Value) error {
			switch n {
			case c1:
				runtime.SetFinalizer(v.(*tensor.Tensor), func(*tensor.Tensor) { collected.Store(true) })
			case last:
				for range 200 {
					runtime.GC()
					if collected.Load() {
						released = true
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
			return nil
		}})
	require.NoError(t, err)
	assert.True(t, released, "c1's value was still held when the run's last node ran")
}
