package ops

import (
	"fmt"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Result-type rules of the aten ops. Argument positions follow each op's
// schema in oprows_aten.go.

// sameAsSelf: unary elementwise ops that keep shape and dtype (relu, clone,
// dropout, hardtanh, round...).
func ruleSameAsSelf(args []Value) (Type, error) {
	t, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	return plainOf(t.DType(), t.Shape), nil
}

// ruleUnaryFloat: sigmoid, tanh, gelu, silu: integer inputs give float32.
func ruleUnaryFloat(args []Value) (Type, error) {
	t, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	d := t.DType()
	if !d.IsFloat() && !d.IsComplex() {
		d = tensor.Float32
	}
	return plainOf(d, t.Shape), nil
}

// ruleBinary: add/sub/mul (.Tensor and .Scalar): broadcast and promote.
// In the .Tensor overloads either operand may be a Python number (a
// wrapped number, see [AllowsNumbersAsTensors]): it promotes like a Python
// scalar, and two numbers give a 0-dim tensor.
func ruleBinary(args []Value) (Type, error) {
	return binary(args, false)
}

// ruleDiv: true division; integer results become float32.
func ruleDiv(args []Value) (Type, error) {
	return binary(args, true)
}

func binary(args []Value, trueDiv bool) (Type, error) {
	self, other := get(args, 0), get(args, 1)
	shape := []int64{}
	for i, v := range []Value{self, other} {
		name := [2]string{"self", "other"}[i]
		switch o := v.(type) {
		case TensorType:
			s, ok := broadcastShapes(shape, o.Shape)
			if !ok {
				return nil, shapeErr(i, name, "shape %v does not broadcast with self %v", o.Shape, shape)
			}
			shape = s
		case int64, float64, bool:
		default:
			return nil, argErr(i, name, "want a tensor or a number, got %s", describe(v))
		}
	}
	d, err := resultType(self, other)
	if err != nil {
		return nil, argErr(1, "other", "%v", err)
	}
	if trueDiv && !d.IsFloat() && !d.IsComplex() {
		d = tensor.Float32
	}
	return plainOf(d, shape), nil
}

// ruleClamp: clamp.default (Scalar? min, Scalar? max) and clamp.Tensor
// (Tensor? min, Tensor? max): broadcast and promote with the bounds.
func ruleClamp(args []Value) (Type, error) {
	a, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	shape := a.Shape
	names := []string{"min", "max"}
	if get(args, 1) == nil && get(args, 2) == nil {
		return nil, argErr(1, "min", "at least one of min and max must not be None")
	}
	for k := 1; k <= 2; k++ {
		switch o := get(args, k).(type) {
		case nil, int64, float64, bool:
		case TensorType:
			s, ok := broadcastShapes(shape, o.Shape)
			if !ok {
				return nil, shapeErr(k, names[k-1], "shape %v does not broadcast with %v", o.Shape, shape)
			}
			shape = s
		default:
			return nil, argErr(k, names[k-1], "want a tensor, a number or None, got %s", describe(o))
		}
	}
	d, err := resultType(a, get(args, 1), get(args, 2))
	if err != nil {
		return nil, argErr(0, "self", "%v", err)
	}
	return plainOf(d, shape), nil
}

// ruleToDType: to.dtype(self, dtype, ...): same shape, the given dtype.
func ruleToDType(args []Value) (Type, error) {
	t, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	d, err := dtypeArg(args, 1, "dtype")
	if err != nil {
		return nil, err
	}
	return plainOf(d, t.Shape), nil
}

// ruleSoftmax: softmax.int / log_softmax.int (self, dim, dtype?).
func ruleSoftmax(args []Value) (Type, error) {
	t, _, err := selfDimArgs(args, 0)
	if err != nil {
		return nil, err
	}
	d, err := optDTypeArg(args, 2, "dtype", t.DType())
	if err != nil {
		return nil, err
	}
	if !d.IsFloat() {
		return nil, argErr(0, "self", "softmax needs a float dtype, got %s", d)
	}
	return plainOf(d, t.Shape), nil
}

// ruleInternalSoftmax: _softmax(self, dim, half_to_float).
func ruleInternalSoftmax(args []Value) (Type, error) {
	t, _, err := selfDimArgs(args, 0)
	if err != nil {
		return nil, err
	}
	h, err := boolArg(args, 2, "half_to_float")
	if err != nil {
		return nil, err
	}
	d := t.DType()
	if h && d == tensor.Float16 {
		d = tensor.Float32
	}
	return plainOf(d, t.Shape), nil
}

// ruleLinear: linear(input [..., in], weight [out, in], bias [out]?) -> [..., out].
func ruleLinear(args []Value) (Type, error) {
	x, w, err := tensorArgs2(args, "input", "weight")
	if err != nil {
		return nil, err
	}
	if x.Rank() < 1 {
		return nil, shapeErr(0, "input", "want rank >= 1, got %s", x)
	}
	if w.Rank() != 2 && w.Rank() != 1 {
		return nil, shapeErr(1, "weight", "want [out_features, in_features], got %s", w)
	}
	in := x.Shape[x.Rank()-1]
	win := w.Shape[w.Rank()-1]
	if in >= 0 && win >= 0 && in != win {
		return nil, shapeErr(1, "weight", "want [*, %d] to match input %s, got %s", in, x, w)
	}
	shape := slices.Clone(x.Shape[:x.Rank()-1])
	if w.Rank() == 2 {
		shape = append(shape, w.Shape[0])
	}
	if b, ok, err := optTensorArg(args, 2, "bias"); err != nil {
		return nil, err
	} else if ok {
		if _, okb := broadcastShapes(shape, b.Shape); !okb {
			return nil, shapeErr(2, "bias", "shape %v does not broadcast to %v", b.Shape, shape)
		}
	}
	d, err := tensor.PromoteTypes(x.DType(), w.DType())
	if err != nil {
		return nil, argErr(1, "weight", "%v", err)
	}
	return plainOf(d, shape), nil
}

func matmulDims(a, b TensorType, ai, bi int, an, bn string) (int64, error) {
	k1, k2 := a.Shape[a.Rank()-1], b.Shape[max(b.Rank()-2, 0)]
	if k1 >= 0 && k2 >= 0 && k1 != k2 {
		return 0, shapeErr(bi, bn, "inner dimension %d does not match %d of %s %s", k2, k1, an, a)
	}
	return k1, nil
}

// ruleMM: mm(self [n, k], mat2 [k, m]) -> [n, m].
func ruleMM(args []Value) (Type, error) { return matrixProduct(args, false) }

// ruleBMM: bmm(self [b, n, k], mat2 [b, k, m]) -> [b, n, m].
func ruleBMM(args []Value) (Type, error) { return matrixProduct(args, true) }

// matrixProduct is mm's rule, or bmm's when batched: both operands have
// rank 2 (3), equal batch sizes, and the result keeps self's leading
// dimensions with mat2's last.
func matrixProduct(args []Value, batched bool) (Type, error) {
	a, b, err := tensorArgs2(args, "self", "mat2")
	if err != nil {
		return nil, err
	}
	rank, selfForm, mat2Form := 2, "a matrix [n, k]", "a matrix [k, m]"
	if batched {
		rank, selfForm, mat2Form = 3, "[batch, n, k]", "[batch, k, m]"
	}
	if a.Rank() != rank {
		return nil, shapeErr(0, "self", "want %s, got %s", selfForm, a)
	}
	if b.Rank() != rank {
		return nil, shapeErr(1, "mat2", "want %s, got %s", mat2Form, b)
	}
	if batched && a.Shape[0] >= 0 && b.Shape[0] >= 0 && a.Shape[0] != b.Shape[0] {
		return nil, shapeErr(1, "mat2", "batch %d does not match self's %d", b.Shape[0], a.Shape[0])
	}
	if _, err := matmulDims(a, b, 0, 1, "self", "mat2"); err != nil {
		return nil, err
	}
	d, err := tensor.PromoteTypes(a.DType(), b.DType())
	if err != nil {
		return nil, argErr(1, "mat2", "%v", err)
	}
	return plainOf(d, append(slices.Clone(a.Shape[:rank-1]), b.Shape[rank-1])), nil
}

// ruleMatmul: matmul(self, other) with 1-D promotion and batch broadcasting.
func ruleMatmul(args []Value) (Type, error) {
	a, b, err := tensorArgs2(args, "self", "other")
	if err != nil {
		return nil, err
	}
	if a.Rank() == 0 || b.Rank() == 0 {
		return nil, shapeErr(0, "self", "both arguments need rank >= 1, got %s and %s", a, b)
	}
	as, bs := a.Shape, b.Shape
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int64{bs[0], 1}
	}
	k1, k2 := as[len(as)-1], bs[len(bs)-2]
	if k1 >= 0 && k2 >= 0 && k1 != k2 {
		return nil, shapeErr(1, "other", "inner dimension %d does not match %d of self %s", k2, k1, a)
	}
	batch, ok := broadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	if !ok {
		return nil, shapeErr(1, "other", "batch dimensions of %s do not broadcast with self %s", b, a)
	}
	shape := batch
	if a.Rank() > 1 {
		shape = append(shape, as[len(as)-2])
	}
	if b.Rank() > 1 {
		shape = append(shape, bs[len(bs)-1])
	}
	d, err := tensor.PromoteTypes(a.DType(), b.DType())
	if err != nil {
		return nil, argErr(1, "other", "%v", err)
	}
	return plainOf(d, shape), nil
}

// ruleAddmm: addmm(self, mat1 [n, k], mat2 [k, m], beta, alpha) -> [n, m].
func ruleAddmm(args []Value) (Type, error) {
	s, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	mm, err := ruleMM(args[1:])
	if err != nil {
		return nil, fmt.Errorf("addmm: %w (positions counted from mat1)", err)
	}
	mt := mm.(TensorType)
	if _, ok := broadcastShapes(s.Shape, mt.Shape); !ok || s.Rank() > 2 {
		return nil, shapeErr(0, "self", "shape %v does not broadcast to %v", s.Shape, mt.Shape)
	}
	d, err := tensor.PromoteTypes(s.DType(), mt.DType())
	if err != nil {
		return nil, argErr(0, "self", "%v", err)
	}
	return plainOf(d, mt.Shape), nil
}

// expandParam expands a conv/pool parameter given as one or n values.
func expandParam(v []int64, n int, i int, name string) ([]int64, error) {
	switch len(v) {
	case n:
		return v, nil
	case 1:
		out := make([]int64, n)
		for k := range out {
			out[k] = v[0]
		}
		return out, nil
	}
	return nil, argErr(i, name, "want 1 or %d values, got %v", n, v)
}

func convOut(in, k, s, p, d int64) int64 {
	if in < 0 || k < 0 || s < 0 || p < 0 || d < 0 {
		return DynamicDim
	}
	return (in+2*p-d*(k-1)-1)/s + 1
}

// conv computes the result type of a (possibly transposed) convolution.
// pos are the argument positions of stride, padding, dilation, groups and
// (for convolution.default) transposed and output_padding (-1 if absent).
func conv(args []Value, nSpatial int, posStride, posPad, posDil, posTransposed, posOutPad, posGroups int) (Type, error) {
	x, w, err := tensorArgs2(args, "input", "weight")
	if err != nil {
		return nil, err
	}
	if nSpatial < 0 {
		nSpatial = w.Rank() - 2
	}
	if nSpatial < 1 || w.Rank() != nSpatial+2 {
		return nil, shapeErr(1, "weight", "want [out_channels, in_channels/groups, kernel...] of rank %d, got %s", nSpatial+2, w)
	}
	batched := x.Rank() == nSpatial+2
	if !batched && x.Rank() != nSpatial+1 {
		return nil, shapeErr(0, "input", "want rank %d or %d, got %s", nSpatial+1, nSpatial+2, x)
	}
	ints := func(pos int, name string) ([]int64, error) {
		v, err := intsArg(args, pos, name)
		if err != nil {
			return nil, err
		}
		return expandParam(v, nSpatial, pos, name)
	}
	stride, err := ints(posStride, "stride")
	if err != nil {
		return nil, err
	}
	pad, err := ints(posPad, "padding")
	if err != nil {
		return nil, err
	}
	dil, err := ints(posDil, "dilation")
	if err != nil {
		return nil, err
	}
	groups, err := symIntArg(args, posGroups, "groups")
	if err != nil {
		return nil, err
	}
	if groups == 0 {
		return nil, argErr(posGroups, "groups", "want a positive group count, got 0")
	}
	transposed := false
	if posTransposed >= 0 {
		if transposed, err = boolArg(args, posTransposed, "transposed"); err != nil {
			return nil, err
		}
	}
	outPad := make([]int64, nSpatial)
	if transposed {
		if outPad, err = ints(posOutPad, "output_padding"); err != nil {
			return nil, err
		}
	}
	cin := x.Shape[0]
	if batched {
		cin = x.Shape[1]
	}
	var cout int64
	if transposed {
		if cin >= 0 && w.Shape[0] >= 0 && cin != w.Shape[0] {
			return nil, shapeErr(1, "weight", "transposed conv: dimension 0 is %d, want input channels %d", w.Shape[0], cin)
		}
		cout = mulDims(w.Shape[1], groups)
	} else {
		if cin >= 0 && w.Shape[1] >= 0 && groups > 0 && cin != w.Shape[1]*groups {
			return nil, shapeErr(1, "weight", "dimension 1 is %d, want input channels %d / groups %d", w.Shape[1], cin, groups)
		}
		cout = w.Shape[0]
	}
	if b, ok, err := optTensorArg(args, 2, "bias"); err != nil {
		return nil, err
	} else if ok && (b.Rank() != 1 || (b.Shape[0] >= 0 && cout >= 0 && b.Shape[0] != cout)) {
		return nil, shapeErr(2, "bias", "want [%d], got %s", cout, b)
	}
	var shape []int64
	if batched {
		shape = append(shape, x.Shape[0])
	}
	shape = append(shape, cout)
	sp := x.Shape[x.Rank()-nSpatial:]
	for k := 0; k < nSpatial; k++ {
		kk := w.Shape[2+k]
		var o int64
		if transposed {
			if sp[k] < 0 || kk < 0 {
				o = DynamicDim
			} else {
				o = (sp[k]-1)*stride[k] - 2*pad[k] + dil[k]*(kk-1) + outPad[k] + 1
			}
		} else {
			o = convOut(sp[k], kk, stride[k], pad[k], dil[k])
		}
		if o == 0 || o < DynamicDim {
			return nil, shapeErr(0, "input", "spatial size %d with kernel %d, stride %d, padding %d, dilation %d gives output size %d", sp[k], kk, stride[k], pad[k], dil[k], o)
		}
		shape = append(shape, o)
	}
	d, err := tensor.PromoteTypes(x.DType(), w.DType())
	if err != nil {
		return nil, argErr(1, "weight", "%v", err)
	}
	return plainOf(d, shape), nil
}

// ruleConv1d / ruleConv2d: conv{1,2}d(input, weight, bias?, stride, padding, dilation, groups).
func ruleConv1d(args []Value) (Type, error) { return conv(args, 1, 3, 4, 5, -1, -1, 6) }
func ruleConv2d(args []Value) (Type, error) { return conv(args, 2, 3, 4, 5, -1, -1, 6) }

// ruleConvolution: convolution(input, weight, bias?, stride, padding,
// dilation, transposed, output_padding, groups), rank from the weight.
func ruleConvolution(args []Value) (Type, error) { return conv(args, -1, 3, 4, 5, 6, 7, 8) }

// pool2d computes max_pool2d/avg_pool2d output shapes.
func pool2d(args []Value, posDil, posCeil int) ([]int64, TensorType, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, x, err
	}
	if x.Rank() != 3 && x.Rank() != 4 {
		return nil, x, shapeErr(0, "self", "want [N, C, H, W] or [C, H, W], got %s", x)
	}
	ints := func(pos int, name string, def []int64) ([]int64, error) {
		v, err := intsArg(args, pos, name)
		if err != nil {
			return nil, err
		}
		if len(v) == 0 && def != nil {
			return def, nil
		}
		return expandParam(v, 2, pos, name)
	}
	kernel, err := ints(1, "kernel_size", nil)
	if err != nil {
		return nil, x, err
	}
	stride, err := ints(2, "stride", kernel)
	if err != nil {
		return nil, x, err
	}
	pad, err := ints(3, "padding", nil)
	if err != nil {
		return nil, x, err
	}
	dil := []int64{1, 1}
	if posDil >= 0 {
		if dil, err = ints(posDil, "dilation", nil); err != nil {
			return nil, x, err
		}
	}
	ceil, err := boolArg(args, posCeil, "ceil_mode")
	if err != nil {
		return nil, x, err
	}
	shape := slices.Clone(x.Shape)
	for k := 0; k < 2; k++ {
		in := x.Shape[x.Rank()-2+k]
		if pad[k]*2 > kernel[k] {
			return nil, x, argErr(3, "padding", "padding %d is more than half of kernel %d", pad[k], kernel[k])
		}
		if in < 0 {
			shape[x.Rank()-2+k] = DynamicDim
			continue
		}
		num := in + 2*pad[k] - dil[k]*(kernel[k]-1) - 1
		if stride[k] <= 0 {
			return nil, x, argErr(2, "stride", "want positive strides, got %v", stride)
		}
		var o int64
		if ceil {
			o = (num+stride[k]-1)/stride[k] + 1
			if (o-1)*stride[k] >= in+pad[k] {
				o--
			}
		} else {
			o = num/stride[k] + 1
		}
		if o <= 0 {
			return nil, x, shapeErr(0, "self", "input size %d is too small for kernel %d", in, kernel[k])
		}
		shape[x.Rank()-2+k] = o
	}
	return shape, x, nil
}

// ruleMaxPool2d: max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode).
func ruleMaxPool2d(args []Value) (Type, error) {
	shape, x, err := pool2d(args, 4, 5)
	if err != nil {
		return nil, err
	}
	return plainOf(x.DType(), shape), nil
}

// ruleMaxPool2dWithIndices: the same shape twice, values and int64 indices.
func ruleMaxPool2dWithIndices(args []Value) (Type, error) {
	shape, x, err := pool2d(args, 4, 5)
	if err != nil {
		return nil, err
	}
	return tupleOf(plainOf(x.DType(), shape), plainOf(tensor.Int64, shape)), nil
}

// ruleAvgPool2d: avg_pool2d(self, kernel_size, stride, padding, ceil_mode, ...).
func ruleAvgPool2d(args []Value) (Type, error) {
	shape, x, err := pool2d(args, -1, 4)
	if err != nil {
		return nil, err
	}
	return plainOf(x.DType(), shape), nil
}

// ruleAdaptiveAvgPool2d: adaptive_avg_pool2d(self, output_size [2]).
func ruleAdaptiveAvgPool2d(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	if x.Rank() != 3 && x.Rank() != 4 {
		return nil, shapeErr(0, "self", "want [N, C, H, W] or [C, H, W], got %s", x)
	}
	out, err := intsArg(args, 1, "output_size")
	if err != nil {
		return nil, err
	}
	if out, err = expandParam(out, 2, 1, "output_size"); err != nil {
		return nil, err
	}
	shape := slices.Clone(x.Shape)
	copy(shape[x.Rank()-2:], out)
	return plainOf(x.DType(), shape), nil
}

// ruleKeepInput: norms whose single result has the input's shape and dtype
// (layer_norm, group_norm, instance_norm, batch_norm).
func ruleKeepInput(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	return plainOf(x.DType(), x.Shape), nil
}

// ruleGroupNorm: group_norm(input [N, C, *], num_groups, weight?, bias?, ...).
func ruleGroupNorm(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	g, err := intArg(args, 1, "num_groups")
	if err != nil {
		return nil, err
	}
	if x.Rank() < 2 {
		return nil, shapeErr(0, "input", "want [N, C, *], got %s", x)
	}
	if c := x.Shape[1]; g <= 0 || (c >= 0 && c%g != 0) {
		return nil, argErr(1, "num_groups", "%d groups do not divide %d channels", g, c)
	}
	for k, name := range []string{"weight", "bias"} {
		if t, ok, err := optTensorArg(args, 2+k, name); err != nil {
			return nil, err
		} else if ok && (t.Rank() != 1 || (t.Shape[0] >= 0 && x.Shape[1] >= 0 && t.Shape[0] != x.Shape[1])) {
			return nil, shapeErr(2+k, name, "want [%d], got %s", x.Shape[1], t)
		}
	}
	return plainOf(x.DType(), x.Shape), nil
}

// ruleLayerNorm: layer_norm(input, normalized_shape, weight?, bias?, eps, ...).
func ruleLayerNorm(args []Value) (Type, error) {
	x, _, err := layerNormArgs(args)
	if err != nil {
		return nil, err
	}
	return plainOf(x.DType(), x.Shape), nil
}

// layerNormArgs reads the (input, normalized_shape) prefix of layer_norm
// and native_layer_norm and checks that the shape ends the input's.
func layerNormArgs(args []Value) (TensorType, []int64, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return x, nil, err
	}
	ns, err := intsArg(args, 1, "normalized_shape")
	if err != nil {
		return x, nil, err
	}
	return x, ns, checkNormalizedShape(x, ns)
}

func checkNormalizedShape(x TensorType, ns []int64) error {
	if len(ns) > x.Rank() {
		return shapeErr(1, "normalized_shape", "%v has more dimensions than input %s", ns, x)
	}
	tail := x.Shape[x.Rank()-len(ns):]
	for k := range ns {
		if ns[k] >= 0 && tail[k] >= 0 && ns[k] != tail[k] {
			return shapeErr(1, "normalized_shape", "%v does not match the trailing dimensions of input %s", ns, x)
		}
	}
	return nil
}

// ruleNativeLayerNorm: (out, mean, rstd); mean and rstd keep the leading
// dimensions and have size 1 in the normalised ones.
func ruleNativeLayerNorm(args []Value) (Type, error) {
	x, ns, err := layerNormArgs(args)
	if err != nil {
		return nil, err
	}
	stat := slices.Clone(x.Shape)
	for k := x.Rank() - len(ns); k < x.Rank(); k++ {
		stat[k] = 1
	}
	sd := x.DType()
	if sd == tensor.Float16 || sd == tensor.BFloat16 {
		sd = tensor.Float32
	}
	return tupleOf(plainOf(x.DType(), x.Shape), plainOf(sd, stat), plainOf(sd, stat)), nil
}

// ruleNativeBatchNormNoTraining: (out, save_mean [0], save_rstd [0]).
func ruleNativeBatchNormNoTraining(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	if x.Rank() < 2 {
		return nil, shapeErr(0, "input", "want [N, C, *], got %s", x)
	}
	for k, name := range []string{"running_mean", "running_var"} {
		t, err := tensorArg(args, 3+k, name)
		if err != nil {
			return nil, err
		}
		if t.Rank() != 1 || (t.Shape[0] >= 0 && x.Shape[1] >= 0 && t.Shape[0] != x.Shape[1]) {
			return nil, shapeErr(3+k, name, "want [%d], got %s", x.Shape[1], t)
		}
	}
	return tupleOf(plainOf(x.DType(), x.Shape), plainOf(x.DType(), []int64{0}), plainOf(x.DType(), []int64{0})), nil
}

// reduceDims returns the result shape of a reduction over dims (all dims
// when dims is empty or None).
func reduceDims(x TensorType, dims []int64, all bool, keepdim bool) ([]int64, error) {
	red := make([]bool, x.Rank())
	if all || len(dims) == 0 {
		for k := range red {
			red[k] = true
		}
	}
	seen := make([]bool, x.Rank())
	for _, d := range dims {
		k, err := normDim(d, x.Rank(), 1, "dim")
		if err != nil {
			return nil, err
		}
		if x.Rank() == 0 {
			continue
		}
		if seen[k] {
			return nil, argErr(1, "dim", "dimension %d appears twice in %v", d, dims)
		}
		seen[k], red[k] = true, true
	}
	var shape []int64
	for k, r := range red {
		switch {
		case !r:
			shape = append(shape, x.Shape[k])
		case keepdim:
			shape = append(shape, 1)
		}
	}
	if shape == nil {
		shape = []int64{}
	}
	return shape, nil
}

// reduction: mean.dim / sum.dim_IntList (self, dim?, keepdim, *, dtype?).
func reduction(args []Value, isMean bool) (Type, error) {
	x, err := tensorArg(args, 0, "self")
	if err != nil {
		return nil, err
	}
	dims, ok, err := optIntsArg(args, 1, "dim")
	if err != nil {
		return nil, err
	}
	keep, err := boolArg(args, 2, "keepdim")
	if err != nil {
		return nil, err
	}
	shape, err := reduceDims(x, dims, !ok, keep)
	if err != nil {
		return nil, err
	}
	def := x.DType()
	if !isMean && (def.IsInteger() || def == tensor.Bool) {
		def = tensor.Int64
	}
	d, err := optDTypeArg(args, 3, "dtype", def)
	if err != nil {
		return nil, err
	}
	if isMean && !d.IsFloat() && !d.IsComplex() {
		return nil, argErr(0, "self", "mean needs a float or complex dtype, got %s", d)
	}
	return plainOf(d, shape), nil
}

func ruleMeanDim(args []Value) (Type, error) { return reduction(args, true) }
func ruleSumDim(args []Value) (Type, error)  { return reduction(args, false) }

// ruleSDPA: scaled_dot_product_attention(query [..., L, E], key [..., S, E],
// value [..., S, Ev], ...) -> [..., L, Ev].
func ruleSDPA(args []Value) (Type, error) {
	q, err := tensorArg(args, 0, "query")
	if err != nil {
		return nil, err
	}
	k, err := tensorArg(args, 1, "key")
	if err != nil {
		return nil, err
	}
	v, err := tensorArg(args, 2, "value")
	if err != nil {
		return nil, err
	}
	if q.Rank() < 2 || k.Rank() < 2 || v.Rank() < 2 {
		return nil, shapeErr(0, "query", "query, key and value need rank >= 2, got %s, %s, %s", q, k, v)
	}
	e, ek := q.Shape[q.Rank()-1], k.Shape[k.Rank()-1]
	if e >= 0 && ek >= 0 && e != ek {
		return nil, shapeErr(1, "key", "embedding size %d does not match query's %d", ek, e)
	}
	s, sv := k.Shape[k.Rank()-2], v.Shape[v.Rank()-2]
	if s >= 0 && sv >= 0 && s != sv {
		return nil, shapeErr(2, "value", "sequence length %d does not match key's %d", sv, s)
	}
	shape := slices.Clone(q.Shape)
	shape[len(shape)-1] = v.Shape[v.Rank()-1]
	return plainOf(q.DType(), shape), nil
}

// ruleEmbedding: embedding(weight [V, D], indices [*]) -> [*, D].
func ruleEmbedding(args []Value) (Type, error) {
	w, idx, err := tensorArgs2(args, "weight", "indices")
	if err != nil {
		return nil, err
	}
	if w.Rank() != 2 {
		return nil, shapeErr(0, "weight", "want [num_embeddings, dim], got %s", w)
	}
	if d := idx.DType(); d != tensor.Int64 && d != tensor.Int32 {
		return nil, argErr(1, "indices", "want int64 or int32 indices, got %s", d)
	}
	return plainOf(w.DType(), append(slices.Clone(idx.Shape), w.Shape[1])), nil
}

// ruleCat: cat(tensors, dim).
func ruleCat(args []Value) (Type, error) {
	ts, ok := Sequence(get(args, 0))
	if !ok {
		return nil, argErr(0, "tensors", "want a list of tensors, got %s", describe(get(args, 0)))
	}
	if len(ts) == 0 {
		return nil, argErr(0, "tensors", "want at least one tensor")
	}
	dim, err := intArg(args, 1, "dim")
	if err != nil {
		return nil, err
	}
	var shape []int64
	var d tensor.DType
	axis := -1
	for k, v := range ts {
		t, ok := v.(TensorType)
		if !ok || t.Elem == nil {
			return nil, argErr(0, "tensors", "element %d: want a tensor, got %s", k, describe(v))
		}
		// Legacy: 1-D empty tensors are skipped.
		if t.Rank() == 1 && t.Shape[0] == 0 {
			continue
		}
		if d, err = tensor.PromoteTypes(d, t.DType()); err != nil {
			return nil, argErr(0, "tensors", "element %d: %v", k, err)
		}
		if shape == nil {
			if axis, err = normDim(dim, t.Rank(), 1, "dim"); err != nil {
				return nil, err
			}
			shape = slices.Clone(t.Shape)
			continue
		}
		if t.Rank() != len(shape) {
			return nil, shapeErr(0, "tensors", "element %d has rank %d, want %d", k, t.Rank(), len(shape))
		}
		for j := range shape {
			if j == axis {
				if shape[j] >= 0 && t.Shape[j] >= 0 {
					shape[j] += t.Shape[j]
				} else {
					shape[j] = DynamicDim
				}
				continue
			}
			if shape[j] >= 0 && t.Shape[j] >= 0 && shape[j] != t.Shape[j] {
				return nil, shapeErr(0, "tensors", "element %d: dimension %d is %d, want %d", k, j, t.Shape[j], shape[j])
			}
		}
	}
	if shape == nil {
		first := ts[0].(TensorType)
		return plainOf(first.DType(), []int64{0}), nil
	}
	return plainOf(d, shape), nil
}

// convPadding handles conv{1,2}d.padding, whose padding is "valid" (none)
// or "same" (output spatial size = input size, stride 1 only).
func convPadding(args []Value, nSpatial int) (Type, error) {
	mode, err := stringArg(args, 4, "padding")
	if err != nil {
		return nil, err
	}
	full := slices.Clone(args)
	switch mode {
	case "valid":
		full[4] = List{int64(0)}
	case "same":
		stride, err := intsArg(args, 3, "stride")
		if err != nil {
			return nil, err
		}
		for _, s := range stride {
			if s != 1 {
				return nil, argErr(4, "padding", "padding='same' needs stride 1, got %v", stride)
			}
		}
		x, err := tensorArg(args, 0, "input")
		if err != nil {
			return nil, err
		}
		t, err := conv(withPadding(args, 0), nSpatial, 3, 4, 5, -1, -1, 6)
		if err != nil {
			return nil, err
		}
		tt := t.(TensorType)
		copy(tt.Shape[tt.Rank()-nSpatial:], x.Shape[x.Rank()-nSpatial:])
		return tt, nil
	default:
		return nil, argErr(4, "padding", "want 'valid' or 'same', got %q", mode)
	}
	return conv(full, nSpatial, 3, 4, 5, -1, -1, 6)
}

func withPadding(args []Value, p int64) []Value {
	out := slices.Clone(args)
	out[4] = List{p}
	return out
}

func ruleConv1dPadding(args []Value) (Type, error) { return convPadding(args, 1) }
func ruleConv2dPadding(args []Value) (Type, error) { return convPadding(args, 2) }

// ruleMeanAll / ruleSumAll: mean.default / sum.default (self, *, dtype?) -> 0-dim.
func ruleMeanAll(args []Value) (Type, error) {
	return reduction([]Value{get(args, 0), nil, false, get(args, 1)}, true)
}

func ruleSumAll(args []Value) (Type, error) {
	return reduction([]Value{get(args, 0), nil, false, get(args, 1)}, false)
}

// ruleAmaxAmin: amax/amin(self, dim list (empty = all), keepdim).
func ruleAmaxAmin(args []Value) (Type, error) {
	x, dims, err := selfIntsArgs(args, "dim")
	if err != nil {
		return nil, err
	}
	keep, err := boolArg(args, 2, "keepdim")
	if err != nil {
		return nil, err
	}
	shape, err := reduceDims(x, dims, len(dims) == 0, keep)
	if err != nil {
		return nil, err
	}
	return plainOf(x.DType(), shape), nil
}

// ruleNativeGroupNorm: native_group_norm(input, weight?, bias?, N, C, HxW,
// group, eps) -> (out, mean [N, group], rstd [N, group]).
func ruleNativeGroupNorm(args []Value) (Type, error) {
	x, err := tensorArg(args, 0, "input")
	if err != nil {
		return nil, err
	}
	n, err := symIntArg(args, 3, "N")
	if err != nil {
		return nil, err
	}
	g, err := intArg(args, 6, "group")
	if err != nil {
		return nil, err
	}
	if g <= 0 {
		return nil, argErr(6, "group", "want a positive group count, got %d", g)
	}
	return tupleOf(plainOf(x.DType(), x.Shape), plainOf(x.DType(), []int64{n, g}), plainOf(x.DType(), []int64{n, g})), nil
}
