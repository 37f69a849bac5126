package ops

// atenKernels maps the aten overloads to their kernels. Keys are overload
// names as "ns.op.overload".
var atenKernels = map[string]KernelFunc{}
