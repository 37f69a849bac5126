// Package numdebug is fxquant's numeric debugger, modelled on torchao's
// (generate_numeric_debug_handle, prepare_for_propagation_comparison,
// extract_results_from_loggers, compare_results): every node of the float
// graph gets a numeric debug handle before prepare, the passes carry the
// handles to the nodes they create, and a comparison runs the float and
// the quantized graph on the same inputs and reports, per handle, how far
// the quantized values are from the float ones.
//
// [GenerateHandles] numbers the float graph as torchao does. Handles live
// in fxgraph.Meta.NumericDebugHandle; the pt2 package reads and writes them
// where torchao stores them, node.meta["custom"]["numeric_debug_handle"].
// Prepare gives an output observer its node's handle, convert gives the
// quantize and dequantize that replace an observer the observer's, and
// the rewrites that copy metadata (duplicated dequantizes, constant
// folding, the reference rewrites) copy it too.
//
// [Compare] runs each graph once per batch and accumulates torchao's
// compute_sqnr, the largest absolute error and the float range per handle,
// in float graph order; [Comparison.Worst] and Comparison.WorstGrowth
// point at the nodes to look at. [AdoptHandles] prepares a program
// torchao converted (whose quantize and dequantize nodes carry only
// from_node) for the comparison.
package numdebug
