package pt2

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLiftedName follows torch.export's placeholder_naming_pass (torch
// 2.14, torch/_export/utils.py): prefix, "L__self___"/"self_" stripped,
// lower case, [^a-zA-Z0-9] -> "_", and "_1", "_2" for names in use.
// RegNet's module "block1-0" is the case from the zoo: torch writes
// "block1_0", which Python can read back as an attribute path.
func TestLiftedName(t *testing.T) {
	taken := map[string]bool{"b_conv_weight_bias": true, "b_conv_weight_bias_1": true}
	for _, tc := range []struct {
		kind InputKind
		fqn  string
		want string
	}{
		{Buffer, "trunk_output.block1.block1-0.proj.0.weight_bias", "b_trunk_output_block1_block1_0_proj_0_weight_bias"},
		{Parameter, "fc1.weight", "p_fc1_weight"},
		{TensorConstant, "_tensor_constant0", "c__tensor_constant0"},
		{Buffer, "L__self___Conv.Weight", "b_conv_weight"},
		{Buffer, "self_x", "b_x"},
		{Buffer, "café.w", "b_caf__w"},
		{Buffer, "conv.weight_bias", "b_conv_weight_bias_2"},
	} {
		assert.Equal(t, tc.want, liftedName(tc.kind, tc.fqn, taken), tc.fqn)
	}
}
