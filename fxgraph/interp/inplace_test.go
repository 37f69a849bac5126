package interp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestInPlaceOpsRebindTheirArgument: after an op whose schema writes an
// argument (Tensor(a!)), later users of that argument's node see the new
// value, as in PyTorch. The graph is
//
//	r = relu_(y)          y's later users see relu(y); r is y itself
//	s = add(y, 1)         = relu(y) + 1, a new tensor
//	m = mul_(y, 2)        y (and r, its alias) become 2*relu(y)
//	z = add_(w, y, alpha=3) (keyword alpha); w becomes w + 3*y
//	return (y, r, s, m, w, z)
//
// Expected values by hand (and what PyTorch 2.14 eager gives for the same
// aten calls): y = [-1, 2, -3], w = [10, 10, 10];
// relu(y) = [0, 2, 0]; s = [1, 3, 1]; 2*relu(y) = [0, 4, 0];
// w + 3*[0, 4, 0] = [10, 22, 10].
func TestInPlaceOpsRebindTheirArgument(t *testing.T) {
	g := fxgraph.New()
	y := g.Placeholder("y", nil)
	w := g.Placeholder("w", nil)
	r := g.Call(target("aten.relu_.default"), y)
	s := g.Call(target("aten.add.Tensor"), y, 1.0)
	m := g.Call(target("aten.mul_.Tensor"), y, 2.0)
	z := g.CallKw(target("aten.add_.Tensor"), []ops.Value{w, y}, []fxgraph.Kwarg{{Name: "alpha", Value: int64(3)}})
	g.SetOutput(ops.Tuple{y, r, s, m, w, z})

	yIn := tensor.F32([]int{3}, -1, 2, -3)
	wIn := tensor.F32([]int{3}, 10, 10, 10)
	outs, err := interp.Run(g, []*tensor.Tensor{yIn, wIn}, interp.Options{})
	require.NoError(t, err)
	require.Len(t, outs, 6)
	assert.Equal(t, []float32{0, 4, 0}, outF32(t, outs[0]), "y after relu_ and mul_")
	assert.Equal(t, []float32{0, 4, 0}, outF32(t, outs[1]), "relu_ result: an alias of y, so mul_ shows through it, as in PyTorch")
	assert.Equal(t, []float32{1, 3, 1}, outF32(t, outs[2]), "add sees the relu'd y")
	assert.Equal(t, []float32{0, 4, 0}, outF32(t, outs[3]), "mul_ result")
	assert.Equal(t, []float32{10, 22, 10}, outF32(t, outs[4]), "w after add_")
	assert.Equal(t, []float32{10, 22, 10}, outF32(t, outs[5]), "add_ result")

	// The caller's tensors are not written.
	assert.Equal(t, []float32{-1, 2, -3}, outF32(t, yIn))
	assert.Equal(t, []float32{10, 10, 10}, outF32(t, wIn))

	// With Release the rebinding holds too (y stays live until its last user).
	outs, err = interp.Run(g, []*tensor.Tensor{yIn, wIn}, interp.Options{Release: true})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 3, 1}, outF32(t, outs[2]))
	assert.Equal(t, []float32{10, 22, 10}, outF32(t, outs[4]))
}

// TestInPlacePacketAndFunctionalUnchanged: a packet target resolved to an
// in-place overload rebinds too; a functional op leaves its input alone.
func TestInPlacePacketAndFunctionalUnchanged(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	h := g.Call(target("aten.hardtanh.default"), x, 0.0, 6.0) // functional: x unchanged
	after := g.Call(target("aten.neg.default"), x)
	hs := g.Call(ops.Packet{NS: "aten", Name: "hardswish_"}, x)
	last := g.Call(target("aten.add.Tensor"), x, 0.0)
	g.SetOutput(ops.Tuple{h, after, hs, last})

	// hardswish(3) = 3*min(max(6,0),6)/6 = 3; hardswish(-1) = -1*2/6 = -1/3;
	// hardswish(7) = 7.
	outs, err := interp.Run(g, []*tensor.Tensor{tensor.F32([]int{3}, 3, -1, 7)}, interp.Options{})
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 0, 6}, outF32(t, outs[0]))
	assert.Equal(t, []float32{-3, 1, -7}, outF32(t, outs[1]))
	third := float32(-1) * 2 / 6
	assert.Equal(t, []float32{3, third, 7}, outF32(t, outs[2]))
	assert.Equal(t, []float32{3, third, 7}, outF32(t, outs[3]), "add after hardswish_ sees the new x")
}

// TestInPlaceThroughViews: a mutation through a view shows through every
// live alias of the same storage, as in PyTorch:
//
//	v = view(x, [2, 3]); w = view(x, [3, 2]) (taken before the mutation)
//	relu_(v)             x, v and w all become relu(x)
//	s = slice(x, 0, 0, 2); mul_(s, 10)   the first two elements of x, v, w ×10
//
// By hand, x = [-1, 2, -3, 4, -5, 6]: relu gives [0, 2, 0, 4, 0, 6]; then
// the first two ×10 give [0, 20, 0, 4, 0, 6]. (PyTorch 2.14 eager gives
// the same values for the same aten calls.)
func TestInPlaceThroughViews(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	v := g.Call(target("aten.view.default"), x, ints(2, 3))
	w := g.Call(target("aten.view.default"), x, ints(3, 2))
	g.Call(target("aten.relu_.default"), v)
	afterRelu := g.Call(target("aten.add.Tensor"), w, 0.0)
	s := g.Call(target("aten.slice.Tensor"), x, int64(0), int64(0), int64(2))
	g.Call(target("aten.mul_.Tensor"), s, 10.0)
	g.SetOutput(ops.Tuple{x, v, w, afterRelu, s})

	in := tensor.F32([]int{6}, -1, 2, -3, 4, -5, 6)
	outs, err := interp.Run(g, []*tensor.Tensor{in}, interp.Options{})
	require.NoError(t, err)
	require.Len(t, outs, 5)
	want := []float32{0, 20, 0, 4, 0, 6}
	for i, name := range []string{"x", "v", "w"} {
		vals, err := outs[i].(*tensor.Tensor).Float64s()
		require.NoError(t, err)
		got := make([]float32, len(vals))
		for j, f := range vals {
			got[j] = float32(f)
		}
		assert.Equal(t, want, got, name)
	}
	assert.Equal(t, []int{3, 2}, outs[2].(*tensor.Tensor).Shape())
	assert.Equal(t, []float32{0, 2, 0, 4, 0, 6}, outF32(t, outs[3]), "w between the two mutations")
	assert.Equal(t, []float32{0, 20}, outF32(t, outs[4]), "the mutated slice")
	assert.Equal(t, []float32{-1, 2, -3, 4, -5, 6}, outF32(t, in), "the caller's tensor is not written")
}
