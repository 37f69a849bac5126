package ops

import (
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// atenKernels maps the aten overloads to their kernels. Keys are overload
// names as "ns.op.overload". Each adapter reads the normalised arguments
// in the order of the op's PyTorch schema (native_functions.yaml) and calls
// a typed kernel of package kernels.
var atenKernels = map[string]KernelFunc{
	"aten.linear.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Linear(r.tensor(0, "input"), r.tensor(1, "weight"), r.optTensor(2, "bias"))
	}),
	"aten.conv1d.default":      atenConvNd(1, false),
	"aten.conv2d.default":      atenConvNd(2, false),
	"aten.conv1d.padding":      atenConvNd(1, true),
	"aten.conv2d.padding":      atenConvNd(2, true),
	"aten.convolution.default": atenOp(atenConvolution),
	"aten.addmm.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Addmm(r.tensor(0, "self"), r.tensor(1, "mat1"), r.tensor(2, "mat2"), r.float(3, "beta"), r.float(4, "alpha"))
	}),
	"aten.gru.input": atenOp(func(r *argReader) (Value, error) {
		out, hy, err := kernels.GRU(r.tensor(0, "input"), r.tensor(1, "hx"), r.tensors(2, "params"), r.bool(3, "has_biases"), r.int(4, "num_layers"), r.float(5, "dropout"), r.bool(6, "train"), r.bool(7, "bidirectional"), r.bool(8, "batch_first"))
		if err != nil {
			return nil, err
		}
		return Tuple{out, hy}, nil
	}),
	"aten.mm.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Mm(r.tensor(0, "self"), r.tensor(1, "mat2"))
	}),
	"aten.bmm.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Bmm(r.tensor(0, "self"), r.tensor(1, "mat2"))
	}),
	"aten.matmul.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Matmul(r.tensor(0, "self"), r.tensor(1, "other"))
	}),

	// Views and copies.
	"aten.t.default": atenOp(func(r *argReader) (Value, error) {
		x := r.tensor(0, "self")
		if r.err != nil {
			return nil, r.err
		}
		if x.Dim() > 2 {
			return nil, fmt.Errorf("%w: t: argument \"self\": want at most 2 dims, got %v", tensor.ErrShape, x.Shape())
		}
		if x.Dim() < 2 {
			return x, nil
		}
		return x.Transpose(0, 1)
	}),
	"aten.transpose.int": atenOp(func(r *argReader) (Value, error) {
		x, d0, d1 := r.tensor(0, "self"), r.int(1, "dim0"), r.int(2, "dim1")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Transpose(d0, d1) })
	}),
	"aten.permute.default": atenOp(func(r *argReader) (Value, error) {
		x, dims := r.tensor(0, "self"), r.ints(1, "dims")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Permute(dims...) })
	}),
	"aten.view.default":         atenReshape(true),
	"aten._unsafe_view.default": atenReshape(false),
	"aten.reshape.default":      atenReshape(false),
	"aten.flatten.using_ints": atenOp(func(r *argReader) (Value, error) {
		x, s, e := r.tensor(0, "self"), r.int(1, "start_dim"), r.int(2, "end_dim")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Flatten(s, e) })
	}),
	"aten.unsqueeze.default": atenOp(func(r *argReader) (Value, error) {
		x, d := r.tensor(0, "self"), r.int(1, "dim")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Unsqueeze(d) })
	}),
	"aten.squeeze.default": atenOp(func(r *argReader) (Value, error) {
		x := r.tensor(0, "self")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Squeeze() })
	}),
	"aten.squeeze.dim": atenOp(func(r *argReader) (Value, error) {
		x, d := r.tensor(0, "self"), r.int(1, "dim")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Squeeze(d) })
	}),
	"aten.squeeze.dims": atenOp(func(r *argReader) (Value, error) {
		x, d := r.tensor(0, "self"), r.ints(1, "dim")
		return viewResult(r, func() (*tensor.Tensor, error) {
			if len(d) == 0 {
				return x, nil
			}
			return x.Squeeze(d...)
		})
	}),
	"aten.expand.default": atenOp(func(r *argReader) (Value, error) {
		x, s := r.tensor(0, "self"), r.ints(1, "size")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Expand(s...) })
	}),
	"aten.slice.Tensor": atenOp(func(r *argReader) (Value, error) {
		x, d := r.tensor(0, "self"), r.int(1, "dim")
		start, hasStart := r.optInt(2, "start")
		end, hasEnd := r.optInt(3, "end")
		step := r.int(4, "step")
		if !hasStart {
			start = 0
		}
		if !hasEnd {
			end = math.MaxInt
		}
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Slice(d, start, end, step) })
	}),
	"aten.select.int": atenOp(func(r *argReader) (Value, error) {
		x, d, i := r.tensor(0, "self"), r.int(1, "dim"), r.int(2, "index")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Select(d, i) })
	}),
	"aten.cat.default": atenOp(func(r *argReader) (Value, error) {
		ts, d := r.tensors(0, "tensors"), r.int(1, "dim")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.Cat(ts, d) })
	}),
	"aten.clone.default": atenOp(func(r *argReader) (Value, error) {
		x := r.tensor(0, "self")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Clone(), nil })
	}),
	"aten.contiguous.default": atenOp(func(r *argReader) (Value, error) {
		x := r.tensor(0, "self")
		return viewResult(r, func() (*tensor.Tensor, error) { return x.Contiguous(), nil })
	}),
	"aten.dropout.default": atenOp(func(r *argReader) (Value, error) {
		x, p, train := r.tensor(0, "input"), r.float(1, "p"), r.bool(2, "train")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.Dropout(x, p, train) })
	}),
	"aten.embedding.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Embedding(r.tensor(0, "weight"), r.tensor(1, "indices"))
	}),

	// Elementwise arithmetic.
	"aten.add.Tensor":      atenBinary(kernels.OpAdd, true, true),
	"aten.add.Scalar":      atenBinary(kernels.OpAdd, false, true),
	"aten.sub.Tensor":      atenBinary(kernels.OpSub, true, true),
	"aten.sub.Scalar":      atenBinary(kernels.OpSub, false, true),
	"aten.mul.Tensor":      atenBinary(kernels.OpMul, true, false),
	"aten.mul.Scalar":      atenBinary(kernels.OpMul, false, false),
	"aten.div.Tensor":      atenBinary(kernels.OpDiv, true, false),
	"aten.div.Scalar":      atenBinary(kernels.OpDiv, false, false),
	"aten.maximum.default": atenBinary(kernels.OpMaximum, true, false),
	"aten.minimum.default": atenBinary(kernels.OpMinimum, true, false),

	// Activations.
	"aten.relu.default":    atenUnary(kernels.Relu),
	"aten.relu_.default":   atenUnary(kernels.Relu),
	"aten.sigmoid.default": atenUnary(kernels.Sigmoid),
	"aten.silu.default":    atenUnary(kernels.Silu),
	"aten.silu_.default":   atenUnary(kernels.Silu),
	"aten.tanh.default":    atenUnary(kernels.Tanh),
	"aten.gelu.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Gelu(r.tensor(0, "self"), r.str(1, "approximate"))
	}),
	"aten.hardtanh.default":  atenHardtanh,
	"aten.hardtanh_.default": atenHardtanh,

	// Softmax and reductions.
	"aten.softmax.int":          atenSoftmax(false, false),
	"aten._softmax.default":     atenSoftmax(false, true),
	"aten.log_softmax.int":      atenSoftmax(true, false),
	"aten._log_softmax.default": atenSoftmax(true, true),
	"aten.mean.dim":             atenReduce(kernels.Mean, true),
	"aten.mean.default":         atenReduce(kernels.Mean, false),
	"aten.sum.dim_IntList":      atenReduce(kernels.Sum, true),
	"aten.sum.default":          atenReduce(kernels.Sum, false),
	"aten.amax.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Amax(r.tensor(0, "self"), r.ints(1, "dim"), r.bool(2, "keepdim"))
	}),
	"aten.amin.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.Amin(r.tensor(0, "self"), r.ints(1, "dim"), r.bool(2, "keepdim"))
	}),

	// Normalisation.
	"aten.layer_norm.default": atenOp(func(r *argReader) (Value, error) {
		out, _, _, err := kernels.LayerNorm(r.tensor(0, "input"), r.ints(1, "normalized_shape"), r.optTensor(2, "weight"), r.optTensor(3, "bias"), r.float(4, "eps"))
		return out, err
	}),
	"aten.native_layer_norm.default": atenOp(func(r *argReader) (Value, error) {
		out, m, s, err := kernels.LayerNorm(r.tensor(0, "input"), r.ints(1, "normalized_shape"), r.optTensor(2, "weight"), r.optTensor(3, "bias"), r.float(4, "eps"))
		if err != nil {
			return nil, err
		}
		return Tuple{out, m, s}, nil
	}),
	"aten.group_norm.default": atenOp(func(r *argReader) (Value, error) {
		out, _, _, err := kernels.GroupNorm(r.tensor(0, "input"), r.int(1, "num_groups"), r.optTensor(2, "weight"), r.optTensor(3, "bias"), r.float(4, "eps"))
		return out, err
	}),
	"aten.native_group_norm.default": atenOp(func(r *argReader) (Value, error) {
		x := r.tensor(0, "input")
		w, b := r.optTensor(1, "weight"), r.optTensor(2, "bias")
		n, c, hw, g, eps := r.int(3, "N"), r.int(4, "C"), r.int(5, "HxW"), r.int(6, "group"), r.float(7, "eps")
		if r.err != nil {
			return nil, r.err
		}
		if x.Dim() < 2 || x.Size(0) != n || x.Size(1) != c || x.Numel() != n*c*hw {
			return nil, fmt.Errorf("%w: native_group_norm: argument \"input\" %v does not match N=%d, C=%d, HxW=%d", tensor.ErrShape, x.Shape(), n, c, hw)
		}
		out, m, s, err := kernels.GroupNorm(x, g, w, b, eps)
		if err != nil {
			return nil, err
		}
		return Tuple{out, m, s}, nil
	}),
	"aten.instance_norm.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.InstanceNorm(r.tensor(0, "input"), r.optTensor(1, "weight"), r.optTensor(2, "bias"), r.optTensor(3, "running_mean"), r.optTensor(4, "running_var"), r.bool(5, "use_input_stats"), r.float(7, "eps"))
	}),
	"aten.batch_norm.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.BatchNorm(r.tensor(0, "input"), r.optTensor(1, "weight"), r.optTensor(2, "bias"), r.optTensor(3, "running_mean"), r.optTensor(4, "running_var"), r.bool(5, "training"), r.float(7, "eps"))
	}),
	"aten._native_batch_norm_legit_no_training.default": atenOp(func(r *argReader) (Value, error) {
		x := r.tensor(0, "input")
		out, err := kernels.BatchNorm(x, r.optTensor(1, "weight"), r.optTensor(2, "bias"), r.tensor(3, "running_mean"), r.tensor(4, "running_var"), false, r.float(6, "eps"))
		if err != nil {
			return nil, err
		}
		e1, _ := tensor.Zeros(x.DType(), 0)
		e2, _ := tensor.Zeros(x.DType(), 0)
		return Tuple{out, e1, e2}, nil
	}),

	// Pooling.
	"aten.max_pool2d.default": atenOp(func(r *argReader) (Value, error) {
		out, _, err := kernels.MaxPool2d(r.tensor(0, "self"), r.ints(1, "kernel_size"), r.ints(2, "stride"), r.ints(3, "padding"), r.ints(4, "dilation"), r.bool(5, "ceil_mode"))
		return out, err
	}),
	"aten.max_pool2d_with_indices.default": atenOp(func(r *argReader) (Value, error) {
		out, idx, err := kernels.MaxPool2d(r.tensor(0, "self"), r.ints(1, "kernel_size"), r.ints(2, "stride"), r.ints(3, "padding"), r.ints(4, "dilation"), r.bool(5, "ceil_mode"))
		if err != nil {
			return nil, err
		}
		return Tuple{out, idx}, nil
	}),
	"aten.avg_pool2d.default": atenOp(func(r *argReader) (Value, error) {
		div, ok := r.optInt(6, "divisor_override")
		if ok && div <= 0 {
			return nil, fmt.Errorf("%w: avg_pool2d: argument \"divisor_override\": want positive, got %d", kernels.ErrBadArgument, div)
		}
		return kernels.AvgPool2d(r.tensor(0, "self"), r.ints(1, "kernel_size"), r.ints(2, "stride"), r.ints(3, "padding"), r.bool(4, "ceil_mode"), r.bool(5, "count_include_pad"), div)
	}),
	"aten.adaptive_avg_pool2d.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.AdaptiveAvgPool2d(r.tensor(0, "self"), r.ints(1, "output_size"))
	}),
	"aten._adaptive_avg_pool2d.default": atenOp(func(r *argReader) (Value, error) {
		return kernels.AdaptiveAvgPool2d(r.tensor(0, "self"), r.ints(1, "output_size"))
	}),

	// Attention.
	"aten.scaled_dot_product_attention.default": atenOp(func(r *argReader) (Value, error) {
		scale := 0.0
		if r.has(6) {
			scale = r.float(6, "scale")
			if r.err == nil && scale <= 0 {
				return nil, fmt.Errorf("%w: scaled_dot_product_attention: argument \"scale\": want positive, got %v", kernels.ErrBadArgument, scale)
			}
		}
		return kernels.ScaledDotProductAttention(r.tensor(0, "query"), r.tensor(1, "key"), r.tensor(2, "value"), r.optTensor(3, "attn_mask"),
			r.float(4, "dropout_p"), r.bool(5, "is_causal"), scale, r.bool(7, "enable_gqa"))
	}),

	// Export bookkeeping.
	"aten._assert_tensor_metadata.default": atenOp(func(r *argReader) (Value, error) {
		x := r.tensor(0, "a")
		size, hasSize := r.ints(1, "size"), r.has(1)
		dt := r.dtype(3, "dtype")
		if r.err != nil {
			return nil, r.err
		}
		if hasSize && !slices.Equal(size, x.Shape()) {
			return nil, fmt.Errorf("%w: _assert_tensor_metadata: argument \"size\": tensor has shape %v, want %v", tensor.ErrShape, x.Shape(), size)
		}
		if dt != tensor.Unknown && dt != x.DType() {
			return nil, fmt.Errorf("%w: _assert_tensor_metadata: argument \"dtype\": tensor has dtype %s, want %s", kernels.ErrUnsupportedDType, x.DType(), dt)
		}
		return nil, nil
	}),
	// copy_ returns the new contents of self (src broadcast to self's shape
	// and cast to its dtype); like every kernel it does not write into self.
	"aten.copy_.default": atenOp(func(r *argReader) (*tensor.Tensor, error) {
		self, src := r.tensor(0, "self"), r.tensor(1, "src")
		return viewResult(r, func() (*tensor.Tensor, error) {
			e, err := src.Expand(self.Shape()...)
			if err != nil {
				return nil, fmt.Errorf("copy_: argument \"src\" %v does not broadcast to self %v: %w", src.Shape(), self.Shape(), err)
			}
			if src.DType() == self.DType() {
				return e.Clone(), nil
			}
			return kernels.ToDType(e.Clone(), self.DType())
		})
	}),
}

// argReader reads normalised kernel arguments by position, remembering the
// first error so adapters stay linear. Once err is set every read returns
// a zero value, and typed kernels are not called (see atenOp).
type argReader struct {
	op   string
	args []Value
	err  error
}

func (r *argReader) fail(i int, name, want string) {
	if r.err == nil {
		var got Value
		if i < len(r.args) {
			got = r.args[i]
		}
		r.err = fmt.Errorf("%w: argument %d %q: want %s, got %s", kernels.ErrBadArgument, i, name, want, describeValue(got))
	}
}

func describeValue(v Value) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case *tensor.Tensor:
		return "tensor " + x.String()
	}
	return fmt.Sprintf("%T %v", v, v)
}

func (r *argReader) get(i int, name string) (Value, bool) {
	if r.err != nil {
		return nil, false
	}
	if i >= len(r.args) {
		r.err = fmt.Errorf("%w: argument %d %q missing: got %d arguments", kernels.ErrBadArgument, i, name, len(r.args))
		return nil, false
	}
	return r.args[i], true
}

func (r *argReader) has(i int) bool { return i < len(r.args) && r.args[i] != nil }

func (r *argReader) tensor(i int, name string) *tensor.Tensor {
	v, ok := r.get(i, name)
	if !ok {
		return nil
	}
	t, isT := v.(*tensor.Tensor)
	if !isT || t == nil {
		r.fail(i, name, "a tensor")
		return nil
	}
	return t
}

func (r *argReader) optTensor(i int, name string) *tensor.Tensor {
	v, ok := r.get(i, name)
	if !ok || v == nil {
		return nil
	}
	t, isT := v.(*tensor.Tensor)
	if !isT {
		r.fail(i, name, "a tensor or None")
		return nil
	}
	return t
}

func (r *argReader) tensors(i int, name string) []*tensor.Tensor {
	v, ok := r.get(i, name)
	if !ok {
		return nil
	}
	seq, isSeq := Sequence(v)
	if !isSeq {
		r.fail(i, name, "a list of tensors")
		return nil
	}
	out := make([]*tensor.Tensor, len(seq))
	for j, e := range seq {
		t, isT := e.(*tensor.Tensor)
		if !isT || t == nil {
			r.fail(i, name, fmt.Sprintf("a list of tensors (element %d is %s)", j, describeValue(e)))
			return nil
		}
		out[j] = t
	}
	return out
}

func (r *argReader) int(i int, name string) int {
	v, ok := r.get(i, name)
	if !ok {
		return 0
	}
	switch x := v.(type) {
	case int64:
		return saturateInt(x)
	case bool:
		if x {
			return 1
		}
		return 0
	}
	r.fail(i, name, "an int")
	return 0
}

func (r *argReader) optInt(i int, name string) (int, bool) {
	v, ok := r.get(i, name)
	if !ok || v == nil {
		return 0, false
	}
	return r.int(i, name), true
}

func (r *argReader) float(i int, name string) float64 {
	v, ok := r.get(i, name)
	if !ok {
		return 0
	}
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case bool:
		if x {
			return 1
		}
		return 0
	}
	r.fail(i, name, "a number")
	return 0
}

// readArg reads argument i as a T, failing with want when it holds
// anything else; a missing argument, and None when noneOK is set, give T's
// zero value.
func readArg[T any](r *argReader, i int, name, want string, noneOK bool) T {
	var zero T
	v, ok := r.get(i, name)
	if !ok || (noneOK && v == nil) {
		return zero
	}
	t, isT := v.(T)
	if !isT {
		r.fail(i, name, want)
	}
	return t
}

func (r *argReader) bool(i int, name string) bool {
	return readArg[bool](r, i, name, "a bool", false)
}

func (r *argReader) str(i int, name string) string {
	return readArg[string](r, i, name, "a string", false)
}

// ints reads an int list (a List or Tuple of int64, a single int, or None
// for an empty list).
func (r *argReader) ints(i int, name string) []int {
	v, ok := r.get(i, name)
	if !ok || v == nil {
		return nil
	}
	var seq []Value
	switch x := v.(type) {
	case List:
		seq = x
	case Tuple:
		seq = x
	case int64:
		return []int{int(x)}
	default:
		r.fail(i, name, "a list of ints")
		return nil
	}
	out := make([]int, len(seq))
	for j, e := range seq {
		n, isInt := e.(int64)
		if !isInt {
			r.fail(i, name, fmt.Sprintf("a list of ints (element %d is %s)", j, describeValue(e)))
			return nil
		}
		out[j] = int(n)
	}
	return out
}

// dtype reads an optional ScalarType; None gives tensor.Unknown.
func (r *argReader) dtype(i int, name string) tensor.DType {
	return readArg[tensor.DType](r, i, name, "a dtype or None", true) // zero: tensor.Unknown
}

// scalar reads a Scalar (bool, int64 or float64).
func (r *argReader) scalar(i int, name string) any {
	v, ok := r.get(i, name)
	if !ok {
		return nil
	}
	switch v.(type) {
	case bool, int64, float64:
		return v
	}
	r.fail(i, name, "a number")
	return nil
}

// atenOp wraps an adapter: the reader's first error wins over whatever the
// kernel returned (the kernel may have seen zero values), and a nil
// *tensor.Tensor result becomes an untyped nil.
func atenOp[R any](f func(r *argReader) (R, error)) KernelFunc {
	return func(args []Value) (Value, error) {
		r := &argReader{args: args}
		var out R
		var err error
		if r.err == nil {
			out, err = callGuarded(r, f)
		}
		if r.err != nil {
			return nil, r.err
		}
		if err != nil {
			return nil, err
		}
		if t, ok := any(out).(*tensor.Tensor); ok && t == nil {
			return nil, fmt.Errorf("%w: kernel returned no tensor", kernels.ErrBadArgument)
		}
		return out, nil
	}
}

// callGuarded runs f and, when the reader failed, drops f's panics caused
// by zero-value arguments (a nil tensor) in favour of the reader's error.
func callGuarded[R any](r *argReader, f func(r *argReader) (R, error)) (out R, err error) {
	defer func() {
		if p := recover(); p != nil {
			if r.err == nil {
				err = fmt.Errorf("kernel panic: %v", p)
			}
		}
	}()
	return f(r)
}

func viewResult(r *argReader, f func() (*tensor.Tensor, error)) (*tensor.Tensor, error) {
	if r.err != nil {
		return nil, r.err
	}
	return f()
}

func atenReshape(strict bool) KernelFunc {
	return atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, s := r.tensor(0, "self"), r.ints(1, "size")
		return viewResult(r, func() (*tensor.Tensor, error) {
			if strict {
				return x.View(s...)
			}
			return x.Reshape(s...)
		})
	})
}

func atenUnary(f func(*tensor.Tensor) (*tensor.Tensor, error)) KernelFunc {
	return atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x := r.tensor(0, "self")
		return viewResult(r, func() (*tensor.Tensor, error) { return f(x) })
	})
}

var atenHardtanh = atenOp(func(r *argReader) (*tensor.Tensor, error) {
	x, lo, hi := r.tensor(0, "self"), r.float(1, "min_val"), r.float(2, "max_val")
	return viewResult(r, func() (*tensor.Tensor, error) { return kernels.Hardtanh(x, lo, hi) })
})

func atenBinary(op kernels.BinaryOp, tensorOther, hasAlpha bool) KernelFunc {
	return atenOp(func(r *argReader) (*tensor.Tensor, error) {
		var a, b kernels.Operand
		if tensorOther {
			// .Tensor overloads: either operand may be a wrapped number.
			a, b = r.operand(0, "self"), r.operand(1, "other")
		} else {
			a = kernels.T(r.tensor(0, "self"))
			b = kernels.S(r.scalar(1, "other"))
		}
		var alpha any
		if hasAlpha {
			alpha = r.scalar(2, "alpha")
		}
		return viewResult(r, func() (*tensor.Tensor, error) {
			if a.T == nil && b.T == nil {
				// Two wrapped numbers: PyTorch computes on two 0-dim tensors
				// in their result type and returns a 0-dim tensor.
				dt, err := kernels.ResultType(a, b)
				if err != nil {
					return nil, err
				}
				x, err := wrappedNumber(a.S, dt)
				if err != nil {
					return nil, err
				}
				a = kernels.T(x)
			}
			return kernels.Binary(op, a, b, alpha)
		})
	})
}

// wrappedNumber is the 0-dim tensor of dtype d holding the Python number
// v, as PyTorch casts a wrapped number to an op's computation type.
func wrappedNumber(v any, d tensor.DType) (*tensor.Tensor, error) {
	var f float64
	switch x := v.(type) {
	case bool:
		if x {
			f = 1
		}
	case int64:
		if d == tensor.Int64 {
			return tensor.FromData(d, []int{}, []int64{x})
		}
		f = float64(x)
	case float64:
		f = x
	default:
		return nil, fmt.Errorf("%w: wrapped number of Go type %T", kernels.ErrBadArgument, v)
	}
	switch d {
	case tensor.Float32:
		return tensor.FromData(d, []int{}, []float32{float32(f)})
	case tensor.Float64:
		return tensor.FromData(d, []int{}, []float64{f})
	case tensor.Int64:
		return tensor.FromData(d, []int{}, []int64{int64(f)})
	case tensor.Bool:
		return tensor.FromData(d, []int{}, []bool{f != 0})
	}
	return nil, fmt.Errorf("%w: wrapped number as %s", kernels.ErrUnsupportedDType, d)
}

// operand reads argument i of a .Tensor overload as a kernel operand: a
// tensor, or a Python number that PyTorch wraps into a 0-dim tensor
// promoting like a Python scalar.
func (r *argReader) operand(i int, name string) kernels.Operand {
	v, ok := r.get(i, name)
	if !ok {
		return kernels.Operand{}
	}
	switch x := v.(type) {
	case *tensor.Tensor:
		return kernels.T(x)
	case bool, int64, float64:
		return kernels.S(x)
	}
	r.fail(i, name, "a tensor or a number")
	return kernels.Operand{}
}

func atenSoftmax(logOut, internal bool) KernelFunc {
	return atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, d := r.tensor(0, "self"), r.int(1, "dim")
		var dt tensor.DType
		if internal {
			if r.bool(2, "half_to_float") && x != nil && x.DType() != tensor.Float32 {
				dt = tensor.Float32
			}
		} else {
			dt = r.dtype(2, "dtype")
		}
		return viewResult(r, func() (*tensor.Tensor, error) {
			in := x
			if dt != tensor.Unknown && dt != x.DType() {
				if dt != tensor.Float32 {
					return nil, fmt.Errorf("%w: softmax: argument \"dtype\": only float32 conversion is supported, got %s", kernels.ErrUnsupportedDType, dt)
				}
				vals, err := x.Float64s()
				if err != nil {
					return nil, err
				}
				f := make([]float32, len(vals))
				for i, v := range vals {
					f[i] = float32(v)
				}
				in = tensor.F32(x.Shape(), f...)
			}
			if logOut {
				return kernels.LogSoftmax(in, d)
			}
			return kernels.Softmax(in, d)
		})
	})
}

func atenReduce(f func(*tensor.Tensor, []int, bool, tensor.DType) (*tensor.Tensor, error), withDims bool) KernelFunc {
	return atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x := r.tensor(0, "self")
		if !withDims {
			dt := r.dtype(1, "dtype")
			return viewResult(r, func() (*tensor.Tensor, error) { return f(x, nil, false, dt) })
		}
		dims, keep, dt := r.ints(1, "dim"), r.bool(2, "keepdim"), r.dtype(3, "dtype")
		return viewResult(r, func() (*tensor.Tensor, error) { return f(x, dims, keep, dt) })
	})
}

func atenConvNd(nd int, stringPadding bool) KernelFunc {
	return atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, w, b := r.tensor(0, "input"), r.tensor(1, "weight"), r.optTensor(2, "bias")
		stride := r.ints(3, "stride")
		var pad []int
		var mode string
		if stringPadding {
			mode = r.str(4, "padding")
			pad = []int{0}
		} else {
			pad = r.ints(4, "padding")
		}
		dil, groups := r.ints(5, "dilation"), r.int(6, "groups")
		return viewResult(r, func() (*tensor.Tensor, error) {
			p, err := kernels.NewConvParams(nd, stride, pad, dil, groups)
			if err != nil {
				return nil, fmt.Errorf("conv%dd: %w", nd, err)
			}
			if stringPadding {
				if w.Dim() != nd+2 {
					return nil, fmt.Errorf("%w: conv%dd: argument \"weight\": want %d dims, got %v", tensor.ErrShape, nd, nd+2, w.Shape())
				}
				if err := p.PaddingMode(mode, w.Shape()[2:]); err != nil {
					return nil, fmt.Errorf("conv%dd: %w", nd, err)
				}
			}
			return kernels.ConvNd(nd, x, w, b, p)
		})
	})
}

func atenConvolution(r *argReader) (*tensor.Tensor, error) {
	x, w, b := r.tensor(0, "input"), r.tensor(1, "weight"), r.optTensor(2, "bias")
	stride, pad, dil := r.ints(3, "stride"), r.ints(4, "padding"), r.ints(5, "dilation")
	transposed := r.bool(6, "transposed")
	groups := r.int(8, "groups")
	return viewResult(r, func() (*tensor.Tensor, error) {
		if transposed {
			return nil, fmt.Errorf("%w: convolution: argument \"transposed\": transposed convolution is not supported", kernels.ErrBadArgument)
		}
		if w.Dim() != 3 && w.Dim() != 4 {
			return nil, fmt.Errorf("%w: convolution: argument \"weight\": want a 3-D or 4-D tensor (1 or 2 spatial dims), got %v", tensor.ErrShape, w.Shape())
		}
		p, err := kernels.NewConvParams(w.Dim()-2, stride, pad, dil, groups)
		if err != nil {
			return nil, fmt.Errorf("convolution: %w", err)
		}
		return kernels.Convolution(x, w, b, p)
	})
}
