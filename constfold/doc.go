// Package constfold is the constant folder of torchao's pt2e convert
// (torchao-pt2e.md section 7, fx-graph.md section 6): it evaluates the
// subgraphs of a graph that depend only on get_attr tensors, with the
// interpreter of fxgraph/interp, and replaces each frontier node of such a
// subgraph with a get_attr of a new frozen constant.
//
// # Naming
//
// The constant is stored as the attribute _frozen_param<i> (the smallest
// unused i); the get_attr node that replaces a folded node takes that
// node's name and metadata, as torchao's and Inductor's
// replace_node_with_constant do.
//
// # What is not folded
//
// Nodes whose target is in the don't-fold list: [DequantizeOps] (the
// quantized_decomposed dequantize overloads, convert_element_type.no_fuse
// and torchao.dequantize_affine as packet and .default), plus the targets
// added with [AddDontFold] (cleared with [ClearDontFold], like Inductor's
// add_dont_constant_fold) and [Options.DontFold]. So a weight's quantize is
// folded into an int8 constant while its dequantize stays for the backend.
// Nodes reading a mutable buffer (an argument of a copy_/put_ op's
// destination chain), impure registry ops, higher-order ops and
// constructors with no tensor input are not folded either, and
// [Options.Constraint] can reject any frontier node.
package constfold
