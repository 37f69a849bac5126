package pt2_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// TestPT2JSONFolder reads every file of tests/testdata/pt2-json: the
// composed program loads; the third-party snippets and manifests are not
// programs and must be rejected with an error, never a panic.
func TestPT2JSONFolder(t *testing.T) {
	files, err := filepath.Glob("../tests/testdata/pt2-json/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			p, err := pt2.ReadJSON(data, nil)
			if !strings.HasPrefix(filepath.Base(f), "composed-") {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			dq, ok := p.Graph.NodeByName("dequantize_per_tensor")
			require.True(t, ok)
			assert.Equal(t, []ops.Kwarg{{Name: "out_dtype", Value: tensor.Float32}}, dq.Kwargs())
			assert.Equal(t, pt2.TensorConstant, p.Signature.Inputs[1].Kind)
			_, err = p.EncodeJSON(nil)
			require.NoError(t, err)
			assert.NotEmpty(t, fxgraph.Format(p.Graph))
			// an archive needs the weights, which a bare JSON program lacks
			err = p.WriteArchive(io.Discard, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `parameter "linear.bias" (input "p_linear_bias") has no tensor`)
		})
	}
}
