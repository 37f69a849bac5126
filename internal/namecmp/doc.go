// Package namecmp is a stand-in for numdebug.Compare used by the report's
// tests: it compares the float and the quantized graph node by node,
// matching nodes by name (prepare and convert keep the float node names of
// the nodes they do not replace), instead of by numeric debug handle. It
// is not torchao's debugger; tests use it while numdebug.Compare is not
// available, so that the report has real per-node numbers to show.
package namecmp
