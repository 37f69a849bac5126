package ops

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// quantKernels maps the quantize, dequantize and choose_qparams overloads
// (and the other ops of the reference rewrites) to their kernels. Keys are
// overload names as "ns.op.overload". Each adapter reads the normalised
// arguments in schema order (oprows_quant.go, oprows_aten.go) and calls a
// typed kernel of package kernels; errors name the argument.
var quantKernels = map[string]KernelFunc{
	"quantized_decomposed.quantize_per_tensor.default": qk(func(r *qArgs) (Value, error) {
		return kernels.QuantizePerTensor(r.tensor(0, "input"), r.float(1, "scale"), r.int(2, "zero_point"), r.int(3, "quant_min"), r.int(4, "quant_max"), r.dtype(5, "dtype"))
	}),
	"quantized_decomposed.quantize_per_tensor.tensor": qk(func(r *qArgs) (Value, error) {
		s, z := r.scalarParams(1, 2)
		return kernels.QuantizePerTensor(r.tensor(0, "input"), s, z, r.int(3, "quant_min"), r.int(4, "quant_max"), r.dtype(5, "dtype"))
	}),
	"quantized_decomposed.quantize_per_tensor.tensor2": qk(func(r *qArgs) (Value, error) {
		s, z := r.scalarParams(1, 2)
		return kernels.QuantizePerTensor(r.tensor(0, "input"), s, z, r.intItem(3, "quant_min"), r.intItem(4, "quant_max"), r.dtype(5, "dtype"))
	}),
	"quantized_decomposed.dequantize_per_tensor.default": qk(func(r *qArgs) (Value, error) {
		return kernels.DequantizePerTensor(r.tensor(0, "input"), r.float(1, "scale"), r.int(2, "zero_point"), r.int(3, "quant_min"), r.int(4, "quant_max"), r.dtype(5, "dtype"), r.optDType(6, "out_dtype"))
	}),
	"quantized_decomposed.dequantize_per_tensor.tensor": qk(func(r *qArgs) (Value, error) {
		s, z := r.scalarParams(1, 2)
		return kernels.DequantizePerTensor(r.tensor(0, "input"), s, z, r.int(3, "quant_min"), r.int(4, "quant_max"), r.dtype(5, "dtype"), r.optDType(6, "out_dtype"))
	}),
	"quantized_decomposed.dequantize_per_tensor.tensor2": qk(func(r *qArgs) (Value, error) {
		s, z := r.scalarParams(1, 2)
		return kernels.DequantizePerTensor(r.tensor(0, "input"), s, z, r.intItem(3, "quant_min"), r.intItem(4, "quant_max"), r.dtype(5, "dtype"), r.optDType(6, "out_dtype"))
	}),
	"quantized_decomposed.choose_qparams.tensor":           qkChooseQParams(false),
	"quantized_decomposed.choose_qparams_symmetric.tensor": qkChooseQParams(true),
	"quantized_decomposed.quantize_per_channel.default": qk(func(r *qArgs) (Value, error) {
		return kernels.QuantizePerChannel(r.tensor(0, "input"), r.tensor(1, "scales"), r.tensor(2, "zero_points"), r.int(3, "axis"), r.int(4, "quant_min"), r.int(5, "quant_max"), r.dtype(6, "dtype"))
	}),
	"quantized_decomposed.dequantize_per_channel.default": qk(func(r *qArgs) (Value, error) {
		return kernels.DequantizePerChannel(r.tensor(0, "input"), r.tensor(1, "scales"), r.optTensor(2, "zero_points"), r.int(3, "axis"), r.int(4, "quant_min"), r.int(5, "quant_max"), r.dtype(6, "dtype"), r.optDType(7, "out_dtype"))
	}),
	"quantized_decomposed.choose_qparams_per_token.default": qk(func(r *qArgs) (Value, error) {
		return qPair(kernels.ChooseQParamsPerToken(r.tensor(0, "input"), r.dtype(1, "dtype")))
	}),
	"quantized_decomposed.choose_qparams_per_token_asymmetric.default": qk(func(r *qArgs) (Value, error) {
		return qPair(kernels.ChooseQParamsPerTokenAsymmetric(r.tensor(0, "input"), r.dtype(1, "dtype")))
	}),
	"quantized_decomposed.quantize_per_token.default": qk(func(r *qArgs) (Value, error) {
		return kernels.QuantizePerToken(r.tensor(0, "input"), r.tensor(1, "scales"), r.tensor(2, "zero_points"), r.int(3, "quant_min"), r.int(4, "quant_max"), r.dtype(5, "dtype"))
	}),
	"quantized_decomposed.dequantize_per_token.default": qk(func(r *qArgs) (Value, error) {
		return kernels.DequantizePerToken(r.tensor(0, "input"), r.tensor(1, "scales"), r.tensor(2, "zero_points"), r.int(3, "quant_min"), r.int(4, "quant_max"), r.dtype(5, "dtype"), r.dtype(6, "output_dtype"))
	}),
	"quantized_decomposed.quantize_per_channel_group.default": qk(func(r *qArgs) (Value, error) {
		return kernels.QuantizePerChannelGroup(r.tensor(0, "input"), r.tensor(1, "scales"), r.tensor(2, "zero_points"), r.int(3, "quant_min"), r.int(4, "quant_max"), r.dtype(5, "dtype"), r.int(6, "group_size"))
	}),
	"quantized_decomposed.dequantize_per_channel_group.default": qk(func(r *qArgs) (Value, error) {
		return kernels.DequantizePerChannelGroup(r.tensor(0, "input"), r.tensor(1, "scales"), r.optTensor(2, "zero_points"), r.int(3, "quant_min"), r.int(4, "quant_max"), r.dtype(5, "dtype"), r.int(6, "group_size"), r.dtype(7, "output_dtype"))
	}),
	"quantized_decomposed.fake_quant_per_channel.default": qk(func(r *qArgs) (Value, error) {
		return kernels.FakeQuantPerChannel(r.tensor(0, "input"), r.tensor(1, "scales"), r.tensor(2, "zero_points"), r.int(3, "axis"), r.int(4, "quant_min"), r.int(5, "quant_max"))
	}),
	"quantized_decomposed.convert_element_type.no_fuse": qk(func(r *qArgs) (Value, error) {
		return kernels.ConvertElementType(r.tensor(0, "input"), r.dtype(1, "dtype"))
	}),

	"torchao.quantize_affine.default": qk(func(r *qArgs) (Value, error) {
		d := r.dtype(4, "output_dtype")
		lo, hi := r.bounds(d, 5, 6)
		return kernels.QuantizeAffine(r.tensor(0, "input"), r.ints(1, "block_size"), r.tensor(2, "scale"), r.optTensor(3, "zero_point"), d, lo, hi)
	}),
	"torchao.dequantize_affine.default": qk(func(r *qArgs) (Value, error) {
		d := r.dtype(4, "input_dtype")
		lo, hi := r.bounds(d, 5, 6)
		return kernels.DequantizeAffine(r.tensor(0, "input"), r.ints(1, "block_size"), r.tensor(2, "scale"), r.optTensor(3, "zero_point"), d, lo, hi, r.optDType(7, "output_dtype"))
	}),
	"torchao.choose_qparams_affine.default": qk(func(r *qArgs) (Value, error) {
		x := r.tensor(0, "input")
		mapping := r.str(1, "mapping_type")
		block := r.ints(2, "block_size")
		d := r.dtype(3, "target_dtype")
		lo, hi := r.bounds(d, 4, 5)
		opts := kernels.AffineQParamsOptions{
			Eps:            r.optFloat(6, "eps"),
			ScaleDType:     r.optDType(7, "scale_dtype"),
			ZeroPointDType: r.optDType(8, "zero_point_dtype"),
			KeepDim:        r.optBool(9, "keepdim"),
		}
		if r.err != nil {
			return nil, r.err
		}
		return qPair(kernels.ChooseQParamsAffine(x, kernels.MappingType(mapping), block, d, lo, hi, opts))
	}),
	"torchao.reference_dqlinear_int4.default": qk(func(r *qArgs) (Value, error) {
		return kernels.ReferenceDQLinearInt4(r.tensor(0, "x_fp32"), r.float(1, "x_eps"), r.tensor(2, "weight_i4"), r.tensor(3, "weight_scale"), r.optTensor(4, "weight_zero_point"), r.optTensor(5, "bias_fp32"), r.ints(6, "group_size"), kernels.DQLinearInt4Options{})
	}),

	"aten.round.default": qk(func(r *qArgs) (Value, error) {
		return kernels.Round(r.tensor(0, "self"))
	}),
	"aten.clamp.default": qk(func(r *qArgs) (Value, error) {
		return kernels.Clamp(r.tensor(0, "self"), r.optScalar(1, "min"), r.optScalar(2, "max"))
	}),
	"aten.clamp.Tensor": qk(func(r *qArgs) (Value, error) {
		return kernels.ClampTensor(r.tensor(0, "self"), r.optTensor(1, "min"), r.optTensor(2, "max"))
	}),
	"aten.to.dtype": qk(func(r *qArgs) (Value, error) {
		return kernels.ToDType(r.tensor(0, "self"), r.dtype(1, "dtype"))
	}),
}

// out_dtype runs its inner op through the default registry, which is built
// from this table, so it is added at init time to avoid an initialisation
// cycle.
func init() { quantKernels["higher_order.out_dtype.default"] = outDTypeKernel }

// qk wraps an adapter: it runs fn with a reader over args and returns the
// reader's first argument error in preference to the kernel's.
func qk(fn func(r *qArgs) (Value, error)) KernelFunc {
	return func(args []Value) (Value, error) {
		r := &qArgs{args: args}
		v, err := fn(r)
		if r.err != nil {
			return nil, r.err
		}
		if err != nil {
			return nil, err
		}
		if t, ok := v.(*tensor.Tensor); ok && t == nil {
			return nil, fmt.Errorf("kernel returned no tensor")
		}
		return v, nil
	}
}

func qkChooseQParams(symmetric bool) KernelFunc {
	return qk(func(r *qArgs) (Value, error) {
		return qPair(kernels.ChooseQParams(r.tensor(0, "input"), r.int(1, "quant_min"), r.int(2, "quant_max"), r.float(3, "eps"), r.dtype(4, "dtype"), symmetric))
	})
}

// qPair packs a kernel's two results as the op's tuple.
func qPair(a, b *tensor.Tensor, err error) (Value, error) {
	if err != nil {
		return nil, err
	}
	return Tuple{a, b}, nil
}

// qArgs reads normalised arguments; the first problem is kept in err and
// later reads return zero values.
type qArgs struct {
	args []Value
	err  error
}

func (r *qArgs) fail(i int, name, want string) {
	if r.err != nil {
		return
	}
	var got Value
	if i < len(r.args) {
		got = r.args[i]
	}
	desc := fmt.Sprintf("%T %v", got, got)
	switch g := got.(type) {
	case nil:
		desc = "None"
	case *tensor.Tensor:
		desc = "tensor " + g.String()
	}
	r.err = fmt.Errorf("%w: argument %d %q: want %s, got %s", kernels.ErrBadArgument, i, name, want, desc)
}

func (r *qArgs) get(i int) Value {
	if i < len(r.args) {
		return r.args[i]
	}
	return nil
}

func (r *qArgs) tensor(i int, name string) *tensor.Tensor {
	t, ok := r.get(i).(*tensor.Tensor)
	if !ok || t == nil {
		r.fail(i, name, "a tensor")
		return nil
	}
	return t
}

func (r *qArgs) optTensor(i int, name string) *tensor.Tensor {
	switch v := r.get(i).(type) {
	case nil:
		return nil
	case *tensor.Tensor:
		return v
	}
	r.fail(i, name, "a tensor or None")
	return nil
}

func (r *qArgs) int(i int, name string) int64 {
	switch v := r.get(i).(type) {
	case int64:
		return v
	case bool:
		if v {
			return 1
		}
		return 0
	}
	r.fail(i, name, "an int")
	return 0
}

// intItem reads an int or a one-element integer tensor (the .tensor2
// overloads pass bounds as tensors).
func (r *qArgs) intItem(i int, name string) int64 {
	if t, ok := r.get(i).(*tensor.Tensor); ok && t != nil {
		_, z, err := kernels.ScalarParams(tensor.MustFromData(tensor.Float64, []int{1}, []float64{0}), t)
		if err != nil && r.err == nil {
			r.err = fmt.Errorf("argument %d %q: %w", i, name, err)
		}
		return z
	}
	return r.int(i, name)
}

func (r *qArgs) float(i int, name string) float64 {
	switch v := r.get(i).(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	r.fail(i, name, "a float")
	return 0
}

func (r *qArgs) optFloat(i int, name string) *float64 {
	switch v := r.get(i).(type) {
	case nil:
		return nil
	case float64:
		return &v
	case int64:
		f := float64(v)
		return &f
	}
	r.fail(i, name, "a float or None")
	return nil
}

func (r *qArgs) optBool(i int, name string) bool {
	switch v := r.get(i).(type) {
	case nil:
		return false
	case bool:
		return v
	}
	r.fail(i, name, "a bool")
	return false
}

// optScalar reads a Scalar? as nil, int64 or float64 (bool as int64).
func (r *qArgs) optScalar(i int, name string) any {
	switch v := r.get(i).(type) {
	case nil:
		return nil
	case int64, float64:
		return v
	case bool:
		if v {
			return int64(1)
		}
		return int64(0)
	}
	r.fail(i, name, "a number or None")
	return nil
}

func (r *qArgs) str(i int, name string) string {
	if s, ok := r.get(i).(string); ok {
		return s
	}
	r.fail(i, name, "a string")
	return ""
}

func (r *qArgs) dtype(i int, name string) tensor.DType {
	if d, ok := r.get(i).(tensor.DType); ok && d.Valid() {
		return d
	}
	r.fail(i, name, "a dtype")
	return tensor.Unknown
}

// optDType reads a ScalarType? (None gives Unknown, the kernels' default).
func (r *qArgs) optDType(i int, name string) tensor.DType {
	if r.get(i) == nil {
		return tensor.Unknown
	}
	return r.dtype(i, name)
}

// ints reads an int list (SymInt[]) as []int.
func (r *qArgs) ints(i int, name string) []int {
	items, ok := Sequence(r.get(i))
	if !ok {
		r.fail(i, name, "a list of ints")
		return nil
	}
	out := make([]int, len(items))
	for j, it := range items {
		n, ok := it.(int64)
		if !ok {
			r.fail(i, name, "a list of ints")
			return nil
		}
		out[j] = int(n)
	}
	return out
}

// scalarParams reads the one-element scale and zero_point tensors of the
// .tensor overloads.
func (r *qArgs) scalarParams(si, zi int) (float64, int64) {
	s := r.tensor(si, "scale")
	z := r.tensor(zi, "zero_point")
	if r.err != nil {
		return 0, 0
	}
	sv, zv, err := kernels.ScalarParams(s, z)
	if err != nil {
		r.err = err
	}
	return sv, zv
}

// bounds reads the Scalar? quant_min/quant_max of the torchao ops and
// resolves None to dtype's bounds.
func (r *qArgs) bounds(d tensor.DType, li, hi int) (int64, int64) {
	var lo, up *int64
	for k, i := range []int{li, hi} {
		name := []string{"quant_min", "quant_max"}[k]
		switch v := r.get(i).(type) {
		case nil:
		case int64:
			if k == 0 {
				lo = &v
			} else {
				up = &v
			}
		case float64:
			n := int64(v)
			if float64(n) != v {
				r.fail(i, name, "an integral number")
				return 0, 0
			}
			if k == 0 {
				lo = &n
			} else {
				up = &n
			}
		default:
			r.fail(i, name, "an int or None")
			return 0, 0
		}
	}
	if r.err != nil {
		return 0, 0
	}
	a, b, err := kernels.AffineBounds(d, lo, up)
	if err != nil {
		r.err = err
	}
	return a, b
}

// outDTypeKernel runs higher_order.out_dtype(op, out_dtype, *args): the
// integer linear/mm and the elementwise mul/div go through
// [kernels.OutDType]; any other inner op runs its own kernel on the
// promoted tensors and the result is cast to out_dtype.
func outDTypeKernel(args []Value) (Value, error) {
	r := &qArgs{args: args}
	op, ok := outDTypeOp(r.get(0))
	if !ok {
		r.fail(0, "op", "an op overload such as aten.linear.default")
		return nil, r.err
	}
	out := r.dtype(1, "out_dtype")
	if r.err != nil {
		return nil, r.err
	}
	inner := args[2:]
	name := op.String()
	switch name {
	case "aten.mul.Tensor", "aten.div.Tensor", "aten.linear.default", "aten.mm.default":
		operands := make([]kernels.Operand, len(inner))
		for i, a := range inner {
			switch v := a.(type) {
			case *tensor.Tensor:
				operands[i] = kernels.T(v)
			case nil:
				operands[i] = kernels.Operand{}
			default:
				operands[i] = kernels.S(v)
			}
		}
		// drop a trailing None (linear without bias)
		for len(operands) > 0 && operands[len(operands)-1].T == nil && operands[len(operands)-1].S == nil {
			operands = operands[:len(operands)-1]
		}
		return kernels.OutDType(name, out, operands)
	}
	def, ok := Default().Op(op)
	if !ok || def.Kernel == nil {
		return nil, fmt.Errorf("%w: argument 0 \"op\": %s has no kernel", kernels.ErrBadArgument, op)
	}
	norm, err := def.Schema.Normalize(inner, nil)
	if err != nil {
		return nil, fmt.Errorf("out_dtype(%s): %w", op, err)
	}
	probe, err := tensor.Zeros(out, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: out_dtype(%s): argument 1 \"out_dtype\": %v", kernels.ErrUnsupportedDType, op, err)
	}
	ops := []kernels.Operand{kernels.T(probe)}
	for _, a := range norm {
		if t, ok := a.(*tensor.Tensor); ok && t != nil {
			ops = append(ops, kernels.T(t))
		}
	}
	pt, err := kernels.ResultType(ops...)
	if err != nil {
		return nil, fmt.Errorf("out_dtype(%s): %w", op, err)
	}
	for i, a := range norm {
		if t, ok := a.(*tensor.Tensor); ok && t != nil {
			c, err := kernels.ToDType(t, pt)
			if err != nil {
				return nil, fmt.Errorf("out_dtype(%s): argument %d: %w", op, i, err)
			}
			norm[i] = c
		}
	}
	res, err := def.Kernel(norm)
	if err != nil {
		return nil, fmt.Errorf("out_dtype(%s): %w", op, err)
	}
	t, ok := res.(*tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("out_dtype(%s): inner op returned %T, want one tensor", op, res)
	}
	return kernels.ToDType(t, out)
}
