// Package metadata ports node metadata onto the quantize, dequantize and
// choose_qparams nodes that convert inserts: torchao's PortNodeMetaForQDQ
// (torchao-pt2e.md section 8), with the post-PR op lists (packet and
// .default forms of the torchao ops, held in ops.TargetSets) and a working
// keyword-argument lookup.
//
// # What is ported
//
// [PortedKeys] lists the keys, in one place: stack_trace and
// quantization_tag, each copied only when the source node has it.
//
// # Annotations
//
// The pass reads each node's quantization annotation through
// [Options.Annotation]; the convert package supplies the adapter for its
// annotation type. Annotations are never modified.
package metadata
