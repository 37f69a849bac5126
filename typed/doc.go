// Package typed lifts the quantize/dequantize nodes of a converted PT2E
// graph into quantized element types on the values between them, lowers
// such a graph back to explicit q/dq nodes, and runs typed
// canonicalisations on the lifted form, starting with the fold of
// reshape → instance_norm → reshape into group_norm
// (spec/typed-rewrites.md).
//
// # The lifted form
//
// A value whose type has a quantized element type (ops.UniformQuantized or
// ops.UniformQuantizedPerAxis) holds the stored integers; it stands for
// the real values (q − zero_point)·scale. A compute node that reads or
// produces such values means: dequantize every input with its own type,
// compute in float32, quantize the result with the node's own type
// (typed-rewrites.md 2.5). The node's type is its result contract, never
// derived from an operand.
//
// [Lift] builds that form from a converted graph:
//
//   - producer → quantize → dequantize → users: the producer takes the
//     quantized type and the q/dq nodes go;
//   - a quantize whose input is a graph input (or a value with other float
//     users) stays, typed with its quantized result; its dequantize nodes go;
//   - a constant (get_attr) read through dequantize takes the type,
//     per axis for quantize_per_channel weights;
//   - a dequantize that feeds the output or another q/dq op stays, reading
//     the typed value, so the function signature does not change.
//
// torchao.quantize_affine/dequantize_affine (.default and packet forms)
// lift too when their block size is per tensor (the whole shape) or per
// axis (1 along one axis, full along the rest) and their zero points are
// integer constants; Lower rebuilds the same affine ops. q/dq nodes with
// no such type (per-group, per-token and other blocked layouts, dynamic
// qparams, float zero points) stay explicit and are listed in the pass's
// Result.Notes. [Lower] is the inverse: Lower(Lift(g)) is equal
// to g up to node names and node order ([Equiv]).
//
// [VerifyOptions] (the fxgraph.VerifyOptions.ResultType hook [ResultRule])
// makes fxgraph.Verify accept both forms. [Lowered] returns a lowered copy
// of a lifted graph to run through the interpreter.
//
// # Canonicalisation
//
// [Canonicalize] applies [Pattern]s in two phases: a read-only Match that
// checks every condition and computes every constant and type, then an
// Apply that only creates nodes and replaces values through a [Rewriter],
// whose Replace refuses a replacement whose type differs from the value it
// replaces. [GroupNormFold] is the first pattern; it folds only when the
// result is exact up to float rounding (within 1 LSB of the result type):
// a chain that requantizes inside (an instance_norm or mul with its own
// quantized type) is refused unless [GroupNormFold].AllowRequantDrop is
// set. [CanonOptions].Debug checks that no Match mutates the graph with a
// fingerprint of the nodes around the match, and verifies after every
// rewrite.
package typed
