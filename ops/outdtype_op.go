package ops

// outDTypeOp reads higher_order.out_dtype's op argument. The graph holds
// the operator itself as an argument value, an [Overload], as torch.fx
// holds the OpOverload object (out_dtype(aten.linear.default, ...)).
// PyTorch's out_dtype accepts only an OpOverload, so a [Packet], a
// [Callable] or the operator's name as a string is rejected.
func outDTypeOp(v Value) (Overload, bool) {
	o, ok := v.(Overload)
	return o, ok
}
