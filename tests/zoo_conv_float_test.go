package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// zooCNNs are the zoo's torchvision CNNs: their float convolutions run
// through oneDNN in PyTorch (see ops/kernels/conv_onednn.go).
var zooCNNs = []string{"mobilenet_v3_large", "mnasnet0_5", "regnet_x_400mf", "shufflenet_v2_x1_0"}

// missingOp reports whether err says the registry or the interpreter lacks
// an operator or its kernel, rather than that something computed wrong.
func missingOp(err error) bool {
	return errors.Is(err, pt2.ErrUnknownOp) || errors.Is(err, interp.ErrNoKernel) || errors.Is(err, interp.ErrUnknownTarget)
}

// TestZooCNNFloatBitExact runs each zoo CNN's float program on its recorded
// eval inputs and requires PyTorch's float outputs bit for bit. The zoo was
// recorded on an AVX-512 machine, so this checks the default
// (avx512_core) oneDNN summation orders end to end. While an operator
// the models use has no kernel yet, the model is skipped, naming it.
func TestZooCNNFloatBitExact(t *testing.T) {
	for _, stem := range zooCNNs {
		t.Run(stem, func(t *testing.T) {
			p, err := pt2.ReadFile(filepath.Join("testdata", "zoo", stem+".float.pt2"), nil)
			if missingOp(err) {
				t.Skipf("%s does not load yet (an operator is missing from the registry): %v", stem, err)
			}
			require.NoError(t, err)
			raw, err := os.ReadFile(filepath.Join("testdata", "zoo", stem+".outputs.json"))
			require.NoError(t, err)
			var fx fixtureOutputs
			require.NoError(t, json.Unmarshal(raw, &fx))
			require.Len(t, fx.Float.Outputs, len(fx.Inputs.Eval))
			for i := range fx.Inputs.Eval {
				outs, err := interp.Run(p.Graph, programInputs(t, p, []*tensor.Tensor{mustTensor(t, &fx.Inputs.Eval[i])}), interp.Options{})
				if missingOp(err) {
					t.Skipf("%s does not run yet (a kernel is missing): %v", stem, err)
				}
				require.NoError(t, err)
				got, ok := outs[0].(*tensor.Tensor)
				require.True(t, ok, "output is %T", outs[0])
				requireSameBits(t, fmt.Sprintf("%s eval[%d]", stem, i), mustTensor(t, &fx.Float.Outputs[i]), got)
			}
		})
	}
}
