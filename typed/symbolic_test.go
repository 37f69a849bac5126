package typed_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
	"github.com/fxquant/fxquant/typed"
)

// A converted program with a dynamic batch (the zoo's mlp_dynamic_batch,
// x: f32[s77, 16]) lifts to quantized types that keep the symbol
// (i8[s77, 16] with its scale) and verifies under the typed rules.
func TestLiftSymbolic(t *testing.T) {
	p, err := pt2.ReadFile("../tests/testdata/zoo/mlp_dynamic_batch.float.pt2", nil)
	require.NoError(t, err)
	g, err := p.Unlifted()
	require.NoError(t, err)
	require.NoError(t, convert.Prepare(g, convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))))
	var batches [][]*tensor.Tensor
	for _, n := range []int{8, 1, 5} {
		vals := make([]float32, n*16)
		for i := range vals {
			vals[i] = float32(i%13-6) / 4
		}
		x, err := tensor.FromData(tensor.Float32, []int{n, 16}, vals)
		require.NoError(t, err)
		batches = append(batches, []*tensor.Tensor{x})
	}
	require.NoError(t, convert.Calibrate(g, batches, nil))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
	require.NoError(t, typed.InferTypes(g, nil))
	_, err = typed.Lift(g, nil)
	require.NoError(t, err)
	require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)))
	found := false
	for n := range g.All() {
		if tt, ok := n.TensorType(); ok && tt.IsQuantized() && len(tt.Syms) > 0 && tt.Syms[0] == "s77" {
			found = true
		}
	}
	require.True(t, found, "no quantized type keeps s77:\n%s", fxgraph.Format(g))
}
