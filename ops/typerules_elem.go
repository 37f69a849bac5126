package ops

import "github.com/fxquant/fxquant/ops/tensor"

// rulePowTensorScalar: pow.Tensor_Scalar(self, exponent): self's shape; an
// integer self with a float exponent gives float32, otherwise self's dtype.
func rulePowTensorScalar(args []Value) (Type, error) {
	t, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	d := t.DType()
	if _, isFloat := get(args, 1).(float64); isFloat && !d.IsFloat() && !d.IsComplex() {
		d = tensor.Float32
	}
	return plainOf(d, t.Shape), nil
}

// ruleNativeDropout: native_dropout(input, p, train) -> (output with
// input's type, bool mask of input's shape).
func ruleNativeDropout(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	return tupleOf(plainOf(x.DType(), x.Shape), plainOf(tensor.Bool, x.Shape)), nil
}

// ruleToCopy: _to_copy(self, *, dtype=None, ...): self's shape, dtype when
// given.
func ruleToCopy(args []Value) (Type, error) {
	t, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	d := t.DType()
	if dt, ok := get(args, 1).(tensor.DType); ok && dt != tensor.Unknown {
		d = dt
	}
	return plainOf(d, t.Shape), nil
}
