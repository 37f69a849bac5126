package ops

// outDTypeOp reads higher_order.out_dtype's op argument: an Overload, or
// the overload's name as a string ("aten.linear.default"), which is how a
// graph holds it (graph arguments are literals and node references, and FX
// prints the op by its name).
func outDTypeOp(v Value) (Overload, bool) {
	switch x := v.(type) {
	case Overload:
		return x, true
	case string:
		t, err := ParseTarget(x)
		if err != nil {
			return Overload{}, false
		}
		o, ok := t.(Overload)
		return o, ok
	}
	return Overload{}, false
}
