package kernels

import (
	"github.com/fxquant/fxquant/ops/tensor"
)

// ConvISA names the x86 instruction set whose oneDNN convolution kernels
// [Convolution] reproduces. oneDNN picks its kernels by the CPU it runs on,
// whatever ATEN_CPU_CAPABILITY says, so PyTorch gives different float32
// convolution results on an AVX-512 machine and on an AVX2-only one.
type ConvISA uint8

const (
	// ConvISAAVX512Core is oneDNN 3.12 on a CPU with AVX-512 (avx512_core),
	// the machine the project's zoo fixtures were recorded on. It is the
	// default.
	ConvISAAVX512Core ConvISA = iota
	// ConvISAAVX2 is oneDNN 3.12 on a CPU with AVX2 and FMA but no AVX-512.
	ConvISAAVX2
)

// String gives oneDNN's name of the instruction set.
func (i ConvISA) String() string {
	if i == ConvISAAVX2 {
		return "avx2"
	}
	return "avx512_core"
}

// ConvImpl is the convolution implementation PyTorch 2.14 (with oneDNN
// 3.12.1) runs for a float32 convolution; each one adds its products in its
// own order.
type ConvImpl uint8

const (
	// ConvNative is ATen's own slow_conv2d / slow_conv_dilated2d: bias
	// first, then separately rounded products in (channel, row, column)
	// order.
	ConvNative ConvImpl = iota
	// ConvJitDW is oneDNN's jit_dw (depthwise): bias first, then one fused
	// multiply-add per kernel tap inside the input, row by row.
	ConvJitDW
	// ConvJit is oneDNN's direct jit kernel (jit:avx2, jit:avx512_core):
	// fused multiply-adds over input-channel blocks, in (block, row,
	// column, channel) order. On avx512_core every block is summed from
	// zero and added to the previous blocks' sum (the first block adds the
	// bias); on avx2 one accumulator starts from the bias.
	ConvJit
	// ConvJit1x1 is oneDNN's jit_1x1 kernel for 1×1 convolutions: fused
	// multiply-adds over the channels in chunks (conv1x1Chunk); the first
	// chunk starts from the bias, later ones from zero and are added to
	// the sum so far.
	ConvJit1x1
	// ConvGemm is oneDNN's gemm convolution: im2col, oneDNN's sgemm, then
	// the bias added (see convGemm for the sgemm's order).
	ConvGemm
)

// String gives the implementation's name as ONEDNN_VERBOSE prints it
// (without the ISA suffix), or "native".
func (c ConvImpl) String() string {
	switch c {
	case ConvJitDW:
		return "jit_dw"
	case ConvJit:
		return "jit"
	case ConvJit1x1:
		return "jit_1x1"
	case ConvGemm:
		return "gemm"
	}
	return "native"
}

// ConvOptions selects the machine whose PyTorch convolution results
// [ConvolutionWith] reproduces.
type ConvOptions struct {
	// ISA is the CPU's instruction set as oneDNN sees it.
	ISA ConvISA
	// Threads is torch.get_num_threads(); 0 means 1. It matters only to
	// PyTorch's choice of oneDNN for 1×1 kernels: the summation orders
	// reproduced are the single-threaded ones.
	Threads int
}

// ConvShape is a convolution's geometry as PyTorch's backend choice sees
// it, in 2-D: PyTorch views a 1-D convolution as a 2-D one of height 1
// (kernel height 1) before choosing, and oneDNN sees it so too.
type ConvShape struct {
	N, C, H, W     int // input batch, channels, height, width
	O, KH, KW      int // output channels, kernel height and width
	Groups         int
	SH, SW, DH, DW int // strides and dilations
	PT, PB, PL, PR int // padding top, bottom, left, right
}

func (s ConvShape) outHW() (int, int) {
	return (s.H+s.PT+s.PB-s.DH*(s.KH-1)-1)/s.SH + 1, (s.W+s.PL+s.PR-s.DW*(s.KW-1)-1)/s.SW + 1
}

// UseMkldnn is PyTorch 2.14's ConvParams::use_mkldnn for a contiguous
// float32 CPU input (aten/src/ATen/native/Convolution.cpp): oneDNN runs the
// convolution when (it is strided or dilated, or the batch is at least 16,
// or the kernel is not 1×1, or more than one thread runs) and (it is
// grouped, or both kernel sides exceed 3, or the batch exceeds 1, or the
// input has more than 20,480 elements). Otherwise ATen's native kernel runs.
func UseMkldnn(s ConvShape, threads int) bool {
	if threads < 1 {
		threads = 1
	}
	strided := s.SH != 1 || s.SW != 1
	dilated := s.DH != 1 || s.DW != 1
	first := strided || dilated || s.N >= 16 || s.KW != 1 || s.KH != 1 || threads > 1
	second := s.Groups > 1 || (s.KW > 3 && s.KH > 3) || s.N > 1 || s.N*s.C*s.H*s.W > 20480
	return first && second
}

// endPad is oneDNN's calculate_end_padding.
func endPad(start, dst, src, stride, extK int) int {
	return (dst-1)*stride + extK - (src + start)
}

// ConvBackend gives the implementation PyTorch 2.14 with oneDNN 3.12.1
// runs for a contiguous float32 convolution of this shape, single-threaded
// unless opt says otherwise: [UseMkldnn], then the first implementation in
// oneDNN's list for the ISA whose conditions hold (PyTorch asks for
// forward_training with blocked formats chosen by oneDNN). A shape no
// convolution has (groups, strides, dilations or kernel sides below 1, or
// groups that do not divide the channels) gives ConvNative, whose kernel
// reports the error.
func ConvBackend(s ConvShape, opt ConvOptions) ConvImpl {
	if s.Groups < 1 || s.SH < 1 || s.SW < 1 || s.DH < 1 || s.DW < 1 || s.KH < 1 || s.KW < 1 ||
		s.C%s.Groups != 0 || s.O%s.Groups != 0 || !UseMkldnn(s, opt.Threads) {
		return ConvNative
	}
	Cg, Og := s.C/s.Groups, s.O/s.Groups
	oh, ow := s.outHW()
	extKH, extKW := (s.KH-1)*s.DH+1, (s.KW-1)*s.DW+1
	rPad := endPad(s.PL, ow, s.W, s.SW, extKW)
	bPad := endPad(s.PT, oh, s.H, s.SH, extKH)
	outside := extKW <= s.PL || extKW <= rPad || extKH <= s.PT || extKH <= bPad
	// jit_uni_dw: one input and one output channel per group.
	if Cg == 1 && Og == 1 && !outside {
		urs := []int{4, 3} // jit_avx2_dw, jit_sse41_dw
		if opt.ISA == ConvISAAVX512Core {
			urs = []int{6, 4, 3}
		}
		for _, ur := range urs {
			urW := min(ur, ow)
			tail := ow % urW
			rNoTail := max(0, endPad(s.PL, ow-tail, s.W, s.SW, extKW))
			if s.PL <= urW && rNoTail <= urW {
				return ConvJitDW
			}
		}
	}
	if s.KH == 1 && s.KW == 1 && s.PT == 0 && s.PL == 0 && s.PB == 0 && s.PR == 0 && !outside {
		simd := 8
		if opt.ISA == ConvISAAVX512Core {
			simd = 16
		}
		if s.Groups == 1 || (Cg%simd == 0 && Og%simd == 0) {
			return ConvJit1x1
		}
	}
	if !outside && jitBlock(s, opt.ISA) > 0 {
		return ConvJit
	}
	return ConvGemm
}

// jitBlock is the input-channel block of oneDNN's direct jit kernel for
// this shape, or 0 when that kernel refuses it.
func jitBlock(s ConvShape, isa ConvISA) int {
	Cg, Og := s.C/s.Groups, s.O/s.Groups
	if isa == ConvISAAVX512Core {
		if s.Groups == 1 {
			if Cg < 16 { // is_1stconv: one block of every channel
				return Cg
			}
			return 16 // channels padded to 16
		}
		for _, simd := range []int{16, 8, 4} {
			if Cg%simd == 0 && Og%simd == 0 {
				return simd
			}
		}
		return 0
	}
	if Cg < 8 { // flat: one block of every channel
		if s.Groups > 1 && Og%8 != 0 {
			return 0
		}
		return Cg
	}
	if s.Groups == 1 {
		return 8
	}
	if Cg%8 != 0 || Og%8 != 0 {
		return 0
	}
	return 8
}

// convShapeOf gives the ConvShape PyTorch's backend choice sees for a
// convolution Convolution validated. padding="same" with an odd total
// (PadAfter = PadBefore + 1) reaches it as the input padded by the extra
// zero row or column at the end and symmetric padding, as
// _convolution_mode pads it; those zeros add nothing to any sum.
func convShapeOf(g conv2dGeom, pb, pr int) ConvShape {
	s := ConvShape{N: g.B, C: g.C, H: g.H, W: g.W, O: g.O, KH: g.kh, KW: g.kw, Groups: g.G,
		SH: g.sh, SW: g.sw, DH: g.dh, DW: g.dw, PT: g.pt, PB: pb, PL: g.pl, PR: pr}
	if s.PB > s.PT {
		s.H += s.PB - s.PT
		s.PB = s.PT
	}
	if s.PR > s.PL {
		s.W += s.PR - s.PL
		s.PR = s.PL
	}
	return s
}

// convOneDNN computes a float32 convolution in the summation order of the
// oneDNN implementation impl. The jit kernels skip kernel taps that fall
// into the padding; gemm multiplies im2col's zeros. Both leave a sum's value
// unchanged (up to the sign of a zero).
func convOneDNN(impl ConvImpl, isa ConvISA, g conv2dGeom, xd, wd, bd []float32) []float32 {
	if impl == ConvGemm {
		return convGemm(isa, g, xd, wd, bd)
	}
	Cg, Og := g.C/g.G, g.O/g.G
	out := make([]float32, g.B*g.O*g.Ho*g.Wo)
	// ConvJitDW: bias first, one accumulator over the taps.
	block, partial := convBlocking(impl, isa, g)
	ks := g.kh * g.kw
	for b := 0; b < g.B; b++ {
		for o := 0; o < g.O; o++ {
			gi := o / Og
			wo := wd[o*Cg*ks:]
			var bias float32
			if bd != nil {
				bias = bd[o]
			}
			for oy := 0; oy < g.Ho; oy++ {
				for ox := 0; ox < g.Wo; ox++ {
					total := bias
					for c0 := 0; c0 < Cg; c0 += block {
						c1 := min(c0+block, Cg)
						acc := total
						if partial && (c0 > 0 || impl == ConvJit) {
							acc = 0
						}
						// Row, column, then channel in the block.
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
								for c := c0; c < c1; c++ {
									v := xd[((b*g.C+gi*Cg+c)*g.H+y)*g.W+x]
									acc = FMA32(v, wo[(c*g.kh+i)*g.kw+j], acc)
								}
							}
						}
						switch {
						case partial && impl == ConvJit:
							// avx512_core jit: each block summed from zero,
							// the first one then adds the bias, later ones
							// the sum so far.
							acc += total
						case partial && c0 > 0:
							// jit_1x1: the first reduce chunk starts from
							// the bias, later ones from zero and add the
							// sum so far.
							acc += total
						}
						total = acc
					}
					out[((b*g.O+o)*g.Ho+oy)*g.Wo+ox] = total
				}
			}
		}
	}
	return out
}

// convGemm is oneDNN's gemm convolution on nchw data: per image and group,
// C[m×n] = col[m×K] · W[K×n] with m the output positions, n the output
// channels of the group and K = channels·kernel taps in im2col order
// (channel, row, column), then the bias added to each output. The sgemm
// is oneDNN's: with one output channel per group (n = 1) its gemv_n, which
// adds the products with fused multiply-adds from zero in k order; with one
// output position (m = 1) its gemv_t (gemvTSum); otherwise, on avx2, the
// copy-free xbyak kernel (convGemmAVX2Sum), and on avx512_core its own
// (gemmAVX512Sum). Both copy-free kernels are what oneDNN runs unless m and
// n both exceed a few hundred (then a packing kernel runs, not reproduced).
func convGemm(isa ConvISA, g conv2dGeom, xd, wd, bd []float32) []float32 {
	Cg, Og := g.C/g.G, g.O/g.G
	ks := g.kh * g.kw
	K := Cg * ks
	M := g.Ho * g.Wo
	out := make([]float32, g.B*g.O*M)
	col := make([]float32, K)
	prod := make([]float32, K)
	for b := 0; b < g.B; b++ {
		for gi := 0; gi < g.G; gi++ {
			for oy := 0; oy < g.Ho; oy++ {
				for ox := 0; ox < g.Wo; ox++ {
					r := oy*g.Wo + ox
					for c := 0; c < Cg; c++ {
						plane := xd[(b*g.C+gi*Cg+c)*g.H*g.W:]
						for i := 0; i < g.kh; i++ {
							y := oy*g.sh - g.pt + i*g.dh
							for j := 0; j < g.kw; j++ {
								x := ox*g.sw - g.pl + j*g.dw
								var v float32
								if y >= 0 && y < g.H && x >= 0 && x < g.W {
									v = plane[y*g.W+x]
								}
								col[(c*g.kh+i)*g.kw+j] = v
							}
						}
					}
					for j := 0; j < Og; j++ {
						o := gi*Og + j
						w := wd[o*K : (o+1)*K]
						var acc float32
						switch {
						case Og == 1:
							for k := range col {
								acc = FMA32(col[k], w[k], acc)
							}
						case M == 1:
							acc = gemvTSum(col, w)
						case isa != ConvISAAVX2:
							acc = gemmAVX512Sum(col, w)
						default:
							for k := range col {
								prod[k] = col[k] * w[k]
							}
							acc = convGemmAVX2Sum(col, w, prod, M, Og, r, j)
						}
						if bd != nil {
							acc += bd[o]
						}
						out[(b*g.O+o)*M+r] = acc
					}
				}
			}
		}
	}
	return out
}

// conv1x1Chunk is the number of input channels oneDNN's jit_1x1 kernel sums
// in one call (its reduce blocking, single-threaded, nchw data): 128 on
// avx2; on avx512_core 80, 256 or 512 by the output height and channel
// count, cut further when the input would alias in a 16-way L2 set
// (jit_avx512_common_1x1_conv_kernel.cpp init_conf). Each call after the
// first sums from zero and adds the output so far.
func conv1x1Chunk(isa ConvISA, ic, oc, oh, os int) int {
	if isa == ConvISAAVX2 {
		return 128
	}
	ic = (ic + 15) / 16 * 16
	oc = (oc + 15) / 16 * 16
	maxR, minR := 9, 6
	if oc > 128 && oc < 256 && oh > 10 && oh < 28 {
		maxR, minR = 6, 5
	}
	ur := 1
	for u := maxR; u >= minR; u-- {
		if (oh >= 14 && oh%u == 0) || (oh < 14 && os%u == 0) {
			ur = u
			break
		}
	}
	if ur == 1 {
		ur = min(maxR, os)
		tail := os % maxR
		for i := maxR; i >= minR; i-- {
			if t := os % i; t > tail || t == 0 {
				ur, tail = i, t
				if t == 0 {
					break
				}
			}
		}
	}
	var rb int
	switch {
	case oc <= 256 && oh > 10 && oh < 28:
		rb = min(ic, 80)
	case oh > 10:
		rb = min(ic, 512)
	default:
		rb = min(ic, 256)
	}
	const way, maxHits = 64 * 1024 / 4, 7
	if os*rb > way*maxHits {
		nrb, wl := rb/16, way/16
		for start := 0; start < ur; start++ {
			hits := 0
			for off := start; off < os*nrb; off += wl {
				if off%os >= ur {
					continue
				}
				if hits++; hits < maxHits {
					continue
				}
				rb = min(rb, 16*max(1, (off+wl)/os))
				break
			}
		}
	}
	return rb
}

// gemvTSum is the dot product of oneDNN's jit_avx_gemv_t_f32_kern, the
// sgemm of a single output position (m = 1) with several output channels:
// eight lanes of fused multiply-adds over chunks of 16 (lane l takes k ≡ l
// mod 8), reduced as ((l0+l1)+(l4+l5)) + ((l2+l3)+(l6+l7)) and added to
// the output; then the remaining k in pieces of 8, 4, 2 and 1, each
// piece's products reduced the same way (missing lanes are zero) and
// added in turn.
func gemvTSum(a, b []float32) float32 {
	reduce := func(l *[8]float32) float32 {
		return ((l[0] + l[1]) + (l[4] + l[5])) + ((l[2] + l[3]) + (l[6] + l[7]))
	}
	k := len(a)
	var y float32
	main := k / 16 * 16
	if main > 0 {
		var lanes [8]float32
		for k0 := 0; k0 < main; k0 += 8 {
			for l := 0; l < 8; l++ {
				lanes[l] = FMA32(a[k0+l], b[k0+l], lanes[l])
			}
		}
		y += reduce(&lanes)
	}
	pos := main
	for _, ux := range []int{8, 4, 2, 1} {
		if (k-main)&ux == 0 {
			continue
		}
		var lanes [8]float32
		for l := 0; l < ux; l++ {
			lanes[l] = a[pos+l] * b[pos+l]
		}
		y += reduce(&lanes)
		pos += ux
	}
	return y
}

// gemmAVX512Sum is one element of oneDNN's avx512_core copy-free sgemm
// (jit_avx512_common_gemm_f32.cpp) with alpha 1 and beta 0: one
// accumulator of fused multiply-adds in k order per K block of 384 (cut as
// gemmBlock cuts it), each later block's sum added to the result. Read
// from the source; no AVX-512 machine was at hand to record vectors, and
// no zoo convolution takes this path.
func gemmAVX512Sum(a, b []float32) float32 {
	var total float32
	for k0 := 0; k0 < len(a); {
		size := gemmBlock(len(a), k0, 384, true)
		var acc float32
		for k := k0; k < k0+size; k++ {
			acc = FMA32(a[k], b[k], acc)
		}
		if k0 == 0 {
			total = acc
		} else {
			total += acc
		}
		k0 += size
	}
	return total
}

// gemmBlock is the size of the block starting at pos of a dimension of
// length n cut into blocks of about bs, as oneDNN's sgemm_nocopy_driver
// cuts it: whole blocks of bs while two or more remain, then the rest
// halved if it exceeds 1.5·bs (bk halves above bs).
func gemmBlock(n, pos, bs int, half bool) int {
	size := n - pos
	if size >= 2*bs {
		return bs
	}
	if half {
		if size > bs {
			return (size + 1) / 2
		}
		return size
	}
	if size > bs+bs/2 {
		return (size + 1) / 2
	}
	return size
}

// convGemmAVX2Sum is one element C[r, j] of oneDNN's avx2 copy-free sgemm
// (jit_avx_gemm_f32.cpp, xbyak_gemm_t) with alpha 1 and beta 0, for an
// m×n result and k = len(a). K is cut into blocks of 256 (beta 1 after
// the first: C + block). Within a block, rows go in kernels of 16 (a
// remainder of 8 or fewer rows takes the 8-row kernel) and columns in
// kernels of 6, then the remainder. The 16-row kernels with 4 to 6
// columns keep one accumulator; the 16-row kernels with 3 or fewer
// columns and every 8-row kernel keep two, for even and odd k, added
// before a last odd k. Kernels of 1 or 2 columns multiply and add without
// fusing; the others use fused multiply-adds.
func convGemmAVX2Sum(a, b, prod []float32, m, n, r, j int) float32 {
	k := len(a)
	// Row kernel of row r (one M block: m ≤ 4032 in any convolution
	// fxquant runs; larger M is cut as the driver does).
	um := 16
	for pos := 0; pos < m; {
		size := gemmBlock(m, pos, 4032, false)
		if r < pos+size {
			rem := size - (r-pos)/16*16
			if rem < 16 && rem <= 8 {
				um = 8
			}
			break
		}
		pos += size
	}
	un := 6
	for pos := 0; pos < n; {
		size := gemmBlock(n, pos, 48, false)
		if j < pos+size {
			if rel := j - pos; rel >= size/6*6 {
				un = size % 6
			}
			break
		}
		pos += size
	}
	twoAcc := um <= 8 || un <= 3
	useFma := un > 2
	op := func(i int, acc float32) float32 {
		if useFma {
			return FMA32(a[i], b[i], acc)
		}
		return acc + prod[i]
	}
	var total float32
	for k0 := 0; k0 < k; {
		size := gemmBlock(k, k0, 256, true)
		even := size &^ 1
		var acc, odd float32
		for t := 0; t < even; t++ {
			if twoAcc && t%2 == 1 {
				odd = op(k0+t, odd)
			} else {
				acc = op(k0+t, acc)
			}
		}
		if twoAcc {
			acc += odd
		}
		if size%2 == 1 {
			acc = op(k0+size-1, acc)
		}
		if k0 == 0 {
			total = acc
		} else {
			total += acc
		}
		k0 += size
	}
	return total
}

// convOneDNNTensor wraps convOneDNN for [Convolution].
func convOneDNNTensor(impl ConvImpl, isa ConvISA, g conv2dGeom, dt tensor.DType, outShape []int, xd, wd, bd []float32) *tensor.Tensor {
	return fromFloat32(dt, outShape, convOneDNNDispatch(impl, isa, g, xd, wd, bd))
}
