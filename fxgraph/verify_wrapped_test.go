package fxgraph

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestVerifyWrappedNumbers: a Python number in a Tensor argument of
// add/sub/mul/div (a wrapped number, as torchao's reference graphs write
// aten.div.Tensor(%x, 0.024)) passes the argument-kind check, with the
// result type PyTorch gives it; a number where another op wants a Tensor,
// or in a Tensor list, is still reported.
func TestVerifyWrappedNumbers(t *testing.T) {
	i8 := ops.Plain(tensor.Int8, 2, 3)
	f23 := ops.Plain(tensor.Float32, 2, 3)
	tests := []struct {
		name   string
		target string
		args   func(x *Node) []ops.Value
		in     ops.Type
		typ    ops.Type
		bad    bool
	}{
		{"div.Tensor by a float", "aten.div.Tensor", func(x *Node) []ops.Value { return []ops.Value{x, 0.0243646502494812} }, f23, f23, false},
		{"add.Tensor int8 + 12 stays int8", "aten.add.Tensor", func(x *Node) []ops.Value { return []ops.Value{x, int64(12)} }, i8, i8, false},
		{"sub.Tensor int8 - 0.5 is float32", "aten.sub.Tensor", func(x *Node) []ops.Value { return []ops.Value{x, 0.5} }, i8, f23, false},
		{"mul.Tensor by True", "aten.mul.Tensor", func(x *Node) []ops.Value { return []ops.Value{x, true} }, i8, i8, false},
		{"div.Tensor of two floats", "aten.div.Tensor", func(*Node) []ops.Value { return []ops.Value{0.5, 0.25} }, f23, ops.Plain(tensor.Float32), false},
		{"packet clamp with int bounds", "aten.clamp", func(x *Node) []ops.Value { return []ops.Value{x, int64(-128), int64(127)} }, i8, i8, false},
		{"wrong result type", "aten.add.Tensor", func(x *Node) []ops.Value { return []ops.Value{x, 0.5} }, i8, i8, true},
		{"clamp.Tensor with a number", "aten.clamp.Tensor", func(x *Node) []ops.Value { return []ops.Value{x, int64(-128), int64(127)} }, i8, i8, true},
		{"relu of a number", "aten.relu.default", func(*Node) []ops.Value { return []ops.Value{1.5} }, f23, f23, true},
		{"cat of numbers", "aten.cat.default", func(*Node) []ops.Value { return []ops.Value{ops.List{int64(1), int64(2)}} }, f23, f23, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			x := g.Placeholder("x", tt.in)
			n := g.Call(ops.MustParseTarget(tt.target), tt.args(x)...)
			n.SetType(tt.typ)
			g.SetOutput(ops.Tuple{n})
			err := Verify(g, VerifyOptions{RequireTypes: true})
			if !tt.bad {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var ve *VerifyError
			require.True(t, errors.As(err, &ve), "%v", err)
			assert.Contains(t, err.Error(), n.Name())
		})
	}
}
