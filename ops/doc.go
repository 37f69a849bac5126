// Package ops is fxquant's op layer: call targets, the argument value
// model, static types (tensor types and quantized element types), PyTorch
// schemas, the op registry, and the reference kernels.
//
// # Targets
//
// A [Target] is a [Packet] (torchao.quantize_affine), an [Overload]
// (torchao.quantize_affine.default) or a [Callable] (operator.getitem). They
// are distinct comparable values: a packet never equals an overload, so
// matchers compare targets with ==. Lists that must accept both forms use a
// [TargetSet], whose rule for each form is explicit.
//
// # Types
//
// A [TensorType] is a shape plus an [Element]: a plain [Scalar] dtype, a
// per-tensor [UniformQuantized] or a [UniformQuantizedPerAxis] type.
// Equality is exact: two int8 types with different scales differ.
//
// # Registry
//
// Each op is one [OpDef] row: its [Schema], its torch tags, its
// result-type rule and its kernel. [Default] returns the built-in registry,
// which knows every overload of PyTorch 2.14.1's operator table
// (schemas/torch-2.14.1-ops.json, embedded; an op's schema is parsed on its
// first look-up). Hand-written rows add result-type rules to the ops listed
// in RULES.md; every other op keeps the type its program records.
package ops
