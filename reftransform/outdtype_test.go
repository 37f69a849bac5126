package reftransform_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/reftransform"
)

// outDTypeArgs are the args columns of the out_dtype rows in the fixture
// listing of each rewritten test graph, "name | args", written from
// torchao's replacement functions: out_dtype(torch.ops.aten.linear.default,
// torch.int32, x_i16 - x_zero_point, weight_i16 - weight_zero_point, None),
// out_dtype(torch.ops.aten.div.Tensor, torch.int32, bias_fp32, bias_scale),
// out_dtype(torch.ops.aten.mul.Tensor, torch.int32, acc_i32, multiplier),
// the convolution with its stride, padding, dilation, transposed,
// output_padding and groups, and add_relu's two rescales. The graph holds
// the OpOverload object, so repr(args) shows its repr, as in torchao's
// listings. %b is the test graphs' bias attribute.
var outDTypeArgs = map[string][][]string{
	"static_linear": {{
		"out_dtype | (<OpOverload(op='aten.linear', overload='default')>, torch.int32, %sub, %sub_1, None)",
		"out_dtype_1 | (<OpOverload(op='aten.div', overload='Tensor')>, torch.int32, %b, %mul)",
		"out_dtype_2 | (<OpOverload(op='aten.mul', overload='Tensor')>, torch.int32, %add, %div)",
	}},
	"static_conv2d": {{
		"out_dtype | (<OpOverload(op='aten.convolution', overload='default')>, torch.int32, %sub, %sub_1, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)",
		"out_dtype_1 | (<OpOverload(op='aten.div', overload='Tensor')>, torch.int32, %b, %mul)",
		"out_dtype_2 | (<OpOverload(op='aten.mul', overload='Tensor')>, torch.int32, %add, %div)",
	}, {
		"out_dtype | (<OpOverload(op='aten.convolution', overload='default')>, torch.int32, %sub, %sub_1, None, [2, 2], [0, 0], [1, 1], False, [0, 0], 2)",
		"out_dtype_1 | (<OpOverload(op='aten.div', overload='Tensor')>, torch.int32, %b, %mul)",
		"out_dtype_2 | (<OpOverload(op='aten.mul', overload='Tensor')>, torch.int32, %add, %div)",
	}},
	"add_relu": {{
		"out_dtype | (<OpOverload(op='aten.mul', overload='Tensor')>, torch.int32, %sub, %div)",
		"out_dtype_1 | (<OpOverload(op='aten.mul', overload='Tensor')>, torch.int32, %sub_1, %div_1)",
	}},
	"dynamic_linear": {{
		"out_dtype | (<OpOverload(op='aten.linear', overload='default')>, torch.int32, %sub, %sub_1, None)",
		"out_dtype_1 | (<OpOverload(op='aten.div', overload='Tensor')>, torch.int32, %b, %mul)",
	}},
}

// TestOutDTypeOperatorArgument rewrites each entry's test graph and checks
// that every out_dtype node holds its op as an ops.Overload value, that the
// listing rows show it as torchao's do, and that the listing reads back
// into the same operator values.
func TestOutDTypeOperatorArgument(t *testing.T) {
	seen := map[string]int{}
	for _, tc := range entryCases() {
		cases, ok := outDTypeArgs[tc.entry]
		if !ok {
			continue
		}
		k := seen[tc.entry]
		seen[tc.entry]++
		require.Less(t, k, len(cases), "no expected rows for case %d of %s", k, tc.entry)
		want := cases[k]
		t.Run(tc.entry, func(t *testing.T) {
			g, _ := tc.build(tensor.Int8, -128, 127)
			_, err := reftransform.RemoveTensorOverloadForQDQOps(g)
			require.NoError(t, err)
			_, err = reftransform.RunEntry(g, tc.entry)
			require.NoError(t, err)
			var got []string
			for n := range g.All() {
				if n.Op() != fxgraph.CallFunction || n.Target() != ops.MustOverload("higher_order.out_dtype.default") {
					continue
				}
				_, isOp := n.Arg(0).(ops.Overload)
				assert.True(t, isOp, "%s: op is %T, want ops.Overload", n.Name(), n.Arg(0))
				fields := strings.Split(listingRow(t, g, n), " | ")
				require.Len(t, fields, 5)
				got = append(got, fields[0]+" | "+fields[3])
			}
			assert.Equal(t, want, got)

			rows, err := fxgraph.ParseListingString(fxgraph.FormatListing(g))
			require.NoError(t, err)
			g2, err := fxgraph.GraphFromListing(rows)
			require.NoError(t, err)
			assert.Equal(t, fxgraph.FormatListing(g), fxgraph.FormatListing(g2))
		})
	}
}

// listingRow returns the row of n in FormatListing(g).
func listingRow(t *testing.T, g *fxgraph.Graph, n *fxgraph.Node) string {
	t.Helper()
	for _, l := range strings.Split(fxgraph.FormatListing(g), "\n") {
		if strings.HasPrefix(l, n.Name()+" | ") {
			return l
		}
	}
	require.FailNow(t, "no listing row for "+n.Name())
	return ""
}
