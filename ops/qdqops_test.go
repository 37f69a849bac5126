package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQDQOpLists: each list accepts the quantized_decomposed overloads pt2e
// inserts and the torchao op as packet and as .default, and nothing of
// another role (torchao-pt2e.md sections 0, 3.5, 7, 8, 9).
func TestQDQOpLists(t *testing.T) {
	cases := []struct {
		name string
		set  *TargetSet
		in   []string
		out  []string
	}{
		{"quantize", QuantizeOps(),
			[]string{"quantized_decomposed.quantize_per_tensor.default", "quantized_decomposed.quantize_per_tensor.tensor",
				"quantized_decomposed.quantize_per_channel.default", "torchao.quantize_affine", "torchao.quantize_affine.default"},
			[]string{"quantized_decomposed.quantize_per_tensor", "quantized_decomposed.quantize_per_tensor.tensor2",
				"quantized_decomposed.dequantize_per_tensor.default", "torchao.dequantize_affine.default"}},
		{"dequantize", DequantizeOps(),
			[]string{"quantized_decomposed.dequantize_per_tensor.default", "quantized_decomposed.dequantize_per_tensor.tensor",
				"quantized_decomposed.dequantize_per_channel.default", "torchao.dequantize_affine", "torchao.dequantize_affine.default"},
			[]string{"quantized_decomposed.dequantize_per_tensor", "quantized_decomposed.convert_element_type.no_fuse",
				"torchao.quantize_affine.default"}},
		{"choose_qparams", ChooseQParamsOps(),
			[]string{"quantized_decomposed.choose_qparams.tensor", "quantized_decomposed.choose_qparams_symmetric.tensor",
				"torchao.choose_qparams_affine", "torchao.choose_qparams_affine.default"},
			[]string{"quantized_decomposed.choose_qparams", "quantized_decomposed.choose_qparams_per_token.default"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range tc.in {
				assert.True(t, tc.set.Has(MustParseTarget(s)), "%s must be in the %s list", s, tc.name)
			}
			for _, s := range tc.out {
				assert.False(t, tc.set.Has(MustParseTarget(s)), "%s must not be in the %s list", s, tc.name)
			}
		})
	}
}
