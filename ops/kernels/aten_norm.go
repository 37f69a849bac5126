package kernels

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Normalisation kernels. Statistics are population (biased) mean and
// variance over the normalised elements, computed in float64 with two
// passes, and eps is added to the variance inside the square root:
//
//	y = (x - mean) / sqrt(var + eps) * weight + bias
//
// evaluated in float64 and rounded once to float32. PyTorch's CPU kernels
// accumulate float32 with Welford's method and fold weight and bias into a
// float32 scale and shift, so results agree to a few ULPs, not bit for bit.

// moments returns the population mean and variance of v in float64.
func moments(v []float32) (mean, variance float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += float64(x)
	}
	mean = s / float64(len(v))
	q := 0.0
	for _, x := range v {
		d := float64(x) - mean
		q += d * d
	}
	return mean, q / float64(len(v))
}

// LayerNorm is aten.native_layer_norm: it normalises input over its last
// len(normalizedShape) dims, which must equal normalizedShape, and applies
// the optional elementwise weight and bias of that shape. It returns the
// output and the float32 mean and rstd, of shape input.shape[:axis] + 1s.
func LayerNorm(input *tensor.Tensor, normalizedShape []int, weight, bias *tensor.Tensor, eps float64) (out, mean, rstd *tensor.Tensor, err error) {
	if input == nil {
		return nil, nil, nil, argErrf("layer_norm: argument \"input\" is required")
	}
	shape := input.Shape()
	k := len(normalizedShape)
	if k == 0 || k > len(shape) || !equalShape(shape[len(shape)-k:], normalizedShape) {
		return nil, nil, nil, shapeErrf("layer_norm: argument \"normalized_shape\" %v: want the trailing dims of input %v", normalizedShape, shape)
	}
	inner := tensor.Numel(normalizedShape)
	for _, w := range []struct {
		name string
		t    *tensor.Tensor
	}{{"weight", weight}, {"bias", bias}} {
		if w.t != nil && !equalShape(w.t.Shape(), normalizedShape) {
			return nil, nil, nil, shapeErrf("layer_norm: argument %q: want shape %v, got %v", w.name, normalizedShape, w.t.Shape())
		}
	}
	xd, err := floatArg("input", input)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("layer_norm: %w", err)
	}
	wd, err := optFloatArg("weight", weight, inner)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("layer_norm: %w", err)
	}
	bd, err := optFloatArg("bias", bias, inner)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("layer_norm: %w", err)
	}
	rows := tensor.Numel(shape[:len(shape)-k])
	y := make([]float32, len(xd))
	ms := make([]float32, rows)
	rs := make([]float32, rows)
	for r := 0; r < rows; r++ {
		row := xd[r*inner : (r+1)*inner]
		m, v := moments(row)
		rstdv := 1 / math.Sqrt(v+eps)
		ms[r], rs[r] = float32(m), float32(rstdv)
		for i, x := range row {
			z := (float64(x) - m) * rstdv
			if wd != nil {
				z *= float64(wd[i])
			}
			if bd != nil {
				z += float64(bd[i])
			}
			y[r*inner+i] = float32(z)
		}
	}
	statShape := append([]int(nil), shape[:len(shape)-k]...)
	for range k {
		statShape = append(statShape, 1)
	}
	return fromFloat32(input.DType(), shape, y), tensor.MustFromData(tensor.Float32, statShape, ms), tensor.MustFromData(tensor.Float32, statShape, rs), nil
}

// GroupNorm is aten.native_group_norm: input [N, C, *] is split into
// `groups` contiguous channel groups (channel c is in group c/(C/groups)),
// each (n, group) is normalised over its C/groups·S elements, and the
// optional per-channel weight and bias [C] are applied. It returns the
// output and the float32 mean and rstd of shape [N, groups].
func GroupNorm(input *tensor.Tensor, groups int, weight, bias *tensor.Tensor, eps float64) (out, mean, rstd *tensor.Tensor, err error) {
	if input == nil || input.Dim() < 2 {
		return nil, nil, nil, shapeErrf("group_norm: argument \"input\": want at least 2 dims [N, C, *], got %v", shapeOf(input))
	}
	shape := input.Shape()
	N, C := shape[0], shape[1]
	if groups < 1 || C%groups != 0 {
		return nil, nil, nil, argErrf("group_norm: argument \"num_groups\": want a positive divisor of the %d channels, got %d", C, groups)
	}
	xd, err := floatArg("input", input)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("group_norm: %w", err)
	}
	wd, err := optFloatArg("weight", weight, C)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("group_norm: %w", err)
	}
	bd, err := optFloatArg("bias", bias, C)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("group_norm: %w", err)
	}
	S := tensor.Numel(shape[2:])
	K := C / groups
	y := make([]float32, len(xd))
	ms := make([]float32, N*groups)
	rs := make([]float32, N*groups)
	for n := 0; n < N; n++ {
		for g := 0; g < groups; g++ {
			base := (n*C + g*K) * S
			seg := xd[base : base+K*S]
			m, v := moments(seg)
			rstdv := 1 / math.Sqrt(v+eps)
			ms[n*groups+g], rs[n*groups+g] = float32(m), float32(rstdv)
			for c := g * K; c < (g+1)*K; c++ {
				off := (n*C + c) * S
				for i := 0; i < S; i++ {
					z := (float64(xd[off+i]) - m) * rstdv
					if wd != nil {
						z *= float64(wd[c])
					}
					if bd != nil {
						z += float64(bd[c])
					}
					y[off+i] = float32(z)
				}
			}
		}
	}
	return fromFloat32(input.DType(), shape, y), tensor.MustFromData(tensor.Float32, []int{N, groups}, ms), tensor.MustFromData(tensor.Float32, []int{N, groups}, rs), nil
}

// InstanceNorm is aten.instance_norm: with useInputStats every (n, c) of
// input [N, C, *] is normalised over its spatial elements (GroupNorm with
// groups = C); otherwise the running statistics are used as in inference
// batch norm. weight and bias [C] are optional. Running statistics are not
// updated (kernels never mutate their inputs).
func InstanceNorm(input, weight, bias, runningMean, runningVar *tensor.Tensor, useInputStats bool, eps float64) (*tensor.Tensor, error) {
	if input == nil || input.Dim() < 2 {
		return nil, shapeErrf("instance_norm: argument \"input\": want at least 2 dims [N, C, *], got %v", shapeOf(input))
	}
	if !useInputStats {
		return batchNormStats("instance_norm", input, weight, bias, runningMean, runningVar, eps)
	}
	out, _, _, err := GroupNorm(input, input.Size(1), weight, bias, eps)
	if err != nil {
		return nil, fmt.Errorf("instance_norm: %w", err)
	}
	return out, nil
}

// BatchNorm is aten.batch_norm for inference and for training-mode
// statistics: with training false, input [N, C, *] is normalised per
// channel with runningMean and runningVar [C]; with training true, with the
// population mean and variance of each channel over N and the spatial
// dims (the running statistics are not updated). weight and bias [C] are
// optional.
func BatchNorm(input, weight, bias, runningMean, runningVar *tensor.Tensor, training bool, eps float64) (*tensor.Tensor, error) {
	if input == nil || input.Dim() < 2 {
		return nil, shapeErrf("batch_norm: argument \"input\": want at least 2 dims [N, C, *], got %v", shapeOf(input))
	}
	if !training {
		return batchNormStats("batch_norm", input, weight, bias, runningMean, runningVar, eps)
	}
	shape := input.Shape()
	N, C := shape[0], shape[1]
	S := tensor.Numel(shape[2:])
	xd, err := floatArg("input", input)
	if err != nil {
		return nil, fmt.Errorf("batch_norm: %w", err)
	}
	means := make([]float32, C)
	vars := make([]float32, C)
	buf := make([]float32, 0, N*S)
	for c := 0; c < C; c++ {
		buf = buf[:0]
		for n := 0; n < N; n++ {
			buf = append(buf, xd[(n*C+c)*S:(n*C+c+1)*S]...)
		}
		m, v := moments(buf)
		means[c], vars[c] = float32(m), float32(v)
	}
	return batchNormStats("batch_norm", input, weight, bias, tensor.F32([]int{C}, means...), tensor.F32([]int{C}, vars...), eps)
}

// batchNormStats normalises each channel of input with the given mean and
// variance: y = (x - mean)/sqrt(var + eps)·w + b in float64, rounded once.
func batchNormStats(op string, input, weight, bias, mean, variance *tensor.Tensor, eps float64) (*tensor.Tensor, error) {
	shape := input.Shape()
	N, C := shape[0], shape[1]
	S := tensor.Numel(shape[2:])
	if mean == nil || variance == nil {
		return nil, argErrf("%s: arguments \"running_mean\" and \"running_var\" are required without input statistics", op)
	}
	xd, err := floatArg("input", input)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	md, err := optFloatArg("running_mean", mean, C)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	vd, err := optFloatArg("running_var", variance, C)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	wd, err := optFloatArg("weight", weight, C)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	bd, err := optFloatArg("bias", bias, C)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	y := make([]float32, len(xd))
	for c := 0; c < C; c++ {
		rstdv := 1 / math.Sqrt(float64(vd[c])+eps)
		m := float64(md[c])
		for n := 0; n < N; n++ {
			off := (n*C + c) * S
			for i := 0; i < S; i++ {
				z := (float64(xd[off+i]) - m) * rstdv
				if wd != nil {
					z *= float64(wd[c])
				}
				if bd != nil {
					z += float64(bd[c])
				}
				y[off+i] = float32(z)
			}
		}
	}
	return fromFloat32(input.DType(), shape, y), nil
}
