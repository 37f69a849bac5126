package ops

// quantKernels maps the quantize, dequantize and choose_qparams overloads
// (and the other ops of the reference rewrites) to their kernels. Keys are
// overload names as "ns.op.overload".
var quantKernels = map[string]KernelFunc{}
