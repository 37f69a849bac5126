package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/ops/tensor"
)

// PoolOutputSize is ATen's pooling_output_shape: the number of windows
// along one dim of size n for kernel k, padding pad, stride s, dilation d
// and ceil mode; in ceil mode the last window must start inside the input
// or left padding.
func PoolOutputSize(n, k, pad, s, d int, ceil bool) int {
	num := n + 2*pad - d*(k-1) - 1
	if ceil {
		num += s - 1
	}
	out := floorDiv(num, s) + 1
	if ceil && (out-1)*s >= n+pad {
		out--
	}
	return out
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

type pool2d struct {
	kh, kw, sh, sw, ph, pw, dh, dw int
	N, C, H, W, Ho, Wo             int
	batched                        bool
}

func newPool2d(op string, x *tensor.Tensor, kernel, stride, padding, dilation []int, ceil bool) (pool2d, error) {
	var p pool2d
	if x == nil || (x.Dim() != 3 && x.Dim() != 4) {
		return p, shapeErrf("%s: argument \"self\": want a 3-D [C, H, W] or 4-D [N, C, H, W] tensor, got %v", op, shapeOf(x))
	}
	k, err := expandParam("kernel_size", kernel, 2, 1)
	if err != nil {
		return p, fmt.Errorf("%s: %w", op, err)
	}
	if len(stride) == 0 {
		stride = k
	}
	s, err := expandParam("stride", stride, 2, 1)
	if err != nil {
		return p, fmt.Errorf("%s: %w", op, err)
	}
	pd, err := expandParam("padding", padding, 2, 0)
	if err != nil {
		return p, fmt.Errorf("%s: %w", op, err)
	}
	dl, err := expandParam("dilation", dilation, 2, 1)
	if err != nil {
		return p, fmt.Errorf("%s: %w", op, err)
	}
	for i := range 2 {
		if pd[i] > k[i]/2 {
			return p, argErrf("%s: argument \"padding\" %v: want at most half the kernel size %v", op, pd, k)
		}
	}
	shape := x.Shape()
	if x.Dim() == 3 {
		shape = append([]int{1}, shape...)
	}
	p = pool2d{kh: k[0], kw: k[1], sh: s[0], sw: s[1], ph: pd[0], pw: pd[1], dh: dl[0], dw: dl[1],
		N: shape[0], C: shape[1], H: shape[2], W: shape[3], batched: x.Dim() == 4}
	p.Ho = PoolOutputSize(p.H, p.kh, p.ph, p.sh, p.dh, ceil)
	p.Wo = PoolOutputSize(p.W, p.kw, p.pw, p.sw, p.dw, ceil)
	if p.Ho <= 0 || p.Wo <= 0 {
		return p, shapeErrf("%s: input %v is too small for kernel %v, padding %v, dilation %v (output %dx%d)", op, x.Shape(), k, pd, dl, p.Ho, p.Wo)
	}
	return p, nil
}

func (p pool2d) outShape() []int {
	if p.batched {
		return []int{p.N, p.C, p.Ho, p.Wo}
	}
	return []int{p.C, p.Ho, p.Wo}
}

// MaxPool2d is aten.max_pool2d_with_indices: the maximum of each window
// (padding counts as -inf) and the flat index h·W+w of the chosen element
// within its input plane, as int64. The first maximum wins; a NaN wins
// over every number (the last NaN in window order), as in PyTorch's CPU
// kernel. An empty stride means stride = kernel.
//
// Integer inputs (int8, uint8, int16, int32, int64, as the reference
// representation's max_pool2d entry feeds it int32) are pooled exactly in
// their own dtype: padding counts as the lowest value, the first maximum
// wins, and the output keeps the input's dtype. Bool and other dtypes are
// an error naming the argument.
//
// A NaN in a window wins and its index is returned (the last NaN when
// there are several, from PyTorch's `val > max || isnan(val)` update); a
// window of all -inf gives -inf at the window's first index. An empty
// batch or channel dim gives empty outputs.
func MaxPool2d(x *tensor.Tensor, kernel, stride, padding, dilation []int, ceil bool) (out, indices *tensor.Tensor, err error) {
	p, err := newPool2d("max_pool2d", x, kernel, stride, padding, dilation, ceil)
	if err != nil {
		return nil, nil, err
	}
	shape := p.outShape()
	if dt := x.DType(); dt == tensor.Int32 && p.vecOK() {
		// int32 (the reference representation's max_pool2d): 8 outputs
		// per vector, pooled in int32 with the int64 loop's results
		xd, err := tensor.Data[int32](x)
		if err != nil {
			return nil, nil, fmt.Errorf("max_pool2d: argument \"self\": %w", err)
		}
		y := make([]int32, p.N*p.C*p.Ho*p.Wo)
		idx := make([]int64, len(y))
		splitRows(p.N*p.C, p.H*p.W, func(pl0, pl1 int) {
			maxPoolRangeVec(p, xd, math.MinInt32, 0, y, idx, pl0, pl1, maxPoolI32AVX2)
		})
		return tensor.MustFromData(tensor.Int32, shape, y), tensor.MustFromData(tensor.Int64, shape, idx), nil
	}
	if dt := x.DType(); dt.IsInteger() {
		xd, err := toInt64s("self", x)
		if err != nil {
			return nil, nil, fmt.Errorf("max_pool2d: %w", err)
		}
		y, idx := maxPoolPlanes(p, xd, math.MinInt64)
		o, err := fromInt64(dt, shape, y)
		if err != nil {
			return nil, nil, fmt.Errorf("max_pool2d: argument \"self\": %w", err)
		}
		return o, tensor.MustFromData(tensor.Int64, shape, idx), nil
	}
	xd, err := floatArg("self", x)
	if err != nil {
		return nil, nil, fmt.Errorf("max_pool2d: %w", err)
	}
	y, idx := maxPoolPlanes(p, xd, float32(math.Inf(-1)))
	return fromFloat32(x.DType(), shape, y), tensor.MustFromData(tensor.Int64, shape, idx), nil
}

// maxPoolPlanes runs max pooling over every N·C plane of the contiguous
// values xd: each window starts from lowest with the index of its first
// in-bounds element, and an element replaces the running maximum when it
// is greater or is NaN, v != v (PyTorch's `val > maxval || isnan(val)`;
// never true for integers). Planes are split across cores.
func maxPoolPlanes[T float32 | int64](p pool2d, xd []T, lowest T) ([]T, []int64) {
	planes := p.N * p.C
	y := make([]T, planes*p.Ho*p.Wo)
	idx := make([]int64, len(y))
	maxPoolInto(p, xd, lowest, y, idx)
	return y, idx
}

// maxPoolInto is maxPoolPlanes into y and idx.
func maxPoolInto[T float32 | int64](p pool2d, xd []T, lowest T, y []T, idx []int64) {
	planes := p.N * p.C
	// planes are independent: split them across cores (same bits)
	splitRows(planes, p.H*p.W, func(pl0, pl1 int) {
		if xf, ok := any(xd).([]float32); ok && p.vecOK() {
			maxPoolRangeAVX2(p, xf, any(y).([]float32), idx, pl0, pl1)
			return
		}
		maxPoolRange(p, xd, lowest, y, idx, pl0, pl1)
	})
}

func maxPoolRange[T float32 | int64](p pool2d, xd []T, lowest T, y []T, idx []int64, pl0, pl1 int) {
	for pl := pl0; pl < pl1; pl++ {
		for oy := 0; oy < p.Ho; oy++ {
			maxPoolRow(p, xd[pl*p.H*p.W:], lowest, lowest, y, idx, pl, oy, 0, p.Wo)
		}
	}
}

// maxPoolRows returns the input rows hs, hs+dh, ... < he of output row oy's
// windows.
func (p pool2d) maxPoolRows(oy int) (hs, he int) {
	hs = oy*p.sh - p.ph
	he = min(hs+(p.kh-1)*p.dh+1, p.H)
	for hs < 0 {
		hs += p.dh
	}
	return hs, he
}

// maxPoolRow computes outputs ox0 <= ox < ox1 of row oy of plane pl, whose
// input plane is in. A window without elements gives empty (lowest, except
// for int32 pooled in int32: 0, the int32 conversion of the int64 lowest
// that ATen's int64 accumulator and the int64 loop start from).
func maxPoolRow[T float32 | int32 | int64](p pool2d, in []T, lowest, empty T, y []T, idx []int64, pl, oy, ox0, ox1 int) {
	hs, he := p.maxPoolRows(oy)
	for ox := ox0; ox < ox1; ox++ {
		ws := ox*p.sw - p.pw
		we := min(ws+(p.kw-1)*p.dw+1, p.W)
		for ws < 0 {
			ws += p.dw
		}
		best := lowest
		bi := int64(hs*p.W + ws)
		if hs >= he || ws >= we {
			best = empty
		}
		for h := hs; h < he; h += p.dh {
			for w := ws; w < we; w += p.dw {
				v := in[h*p.W+w]
				if v > best || v != v {
					best, bi = v, int64(h*p.W+w)
				}
			}
		}
		o := (pl*p.Ho+oy)*p.Wo + ox
		y[o], idx[o] = best, bi
	}
}

// interiorCols returns the outputs [lo, hi) of a row whose windows (width
// span) lie inside the input's columns.
func (p pool2d) interiorCols(span int) (lo, hi int) {
	lo = min((p.pw+p.sw-1)/p.sw, p.Wo)
	if num := p.W + p.pw - span; num >= 0 {
		hi = min(num/p.sw+1, p.Wo)
	}
	return lo, max(lo, hi)
}

// windowOffs appends to dst the offsets in the plane of the elements of
// output ox's window, for an interior ox (all kw columns inside) with
// window rows hs, hs+dh, ... < he, in window order.
func (p pool2d) windowOffs(dst []int32, hs, he, ox int) []int32 {
	for h := hs; h < he; h += p.dh {
		for kx := 0; kx < p.kw; kx++ {
			dst = append(dst, int32(h*p.W+ox*p.sw-p.pw+kx*p.dw))
		}
	}
	return dst
}

// vecOK reports whether the AVX2 pooling kernels may run: the CPU has
// them and a plane's element offsets, 8 groups of stride sw past them,
// fit their int32 lanes.
func (p pool2d) vecOK() bool {
	return useAVX2 && p.H*p.W <= math.MaxInt32-8*p.sw
}

// vecInterior runs a pooling kernel on the interior outputs lo <= ox < hi
// of one output row: vecGroups groups of 8 from lo, then, when outputs
// remain, the last 8 again, overlapping (the outputs computed twice get
// the same bits). offs are the element offsets of output lo's window,
// avail the floats from the plane's start, and offs2 a buffer for the
// shifted offsets; run(ox, offs, g) runs the kernel on g groups from
// output ox. It returns end: the outputs [end, hi) are left to the Go loop.
func (p pool2d) vecInterior(lo, hi, groups, avail int, offs []int32, offs2 *[]int32, run func(ox int, offs []int32, g int)) (end int) {
	g := vecGroups(groups, p.sw, offs, avail)
	if g > 0 {
		run(lo, offs, g)
	}
	end = lo + 8*g
	if last := hi - 8; end < hi && last >= lo {
		shift := int32((last - lo) * p.sw)
		o2 := (*offs2)[:0]
		for _, v := range offs {
			o2 = append(o2, v+shift)
		}
		*offs2 = o2
		if vecGroups(1, p.sw, o2, avail) == 1 {
			run(last, o2, 1)
			end = hi
		}
	}
	return end
}

// vecGroups is the number of 8-output groups the pooling kernels may run:
// with stride 2 they read one float past each group's last lane, which
// must lie within the avail floats from the plane's start (a group that
// would read past the tensor's data is left to the Go loop).
func vecGroups(groups, sw int, offs []int32, avail int) int {
	if sw != 2 || groups == 0 {
		return groups
	}
	if int(slices.Max(offs))+16*groups > avail-1 {
		groups--
	}
	return groups
}

// maxPoolRangeAVX2 is maxPoolRange on float32 with the outputs whose
// windows lie inside the input's columns computed 8 at a time by
// maxPoolAVX2 (each lane one output, its window in the same order).
func maxPoolRangeAVX2(p pool2d, xd []float32, y []float32, idx []int64, pl0, pl1 int) {
	inf := float32(math.Inf(-1))
	maxPoolRangeVec(p, xd, inf, inf, y, idx, pl0, pl1, maxPoolAVX2)
}

// maxPoolRangeVec is maxPoolRangeAVX2 for float32 or int32 values with
// the vector kernel kern (maxPoolAVX2 or maxPoolI32AVX2).
func maxPoolRangeVec[T float32 | int32](p pool2d, xd []T, lowest, empty T, y []T, idx []int64, pl0, pl1 int,
	kern func(y *T, idx *int64, in *T, offs *int32, cnt, groups, sw int)) {
	lo, hi := p.interiorCols((p.kw-1)*p.dw + 1)
	groups := (hi - lo) / 8
	offs := make([]int32, 0, p.kh*p.kw)
	offs2 := make([]int32, 0, p.kh*p.kw)
	for pl := pl0; pl < pl1; pl++ {
		in := xd[pl*p.H*p.W : (pl+1)*p.H*p.W]
		for oy := 0; oy < p.Ho; oy++ {
			hs, he := p.maxPoolRows(oy)
			offs = p.windowOffs(offs[:0], hs, he, lo)
			if groups == 0 || len(offs) == 0 {
				maxPoolRow(p, in, lowest, empty, y, idx, pl, oy, 0, p.Wo)
				continue
			}
			maxPoolRow(p, in, lowest, empty, y, idx, pl, oy, 0, lo)
			row := (pl*p.Ho + oy) * p.Wo
			end := p.vecInterior(lo, hi, groups, len(xd)-pl*p.H*p.W, offs, &offs2, func(ox int, offs []int32, g int) {
				kern(&y[row+ox], &idx[row+ox], &xd[pl*p.H*p.W], &offs[0], len(offs), g, p.sw)
			})
			maxPoolRow(p, in, lowest, empty, y, idx, pl, oy, end, p.Wo)
		}
	}
}

// AvgPool2d is aten.avg_pool2d: the mean of each window. The window sum
// accumulates in float32 in row-major window order and is divided by
// divisorOverride when it is positive, else by the window size clipped to
// the padded input (countIncludePad) or to the input (otherwise), as
// PyTorch's CPU kernel does.
//
// NaN in a window gives NaN, inf gives ±inf, and inf and -inf together
// give NaN. An empty batch or channel dim gives an empty output.
func AvgPool2d(x *tensor.Tensor, kernel, stride, padding []int, ceil, countIncludePad bool, divisorOverride int) (*tensor.Tensor, error) {
	p, err := newPool2d("avg_pool2d", x, kernel, stride, padding, []int{1}, ceil)
	if err != nil {
		return nil, err
	}
	if divisorOverride < 0 {
		return nil, argErrf("avg_pool2d: argument \"divisor_override\": want positive, got %d", divisorOverride)
	}
	xd, err := floatArg("self", x)
	if err != nil {
		return nil, fmt.Errorf("avg_pool2d: %w", err)
	}
	y := make([]float32, p.N*p.C*p.Ho*p.Wo)
	avgPoolInto(p, xd, y, countIncludePad, divisorOverride)
	return fromFloat32(x.DType(), p.outShape(), y), nil
}

// avgPoolInto is AvgPool2d's arithmetic on contiguous float32 planes.
func avgPoolInto(p pool2d, xd, y []float32, countIncludePad bool, divisorOverride int) {
	// planes are independent: split them across cores (same bits)
	splitRows(p.N*p.C, p.H*p.W, func(pl0, pl1 int) {
		if p.vecOK() {
			avgPoolRangeAVX2(p, xd, y, pl0, pl1, countIncludePad, divisorOverride)
			return
		}
		avgPoolRange(p, xd, y, pl0, pl1, countIncludePad, divisorOverride)
	})
}

func avgPoolRange(p pool2d, xd, y []float32, pl0, pl1 int, countIncludePad bool, divisorOverride int) {
	for pl := pl0; pl < pl1; pl++ {
		for oy := 0; oy < p.Ho; oy++ {
			avgPoolRow(p, xd[pl*p.H*p.W:], y, pl, oy, 0, p.Wo, countIncludePad, divisorOverride)
		}
	}
}

// avgPoolRow computes outputs ox0 <= ox < ox1 of row oy of plane pl, whose
// input plane is in.
func avgPoolRow(p pool2d, in, y []float32, pl, oy, ox0, ox1 int, countIncludePad bool, divisorOverride int) {
	for ox := ox0; ox < ox1; ox++ {
		hs, ws := oy*p.sh-p.ph, ox*p.sw-p.pw
		he, we := min(hs+p.kh, p.H+p.ph), min(ws+p.kw, p.W+p.pw)
		poolSize := (he - hs) * (we - ws)
		hs, ws = max(hs, 0), max(ws, 0)
		he, we = min(he, p.H), min(we, p.W)
		o := (pl*p.Ho+oy)*p.Wo + ox
		if hs >= he || ws >= we {
			continue
		}
		var sum float32
		for h := hs; h < he; h++ {
			for w := ws; w < we; w++ {
				sum += in[h*p.W+w]
			}
		}
		div := poolSize
		switch {
		case divisorOverride > 0:
			div = divisorOverride
		case !countIncludePad:
			div = (he - hs) * (we - ws)
		}
		y[o] = sum / float32(div)
	}
}

// avgPoolRangeAVX2 is avgPoolRange with the outputs whose windows lie
// inside the input's columns computed 8 at a time by avgPoolAVX2 (each
// lane one output: the same sum order and divisor).
func avgPoolRangeAVX2(p pool2d, xd, y []float32, pl0, pl1 int, countIncludePad bool, divisorOverride int) {
	lo, hi := p.interiorCols(p.kw)
	groups := (hi - lo) / 8
	offs := make([]int32, 0, p.kh*p.kw)
	offs2 := make([]int32, 0, p.kh*p.kw)
	for pl := pl0; pl < pl1; pl++ {
		in := xd[pl*p.H*p.W : (pl+1)*p.H*p.W]
		for oy := 0; oy < p.Ho; oy++ {
			hs := oy*p.sh - p.ph
			he := min(hs+p.kh, p.H+p.ph)
			poolH := he - hs
			hs, he = max(hs, 0), min(he, p.H)
			if groups == 0 || hs >= he {
				avgPoolRow(p, in, y, pl, oy, 0, p.Wo, countIncludePad, divisorOverride)
				continue
			}
			offs = p.windowOffs(offs[:0], hs, he, lo)
			// inside the columns, the window is kw wide
			div := poolH * p.kw
			switch {
			case divisorOverride > 0:
				div = divisorOverride
			case !countIncludePad:
				div = (he - hs) * p.kw
			}
			avgPoolRow(p, in, y, pl, oy, 0, lo, countIncludePad, divisorOverride)
			row := (pl*p.Ho + oy) * p.Wo
			end := p.vecInterior(lo, hi, groups, len(xd)-pl*p.H*p.W, offs, &offs2, func(ox int, offs []int32, g int) {
				avgPoolAVX2(&y[row+ox], &xd[pl*p.H*p.W], &offs[0], len(offs), g, p.sw, float32(div))
			})
			avgPoolRow(p, in, y, pl, oy, end, p.Wo, countIncludePad, divisorOverride)
		}
	}
}

// AdaptiveAvgPool2d is aten.adaptive_avg_pool2d: output cell (i, j) is the
// mean of rows floor(i·H/oh) .. ceil((i+1)·H/oh) and the matching columns,
// summed in float32 and divided by the height then the width, as
// PyTorch's CPU kernel writes sum / kh / kw. For output size [1, 1]
// PyTorch's composite adaptive_avg_pool2d calls input.mean({-1, -2}) instead,
// which sums each H·W plane with ATen's cascade_sum (4 ILP accumulators of
// 8-float vectors, then the tail, then the lanes; see cascadeSum) and
// divides the sum by H·W in float32; that path is reproduced bit for bit
// (for inputs below ATen's 32768-element parallel grain, or one thread).
//
// A channels-last 4-D input takes PyTorch's channels-last paths: the mean
// over a strided input for [1, 1] (see [Mean]), and otherwise
// cpu_adaptive_avg_pool2d_channels_last, which divides the window sum by
// kh·kw on whole 8-channel vectors and by kh then kw on the remaining
// channels.
//
// NaN and infinities propagate through the sums as in [AvgPool2d]. An
// empty batch or channel dim gives an empty output; an empty spatial dim is
// an error wrapping [tensor.ErrShape], as in PyTorch.
func AdaptiveAvgPool2d(x *tensor.Tensor, outputSize []int) (*tensor.Tensor, error) {
	if x == nil || (x.Dim() != 3 && x.Dim() != 4) {
		return nil, shapeErrf("adaptive_avg_pool2d: argument \"self\": want a 3-D or 4-D tensor, got %v", shapeOf(x))
	}
	os, err := expandParam("output_size", outputSize, 2, 0)
	if err != nil {
		return nil, fmt.Errorf("adaptive_avg_pool2d: %w", err)
	}
	xd, err := floatArg("self", x)
	if err != nil {
		return nil, fmt.Errorf("adaptive_avg_pool2d: %w", err)
	}
	shape := x.Shape()
	H, W := shape[len(shape)-2], shape[len(shape)-1]
	planes := tensor.Numel(shape[:len(shape)-2])
	oh, ow := os[0], os[1]
	if (oh > 0 || ow > 0) && (H == 0 || W == 0) {
		return nil, shapeErrf("adaptive_avg_pool2d: input %v has an empty spatial dim", shape)
	}
	if x.Dim() == 4 && SuggestsChannelsLast(x) && oh*ow > 0 {
		return adaptiveAvgPoolChannelsLast(x, oh, ow)
	}
	y := make([]float32, planes*oh*ow)
	if oh == 1 && ow == 1 {
		// mean_out: sum_out(...).div_(H·W).
		meanPlanesInto(xd, y, H*W)
		out := append(shape[:len(shape)-2:len(shape)-2], 1, 1)
		return fromFloat32(x.DType(), out, y), nil
	}
	for pl := 0; pl < planes; pl++ {
		in := xd[pl*H*W:]
		for i := 0; i < oh; i++ {
			hs, he := i*H/oh, ((i+1)*H+oh-1)/oh
			for j := 0; j < ow; j++ {
				ws, we := j*W/ow, ((j+1)*W+ow-1)/ow
				var sum float32
				for h := hs; h < he; h++ {
					for w := ws; w < we; w++ {
						sum += in[h*W+w]
					}
				}
				y[(pl*oh+i)*ow+j] = sum / float32(he-hs) / float32(we-ws)
			}
		}
	}
	out := append(shape[:len(shape)-2:len(shape)-2], oh, ow)
	return fromFloat32(x.DType(), out, y), nil
}

// meanPlanesInto sets y[p] to the mean of the hw-wide plane p of xd in
// mean()'s order: cascadeSum, then / hw.
func meanPlanesInto(xd, y []float32, hw int) {
	div := float32(hw)
	splitRows(len(y), hw, func(pl0, pl1 int) {
		if useAVX2 && hw >= avx2Lanes && hw < 64*avx2Lanes {
			meanPlanesAVX2(&xd[pl0*hw], hw, pl1-pl0, &y[pl0], div)
			return
		}
		for pl := pl0; pl < pl1; pl++ {
			y[pl] = cascadeSum(xd[pl*hw:(pl+1)*hw]) / div
		}
	})
}

// adaptiveAvgPoolChannelsLast is [AdaptiveAvgPool2d] on a channels-last
// 4-D float input; the result is contiguous (the op table lays it out).
func adaptiveAvgPoolChannelsLast(x *tensor.Tensor, oh, ow int) (*tensor.Tensor, error) {
	if oh == 1 && ow == 1 {
		return Mean(x, []int{-1, -2}, true, tensor.Unknown)
	}
	xd, err := floatArg("self", x.Contiguous())
	if err != nil {
		return nil, fmt.Errorf("adaptive_avg_pool2d: %w", err)
	}
	N, C, H, W := x.Size(0), x.Size(1), x.Size(2), x.Size(3)
	vecC := C - C%avx2Lanes
	y := make([]float32, N*C*oh*ow)
	for n := 0; n < N; n++ {
		for i := 0; i < oh; i++ {
			hs, he := i*H/oh, ((i+1)*H+oh-1)/oh
			for j := 0; j < ow; j++ {
				ws, we := j*W/ow, ((j+1)*W+ow-1)/ow
				kh, kw := he-hs, we-ws
				for c := 0; c < C; c++ {
					var sum float32
					for h := hs; h < he; h++ {
						for w := ws; w < we; w++ {
							sum += xd[((n*C+c)*H+h)*W+w]
						}
					}
					if c < vecC {
						sum /= float32(kh * kw)
					} else {
						sum = sum / float32(kh) / float32(kw)
					}
					y[((n*C+c)*oh+i)*ow+j] = sum
				}
			}
		}
	}
	return fromFloat32(x.DType(), []int{N, C, oh, ow}, y), nil
}
