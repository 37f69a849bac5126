// Package pt2 reads and writes PyTorch's serialized ExportedProgram: the
// .pt2 archives torch.export.save writes, the older torch <= 2.7 zip, and
// the bare program JSON (serde schema 8.x).
//
// # Reading
//
// [Read] and [ReadFile] tell the container apart by content and return a
// [Program]: an fxgraph.Graph with one placeholder per graph input (named
// as in the program), one call_function node per serialized node,
// operator.getitem nodes for the results of multi-result operators (as
// torch.export's deserializer creates them), and an output node returning
// a tuple. Each value's tensor metadata becomes its ops.TensorType; node
// metadata (stack_trace, nn_module_stack, source_fn_stack, torch_fn,
// custom, from_node) becomes fxgraph.Meta. Parameters, buffers and
// constants become graph attributes under their fully qualified names;
// [Program.Signature] ties placeholders to them. Pickled payloads are
// listed in [Program.Unreadable], never dropped silently.
//
// Targets must name an overload (torch.ops.ns.op.overload). Each operator
// must be known to the registry (ops.Default() unless [Options.Registry]
// is set), whose schema binds the serialized named arguments to args and
// kwargs; [Options.AllowOpaque] accepts unknown operators and binds them by
// the serialized argument kinds.
//
// Errors name the JSON field path and the expectation, e.g.
// `graph_module.graph.nodes[12].inputs[0].arg.as_tensor: undefined name:
// unknown tensor "mul_3"`, and wrap one of the sentinels [ErrSchemaVersion],
// [ErrUnknownOp], [ErrUnsupported], [ErrDangling] or [ErrArchive] where one
// applies.
//
// The program JSON is decoded in one of two modes (readpath.go). A valid
// document (one validating pass, which also records where its large
// containers end) is decoded first in fast mode: no field path is built,
// members are split without validating them again, and the usual shapes
// are read in one pass (readfast.go). Only when that fails is the
// document decoded again, from the start, by the checked decoder, whose
// error, with its field path, is the one returned: both modes fail on the
// same documents, with the same messages.
//
// # Writing
//
// [Program.WriteArchive] writes a PT2 archive PyTorch 2.14 loads, laid out
// as torch.export.save lays it out: every field PyTorch writes, enums as
// integers, targets with their overload, raw little-endian payloads with
// payload configs (one record per shared storage), the zip container of
// PyTorchStreamWriter (stored entries under one root folder, 64-byte
// aligned, data descriptors, ZIP64 end records) and its serialization id.
// A fixture read and written again is byte-identical to the file PyTorch
// wrote. Values keep the names they had in the file, even where fxgraph's
// namespace renamed the node ([Program.SerializedName]). get_attr tensors
// are lifted into graph inputs by [Program.LiftSpecs] (parameters stay
// parameters), by default as persistent buffers, as torch.export lifts the
// tensors convert registers. [Program.EncodeJSON] returns the program JSON
// alone. The rule-by-rule audit against the spec is in
// write_audit_test.go.
//
// # Subset
//
// Control flow (higher-order ops other than the registry's, such as cond,
// and as_graph), custom objects, tokens, symbolic bools and floats, sympy
// functions other than Add, Mul, FloorDiv, Mod, Min and Max, operator-module
// functions other than add, sub, mul, floordiv, mod and neg, and sparse
// layouts are rejected with [ErrUnsupported].
//
// # Symbolic shapes
//
// Programs exported with torch.export.Dim are read whole. A SymInt written
// as an expression (as_expr: a sympy srepr such as "Symbol('s77',
// positive=True, integer=True)" or "Mul(Integer(2), Symbol(...))", with its
// hint) becomes a symbolic dimension of the value's type, printed in
// readable form (f32[s77, 16], f32[2*s77 + 2, 4]; see [ops.SymExpr]);
// range_constraints and each symbol's hint and assumptions become the
// graph's symbol table ([fxgraph.Graph.Symbols]); aten.sym_size.int and
// _operator.add/sub/mul/floordiv/mod/neg nodes produce SymInt values, which
// other nodes take as arguments (as_sym_int, as_sym_ints), and
// sym_int_values keeps their values. Tensor metadata read from the file is
// written back as read, so an unchanged program is byte-identical; a new
// value of symbolic type gets contiguous strides (products in sympy's
// argument order), hints computed from the symbols' hints, and a new
// symbolic node the value derived from its inputs. A registered higher-order operator,
// torch.ops.higher_order.out_dtype, is read into higher_order.out_dtype.default
// with its unnamed positional inputs (serialize_hoo_inputs), and an
// operator argument (as_operator, torch.ops.aten.linear.default) into an
// [ops.Overload] value; both are written back in PyTorch's spelling.
package pt2
