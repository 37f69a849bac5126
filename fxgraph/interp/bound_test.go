package interp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// A node whose recorded result is over the bound is refused before its
// kernel runs, with an error naming the node and the type.
func TestMaxTensorBytes(t *testing.T) {
	build := func(shape ...int64) *fxgraph.Graph {
		g := fxgraph.New()
		x := g.Placeholder("x", nil)
		r := g.Call(target("aten.relu.default"), x)
		r.SetType(ops.TensorType{Shape: shape, Elem: ops.Scalar{DType: tensor.Float32}})
		g.SetOutput(r)
		return g
	}
	in := []*tensor.Tensor{tensor.F32([]int{2, 3}, 1, -2, 3, -4, 5, -6)}
	// recorded as 2x3 float32 = 24 bytes: within a 24-byte bound
	if _, err := interp.Run(build(2, 3), in, interp.Options{MaxTensorBytes: 24}); err != nil {
		t.Fatalf("24 bytes within a 24-byte bound: %v", err)
	}
	for _, c := range []struct {
		shape []int64
		opts  interp.Options
		want  string
	}{
		{[]int64{2, 3}, interp.Options{MaxTensorBytes: 23}, `interp: node "relu_default" (aten.relu.default): result too large: recorded result f32[2, 3] needs 24 bytes, more than 23 (Options.MaxTensorBytes)`},
		// the default bound, 4 GiB: 2^30 float32 is exactly 4 GiB, one more row is over
		{[]int64{1<<30 + 1}, interp.Options{}, "needs 4294967300 bytes, more than 4294967296"},
		// an element count that wraps around int64
		{[]int64{1 << 62, 4}, interp.Options{}, "result too large: recorded result"},
	} {
		_, err := interp.Run(build(c.shape...), in, c.opts)
		if err == nil || !errors.Is(err, interp.ErrTooLarge) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("shape %v: error %v, want ErrTooLarge containing %q", c.shape, err, c.want)
		}
	}
	// negative: no bound (the recorded type is then only a label)
	if _, err := interp.Run(build(1<<40), in, interp.Options{MaxTensorBytes: -1}); err != nil {
		t.Errorf("no bound: %v", err)
	}
}
