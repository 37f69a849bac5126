package ops

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// structKernels are the kernels of the structural, reduction and attention
// ops added with structRows (and replacements for atenKernels entries whose
// results now follow PyTorch's strides). buildDefault attaches them after
// atenKernels, so an entry here wins over one there.
var structKernels = map[string]KernelFunc{
	"aten.chunk.default": atenOp(func(r *argReader) (Value, error) {
		x, n, d := r.tensor(0, "self"), r.int(1, "chunks"), r.int(2, "dim")
		return tensorList(r, func() ([]*tensor.Tensor, error) { return kernels.Chunk(x, n, d) })
	}),
	"aten.split.Tensor": atenOp(func(r *argReader) (Value, error) {
		x, n, d := r.tensor(0, "self"), r.int(1, "split_size"), r.int(2, "dim")
		return tensorList(r, func() ([]*tensor.Tensor, error) { return kernels.Split(x, n, d) })
	}),
	"aten.split_with_sizes.default": atenOp(func(r *argReader) (Value, error) {
		x, s, d := r.tensor(0, "self"), r.ints(1, "split_sizes"), r.int(2, "dim")
		return tensorList(r, func() ([]*tensor.Tensor, error) { return kernels.SplitWithSizes(x, s, d) })
	}),
	"aten.unbind.int": atenOp(func(r *argReader) (Value, error) {
		x, d := r.tensor(0, "self"), r.int(1, "dim")
		return tensorList(r, func() ([]*tensor.Tensor, error) { return kernels.Unbind(x, d) })
	}),
	"aten.unflatten.int": atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, d, s := r.tensor(0, "self"), r.int(1, "dim"), r.ints(2, "sizes")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.Unflatten(x, d, s) })
	}),
	"aten.stack.default": atenOp(func(r *argReader) (*tensor.Tensor, error) {
		ts, d := r.tensors(0, "tensors"), r.int(1, "dim")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.Stack(ts, d) })
	}),
	"aten.conv_transpose2d.input": atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x, w, b := r.tensor(0, "input"), r.tensor(1, "weight"), r.optTensor(2, "bias")
		st, pd, op := r.ints(3, "stride"), r.ints(4, "padding"), r.ints(5, "output_padding")
		g, dl := r.int(6, "groups"), r.ints(7, "dilation")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.ConvTranspose2d(x, w, b, st, pd, op, g, dl) })
	}),
	// convolution with transposed=True and a 4-D weight is
	// conv_transpose2d; everything else goes to the shared kernel.
	"aten.convolution.default": atenOp(func(r *argReader) (*tensor.Tensor, error) {
		if r.has(6) && r.bool(6, "transposed") {
			x, w, b := r.tensor(0, "input"), r.tensor(1, "weight"), r.optTensor(2, "bias")
			st, pd, dl := r.ints(3, "stride"), r.ints(4, "padding"), r.ints(5, "dilation")
			op, g := r.ints(7, "output_padding"), r.int(8, "groups")
			return viewResult(r, func() (*tensor.Tensor, error) {
				if w.Dim() != 4 {
					return nil, fmt.Errorf("%w: convolution: transposed convolution is supported for 2 spatial dims (4-D weight), got weight %v", kernels.ErrBadArgument, w.Shape())
				}
				return kernels.ConvTranspose2d(x, w, b, st, pd, op, g, dl)
			})
		}
		return atenConvolution(r)
	}),
	// clone keeps a dense input's strides (memory_format=preserve), as
	// PyTorch's empty_like does; a later view depends on them.
	"aten.clone.default": atenOp(func(r *argReader) (*tensor.Tensor, error) {
		x := r.tensor(0, "self")
		return viewResult(r, func() (*tensor.Tensor, error) { return kernels.CloneLike(x) })
	}),
}

// tensorList runs f unless the reader failed and returns its views as the
// List a Tensor[] result is.
func tensorList(r *argReader, f func() ([]*tensor.Tensor, error)) (Value, error) {
	if r.err != nil {
		return nil, r.err
	}
	ts, err := f()
	if err != nil {
		return nil, err
	}
	out := make(List, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out, nil
}

// withStructKernels returns the aten kernel map with structKernels laid
// over it and the layout rules applied: the merged table buildDefault
// attaches.
func withStructKernels(aten map[string]KernelFunc) map[string]KernelFunc {
	out := maps.Clone(aten)
	maps.Copy(out, structKernels)
	return withLayoutRules(out)
}

// withLayoutRules returns a copy of m with the kernels wrapped whose
// results PyTorch lays out after their inputs: the elementwise ops
// (TensorIterator's layout), the convolutions (a channels-last input's
// layout), the ops of inputLayoutOps and the quantize and dequantize ops
// of qdqLayoutOps.
func withLayoutRules(m map[string]KernelFunc) map[string]KernelFunc {
	out := make(map[string]KernelFunc, len(m))
	for k, f := range m {
		if name, _, ok := strings.Cut(strings.TrimPrefix(k, "aten."), "."); ok && layoutOps[name] {
			f = withIteratorLayout(name, f)
		}
		if convOps[k] {
			f = withConvLayout(f)
		}
		if inputLayoutOps[k] {
			f = withInputLayout(f)
		}
		if qdqLayoutOps[k] {
			f = withQDQLayout(f)
		}
		out[k] = f
	}
	return out
}

// layoutOps are the elementwise (TensorIterator) ops whose results take
// their inputs' memory layout in PyTorch: a Llama block's rotary
// embedding multiplies transposed q and k, and the attention output and
// the view after it depend on that layout.
var layoutOps = map[string]bool{
	"add": true, "sub": true, "mul": true, "div": true, "maximum": true, "minimum": true,
	"neg": true, "rsqrt": true, "sqrt": true, "pow": true, "exp": true, "log": true, "abs": true,
	"relu": true, "gelu": true, "silu": true, "sigmoid": true, "tanh": true, "hardtanh": true,
	"hardswish": true, "hardsigmoid": true, "clamp": true, "round": true, "erf": true,
	"add_": true, "sub_": true, "mul_": true, "div_": true, "relu_": true, "silu_": true,
	"hardtanh_": true, "hardswish_": true, "hardsigmoid_": true, "clamp_": true,
}

// withIteratorLayout wraps an elementwise kernel so that a new contiguous
// result is laid out as TensorIterator lays it out (see
// kernels.IteratorStrides); an in-place op's result takes self's dense
// layout. A result that is one of the inputs is returned as it is.
func withIteratorLayout(name string, f KernelFunc) KernelFunc {
	inPlace := len(name) > 0 && name[len(name)-1] == '_'
	return func(args []Value) (Value, error) {
		v, err := f(args)
		if err != nil {
			return v, err
		}
		out, ok := v.(*tensor.Tensor)
		if !ok || !out.IsContiguous() || out.Numel() <= 1 {
			return v, nil
		}
		var ins []*tensor.Tensor
		for _, a := range args {
			if t, ok := a.(*tensor.Tensor); ok {
				if t == out {
					return v, nil
				}
				ins = append(ins, t)
			}
		}
		var st []int
		if inPlace && len(ins) > 0 && slices.Equal(ins[0].Shape(), out.Shape()) {
			var dense bool
			if st, dense = kernels.DenseStrides(ins[0]); !dense {
				return v, nil
			}
		} else {
			st = kernels.IteratorStrides(out.Shape(), ins...)
		}
		return kernels.Restride(out, st)
	}
}

// convOps are the convolutions whose result PyTorch lays out channels-last
// when the input or the weight suggests that format (ATen's
// mkldnn_conv_use_channels_last), as in ConvNeXt's blocks after the
// permute back from [N, H, W, C].
var convOps = map[string]bool{
	"aten.conv2d.default": true, "aten.conv2d.padding": true, "aten.convolution.default": true,
	"aten.conv_transpose2d.input": true,
}

// withConvLayout wraps a convolution kernel so that a contiguous 4-D
// result is laid out channels-last when its input or weight (arguments 0
// and 1) suggests channels-last.
func withConvLayout(f KernelFunc) KernelFunc {
	return func(args []Value) (Value, error) {
		v, err := f(args)
		if err != nil {
			return v, err
		}
		out, ok := v.(*tensor.Tensor)
		if !ok || out.Dim() != 4 || !out.IsContiguous() || out.Numel() <= 1 {
			return v, nil
		}
		cl := false
		for i := 0; i < 2 && i < len(args); i++ {
			if t, ok := args[i].(*tensor.Tensor); ok && t.DType() != tensor.Float64 && kernels.SuggestsChannelsLast(t) {
				cl = true
			}
		}
		if !cl {
			return v, nil
		}
		return kernels.Restride(out, kernels.ChannelsLastStrides(out.Shape()))
	}
}

// saturateInt converts an int64 argument to int, clamping it to int's
// range on 32-bit platforms: slice's end 2^63-1 ("to the end") must stay
// the largest int, not wrap to -1.
func saturateInt(x int64) int {
	if x > int64(math.MaxInt) {
		return math.MaxInt
	}
	if x < int64(math.MinInt) {
		return math.MinInt
	}
	return int(x)
}

// inputLayoutOps are the ops whose result PyTorch allocates in the
// input's suggested memory format: a channels-last input gives a
// channels-last result (checked with PyTorch 2.14 for each).
var inputLayoutOps = map[string]bool{
	"aten.group_norm.default":                           true,
	"aten.batch_norm.default":                           true,
	"aten._native_batch_norm_legit_no_training.default": true,
	"aten.max_pool2d.default":                           true,
	"aten.max_pool2d_with_indices.default":              true,
	"aten.avg_pool2d.default":                           true,
	"aten.adaptive_avg_pool2d.default":                  true,
	"aten._adaptive_avg_pool2d.default":                 true,
}

// withInputLayout wraps a kernel of inputLayoutOps: when argument 0 is a
// 4-D tensor that suggests channels-last, a contiguous 4-D result (or a
// tuple's 4-D results) is laid out channels-last.
func withInputLayout(f KernelFunc) KernelFunc {
	return func(args []Value) (Value, error) {
		v, err := f(args)
		if err != nil || len(args) == 0 {
			return v, err
		}
		if x, ok := args[0].(*tensor.Tensor); !ok || !kernels.SuggestsChannelsLast(x) {
			return v, nil
		}
		relayout := func(v Value) (Value, error) {
			out, ok := v.(*tensor.Tensor)
			if !ok || out.Dim() != 4 || !out.IsContiguous() || out.Numel() <= 1 {
				return v, nil
			}
			return kernels.Restride(out, kernels.ChannelsLastStrides(out.Shape()))
		}
		if tup, ok := v.(Tuple); ok {
			res := make(Tuple, len(tup))
			for i, e := range tup {
				if res[i], err = relayout(e); err != nil {
					return nil, err
				}
			}
			return res, nil
		}
		return relayout(v)
	}
}
