package kernels_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

type gruTensor struct {
	Shape []int    `json:"shape"`
	Hex   []string `json:"hex"`
}

func (g gruTensor) tensor(t *testing.T) *tensor.Tensor {
	vals := make([]float32, len(g.Hex))
	for i, h := range g.Hex {
		u, err := strconv.ParseUint(h, 16, 32)
		require.NoError(t, err)
		vals[i] = math.Float32frombits(uint32(u))
	}
	x, err := tensor.FromData(tensor.Float32, g.Shape, vals)
	require.NoError(t, err)
	return x
}

// TestGRUMatchesPyTorch runs aten.gru.input on PyTorch's recorded cases
// (testdata/gru/cases.json, made by gen.py there with the oracle): one and
// two layers, with and without biases, batch first or not, batches of 1 to
// 5. Output and final hidden state must be bit for bit PyTorch's.
func TestGRUMatchesPyTorch(t *testing.T) {
	data, err := os.ReadFile("testdata/gru/cases.json")
	require.NoError(t, err)
	var f struct {
		Cases []struct {
			Layers     int         `json:"num_layers"`
			Bias       bool        `json:"bias"`
			BatchFirst bool        `json:"batch_first"`
			Input      gruTensor   `json:"input"`
			Hx         gruTensor   `json:"hx"`
			Params     []gruTensor `json:"params"`
			Output     gruTensor   `json:"output"`
			Hy         gruTensor   `json:"hy"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	require.Len(t, f.Cases, 5)
	for i, c := range f.Cases {
		t.Run(fmt.Sprintf("case%d_layers%d_bias%v_bf%v", i, c.Layers, c.Bias, c.BatchFirst), func(t *testing.T) {
			var ps []*tensor.Tensor
			for _, p := range c.Params {
				ps = append(ps, p.tensor(t))
			}
			out, hy, err := kernels.GRU(c.Input.tensor(t), c.Hx.tensor(t), ps, c.Bias, c.Layers, 0, false, false, c.BatchFirst)
			require.NoError(t, err)
			assert.NoError(t, tensor.Diff(out.Contiguous(), c.Output.tensor(t)), "output")
			assert.NoError(t, tensor.Diff(hy.Contiguous(), c.Hy.tensor(t)), "final hidden state")
		})
	}
}

func TestGRURefuses(t *testing.T) {
	x := tensor.MustFromData(tensor.Float32, []int{1, 2, 3}, make([]float32, 6))
	h := tensor.MustFromData(tensor.Float32, []int{1, 1, 2}, make([]float32, 2))
	w := tensor.MustFromData(tensor.Float32, []int{6, 3}, make([]float32, 18))
	wh := tensor.MustFromData(tensor.Float32, []int{6, 2}, make([]float32, 12))
	_, _, err := kernels.GRU(x, h, []*tensor.Tensor{w, wh}, false, 1, 0, false, true, true)
	assert.ErrorContains(t, err, "bidirectional")
	_, _, err = kernels.GRU(x, h, []*tensor.Tensor{w}, false, 1, 0, false, false, true)
	assert.ErrorContains(t, err, "need 2 params, got 1")
	_, _, err = kernels.GRU(x, tensor.MustFromData(tensor.Float32, []int{1, 2, 2}, make([]float32, 4)), []*tensor.Tensor{w, wh}, false, 1, 0, false, false, true)
	assert.ErrorContains(t, err, `argument "hx"`)
	out, hy, err := kernels.GRU(x, h, []*tensor.Tensor{w, wh}, false, 1, 0, false, false, true)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 2}, out.Shape())
	assert.Equal(t, []int{1, 1, 2}, hy.Shape())
}
