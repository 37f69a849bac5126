package kernels

// minVectorGemmWork is the smallest m·n·k dotAccumulate hands to the
// assembly kernel; below it packing costs more than it saves.
const minVectorGemmWork = 4096

// panelChunkFloats bounds the packed copy of b that dotAccumulateVec
// holds at once, per goroutine: 256k floats (1 MiB), so a large weight is
// never copied whole (a 4096x4096 linear would otherwise hold a second
// 64 MiB) while a chunk still spans many panels.
const panelChunkFloats = 1 << 18

// dotAccumulateVec is dotAccumulate on the assembly kernel gemmTile4x16:
// sixteen columns (one packed panel of b) by four rows at a time, every
// output still its own sequential sum over k = 0, 1, ..., k-1 with each
// product and each sum rounded to float32. The panels are split between
// goroutines; each packs its panels a chunk at a time into a pooled
// buffer and computes every row against the chunk, so each output is
// computed by one goroutine and b is packed once.
func dotAccumulateVec(m, n, k int, a, b, c []float32, ldc int) {
	np := (n + 15) / 16
	if np < 2 && m >= 32 {
		// One panel and many rows: split the rows instead.
		bp := getF32(np * k * 16)
		packPanels(bp, b, n, k, 0, np)
		dotPanels(m, n, k, a, bp, c, ldc)
		putF32(bp)
		return
	}
	ap, groups := padRows4(a, m, k)
	chunk := max(1, min(np, panelChunkFloats/(16*k)))
	splitWork(np, max(1, (1<<18)/(64*k*groups)), func(lo, hi int) {
		bp := getF32(min(chunk, hi-lo) * k * 16)
		var tile [4 * 16]float32
		for c0 := lo; c0 < hi; c0 += chunk {
			c1 := min(c0+chunk, hi)
			packPanels(bp, b, n, k, c0, c1)
			for jp := c0; jp < c1; jp++ {
				panel := &bp[(jp-c0)*k*16]
				j0 := jp * 16
				cols := min(16, n-j0)
				for ig := range groups {
					i0 := ig * 4
					gemmTile(&ap[i0*k], k, panel, c, ldc, i0, j0, min(4, m-i0), cols, &tile)
				}
			}
		}
		putF32(bp)
	})
}

// padRows4 returns the m rows of length k of a as a whole number of
// 4-row groups for gemmTile4x16 (a copy with zero rows added when m is
// not a multiple of 4), and the number of groups.
func padRows4(a []float32, m, k int) (ap []float32, groups int) {
	mp := (m + 3) &^ 3
	ap = a[:m*k]
	if mp != m {
		ap = make([]float32, mp*k)
		copy(ap, a[:m*k])
	}
	return ap, mp / 4
}

// packPanels packs the panels [lo, hi) of the n-by-k matrix b (row j is
// column j of the product) into dst: dst[((jp-lo)*k+l)*16+q] =
// b[(jp*16+q)*k+l], zero past column n.
func packPanels(dst, b []float32, n, k, lo, hi int) {
	for jp := lo; jp < hi; jp++ {
		panel := dst[(jp-lo)*k*16 : (jp-lo+1)*k*16]
		if (jp+1)*16 <= n {
			packFullPanel(panel, b[jp*16*k:(jp+1)*16*k], k)
			continue
		}
		q := 0
		for ; q < 16 && jp*16+q < n; q++ {
			row := b[(jp*16+q)*k : (jp*16+q+1)*k]
			for l, v := range row {
				panel[l*16+q] = v
			}
		}
		for ; q < 16; q++ {
			for l := range k {
				panel[l*16+q] = 0
			}
		}
	}
}

// packFullPanel is packPanels for one panel of 16 rows of length k (rows
// holds them one after the other): eight steps at a time as 8x8 register
// transposes (packT8x8, when the assembly kernels run), the rest one step
// at a time, each step writing 16 contiguous values read from the 16 rows
// at that step.
func packFullPanel(panel, rows []float32, k int) {
	l0 := 0
	if useVectorKernels {
		for ; l0+8 <= k; l0 += 8 {
			packT8x8(&rows[l0], k, &panel[l0*16], &iota8[0])
			packT8x8(&rows[8*k+l0], k, &panel[l0*16+8], &iota8[0])
		}
	}
	r0, r1, r2, r3 := rows[0*k:1*k], rows[1*k:2*k], rows[2*k:3*k], rows[3*k:4*k]
	r4, r5, r6, r7 := rows[4*k:5*k], rows[5*k:6*k], rows[6*k:7*k], rows[7*k:8*k]
	r8, r9, r10, r11 := rows[8*k:9*k], rows[9*k:10*k], rows[10*k:11*k], rows[11*k:12*k]
	r12, r13, r14, r15 := rows[12*k:13*k], rows[13*k:14*k], rows[14*k:15*k], rows[15*k:16*k]
	for l := l0; l < k; l++ {
		d := panel[l*16 : l*16+16 : l*16+16]
		d[0], d[1], d[2], d[3] = r0[l], r1[l], r2[l], r3[l]
		d[4], d[5], d[6], d[7] = r4[l], r5[l], r6[l], r7[l]
		d[8], d[9], d[10], d[11] = r8[l], r9[l], r10[l], r11[l]
		d[12], d[13], d[14], d[15] = r12[l], r13[l], r14[l], r15[l]
	}
}

// iota8 is packT8x8's row table for packFullPanel: transposed vector e
// goes to step e of the panel.
var iota8 = [8]int32{0, 1, 2, 3, 4, 5, 6, 7}

// dotPanels is dotAccumulateVec with b already packed in panels of 16
// columns: bp[(jp*k+l)*16+q] is column jp*16+q at step l, zero past
// column n.
func dotPanels(m, n, k int, a, bp, c []float32, ldc int) {
	np := (n + 15) / 16
	ap, groups := padRows4(a, m, k)
	tiles := np * groups
	splitWork(tiles, max(1, 65536/(64*k)), func(lo, hi int) {
		var tile [4 * 16]float32
		for it := lo; it < hi; it++ {
			jp, ig := it/groups, it%groups
			i0, j0 := ig*4, jp*16
			gemmTile(&ap[i0*k], k, &bp[jp*k*16], c, ldc, i0, j0, min(4, m-i0), min(16, n-j0), &tile)
		}
	})
}

// gemmTile runs gemmTile4x16 (rows of a at a, panel packed) on the tile
// of c at row i0, column j0 of rows <= 4 by cols <= 16: in place when it
// is whole, else (an edge tile) through tile, so that the kernel's full
// 4x16 stores stay inside it.
func gemmTile(a *float32, k int, panel *float32, c []float32, ldc, i0, j0, rows, cols int, tile *[4 * 16]float32) {
	if rows == 4 && cols == 16 {
		gemmTile4x16(a, k, panel, k, &c[i0*ldc+j0], ldc)
		return
	}
	for r := 0; r < rows; r++ {
		copy(tile[r*16:r*16+cols], c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+cols])
	}
	gemmTile4x16(a, k, panel, k, &tile[0], 16)
	for r := 0; r < rows; r++ {
		copy(c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+cols], tile[r*16:r*16+cols])
	}
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
				fillRows(dst, bd[gi*Og:(gi+1)*Og], P)
			}
			dotPanels(Og, P, K, wd[gi*Og*K:(gi+1)*Og*K], bp, dst, P)
		}
	}
	return out
}
