// Package numdebug is fxquant's numeric debugger, modelled on torchao's
// (generate_numeric_debug_handle, prepare_for_propagation_comparison,
// extract_results_from_loggers, compare_results): every node of the float
// graph gets a numeric debug handle before prepare, the passes carry the
// handles to the nodes they create, and a comparison runs the float and
// the quantized graph on the same inputs and reports, per handle, how far
// the quantized values are from the float ones.
package numdebug
