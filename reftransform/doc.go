// Package reftransform is torchao's reference_representation_rewrite
// (torchao-pt2e.md section 6): it replaces quantize / dequantize patterns in a
// converted graph with their integer reference representations, so that the
// graph states the arithmetic a backend must reproduce.
//
// # Driver
//
// [Run] (and [Pass], its pipeline form) first runs
// [RemoveTensorOverloadForQDQOps], which turns the quantized_decomposed
// per-tensor and per-channel quantize/dequantize overloads and
// aten.clamp.Tensor into their packets, then applies the rewrite entries of
// [Entries] in order, each through fxgraph/match's
// ReplacePatternWithFilters.
//
// # Entries
//
// The entries are those of sections 6.2 and 6.3: dynamic int8 linear, int4
// groupwise dynamic linear (2-D and 3-D activations), static linear, static
// conv2d, add+relu, add, max_pool2d, and per-tensor and per-channel
// quantize / dequantize. Patterns bind the scalar literals of convert's
// output (scales, zero points, bounds) to placeholders; the dtype literal
// torch.int8 must match exactly, so uint8 and int16 q/dq stay as they are.
//
// Unlike the snapshot, the int4 rewrite matches graphs whose torchao ops are
// .default overloads for any group size dividing K (the group size is bound
// to a placeholder), and its filter tells the weight dequantize from the
// activation dequantize by role. Its replacement is one
// torchao.reference_dqlinear_int4.default node carrying the linear's
// metadata and a from_node record.
//
// # Replacements
//
// Each replacement is built node for node as torch.export traces torchao's
// replacement function, so a rewritten graph prints as torchao's does: the
// same targets (aten.div.Tensor, aten.to.dtype, higher_order.out_dtype,
// the packet aten.clamp where the function clamps to tensor bounds and
// aten.clamp.default where it clamps to Python numbers), the same order and
// the same names (FX's namespace then renames on collision, as
// replace_pattern does). Placeholders bound to literals in the match are
// substituted by those literals, so arithmetic on a bound scale or zero
// point stays in the graph with a Python-number operand (a wrapped number,
// which ops and fxgraph accept for aten add/sub/mul/div): torchao writes
// aten.div.Tensor(%x, 0.0243646502494812), and for two bound scales even
// aten.div.Tensor(0.008250712417066097, 0.01946624554693699). No scalar
// arithmetic is done when the replacement is built: torchao traces its
// replacements with tensor example inputs, so every operation on a scale
// or zero point is a node.
package reftransform
