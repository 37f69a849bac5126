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
	mp := (m + 3) &^ 3
	// bp[(jp*k+l)*16+q] = b[(jp*16+q)*k+l], zero past column n.
	bp := make([]float32, np*k*16)
	parallelFor(np, max(1, 8192/k), func(lo, hi int) {
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
	ap := a[:m*k]
	if mp != m {
		ap = make([]float32, mp*k)
		copy(ap, a[:m*k])
	}
	groups := mp / 4
	tiles := np * groups
	parallelFor(tiles, max(1, 65536/(64*k)), func(lo, hi int) {
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
