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
// Replacement arithmetic whose operand is a bound Python scalar uses the
// .Scalar overload of aten add/sub/mul/div, and arithmetic between two bound
// scalars is computed when the replacement is built, so the result passes
// fxgraph.Verify; torchao writes .Tensor overloads with scalar operands
// there, which compute the same values.
package reftransform
