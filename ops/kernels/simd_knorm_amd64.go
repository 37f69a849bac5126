//go:build amd64 && !purego

package kernels

// Declarations of simd_knorm_amd64.s, used when useAVX2 is set; the Go
// loops they replace stay the reference (tests compare the bits).

// maxPoolAVX2 computes groups·8 max-pool outputs of one output row: lane
// l of group g is output 8g+l, whose window elements e < cnt sit at
// in[offs[e] + (8g+l)·sw]; the running maximum starts at -inf with the
// index of element 0 and takes an element that is greater or NaN. idx
// receives the chosen element's offset. offs[e] + (8·groups)·sw must fit
// an int32. With sw = 2 each element reads 16 floats from
// in[offs[e] + 16g] (one past the last lane's).
//
//go:noescape
func maxPoolAVX2(y *float32, idx *int64, in *float32, offs *int32, cnt, groups, sw int)

// avgPoolAVX2 is maxPoolAVX2's layout for average pooling: output 8g+l is
// the float32 sum, from 0 in element order, divided by div.
//
//go:noescape
func avgPoolAVX2(y *float32, in *float32, offs *int32, cnt, groups, sw int, div float32)

// rowSumSmall8AVX2 sets acc to rowSumSmall8(x, size), 0 < size < 64.
//
//go:noescape
func rowSumSmall8AVX2(x *float32, size int, acc *lanes)

// welford4AVX2 runs welfordAVX2 on four rows at once: row r's cnt vectors
// start stride bytes after row r-1's, and its lanes are m1[r], m2[r].
//
//go:noescape
func welford4AVX2(v *float32, stride, cnt int, c *float32, m1, m2 *[4]lanes)

// finishMomentsAVX2 is finishMoments(tail, n, m1v, m2v, N) with ntail =
// len(tail) > 0 or tail unused, in scalar float32 with hardware FMA.
//
//go:noescape
func finishMomentsAVX2(tail *float32, ntail, n int, m1v, m2v *lanes, N int) (mean, variance float32)

// meanPlanesAVX2 sets y[p] = cascadeSum(x[p·hw:(p+1)·hw]) / div for p <
// planes, 8 <= hw < 512 (rowSumSmall8's range), in one call.
//
//go:noescape
func meanPlanesAVX2(x *float32, hw, planes int, y *float32, div float32)

// addMomentsVec4AVX2 is the lane arithmetic of addMomentsVec, for c =
// m0Add/n and fm0 = float32(m0), on four rows' lanes at once: each
// operation rounded on its own, d = m1Add - m1, m1 += c·d,
// m2 = (m2 + m2Add) + ((d·d)·c)·fm0.
//
//go:noescape
func addMomentsVec4AVX2(c, fm0 float32, m1Add, m2Add, m1, m2 *[4]lanes)

// layerNormOutNTAVX2 is layerNormOutAVX2 with non-temporal stores; y must
// be 32-byte aligned, and sfenceAVX2 must run before y is read.
//
//go:noescape
func layerNormOutNTAVX2(y, x, w, b *float32, n int, m, rstd float32)

// sfenceAVX2 orders the non-temporal stores before what follows.
func sfenceAVX2()

// scaleIntoNTAVX2 sets y[i] = x[i]·r for i < n (a multiple of 8) with
// non-temporal stores; y must be 32-byte aligned, and sfenceAVX2 must run
// before y is read.
//
//go:noescape
func scaleIntoNTAVX2(y, x *float32, n int, r float32)

// subSubNTAVX2 is subSubAVX2 with non-temporal stores (as
// scaleIntoNTAVX2).
//
//go:noescape
func subSubNTAVX2(y, x *float32, n int, m, ls float32)

// maxLanes4AVX2 sets acc to x[0:8] maxed, lane by lane, with the vectors
// x[8k:8k+8] for 0 < k < nvec (nvec >= 1) by Go's max for numbers (+0
// over -0), through four independent accumulators (the same bits: that
// max is associative and commutative); it reports whether any element is
// NaN, and acc is then unusable.
//
//go:noescape
func maxLanes4AVX2(x *float32, nvec int, acc *lanes) (nan bool)

// maxPoolI32AVX2 is maxPoolAVX2 on int32 values (greater replaces; no NaN).
//
//go:noescape
func maxPoolI32AVX2(y *int32, idx *int64, in *int32, offs *int32, cnt, groups, sw int)

// subSub8AVX2 sets y[k] = (x[k] - m) - ls for the d elements stride bytes
// apart of 8 neighbouring inner positions, lane by lane.
//
//go:noescape
func subSub8AVX2(y, x *float32, d, stride int, m, ls *lanes)
