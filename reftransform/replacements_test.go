package reftransform_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/reftransform"
)

// replacementNodes are the call_function nodes torch.export records when
// it traces torchao's replacement functions (reference_representation_rewrite.py),
// written down by hand from their source: names "name | target", in order.
// torch.clamp / aten.clamp with the tensor example bounds traces to
// clamp.Tensor, which remove_tensor_overload_for_qdq_ops makes the packet
// aten.clamp; with Python-number bounds (the dynamic linear's activation
// bounds, the add entry's -128/127, the per-channel bounds) it is
// clamp.default. Arithmetic on scales is a node (the examples are
// tensors), so bound scales appear as literal operands. "round" is a
// Python builtin, so FX names the first round node round_1. The entries
// covered by the fixture goldens (quantize/dequantize per tensor and per
// channel, add) are checked there against torchao's own listings.
var replacementNodes = map[string][]string{
	"static_linear": {
		"clamp | aten.clamp", "clamp_1 | aten.clamp", "to | aten.to.dtype", "to_1 | aten.to.dtype",
		"sub | aten.sub.Tensor", "sub_1 | aten.sub.Tensor", "out_dtype | higher_order.out_dtype.default",
		"mul | aten.mul.Tensor", "out_dtype_1 | higher_order.out_dtype.default", "add | aten.add.Tensor",
		"mul_1 | aten.mul.Tensor", "div | aten.div.Tensor", "out_dtype_2 | higher_order.out_dtype.default",
		"add_1 | aten.add.Tensor", "clamp_2 | aten.clamp", "to_2 | aten.to.dtype",
	},
	"static_conv2d": {
		"clamp | aten.clamp", "clamp_1 | aten.clamp", "to | aten.to.dtype", "to_1 | aten.to.dtype",
		"sub | aten.sub.Tensor", "sub_1 | aten.sub.Tensor", "out_dtype | higher_order.out_dtype.default",
		"mul | aten.mul.Tensor", "out_dtype_1 | higher_order.out_dtype.default",
		"unsqueeze | aten.unsqueeze.default", "unsqueeze_1 | aten.unsqueeze.default", "add | aten.add.Tensor",
		"mul_1 | aten.mul.Tensor", "div | aten.div.Tensor", "out_dtype_2 | higher_order.out_dtype.default",
		"add_1 | aten.add.Tensor", "clamp_2 | aten.clamp", "to_2 | aten.to.dtype",
	},
	"add_relu": {
		"to | aten.to.dtype", "to_1 | aten.to.dtype",
		"sub | aten.sub.Tensor", "div | aten.div.Tensor", "out_dtype | higher_order.out_dtype.default",
		"sub_1 | aten.sub.Tensor", "div_1 | aten.div.Tensor", "out_dtype_1 | higher_order.out_dtype.default",
		"add | aten.add.Tensor", "add_1 | aten.add.Tensor", "clamp | aten.clamp", "to_2 | aten.to.dtype",
	},
	"add": {
		"to | aten.to.dtype", "to_1 | aten.to.dtype",
		"div | aten.div.Tensor", "sub | aten.sub.Tensor", "mul | aten.mul.Tensor", "round_1 | aten.round.default", "to_2 | aten.to.dtype",
		"div_1 | aten.div.Tensor", "sub_1 | aten.sub.Tensor", "mul_1 | aten.mul.Tensor", "round_2 | aten.round.default", "to_3 | aten.to.dtype",
		"add | aten.add.Tensor", "add_1 | aten.add.Tensor", "clamp | aten.clamp.default", "to_4 | aten.to.dtype",
	},
	"max_pool2d": {
		"clamp | aten.clamp", "to | aten.to.dtype", "sub | aten.sub.Tensor",
		"max_pool2d_with_indices | aten.max_pool2d_with_indices.default", "getitem | operator.getitem",
		"div | aten.div.Tensor", "mul | aten.mul.Tensor", "add | aten.add.Tensor", "clamp_1 | aten.clamp", "to_1 | aten.to.dtype",
	},
	"dynamic_linear": {
		"choose_qparams | quantized_decomposed.choose_qparams.tensor",
		"getitem | operator.getitem", "getitem_1 | operator.getitem",
		"div | aten.div.Tensor", "round_1 | aten.round.default", "to | aten.to.dtype", "add | aten.add.Tensor",
		"clamp | aten.clamp.default", "to_1 | aten.to.dtype", "clamp_1 | aten.clamp",
		"to_2 | aten.to.dtype", "to_3 | aten.to.dtype", "sub | aten.sub.Tensor", "sub_1 | aten.sub.Tensor",
		"out_dtype | higher_order.out_dtype.default", "mul | aten.mul.Tensor",
		"out_dtype_1 | higher_order.out_dtype.default", "add_1 | aten.add.Tensor",
		"mul_1 | aten.mul.Tensor", "mul_2 | aten.mul.Tensor",
	},
	"quantize_per_tensor": {
		"div | aten.div.Tensor", "round_1 | aten.round.default", "to | aten.to.dtype",
		"add | aten.add.Tensor", "clamp | aten.clamp", "to_1 | aten.to.dtype",
	},
	"dequantize_per_tensor": {
		"clamp | aten.clamp", "to | aten.to.dtype", "sub | aten.sub.Tensor", "mul | aten.mul.Tensor", "to_1 | aten.to.dtype",
	},
	"quantize_per_channel": {
		"transpose | aten.transpose.int", "div | aten.div.Tensor", "round_1 | aten.round.default", "to | aten.to.dtype",
		"add | aten.add.Tensor", "clamp | aten.clamp.default", "transpose_1 | aten.transpose.int", "to_1 | aten.to.dtype",
	},
	"dequantize_per_channel": {
		"clamp | aten.clamp.default", "transpose | aten.transpose.int", "to | aten.to.dtype", "sub | aten.sub.Tensor",
		"to_1 | aten.to.dtype", "mul | aten.mul.Tensor", "transpose_1 | aten.transpose.int",
	},
}

// TestReplacementNodes builds each entry's replacement on its test graph
// and compares the new nodes, in graph order, with replacementNodes. The
// test graphs mostly avoid the replacement's names (their q/dq nodes are
// quantize_per_tensor_default and so on, the original add is add_tensor);
// where the original graph already holds a name (the dynamic linear's
// getitem), FX gives the copy the next free suffix, so that node is
// compared by target only.
func TestReplacementNodes(t *testing.T) {
	for _, tc := range entryCases() {
		want, ok := replacementNodes[tc.entry]
		require.True(t, ok, "no expected nodes for entry %s", tc.entry)
		t.Run(tc.entry, func(t *testing.T) {
			g, _ := tc.build(tensor.Int8, -128, 127)
			before := map[string]bool{}
			for n := range g.All() {
				before[n.Name()] = true
			}
			_, err := reftransform.RemoveTensorOverloadForQDQOps(g)
			require.NoError(t, err)
			n, err := reftransform.RunEntry(g, tc.entry)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			var got []string
			for n := range g.All() {
				if n.Op() == fxgraph.CallFunction && !before[n.Name()] {
					got = append(got, n.Name()+" | "+n.Target().String())
				}
			}
			for i := range want {
				// A name the original graph held is given the next free
				// suffix, as FX does (getitem -> getitem_2).
				if name, _, _ := cutBar(want[i]); before[name] && i < len(got) {
					_, wt, _ := cutBar(want[i])
					_, gt, _ := cutBar(got[i])
					assert.Equal(t, wt, gt, "node %d", i)
					want[i] = got[i]
				}
			}
			assert.Equal(t, want, got)
		})
	}
}

func cutBar(s string) (string, string, bool) {
	for i := 0; i+3 <= len(s); i++ {
		if s[i:i+3] == " | " {
			return s[:i], s[i+3:], true
		}
	}
	return s, "", false
}
