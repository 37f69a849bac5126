package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
)

// TestX86InductorAnnotate runs X86InductorQuantizer.Annotate alone (no
// prepare, so batch norms stay) and compares with torchao's annotate on the
// same programs (testdata/x86/annotate.json, made by gen_annotate.py):
//   - with a QAT config, the conv+BatchNorm patterns (with ReLU, add+ReLU,
//     add, Hardswish, alone): the last node of each gets the output spec
//     and every batch norm is claimed;
//   - with the PTQ config and the batch norms left in, only the convs;
//   - an nn.ReLU module called after two convolutions: its partition has
//     two output nodes, and torchao raises; so does fxquant.
func TestX86InductorAnnotate(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(x86Dir, "annotate.json"))
	require.NoError(t, err)
	var e struct {
		Format string `json:"format"`
		Cases  map[string]struct {
			Error       string                     `json:"error"`
			Annotations map[string]json.RawMessage `json:"annotations"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &e))
	require.Equal(t, "fxquant-x86-annotate/1", e.Format)
	static, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{})
	require.NoError(t, err)
	qat := *static
	qat.IsQAT = true // the annotation only reads the specs' dtypes and schemes
	cases := map[string]struct {
		model string
		cfg   *convert.QuantizationConfig
	}{
		"convbn/qat":          {"convbn", &qat},
		"convbn/ptq_unfolded": {"convbn", static},
		"shared_relu/static":  {"shared_relu", static},
	}
	require.Len(t, e.Cases, len(cases))
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, ok := e.Cases[name]
			require.True(t, ok)
			g := readUnlifted(t, filepath.Join(x86Dir, c.model+".float.pt2"))
			err = convert.NewX86InductorQuantizer().SetGlobal(c.cfg).Annotate(g)
			if rec.Error != "" {
				require.Error(t, err, "torchao raised %s", rec.Error)
				assert.ErrorIs(t, err, convert.ErrAnnotation)
				assert.Contains(t, err.Error(), "output nodes")
				return
			}
			require.NoError(t, err)
			want := map[string]any{}
			for k, raw := range rec.Annotations {
				var v []any
				require.NoError(t, json.Unmarshal(raw, &v))
				want[k] = v[:2]
			}
			got := map[string]any{}
			require.NoError(t, remarshal(x86Annotations(g), &got))
			assert.Equal(t, want, got)
		})
	}
}
