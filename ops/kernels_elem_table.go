package ops

import (
	"fmt"
	"slices"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// elemKernels are the kernels of elemRows (oprows_elem.go), keyed
// "ns.op.overload". Like every kernel they return the new value of an
// in-place op's self and never write into it; the interpreter binds that
// value to the mutated argument (fxgraph/interp).
var elemKernels = map[string]KernelFunc{
	"aten.hardswish.default":    atenUnary(kernels.Hardswish),
	"aten.hardswish_.default":   atenUnary(kernels.Hardswish),
	"aten.hardsigmoid.default":  atenUnary(kernels.Hardsigmoid),
	"aten.hardsigmoid_.default": atenUnary(kernels.Hardsigmoid),
	"aten.relu6.default":        atenUnary(relu6),
	"aten.relu6_.default":       atenUnary(relu6),
	"aten.gelu_.default": atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, approx := r.tensor(0, "self"), r.str(1, "approximate")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.Gelu(x, approx) })
	}),
	"aten.sigmoid_.default":  atenUnary(kernels.Sigmoid),
	"aten.tanh_.default":     atenUnary(kernels.Tanh),
	"aten.neg.default":       atenUnary(kernels.Neg),
	"aten.neg_.default":      atenUnary(kernels.Neg),
	"aten.exp.default":       atenUnary(kernels.Exp),
	"aten.exp_.default":      atenUnary(kernels.Exp),
	"aten.erf.default":       atenUnary(kernels.Erf),
	"aten.sqrt.default":      atenUnary(kernels.Sqrt),
	"aten.sqrt_.default":     atenUnary(kernels.Sqrt),
	"aten.rsqrt.default":     atenUnary(kernels.Rsqrt),
	"aten.rsqrt_.default":    atenUnary(kernels.Rsqrt),
	"aten.pow.Tensor_Scalar": atenPowScalar,
	"aten.pow_.Scalar":       atenPowScalar,

	"aten.add_.Tensor": atenInPlace(atenBinary(kernels.OpAdd, true, true)),
	"aten.add_.Scalar": atenInPlace(atenBinary(kernels.OpAdd, false, true)),
	"aten.sub_.Tensor": atenInPlace(atenBinary(kernels.OpSub, true, true)),
	"aten.sub_.Scalar": atenInPlace(atenBinary(kernels.OpSub, false, true)),
	"aten.mul_.Tensor": atenInPlace(atenBinary(kernels.OpMul, true, false)),
	"aten.mul_.Scalar": atenInPlace(atenBinary(kernels.OpMul, false, false)),
	"aten.div_.Tensor": atenInPlace(atenBinary(kernels.OpDiv, true, false)),
	"aten.div_.Scalar": atenInPlace(atenBinary(kernels.OpDiv, false, false)),
	"aten.clamp_.default": atenInPlace(atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, lo, hi := r.tensor(0, "self"), r.optScalar(1, "min"), r.optScalar(2, "max")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.Clamp(x, lo, hi) })
	})),
	"aten.clamp_.Tensor": atenInPlace(atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, lo, hi := r.tensor(0, "self"), r.optTensor(1, "min"), r.optTensor(2, "max")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.ClampTensor(x, lo, hi) })
	})),

	"aten.dropout_.default":         atenDropout("dropout_"),
	"aten.feature_dropout.default":  atenDropout("feature_dropout"),
	"aten.feature_dropout_.default": atenDropout("feature_dropout_"),
	"aten.alpha_dropout.default":    atenDropout("alpha_dropout"),
	"aten.alpha_dropout_.default":   atenDropout("alpha_dropout_"),
	"aten.native_dropout.default": atenOp(func(r *argReader) (Value, error) {
		x, p := r.tensor(0, "input"), r.float(1, "p")
		train := true
		if r.has(2) {
			train = r.bool(2, "train")
		}
		if r.err != nil {
			return nil, r.err
		}
		if _, err := kernels.Dropout(x, p, train); err != nil {
			return nil, fmt.Errorf("native_dropout: %w", err)
		}
		mask := make([]bool, x.Numel())
		for i := range mask {
			mask[i] = true
		}
		m, err := tensor.FromData(tensor.Bool, x.Shape(), mask)
		if err != nil {
			return nil, err
		}
		return Tuple{x.Clone(), m}, nil
	}),

	"aten.alias.default":           atenUnary(func(x *tensor.Tensor) (*tensor.Tensor, error) { return x, nil }),
	"aten.detach.default":          atenUnary(func(x *tensor.Tensor) (*tensor.Tensor, error) { return x, nil }),
	"aten.lift_fresh_copy.default": atenUnary(func(x *tensor.Tensor) (*tensor.Tensor, error) { return x.Clone(), nil }),
	"aten._to_copy.default": atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, dt := r.tensor(0, "self"), r.dtype(1, "dtype")
		return viewResult(r, func() (*tensor.Tensor, error) {
			c := x.Clone()
			if dt == tensor.Unknown || dt == x.DType() {
				return c, nil
			}
			return kernels.ToDType(c, dt)
		})
	}),
}

func relu6(x *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Hardtanh(x, 0, 6) }

// optScalar reads an optional Scalar: nil for None.
func (r *argReader) optScalar(i int, name string) any {
	if !r.has(i) {
		return nil
	}
	return r.scalar(i, name)
}

var atenPowScalar = atenOp(func(r *argReader) (*tensor.Tensor, error) {
	x, e := r.tensor(0, "self"), r.float(1, "exponent")
	return viewResult(r, func() (*tensor.Tensor, error) { return kernels.PowScalar(x, e) })
})

// atenDropout runs a dropout variant: the input itself when train is
// false (inference), an error naming the op when train is true.
func atenDropout(name string) KernelFunc {
	return atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, p, train := r.tensor(0, "input"), r.float(1, "p"), r.bool(2, "train")
		return viewResult(r, func() (*tensor.Tensor, error) {
			out, err := kernels.Dropout(x, p, train)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return out, nil
		})
	})
}

// atenInPlace wraps the kernel of an in-place op: the new value of self
// must keep self's shape (self does not broadcast), is cast back to self's
// dtype and laid out with self's strides; a float result for an integer or
// bool self is an error, as in PyTorch ("result type Float can't be cast
// to the desired output type").
func atenInPlace(k KernelFunc) KernelFunc {
	return func(args []Value) (Value, error) {
		v, err := k(args)
		if err != nil {
			return nil, err
		}
		self, _ := args[0].(*tensor.Tensor)
		out, ok := v.(*tensor.Tensor)
		if self == nil || !ok {
			return v, nil
		}
		if !slices.Equal(out.Shape(), self.Shape()) {
			return nil, fmt.Errorf("%w: in-place result of shape %v does not fit argument \"self\" of shape %v", tensor.ErrShape, out.Shape(), self.Shape())
		}
		if out.DType() != self.DType() {
			if out.DType().IsFloat() && !self.DType().IsFloat() {
				return nil, fmt.Errorf("%w: result type %s can't be cast to the dtype %s of argument \"self\"", kernels.ErrUnsupportedDType, out.DType(), self.DType())
			}
			if out, err = kernels.ToDType(out, self.DType()); err != nil {
				return nil, err
			}
		}
		return kernels.InLayoutOf(out, self)
	}
}
