package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops/tensor"
)

// A dtype with no kernel arithmetic (float8, complex) is representable:
// a graph that uses it reads, prints and verifies like any other, and only
// running it fails, with an error naming the node and the dtype.
func TestDTypeWithoutKernel(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		inputs   func(t *testing.T) []*tensor.Tensor
		wantNode string
		wantMsg  string
	}{
		{
			name: "cast to float8",
			src: `graph():
    %x : f32[4] [num_users=1] = placeholder[target=x]
    %to : f8e4m3fn[4] [num_users=1] = call_function[target=torch.ops.aten.to.dtype](args = (%x, torch.float8_e4m3fn), kwargs = {})
    %relu : f8e4m3fn[4] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%to,), kwargs = {})
    return (relu,)
`,
			inputs: func(t *testing.T) []*tensor.Tensor {
				return []*tensor.Tensor{tensor.F32([]int{4}, 1, -2, 3, -4)}
			},
			wantNode: "to",
			wantMsg:  "float8_e4m3fn",
		},
		{
			name: "float8 input",
			src: `graph():
    %x : f8e4m3fn[4] [num_users=1] = placeholder[target=x]
    %relu : f8e4m3fn[4] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})
    return (relu,)
`,
			inputs: func(t *testing.T) []*tensor.Tensor {
				x, err := tensor.Zeros(tensor.Float8E4M3FN, 4)
				require.NoError(t, err)
				return []*tensor.Tensor{x}
			},
			wantNode: "relu",
			wantMsg:  "float8_e4m3fn",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := fxgraph.ParseString(tc.src)
			require.NoError(t, err)
			assert.Equal(t, tc.src, fxgraph.Format(g), "printing reproduces the input")
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true}))

			_, err = interp.Run(g, tc.inputs(t), interp.Options{})
			require.Error(t, err)
			var ne *interp.NodeError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, tc.wantNode, ne.Node)
			assert.ErrorContains(t, err, `node "`+tc.wantNode+`"`)
			assert.ErrorContains(t, err, tc.wantMsg)
			t.Log(err)
		})
	}
}
