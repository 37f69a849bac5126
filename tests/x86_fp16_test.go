package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
)

// TestX86InductorLinearFP16 runs X86InductorQuantizer with
// get_x86_inductor_linear_dynamic_fp16_config on nn.Linear on the zoo's
// MLP and BERT-like encoder and compares with torchao (testdata/x86/fp16.json,
// made by gen_fp16.py) as x86Check does: each nn.Linear weight goes
// through float16 and back (quantized_decomposed.convert_element_type),
// activations stay float, and the linears inside nn.MultiheadAttention
// (not nn.Linear calls) are left alone.
func TestX86InductorLinearFP16(t *testing.T) {
	checkX86FP16(t, func(*testing.T) *convert.X86InductorQuantizer {
		return convert.NewX86InductorQuantizer().SetModuleType("torch.nn.modules.linear.Linear", convert.X86InductorLinearDynamicFP16Config())
	})
}

// checkX86FP16 compares the quantizer newQ makes with torchao's records
// in fp16.json (the fp16 config on nn.Linear) on each of its zoo models.
func checkX86FP16(t *testing.T, newQ func(*testing.T) *convert.X86InductorQuantizer) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(x86Dir, "fp16.json"))
	require.NoError(t, err)
	var e struct {
		Format  string               `json:"format"`
		Targets []string             `json:"targets"`
		Cases   map[string]x86Record `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &e))
	require.Equal(t, "fxquant-x86-fp16/1", e.Format)
	require.Len(t, e.Cases, 2)
	reg := x86Registry(t)
	for stem, rec := range e.Cases {
		t.Run(stem, func(t *testing.T) {
			q := newQ(t)
			require.Empty(t, q.Warnings)
			require.NotEmpty(t, rec.Attrs, "the float16 weights")
			x86Check(t, filepath.Join(zooDir, stem+".float.pt2"), q, rec, e.Targets, zooBatches(t, zooOutputs(t, stem)), reg)
		})
	}
}
