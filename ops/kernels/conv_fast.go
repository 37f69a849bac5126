package kernels

import "sync"

// This file holds the vector paths of oneDNN's direct convolutions
// (ConvJit, ConvJit1x1, ConvJitDW). They compute sixteen output channels
// (direct) or eight channels a vector (depthwise) of several output
// positions at once with the assembly kernels of conv_fast_amd64.s, and
// give every output element exactly the chain of fused multiply-adds and
// additions convOneDNN gives it: the same taps, skipped at the same
// borders, in the same (block, row, column, channel) order, with the same
// partial sums. Only the order in which output elements are computed
// changes, and that changes no bit. Work is split over goroutines by
// output rows; every element is still computed by one goroutine.

// useVectorKernels selects the assembly kernels; it is true when the CPU
// has them (AVX2 and FMA on amd64). Tests turn it off to run the pure-Go
// kernels on the same inputs.
var useVectorKernels = haveFMA32x8

// f32Pool keeps scratch buffers (packed weights and inputs) between
// calls, which saves clearing and faulting in fresh memory each time.
var f32Pool sync.Pool

// getF32 returns a scratch slice of length n with unspecified contents.
func getF32(n int) []float32 {
	if p, ok := f32Pool.Get().(*[]float32); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]float32, n)
}

// putF32 hands a slice from getF32 back for reuse.
func putF32(s []float32) {
	f32Pool.Put(&s)
}

// convBlocking is the input-channel block and the partial-sum rule of
// convOneDNN for impl: each block of that many channels is summed in
// (row, column, channel) order; with partial set, blocks after the first
// (and for ConvJit every block) are summed from zero and then added to
// the sum so far.
func convBlocking(impl ConvImpl, isa ConvISA, g conv2dGeom) (block int, partial bool) {
	Cg, Og := g.C/g.G, g.O/g.G
	block = Cg
	if impl == ConvJit {
		block = jitBlock(ConvShape{C: g.C, O: g.O, Groups: g.G}, isa)
		partial = isa == ConvISAAVX512Core
	}
	if impl == ConvJit1x1 {
		block = conv1x1Chunk(isa, Cg, Og, g.Ho, g.Ho*g.Wo)
		partial = true
	}
	if block < 1 {
		block = Cg
	}
	return block, partial
}

// validRange is the range [lo, hi) of kernel taps k < n whose input
// coordinate o*stride - pad + k*dil lies in [0, size).
func validRange(o, stride, pad, dil, n, size int) (lo, hi int) {
	base := o*stride - pad
	lo, hi = n, n
	for k := 0; k < n; k++ {
		if x := base + k*dil; x >= 0 && x < size {
			if lo == n {
				lo = k
			}
			hi = k + 1
		}
	}
	if lo == n {
		return 0, 0
	}
	return lo, hi
}

// colRun is a run of output columns [ox, end) that all see the kernel
// columns [jLo, jHi) inside the input.
type colRun struct{ ox, end, jLo, jHi int }

// columnRuns cuts the output columns into maximal runs of equal valid
// kernel columns: the left border, the interior, the right border.
func columnRuns(g conv2dGeom) []colRun {
	var runs []colRun
	for ox := 0; ox < g.Wo; ox++ {
		lo, hi := validRange(ox, g.sw, g.pl, g.dw, g.kw, g.W)
		if n := len(runs); n > 0 && runs[n-1].jLo == lo && runs[n-1].jHi == hi {
			runs[n-1].end = ox + 1
			continue
		}
		runs = append(runs, colRun{ox, ox + 1, lo, hi})
	}
	return runs
}

// dwWeights packs the depthwise weights wd (KT taps of each of C
// channels) tap-major, w[t*Cp+c], and the bias bd (nil for none) into
// b[c], both zero for the channels C <= c < Cp.
func dwWeights(wd, bd []float32, C, Cp, KT int) (w, b []float32) {
	w = make([]float32, KT*Cp)
	for c := 0; c < C; c++ {
		for t := 0; t < KT; t++ {
			w[t*Cp+c] = wd[c*KT+t]
		}
	}
	b = make([]float32, Cp)
	if bd != nil {
		copy(b, bd[:C])
	}
	return w, b
}

// convDWPlanes is convOneDNN for ConvJitDW with column stride 1 on the
// assembly kernel dwPlanes, reading and writing channel-first data in
// place: 32 consecutive output columns of two channels a step,
// each its bias followed by one fused multiply-add per tap inside the
// input, row by row.
func convDWPlanes(g conv2dGeom, xd, wd, bd []float32) []float32 {
	C, KT := g.C, g.kh*g.kw
	HW, HWo := g.H*g.W, g.Ho*g.Wo
	out := make([]float32, g.B*C*HWo)
	if len(out) == 0 {
		return out
	}
	wt, bp := dwWeights(wd, bd, C, C, KT)
	runs := columnRuns(g)
	splitWork(g.B*g.Ho, 2, func(lo, hi int) {
		var taps []int64
		for it := lo; it < hi; it++ {
			b, oy := it/g.Ho, it%g.Ho
			iLo, iHi := validRange(oy, g.sh, g.pt, g.dh, g.kh, g.H)
			for _, r := range runs {
				taps = taps[:0]
				for i := iLo; i < iHi; i++ {
					y := oy*g.sh - g.pt + i*g.dh
					for j := r.jLo; j < r.jHi; j++ {
						taps = append(taps, int64(y*g.W+r.ox-g.pl+j*g.dw), int64((i*g.kw+j)*C))
					}
				}
				ntaps := len(taps) / 2
				taps = append(taps, 0, 0)
				dwPlanes(&xd[b*C*HW], &wt[0], &bp[0], &out[b*C*HWo+oy*g.Wo+r.ox], &taps[0], ntaps, r.end-r.ox, C, HW, HWo)
			}
		}
	})
	return out
}

// convDirectVec is convOneDNN for ConvJit and ConvJit1x1 with the
// assembly kernels.
func convDirectVec(impl ConvImpl, isa ConvISA, g conv2dGeom, xd, wd, bd []float32) []float32 {
	Cg, Og := g.C/g.G, g.O/g.G
	block, partial := convBlocking(impl, isa, g)
	KT := g.kh * g.kw
	nOB := (Og + 15) / 16
	perOB := Cg * KT * 16
	out := make([]float32, g.B*g.O*g.Ho*g.Wo)
	if len(out) == 0 {
		return out
	}
	// wp[((gi*nOB+ob)*Cg + c0)*KT*16 + (t*bs + c-c0)*16 + lane] is the
	// weight of output channel gi*Og+ob*16+lane, input channel c, tap t,
	// for the block [c0, c0+bs) holding c; lanes past Og are zero (wp is
	// a pooled buffer, so they are cleared below).
	wp := getF32(g.G * nOB * perOB)
	defer putF32(wp)
	// dstOf[c*KT+t] is the 16-float row of (channel c, tap t) in a packed
	// 16-channel block.
	dstOf := make([]int32, Cg*KT)
	for c0 := 0; c0 < Cg; c0 += block {
		bs := min(block, Cg-c0)
		for c := c0; c < c0+bs; c++ {
			for t := 0; t < KT; t++ {
				dstOf[c*KT+t] = int32(c0*KT + t*bs + c - c0)
			}
		}
	}
	splitWork(g.G*nOB, 1, func(lo, hi int) {
		for it := lo; it < hi; it++ {
			gi, ob := it/nOB, it%nOB
			dst := wp[it*perOB : (it+1)*perOB]
			lanes := min(16, Og-ob*16)
			if lanes < 16 {
				clear(dst)
			}
			src := wd[(gi*Og+ob*16)*Cg*KT : (gi*Og+ob*16+lanes)*Cg*KT]
			// Eight lanes by eight (channel, tap) entries at a time in
			// registers (packT8x8), then the rest 64 entries of every
			// lane at a time: each source row's piece copied in order to
			// tmp, then each destination row written whole.
			n, e := Cg*KT, 0
			if lanes == 16 {
				for ; e+8 <= n; e += 8 {
					packT8x8(&src[e], n, &dst[0], &dstOf[e])
					packT8x8(&src[8*n+e], n, &dst[8], &dstOf[e])
				}
			}
			var tmp [16 * 64]float32
			for e0 := e; e0 < n; e0 += 64 {
				e1 := min(e0+64, n)
				for lane := 0; lane < lanes; lane++ {
					copy(tmp[lane*64:lane*64+e1-e0], src[lane*Cg*KT+e0:lane*Cg*KT+e1])
				}
				for e, r := range dstOf[e0:e1] {
					if lanes == 16 {
						d := (*[16]float32)(dst[int(r)*16:])
						t := tmp[e:]
						d[0], d[1], d[2], d[3] = t[0], t[64], t[128], t[192]
						d[4], d[5], d[6], d[7] = t[256], t[320], t[384], t[448]
						d[8], d[9], d[10], d[11] = t[512], t[576], t[640], t[704]
						d[12], d[13], d[14], d[15] = t[768], t[832], t[896], t[960]
						continue
					}
					row := dst[int(r)*16 : int(r)*16+lanes]
					for lane := range row {
						row[lane] = tmp[lane*64+e]
					}
				}
			}
		}
	})
	HW := g.H * g.W
	xp := getF32(HW * Cg)
	defer putF32(xp)
	runs := columnRuns(g)
	for b := 0; b < g.B; b++ {
		for gi := 0; gi < g.G; gi++ {
			// Channel-last input of the group: xp[(y*W+x)*Cg + c].
			src := xd[(b*g.C+gi*Cg)*HW:]
			splitWork(Cg, 16, func(lo, hi int) {
				for c := lo; c < hi; c++ {
					plane := src[c*HW : (c+1)*HW]
					for p, v := range plane {
						xp[p*Cg+c] = v
					}
				}
			})
			// Work items are an output row and a group of up to four
			// 16-channel blocks; one-position tiles run the group's
			// blocks together (convTile64x1) to hide FMA latency.
			nOG := (nOB + 3) / 4
			splitWork(nOG*g.Ho, 1, func(lo, hi int) {
				var full, last []int64
				var biasLanes [4 * 16]float32
				// row[k*Wo*16 + p*16 + lane] is output channel
				// (og*4+k)*16+lane at column p.
				rowStride := g.Wo * 16
				row := make([]float32, 4*rowStride)
				for it := lo; it < hi; it++ {
					oy, og := it/nOG, it%nOG
					ob0 := og * 4
					nb := min(4, nOB-ob0)
					for k := 0; k < 4*16; k++ {
						biasLanes[k] = 0
						if o := ob0*16 + k; bd != nil && o < Og && k < nb*16 {
							biasLanes[k] = bd[gi*Og+o]
						}
					}
					iLo, iHi := validRange(oy, g.sh, g.pt, g.dh, g.kh, g.H)
					for _, run := range runs {
						// Taps of the run's first position for a full block
						// and for the last, shorter one; a tile and a block
						// move the input pointer.
						full = convTaps(full[:0], g, Cg, oy, iLo, iHi, run, block)
						last = convTaps(last[:0], g, Cg, oy, iLo, iHi, run, Cg-(Cg-1)/block*block)
						ntaps := len(full)/2 - 1
						tile := func(p0, P int) {
							for k := 0; k < nb; k++ {
								total := row[k*rowStride+p0*16 : k*rowStride+(p0+P)*16]
								for p := 0; p < P; p++ {
									copy(total[p*16:p*16+16], biasLanes[k*16:k*16+16])
								}
							}
							for c0 := 0; c0 < Cg; c0 += block {
								bs := min(block, Cg-c0)
								taps := full
								if bs != block {
									taps = last
								}
								fresh := 0
								if partial && (c0 > 0 || impl == ConvJit) {
									fresh = 1
								}
								xb := &xp[0]
								if ntaps > 0 {
									xb = &xp[(p0-run.ox)*g.sw*Cg+c0]
								}
								if P == 1 && nb == 4 {
									wb := &wp[(gi*nOB+ob0)*perOB+c0*KT*16]
									convTile64x1(xb, wb, &row[p0*16], &taps[0], ntaps, bs, perOB, rowStride, fresh)
									continue
								}
								for k := 0; k < nb; k++ {
									wb := &wp[(gi*nOB+ob0+k)*perOB+c0*KT*16]
									acc := &row[k*rowStride+p0*16]
									switch P {
									case 6:
										convTile16x6(xb, wb, acc, &taps[0], ntaps, bs, g.sw*Cg, fresh)
									case 3:
										convTile16x3(xb, wb, acc, &taps[0], ntaps, bs, g.sw*Cg, fresh)
									default:
										convTile16x1(xb, wb, acc, &taps[0], ntaps, bs, g.sw*Cg, fresh)
									}
								}
							}
						}
						// Tiles of 6, then the rest: one position alone,
						// else a tile of 3 or 6 moved back to end at the
						// run's end (its first positions are computed
						// again, with the same bits), which costs less
						// than one-position tiles.
						n := run.end - run.ox
						q := run.ox
						for ; run.end-q >= 6; q += 6 {
							tile(q, 6)
						}
						switch r := run.end - q; {
						case r == 0:
						case r == 1 || n == 2:
							for ; q < run.end; q++ {
								tile(q, 1)
							}
						case r <= 3:
							tile(run.end-3, 3)
						case n >= 6:
							tile(run.end-6, 6)
						default:
							tile(q, 3)
							tile(run.end-3, 3)
						}
					}
					for k := 0; k < nb; k++ {
						for lane := 0; lane < 16 && (ob0+k)*16+lane < Og; lane++ {
							o := gi*Og + (ob0+k)*16 + lane
							dst := out[((b*g.O+o)*g.Ho+oy)*g.Wo : ((b*g.O+o)*g.Ho+oy+1)*g.Wo]
							src := row[k*rowStride:]
							for p := range dst {
								dst[p] = src[p*16+lane]
							}
						}
					}
				}
			})
		}
	}
	return out
}

// convTaps appends to taps the (input offset, weight offset) pairs, in
// floats, of the kernel taps inside the input for output row oy and the
// first position of run, in (row, column) order, for a block of bs
// channels starting at channel 0 of channel-last input and of a packed
// weight block; then a pair of zeros, so that &taps[0] is valid when no
// tap is.
func convTaps(taps []int64, g conv2dGeom, Cg, oy, iLo, iHi int, run colRun, bs int) []int64 {
	for i := iLo; i < iHi; i++ {
		y := oy*g.sh - g.pt + i*g.dh
		for j := run.jLo; j < run.jHi; j++ {
			x := run.ox*g.sw - g.pl + j*g.dw
			taps = append(taps, int64((y*g.W+x)*Cg), int64((i*g.kw+j)*bs*16))
		}
	}
	return append(taps, 0, 0)
}

// convDWVec is convOneDNN for ConvJitDW (one input and one output channel
// per group) with the assembly kernel: channel-last data, eight channels a
// vector, each output its bias followed by one fused multiply-add per tap
// inside the input, row by row.
func convDWVec(g conv2dGeom, xd, wd, bd []float32) []float32 {
	C := g.C
	Cp := (C + 7) &^ 7
	KT := g.kh * g.kw
	HW, HWo := g.H*g.W, g.Ho*g.Wo
	out := make([]float32, g.B*C*HWo)
	if len(out) == 0 {
		return out
	}
	wp, bp := dwWeights(wd, bd, C, Cp, KT)
	xp := make([]float32, HW*Cp)
	op := make([]float32, HWo*Cp)
	runs := columnRuns(g)
	for b := 0; b < g.B; b++ {
		src := xd[b*C*HW:]
		splitWork(g.H, 4, func(lo, hi int) {
			for y := lo; y < hi; y++ {
				for c := 0; c < C; c++ {
					row := src[c*HW+y*g.W : c*HW+(y+1)*g.W]
					for x, v := range row {
						xp[(y*g.W+x)*Cp+c] = v
					}
				}
			}
		})
		splitWork(g.Ho, 2, func(lo, hi int) {
			var taps []int64
			for oy := lo; oy < hi; oy++ {
				iLo, iHi := validRange(oy, g.sh, g.pt, g.dh, g.kh, g.H)
				for _, r := range runs {
					taps = taps[:0]
					for i := iLo; i < iHi; i++ {
						y := oy*g.sh - g.pt + i*g.dh
						for j := r.jLo; j < r.jHi; j++ {
							x := r.ox*g.sw - g.pl + j*g.dw
							taps = append(taps, int64((y*g.W+x)*Cp), int64((i*g.kw+j)*Cp))
						}
					}
					ntaps := len(taps) / 2
					taps = append(taps, 0, 0)
					dwRun(&xp[0], &wp[0], &bp[0], &op[(oy*g.Wo+r.ox)*Cp], &taps[0], ntaps, Cp/8, r.end-r.ox, g.sw*Cp, Cp)
				}
			}
		})
		dst := out[b*C*HWo:]
		splitWork(C, 8, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				plane := dst[c*HWo : (c+1)*HWo]
				for p := range plane {
					plane[p] = op[p*Cp+c]
				}
			}
		})
	}
	return out
}

// convOneDNNDispatch is convOneDNN, on the assembly kernels when the CPU
// has them and the implementation has a vector path (the same bits
// either way).
func convOneDNNDispatch(impl ConvImpl, isa ConvISA, g conv2dGeom, xd, wd, bd []float32) []float32 {
	if useVectorKernels {
		switch impl {
		case ConvJit, ConvJit1x1:
			return convDirectVec(impl, isa, g, xd, wd, bd)
		case ConvJitDW:
			if g.C == g.G && g.O == g.G {
				if g.sw == 1 {
					return convDWPlanes(g, xd, wd, bd)
				}
				return convDWVec(g, xd, wd, bd)
			}
		case ConvGemm:
			if out := convGemmVec(isa, g, xd, wd, bd); out != nil {
				return out
			}
		}
	}
	return convOneDNN(impl, isa, g, xd, wd, bd)
}

// convGemmVec is convGemm on the assembly kernel dwPlanes for the
// summation orders it can run by output positions: one output channel
// per group (an FMA chain from zero over all K) and avx512_core's
// copy-free sgemm (FMA chains from zero over K blocks of about 384, each
// block's sum added to the ones before); then the bias. im2col's zeros
// are multiplied as in convGemm. It returns nil for the other orders
// (avx2's xbyak kernel, gemv_t for one output position), which stay on
// convGemm.
func convGemmVec(isa ConvISA, g conv2dGeom, xd, wd, bd []float32) []float32 {
	Cg, Og := g.C/g.G, g.O/g.G
	KT := g.kh * g.kw
	K, M := Cg*KT, g.Ho*g.Wo
	if M == 1 || (Og > 1 && isa == ConvISAAVX2) || K == 0 {
		return nil
	}
	out := make([]float32, g.B*g.O*M)
	if len(out) == 0 {
		return out
	}
	// K blocks: one for gemv_n, the sgemm's otherwise.
	var blocks []int
	for k0 := 0; k0 < K; {
		size := K
		if Og > 1 {
			size = gemmBlock(K, k0, 384, true)
		}
		blocks = append(blocks, k0, k0+size)
		k0 += size
	}
	zeros := make([]float32, Og)
	col := make([]float32, K*M) // col[k*M + r]
	wt := make([]float32, K*Og) // wt[k*Og + j]
	for b := 0; b < g.B; b++ {
		for gi := 0; gi < g.G; gi++ {
			for j := 0; j < Og; j++ {
				for k := 0; k < K; k++ {
					wt[k*Og+j] = wd[(gi*Og+j)*K+k]
				}
			}
			splitWork(K, 8, func(lo, hi int) {
				for k := lo; k < hi; k++ {
					c, i, j := k/KT, k%KT/g.kw, k%g.kw
					plane := xd[(b*g.C+gi*Cg+c)*g.H*g.W:]
					dst := col[k*M : (k+1)*M]
					for oy := 0; oy < g.Ho; oy++ {
						y := oy*g.sh - g.pt + i*g.dh
						for ox := 0; ox < g.Wo; ox++ {
							x := ox*g.sw - g.pl + j*g.dw
							var v float32
							if y >= 0 && y < g.H && x >= 0 && x < g.W {
								v = plane[y*g.W+x]
							}
							dst[oy*g.Wo+ox] = v
						}
					}
				}
			})
			base := (b*g.O + gi*Og) * M
			const chunk = 256
			splitWork((M+chunk-1)/chunk, 1, func(lo, hi int) {
				var taps []int64
				var tmp []float32
				for ch := lo; ch < hi; ch++ {
					r0, r1 := ch*chunk, min((ch+1)*chunk, M)
					n := r1 - r0
					for bi := 0; bi < len(blocks); bi += 2 {
						taps = taps[:0]
						for k := blocks[bi]; k < blocks[bi+1]; k++ {
							taps = append(taps, int64(k*M), int64(k*Og))
						}
						ntaps := len(taps) / 2
						if bi == 0 {
							dwPlanes(&col[r0], &wt[0], &zeros[0], &out[base+r0], &taps[0], ntaps, n, Og, 0, M)
							continue
						}
						if cap(tmp) < Og*n {
							tmp = make([]float32, Og*n)
						}
						tmp = tmp[:Og*n]
						dwPlanes(&col[r0], &wt[0], &zeros[0], &tmp[0], &taps[0], ntaps, n, Og, 0, n)
						for j := 0; j < Og; j++ {
							dst := out[base+j*M+r0 : base+j*M+r1]
							for r, v := range tmp[j*n : (j+1)*n] {
								dst[r] += v
							}
						}
					}
					if bd != nil {
						for j := 0; j < Og; j++ {
							bv := bd[gi*Og+j]
							dst := out[base+j*M+r0 : base+j*M+r1]
							for r := range dst {
								dst[r] += bv
							}
						}
					}
				}
			})
		}
	}
	return out
}
