package kernels

// minVectorGemmWork is the smallest m·n·k dotAccumulate hands to the
// assembly kernel; below it packing costs more than it saves.
const minVectorGemmWork = 4096

// dotAccumulateVec is dotAccumulate on the assembly kernel gemmTile4x16:
// sixteen columns (one packed panel of b) by four rows at a time, every
// output still its own sequential sum over k = 0, 1, ..., k-1 with each
// product and each sum rounded to float32. Panels are packed and tiles
// computed on several goroutines; each output is computed by one.
func dotAccumulateVec(m, n, k int, a, b, c []float32, ldc int) {
	np := (n + 15) / 16
	// bp[(jp*k+l)*16+q] = b[(jp*16+q)*k+l], zero past column n.
	bp := make([]float32, np*k*16)
	splitWork(np, max(1, 8192/k), func(lo, hi int) {
		for jp := lo; jp < hi; jp++ {
			panel := bp[jp*k*16 : (jp+1)*k*16]
			for q := 0; q < 16 && jp*16+q < n; q++ {
				row := b[(jp*16+q)*k : (jp*16+q+1)*k]
				for l, v := range row {
					panel[l*16+q] = v
				}
			}
		}
	})
	dotPanels(m, n, k, a, bp, c, ldc)
}

// dotPanels is dotAccumulateVec with b already packed in panels of 16
// columns: bp[(jp*k+l)*16+q] is column jp*16+q at step l, zero past
// column n.
func dotPanels(m, n, k int, a, bp, c []float32, ldc int) {
	np := (n + 15) / 16
	mp := (m + 3) &^ 3
	ap := a[:m*k]
	if mp != m {
		ap = make([]float32, mp*k)
		copy(ap, a[:m*k])
	}
	groups := mp / 4
	tiles := np * groups
	splitWork(tiles, max(1, 65536/(64*k)), func(lo, hi int) {
		var tile [4 * 16]float32
		for it := lo; it < hi; it++ {
			jp, ig := it/groups, it%groups
			i0, j0 := ig*4, jp*16
			rows, cols := min(4, m-i0), min(16, n-j0)
			if rows == 4 && cols == 16 {
				gemmTile4x16(&ap[i0*k], k, &bp[jp*k*16], k, &c[i0*ldc+j0], ldc)
				continue
			}
			for r := 0; r < rows; r++ {
				copy(tile[r*16:r*16+cols], c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+cols])
			}
			gemmTile4x16(&ap[i0*k], k, &bp[jp*k*16], k, &tile[0], 16)
			for r := 0; r < rows; r++ {
				copy(c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+cols], tile[r*16:r*16+cols])
			}
		}
	})
}

// convNativeVec is ATen's slow_conv2d (the native convolution of
// [ConvolutionWith]) on the assembly sgemm: per image and group, each
// output starts from its bias and adds the products of its im2col column
// in (channel, row, column) order, each product and sum rounded. The
// im2col matrix is built directly in dotPanels's packed layout. It returns
// nil when the vector kernels are off or the problem is too small for
// them.
func convNativeVec(g conv2dGeom, xd, wd, bd []float32) []float32 {
	Cg, Og := g.C/g.G, g.O/g.G
	KT := g.kh * g.kw
	K, P := Cg*KT, g.Ho*g.Wo
	if !useVectorKernels || Og*P*K < minVectorGemmWork {
		return nil
	}
	out := make([]float32, g.B*g.O*P)
	np := (P + 15) / 16
	bp := make([]float32, np*K*16)
	for b := 0; b < g.B; b++ {
		for gi := 0; gi < g.G; gi++ {
			splitWork(K, 8, func(lo, hi int) {
				for l := lo; l < hi; l++ {
					c, i, j := l/KT, l%KT/g.kw, l%g.kw
					plane := xd[(b*g.C+gi*Cg+c)*g.H*g.W:]
					for p := 0; p < np*16; p++ {
						var v float32
						if p < P {
							oy, ox := p/g.Wo, p%g.Wo
							y, x := oy*g.sh-g.pt+i*g.dh, ox*g.sw-g.pl+j*g.dw
							if y >= 0 && y < g.H && x >= 0 && x < g.W {
								v = plane[y*g.W+x]
							}
						}
						bp[(p/16*K+l)*16+p%16] = v
					}
				}
			})
			dst := out[(b*g.O+gi*Og)*P : (b*g.O+(gi+1)*Og)*P]
			if bd != nil {
				for o := 0; o < Og; o++ {
					bv := bd[gi*Og+o]
					r := dst[o*P : (o+1)*P]
					for i := range r {
						r[i] = bv
					}
				}
			}
			dotPanels(Og, P, K, wd[gi*Og*K:(gi+1)*Og*K], bp, dst, P)
		}
	}
	return out
}
