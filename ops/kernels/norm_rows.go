package kernels

// ntMinFloats is the output size (float32 elements of one goroutine's
// range, 8 MB) from which layer_norm and softmax write their outputs with
// non-temporal stores, past what the caches would keep. Tests lower it.
var ntMinFloats = 1 << 21

// rowwiseMoments4 is [rowwiseMoments] on the four rows x[r*inner :
// (r+1)*inner], r < 4, with the AVX2 kernels: the rows' Welford chunks run
// interleaved (four independent chains, so the processor overlaps their
// latencies) and every row keeps its own chunk results, merge stack and
// merge order, so each row's mean and variance are rowwiseMoments' bits.
// The caller checks useAVX2.
func rowwiseMoments4(x []float32, inner int, mean, variance *[4]float32) {
	const kChunk = 16
	n := inner / avx2Lanes
	m := (n + kChunk - 1) / kChunk
	depth := ceilLog2(m)
	if depth > 8 || n == 0 {
		for r := range 4 {
			mean[r], variance[r] = rowwiseMoments(x[r*inner : (r+1)*inner])
		}
		return
	}
	_ = x[4*inner-1]
	var m0s [8]int           // the counts are the same for every row
	var m1s, m2s [8][4]lanes // stack slot j of row r: m1s[j][r]
	cvec := &welfordRecip
	for i := 0; i < m; i++ {
		cnt := min(kChunk, n-i*kChunk)
		var m1, m2 [4]lanes
		welford4AVX2(&x[i*kChunk*avx2Lanes], 4*inner, cnt, &cvec[0], &m1, &m2)
		// addMomentsVec(cnt, m1, m2, slot 0), then the carries
		c0, f0 := momentsCoef(cnt, m0s[0])
		addMomentsVec4AVX2(c0, f0, &m1, &m2, &m1s[0], &m2s[0])
		m0s[0] += cnt
		mask := i + 1
		for j := 1; j < depth && mask&1 == 0; j++ {
			c, f := momentsCoef(m0s[j-1], m0s[j])
			addMomentsVec4AVX2(c, f, &m1s[j-1], &m2s[j-1], &m1s[j], &m2s[j])
			m1s[j-1], m2s[j-1] = [4]lanes{}, [4]lanes{}
			m0s[j] += m0s[j-1]
			m0s[j-1] = 0
			mask >>= 1
		}
	}
	for i := 1; i < depth; i++ {
		c, f := momentsCoef(m0s[i], m0s[0])
		addMomentsVec4AVX2(c, f, &m1s[i], &m2s[i], &m1s[0], &m2s[0])
		m0s[0] += m0s[i]
	}
	var dummy float32
	for r := range 4 {
		tail := x[r*inner+n*avx2Lanes : (r+1)*inner]
		t := &dummy
		if len(tail) > 0 {
			t = &tail[0]
		}
		mean[r], variance[r] = finishMomentsAVX2(t, len(tail), n, &m1s[0][r], &m2s[0][r], inner)
	}
}

// momentsCoef returns addMomentsVec's c = m0Add/(m0+m0Add) (0 when both
// are 0) and float32(m0).
func momentsCoef(m0Add, m0 int) (c, fm0 float32) {
	if n := m0 + m0Add; n != 0 {
		c = float32(m0Add) / float32(n)
	}
	return c, float32(m0)
}
