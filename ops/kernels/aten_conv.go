package kernels

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

// ConvParams holds the spatial parameters of a convolution, one entry per
// spatial dim (1 for conv1d, 2 for conv2d). PadBefore and PadAfter differ
// only for padding="same" with an even total padding.
type ConvParams struct {
	Stride, PadBefore, PadAfter, Dilation []int
	Groups                                int
}

// expandParam turns an int list of length 1 or n into length n.
func expandParam(name string, v []int, n int, min int) ([]int, error) {
	switch len(v) {
	case n:
		out := append([]int(nil), v...)
		for _, x := range out {
			if x < min {
				return nil, argErrf("argument %q: want values >= %d, got %v", name, min, v)
			}
		}
		return out, nil
	case 1:
		if v[0] < min {
			return nil, argErrf("argument %q: want values >= %d, got %v", name, min, v)
		}
		out := make([]int, n)
		for i := range out {
			out[i] = v[0]
		}
		return out, nil
	}
	return nil, argErrf("argument %q: want 1 or %d values, got %v", name, n, v)
}

// NewConvParams builds [ConvParams] for nd spatial dims from the aten
// argument lists (each of length 1 or nd) with symmetric padding.
func NewConvParams(nd int, stride, padding, dilation []int, groups int) (ConvParams, error) {
	var p ConvParams
	var err error
	if p.Stride, err = expandParam("stride", stride, nd, 1); err != nil {
		return p, err
	}
	if p.PadBefore, err = expandParam("padding", padding, nd, 0); err != nil {
		return p, err
	}
	p.PadAfter = append([]int(nil), p.PadBefore...)
	if p.Dilation, err = expandParam("dilation", dilation, nd, 1); err != nil {
		return p, err
	}
	if groups < 1 {
		return p, argErrf("argument \"groups\": want >= 1, got %d", groups)
	}
	p.Groups = groups
	return p, nil
}

// PaddingMode resolves conv's string padding ("valid" or "same", as in
// aten.conv2d.padding) for the given kernel sizes: "same" pads
// dilation·(k-1) in total, the odd element after, as PyTorch does.
func (p *ConvParams) PaddingMode(mode string, kernel []int) error {
	switch mode {
	case "valid":
		for i := range p.PadBefore {
			p.PadBefore[i], p.PadAfter[i] = 0, 0
		}
		return nil
	case "same":
		for i := range p.Stride {
			if p.Stride[i] != 1 {
				return argErrf("argument \"padding\": padding='same' needs stride 1, got %v", p.Stride)
			}
			total := p.Dilation[i] * (kernel[i] - 1)
			p.PadBefore[i] = total / 2
			p.PadAfter[i] = total - total/2
		}
		return nil
	}
	return argErrf("argument \"padding\": want \"valid\" or \"same\", got %q", mode)
}

// Convolution runs an N-d convolution (N = 1 or 2 spatial dims) of a
// batched input [B, C, spatial...] with weight [O, C/groups, k...] and an
// optional bias [O], through im2col and one matrix product per batch item
// and group. Transposed convolution is not supported. The sums follow
// PyTorch 2.14's CPU float32 path (slow_conv2d, also taken by conv1d and
// dilated convolution, on the reference BLAS sgemm): each output starts
// from its bias (zero without one) and adds its products sequentially in
// (input channel, kernel row, kernel column) order, each product and sum
// rounded to float32, so results are bit-identical to PyTorch's for
// contiguous (not channels-last) inputs. A float32 convolution that PyTorch
// sends to oneDNN ([ConvBackend]) sums in the order of the oneDNN
// implementation that runs on an AVX-512 machine; [ConvolutionWith] picks
// another machine.
//
// Integer operands (input, weight and optional bias all of one integer
// dtype: int8, uint8, int16, int32 or int64, as out_dtype(convolution,
// int32, ...) of the reference representation passes them) give an
// integer result of that dtype: each output is bias + Σ x·w accumulated
// exactly in int64 and wrapped to the dtype once, which equals C's
// wrapping arithmetic in the dtype step by step.
//
// Float NaN and infinities propagate as in the GEMM's IEEE float32 sums: an
// output whose window holds a NaN, or an inf under a zero weight, is NaN.
// An empty batch or no output channels gives an empty result; no input
// channels gives the bias (or zeros).
func Convolution(input, weight, bias *tensor.Tensor, p ConvParams) (*tensor.Tensor, error) {
	return ConvolutionWith(input, weight, bias, p, ConvOptions{})
}

// ConvolutionWith is [Convolution] reproducing PyTorch's float32 results
// on the machine opt describes.
func ConvolutionWith(input, weight, bias *tensor.Tensor, p ConvParams, opt ConvOptions) (*tensor.Tensor, error) {
	if input == nil || weight == nil {
		return nil, argErrf("convolution: input and weight are required")
	}
	nd := input.Dim() - 2
	if nd < 1 || nd > 2 {
		return nil, shapeErrf("convolution: argument \"input\": want a 3-D or 4-D batched tensor, got %v", input.Shape())
	}
	if weight.Dim() != nd+2 {
		return nil, shapeErrf("convolution: argument \"weight\": want %d dims for input %v, got %v", nd+2, input.Shape(), weight.Shape())
	}
	if len(p.Stride) != nd || len(p.PadBefore) != nd || len(p.PadAfter) != nd || len(p.Dilation) != nd {
		return nil, argErrf("convolution: want stride, padding and dilation with %d entries, got %v %v %v", nd, p.Stride, p.PadBefore, p.Dilation)
	}
	intOps := input.DType().IsInteger()
	if intOps {
		if err := sameIntDType("convolution", []string{"input", "weight", "bias"}, input, weight, bias); err != nil {
			return nil, err
		}
	} else if err := sameFloatDType("convolution", []string{"input", "weight", "bias"}, input, weight, bias); err != nil {
		return nil, err
	}
	g := p.Groups
	B, C := input.Size(0), input.Size(1)
	O, Cg := weight.Size(0), weight.Size(1)
	if g < 1 || C%g != 0 || O%g != 0 {
		return nil, shapeErrf("convolution: groups=%d must divide input channels %d and output channels %d", g, C, O)
	}
	if Cg != C/g {
		return nil, shapeErrf("convolution: argument \"weight\" %v: want %d input channels per group (input %v, groups %d), got %d", weight.Shape(), C/g, input.Shape(), g, Cg)
	}
	if bias != nil && (bias.Dim() != 1 || bias.Size(0) != O) {
		return nil, shapeErrf("convolution: argument \"bias\": want shape [%d], got %v", O, bias.Shape())
	}
	// Work in 2-D: a 1-D convolution is a 2-D one with height 1.
	H, W, kh, kw := 1, input.Size(2), 1, weight.Size(2)
	sh, sw, dh, dw := 1, p.Stride[0], 1, p.Dilation[0]
	pht, phb, pwl, pwr := 0, 0, p.PadBefore[0], p.PadAfter[0]
	if nd == 2 {
		H, W, kh, kw = input.Size(2), input.Size(3), weight.Size(2), weight.Size(3)
		sh, sw, dh, dw = p.Stride[0], p.Stride[1], p.Dilation[0], p.Dilation[1]
		pht, phb, pwl, pwr = p.PadBefore[0], p.PadAfter[0], p.PadBefore[1], p.PadAfter[1]
	}
	Ho := (H+pht+phb-dh*(kh-1)-1)/sh + 1
	Wo := (W+pwl+pwr-dw*(kw-1)-1)/sw + 1
	if H+pht+phb-dh*(kh-1)-1 < 0 || W+pwl+pwr-dw*(kw-1)-1 < 0 || Ho <= 0 || Wo <= 0 {
		return nil, shapeErrf("convolution: input %v with padding %v is smaller than the dilated kernel %v", input.Shape(), p.PadBefore, weight.Shape()[2:])
	}
	g2 := conv2dGeom{B: B, C: C, O: O, G: g, H: H, W: W, kh: kh, kw: kw, sh: sh, sw: sw, dh: dh, dw: dw, pt: pht, pl: pwl, Ho: Ho, Wo: Wo}
	outShape := []int{B, O, Wo}
	if nd == 2 {
		outShape = []int{B, O, Ho, Wo}
	}
	if intOps {
		return convInt(g2, input, weight, bias, outShape)
	}
	xd, err := floatArg("input", input)
	if err != nil {
		return nil, err
	}
	wd, err := floatArg("weight", weight)
	if err != nil {
		return nil, err
	}
	bd, err := optFloatArg("bias", bias, O)
	if err != nil {
		return nil, err
	}
	if input.DType() == tensor.Float32 {
		if impl := ConvBackend(convShapeOf(g2, phb, pwr), opt); impl != ConvNative {
			return convOneDNNTensor(impl, opt.ISA, g2, input.DType(), outShape, xd, wd, bd), nil
		}
	}
	if out := convNativeVec(g2, xd, wd, bd); out != nil {
		return fromFloat32(input.DType(), outShape, out), nil
	}
	Og := O / g
	K := Cg * kh * kw
	P := Ho * Wo
	out := make([]float32, B*O*P)
	// colT holds the im2col matrix transposed: colT[p*K + (c*kh+i)*kw+j]
	// is the input value under kernel tap (c, i, j) at output position p,
	// so each output's K products are contiguous in (c, kh, kw) order.
	colT := make([]float32, K*P)
	for b := 0; b < B; b++ {
		for gi := 0; gi < g; gi++ {
			for c := 0; c < Cg; c++ {
				plane := xd[((b*C)+gi*Cg+c)*H*W:]
				for i := 0; i < kh; i++ {
					for j := 0; j < kw; j++ {
						l := (c*kh+i)*kw + j
						for oy := 0; oy < Ho; oy++ {
							y := oy*sh - pht + i*dh
							for ox := 0; ox < Wo; ox++ {
								x := ox*sw - pwl + j*dw
								v := float32(0)
								if y >= 0 && y < H && x >= 0 && x < W {
									v = plane[y*W+x]
								}
								colT[(oy*Wo+ox)*K+l] = v
							}
						}
					}
				}
			}
			dst := out[(b*O+gi*Og)*P : (b*O+(gi+1)*Og)*P]
			if bd != nil {
				fillRows(dst, bd[gi*Og:(gi+1)*Og], P)
			}
			// slow_conv2d's sgemm('N', 'N') with beta = 1: each output
			// starts from its bias and adds the products in (c, kh, kw)
			// order.
			dotAccumulate(Og, P, K, wd[gi*Og*K:(gi+1)*Og*K], colT, dst, P)
		}
	}
	return fromFloat32(input.DType(), outShape, out), nil
}

// fillRows sets row o of dst (rows of length P) to v[o], for every o <
// len(v): the bias each output of slow_conv2d's sgemm starts from.
func fillRows(dst, v []float32, P int) {
	for o, bv := range v {
		r := dst[o*P : (o+1)*P]
		for i := range r {
			r[i] = bv
		}
	}
}

// conv2dGeom is the geometry of a convolution seen as 2-D (a 1-D one has
// height 1): batch B, channels C in and O out, G groups, input H×W,
// kernel kh×kw, strides, dilations, top and left padding, output Ho×Wo.
type conv2dGeom struct {
	B, C, O, G, H, W, kh, kw, sh, sw, dh, dw, pt, pl, Ho, Wo int
}

// sameIntDType checks that every non-nil tensor has one integer dtype
// (bool excluded), naming the first argument that differs.
func sameIntDType(op string, names []string, ts ...*tensor.Tensor) error {
	return sameDType(op, names, tensor.DType.IsInteger, "an integer tensor like the input", ts...)
}

// convInt is the integer convolution: every output starts from its bias
// (zero without one) and adds x·w over (input channel, kernel row, kernel
// column) in int64; zero padding contributes nothing. The result is wrapped
// to the input's dtype.
func convInt(g conv2dGeom, input, weight, bias *tensor.Tensor, outShape []int) (*tensor.Tensor, error) {
	xd, err := toInt64s("input", input)
	if err != nil {
		return nil, fmt.Errorf("convolution: %w", err)
	}
	wd, err := toInt64s("weight", weight)
	if err != nil {
		return nil, fmt.Errorf("convolution: %w", err)
	}
	var bd []int64
	if bias != nil {
		if bd, err = toInt64s("bias", bias); err != nil {
			return nil, fmt.Errorf("convolution: %w", err)
		}
	}
	Cg, Og := g.C/g.G, g.O/g.G
	out := make([]int64, g.B*g.O*g.Ho*g.Wo)
	for b := 0; b < g.B; b++ {
		for o := 0; o < g.O; o++ {
			gi := o / Og
			wo := wd[o*Cg*g.kh*g.kw:]
			for oy := 0; oy < g.Ho; oy++ {
				for ox := 0; ox < g.Wo; ox++ {
					var acc int64
					if bd != nil {
						acc = bd[o]
					}
					for c := 0; c < Cg; c++ {
						plane := xd[(b*g.C+gi*Cg+c)*g.H*g.W:]
						for i := 0; i < g.kh; i++ {
							y := oy*g.sh - g.pt + i*g.dh
							if y < 0 || y >= g.H {
								continue
							}
							for j := 0; j < g.kw; j++ {
								x := ox*g.sw - g.pl + j*g.dw
								if x < 0 || x >= g.W {
									continue
								}
								acc += plane[y*g.W+x] * wo[(c*g.kh+i)*g.kw+j]
							}
						}
					}
					out[((b*g.O+o)*g.Ho+oy)*g.Wo+ox] = acc
				}
			}
		}
	}
	t, err := fromInt64(input.DType(), outShape, out)
	if err != nil {
		return nil, fmt.Errorf("convolution: argument \"input\": %w", err)
	}
	return t, nil
}

// ConvNd is aten.conv1d/conv2d: [Convolution] that also accepts an
// unbatched input (one dim fewer), adding and removing the batch dim.
func ConvNd(nd int, input, weight, bias *tensor.Tensor, p ConvParams) (*tensor.Tensor, error) {
	if input == nil {
		return nil, argErrf("conv%dd: argument \"input\" is required", nd)
	}
	switch input.Dim() {
	case nd + 2:
		return Convolution(input, weight, bias, p)
	case nd + 1:
		x, err := input.Unsqueeze(0)
		if err != nil {
			return nil, err
		}
		y, err := Convolution(x, weight, bias, p)
		if err != nil {
			return nil, err
		}
		return y.Squeeze(0)
	}
	return nil, shapeErrf("conv%dd: argument \"input\": want %d-D (unbatched) or %d-D (batched), got %v", nd, nd+1, nd+2, input.Shape())
}
