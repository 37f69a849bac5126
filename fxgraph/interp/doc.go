// Package interp runs an [fxgraph.Graph] on concrete tensors, the way
// torch.fx's Interpreter does: for calibration, constant folding, numeric
// debugging and the CLI.
//
// # Evaluation
//
// [Run] (inputs by position) and [RunNamed] (inputs by placeholder name)
// evaluate nodes in program order:
//
//   - placeholder: the next input (or the placeholder's default);
//   - get_attr: the graph attribute of that path ([fxgraph.Graph.Attr]);
//   - call_function on an [ops.Overload]: the registry row's kernel, with
//     the arguments normalised by the row's schema; on an [ops.Packet]: the
//     first overload, in registration order, whose schema accepts the
//     arguments; on operator.getitem: indexing of a tuple or list result;
//     on operator add, sub, mul, floordiv, mod and neg: Python's integer
//     arithmetic, as programs with symbolic shapes compute sizes;
//   - call_module: the attribute's [fxgraph.Module.Forward];
//   - output: the returned values.
//
// In-place ops (an argument written, Tensor(a!) in the schema: relu_,
// add_, hardswish_, ...) behave as in PyTorch: kernels never write into
// their arguments; the node passed as the written argument is rebound to
// the op's result, and every other live value sharing its storage (views
// taken before the mutation, the results of earlier in-place ops on it) is
// rebuilt over a copy of the storage holding the new elements, so later
// users see the mutation through every alias. The caller's input tensors
// are never modified.
//
// [Options] carries the registry, a hook called with every node's value
// (observers and the numeric debugger use it) and a switch that releases
// each value after its last use.
//
// # Symbolic shapes
//
// A placeholder whose type has symbolic dimensions (f32[s77, 16], from a
// program exported with torch.export.Dim) binds each symbol to the size of
// the run's input before anything runs: the size must lie in the symbol's
// range ([fxgraph.Graph.Symbols]), every input that names the symbol must
// agree, an expression dimension (2*s77) must equal its size, and static
// dimensions and the rank must match. A misfit is a [*NodeError] of the
// placeholder wrapping [ErrSymbol] that names the placeholder, the
// dimension, the size and the range. [CheckSymbols] does the same checks
// without running. Batches of different sizes therefore run one graph.
//
// # Errors
//
// Every failure is a [*NodeError] naming the node and its target and
// wrapping the cause: [ErrNoKernel], [ErrUnknownTarget], [ErrInputs],
// [ErrSymbol],
// [ErrAttr], [ErrUnsupported], a kernel's error (which wraps
// tensor.ErrShape for shape mismatches and kernels.ErrUnsupportedDType for
// dtypes a kernel does not take), or [ErrPanic] when a kernel panics
// despite its checks. Run never panics.
package interp
