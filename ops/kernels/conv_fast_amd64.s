//go:build !purego

#include "textflag.h"

// AVX2 + FMA kernels for conv_fast.go and gemm_fast.go. Every lane of every
// register is its own output element; each element gets exactly the chain
// of operations the scalar code (FMA32, or a rounded product then a sum)
// gives it: VFMADD231PS is one float32 fused multiply-add with a single
// rounding, VMULPS and VADDPS round each product and sum to float32.
// Sum operands are written so the running sum is the first source, as
// the scalar code's acc + p is.

// One step of convTile16x6: broadcast the input at addr and fuse it into
// the two accumulators of one position.
#define FMA2(addr, bc, a0, a1) \
	VBROADCASTSS addr, bc; \
	VFMADD231PS Y12, bc, a0; \
	VFMADD231PS Y13, bc, a1

// Operations on a pair of accumulators a0, a1 held at addresses m0, m1:
// load, clear, add the values in memory, store.
#define PAIRLOAD(m0, m1, a0, a1) \
	VMOVUPS m0, a0; \
	VMOVUPS m1, a1
#define PAIRZERO(m0, m1, a0, a1) \
	VXORPS a0, a0, a0; \
	VXORPS a1, a1, a1
#define PAIRADD(m0, m1, a0, a1) \
	VADDPS m0, a0, a0; \
	VADDPS m1, a1, a1
#define PAIRSTORE(m0, m1, a0, a1) \
	VMOVUPS a0, m0; \
	VMOVUPS a1, m1

// The accumulators of convTile16x1, x3 and x6, a pair per position in
// order: position p's sixteen sums are Y(2p), Y(2p+1), stored at acc (DX)
// + 64p bytes. op is one of the PAIR operations.
#define T16ACC1(op) \
	op(0(DX), 32(DX), Y0, Y1)
#define T16ACC3(op) \
	T16ACC1(op); \
	op(64(DX), 96(DX), Y2, Y3); \
	op(128(DX), 160(DX), Y4, Y5)
#define T16ACC6(op) \
	T16ACC3(op); \
	op(192(DX), 224(DX), Y6, Y7); \
	op(256(DX), 288(DX), Y8, Y9); \
	op(320(DX), 352(DX), Y10, Y11)

// Start convTile16xN's sums (ACC, a T16ACC): from acc, or from zero when
// fresh (in AX) is not 0; with nc = 0, go to done. Arguments are loaded
// outside the macros, where go vet checks their frame offsets.
#define T16START(ACC) \
	TESTQ AX, AX; \
	JNZ zero; \
	ACC(PAIRLOAD); \
	JMP start; \
zero: \
	ACC(PAIRZERO); \
start: \
	TESTQ R13, R13; \
	JZ done

// End convTile16xN: add acc to the sums when fresh (in AX) is not 0,
// then store them to acc.
#define T16FINISH(ACC) \
	TESTQ AX, AX; \
	JZ store; \
	ACC(PAIRADD); \
store: \
	ACC(PAIRSTORE); \
	VZEROUPPER; \
	RET

// func convTile16x6(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int)
//
// For six output positions and sixteen output channels, with s[p*16+o]
// the running sum of position p, output channel o, starting from
// acc[p*16+o] (or from zero when fresh is not 0): for every tap t in
// order (taps[2t] the input offset of position 0, taps[2t+1] the weight
// offset, both in floats), for every channel c < nc in order:
//   s[p*16+o] = fma(x[taps[2t]+p*pstride+c], w[taps[2t+1]+c*16+o], s[p*16+o]);
// then acc[p*16+o] = s[p*16+o] (or, when fresh, s[p*16+o] + acc[p*16+o]).
TEXT ·convTile16x6(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ acc+16(FP), DX
	MOVQ taps+24(FP), R11
	MOVQ ntaps+32(FP), R12
	MOVQ nc+40(FP), R13
	MOVQ pstride+48(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R14
	MOVQ fresh+56(FP), AX
	T16START(T16ACC6)

tap:
	TESTQ R12, R12
	JZ    done
	MOVQ  0(R11), AX
	MOVQ  8(R11), BX
	LEAQ  (DI)(AX*4), R8
	LEAQ  (R8)(R14*1), R9
	LEAQ  (SI)(BX*4), BX
	MOVQ  R13, CX

chan:
	VMOVUPS 0(BX), Y12
	VMOVUPS 32(BX), Y13
	FMA2((R8), Y14, Y0, Y1)
	FMA2((R8)(R10*1), Y15, Y2, Y3)
	FMA2((R8)(R10*2), Y14, Y4, Y5)
	FMA2((R9), Y15, Y6, Y7)
	FMA2((R9)(R10*1), Y14, Y8, Y9)
	FMA2((R9)(R10*2), Y15, Y10, Y11)
	ADDQ $4, R8
	ADDQ $4, R9
	ADDQ $64, BX
	DECQ CX
	JNZ  chan

	ADDQ $16, R11
	DECQ R12
	JMP  tap

done:
	MOVQ fresh+56(FP), AX
	T16FINISH(T16ACC6)

// func convTile16x3(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int)
//
// convTile16x6 for three positions.
TEXT ·convTile16x3(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ acc+16(FP), DX
	MOVQ taps+24(FP), R11
	MOVQ ntaps+32(FP), R12
	MOVQ nc+40(FP), R13
	MOVQ pstride+48(FP), R10
	SHLQ $2, R10
	MOVQ fresh+56(FP), AX
	T16START(T16ACC3)

tap:
	TESTQ R12, R12
	JZ    done
	MOVQ  0(R11), AX
	MOVQ  8(R11), BX
	LEAQ  (DI)(AX*4), R8
	LEAQ  (SI)(BX*4), BX
	MOVQ  R13, CX

chan:
	VMOVUPS 0(BX), Y12
	VMOVUPS 32(BX), Y13
	FMA2((R8), Y14, Y0, Y1)
	FMA2((R8)(R10*1), Y15, Y2, Y3)
	FMA2((R8)(R10*2), Y14, Y4, Y5)
	ADDQ $4, R8
	ADDQ $64, BX
	DECQ CX
	JNZ  chan

	ADDQ $16, R11
	DECQ R12
	JMP  tap

done:
	MOVQ fresh+56(FP), AX
	T16FINISH(T16ACC3)

// func convTile16x1(x, w, acc *float32, taps *int64, ntaps, nc, pstride, fresh int)
//
// convTile16x6 for one position (pstride unused).
TEXT ·convTile16x1(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ acc+16(FP), DX
	MOVQ taps+24(FP), R11
	MOVQ ntaps+32(FP), R12
	MOVQ nc+40(FP), R13
	MOVQ fresh+56(FP), AX
	T16START(T16ACC1)

tap:
	TESTQ R12, R12
	JZ    done
	MOVQ  0(R11), AX
	MOVQ  8(R11), BX
	LEAQ  (DI)(AX*4), R8
	LEAQ  (SI)(BX*4), BX
	MOVQ  R13, CX

chan:
	VMOVUPS 0(BX), Y12
	VMOVUPS 32(BX), Y13
	FMA2((R8), Y14, Y0, Y1)
	ADDQ $4, R8
	ADDQ $64, BX
	DECQ CX
	JNZ  chan

	ADDQ $16, R11
	DECQ R12
	JMP  tap

done:
	MOVQ fresh+56(FP), AX
	T16FINISH(T16ACC1)

// func dwRun(x, w, bias, out *float32, taps *int64, ntaps, nvec, npos, xstride, ostride int)
//
// Depthwise convolution over npos output positions of channel-last data,
// eight channels a vector: for position p and channel c < 8·nvec,
//   acc = bias[c]; for every tap t in order:
//   acc = fma(x[p*xstride+taps[2t]+c], w[taps[2t+1]+c], acc); out[p*ostride+c] = acc.
// Offsets and strides are in floats. Four channel vectors run at once.
TEXT ·dwRun(SB), NOSPLIT, $0-80
	MOVQ x+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ out+24(FP), DX
	MOVQ npos+56(FP), R12
	MOVQ xstride+64(FP), R13
	SHLQ $2, R13
	MOVQ ostride+72(FP), R14
	SHLQ $2, R14

dwpos:
	TESTQ R12, R12
	JZ    dwdone
	MOVQ  bias+16(FP), R8 // bias of the current vector
	MOVQ  DX, R9          // output of the current vector
	MOVQ  nvec+48(FP), R10
	XORQ  BX, BX          // byte offset of the current vector

dwvec4:
	CMPQ R10, $4
	JLT  dwvec1
	VMOVUPS 0(R8), Y0
	VMOVUPS 32(R8), Y1
	VMOVUPS 64(R8), Y2
	VMOVUPS 96(R8), Y3
	MOVQ taps+32(FP), R11
	MOVQ ntaps+40(FP), CX

dw4tap:
	TESTQ CX, CX
	JZ    dw4store
	MOVQ  0(R11), AX
	LEAQ  (DI)(AX*4), AX
	ADDQ  BX, AX
	VMOVUPS 0(AX), Y4
	VMOVUPS 32(AX), Y5
	VMOVUPS 64(AX), Y6
	VMOVUPS 96(AX), Y7
	MOVQ  8(R11), AX
	LEAQ  (SI)(AX*4), AX
	ADDQ  BX, AX
	VFMADD231PS 0(AX), Y4, Y0
	VFMADD231PS 32(AX), Y5, Y1
	VFMADD231PS 64(AX), Y6, Y2
	VFMADD231PS 96(AX), Y7, Y3
	ADDQ $16, R11
	DECQ CX
	JMP  dw4tap

dw4store:
	VMOVUPS Y0, 0(R9)
	VMOVUPS Y1, 32(R9)
	VMOVUPS Y2, 64(R9)
	VMOVUPS Y3, 96(R9)
	ADDQ $128, R8
	ADDQ $128, R9
	ADDQ $128, BX
	SUBQ $4, R10
	JMP  dwvec4

dwvec1:
	TESTQ R10, R10
	JZ    dwnext
	VMOVUPS 0(R8), Y0
	MOVQ taps+32(FP), R11
	MOVQ ntaps+40(FP), CX

dw1tap:
	TESTQ CX, CX
	JZ    dw1store
	MOVQ  0(R11), AX
	LEAQ  (DI)(AX*4), AX
	ADDQ  BX, AX
	VMOVUPS 0(AX), Y4
	MOVQ  8(R11), AX
	LEAQ  (SI)(AX*4), AX
	ADDQ  BX, AX
	VFMADD231PS 0(AX), Y4, Y0
	ADDQ $16, R11
	DECQ CX
	JMP  dw1tap

dw1store:
	VMOVUPS Y0, 0(R9)
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, BX
	DECQ R10
	JMP  dwvec1

dwnext:
	ADDQ R13, DI
	ADDQ R14, DX
	DECQ R12
	JMP  dwpos

dwdone:
	VZEROUPPER
	RET

// One k step of gemmTile4x16 for row r: the broadcast a element times both
// b vectors, each product rounded, then added to the row's sums.
#define MULADD2(addr, a0, a1) \
	VBROADCASTSS addr, Y10; \
	VMULPS Y8, Y10, Y11; \
	VADDPS Y11, a0, a0; \
	VMULPS Y9, Y10, Y12; \
	VADDPS Y12, a1, a1

// The sums of gemmTile4x16, a pair per row: row r's are Y(2r), Y(2r+1)
// at c (DX) + r*ldc floats (R11 bytes; R12 = DX + 2*R11). op is one of
// the PAIR operations.
#define G4ACC(op) \
	op(0(DX), 32(DX), Y0, Y1); \
	op(0(DX)(R11*1), 32(DX)(R11*1), Y2, Y3); \
	op(0(R12), 32(R12), Y4, Y5); \
	op(0(R12)(R11*1), 32(R12)(R11*1), Y6, Y7)

// func gemmTile4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int)
//
// For rows r < 4 and columns q < 16: for l = 0 .. k-1 in order,
//   c[r*ldc+q] = c[r*ldc+q] + round(a[r*lda+l] * b[l*16+q]),
// each product and each sum rounded to float32 (no fused multiply-add),
// as the reference sgemm's dot loops do.
TEXT ·gemmTile4x16(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), DI
	MOVQ lda+8(FP), R10
	SHLQ $2, R10
	MOVQ b+16(FP), SI
	MOVQ k+24(FP), CX
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R11
	SHLQ $2, R11
	LEAQ (DX)(R11*2), R12
	LEAQ (DI)(R10*2), R9
	G4ACC(PAIRLOAD)
	TESTQ CX, CX
	JZ    g4done

g4loop:
	VMOVUPS 0(SI), Y8
	VMOVUPS 32(SI), Y9
	MULADD2((DI), Y0, Y1)
	MULADD2((DI)(R10*1), Y2, Y3)
	MULADD2((R9), Y4, Y5)
	MULADD2((R9)(R10*1), Y6, Y7)
	ADDQ $4, DI
	ADDQ $4, R9
	ADDQ $64, SI
	DECQ CX
	JNZ  g4loop

g4done:
	G4ACC(PAIRSTORE)
	VZEROUPPER
	RET

// Clamp the four vector offsets of a dwPlanes group to the last full
// vector, whose byte offset is in AX.
#define DWCLAMP \
	CMPQ BX, AX; \
	CMOVQGT AX, BX; \
	LEAQ 32(BX), R10; \
	CMPQ R10, AX; \
	CMOVQGT AX, R10; \
	LEAQ 64(BX), R14; \
	CMPQ R14, AX; \
	CMOVQGT AX, R14; \
	LEAQ 96(BX), R12; \
	CMPQ R12, AX; \
	CMOVQGT AX, R12

// The four vectors of a dwPlanes group at byte offsets BX, R10, R14, R12
// from base: set a..d to src, fuse the input vectors times w into a..d,
// store a..d.
#define DWSET4(src, a, b, c, d) \
	VMOVAPS src, a; \
	VMOVAPS src, b; \
	VMOVAPS src, c; \
	VMOVAPS src, d
#define DWFMA4(base, w, a, b, c, d) \
	VFMADD231PS (base)(BX*1), w, a; \
	VFMADD231PS (base)(R10*1), w, b; \
	VFMADD231PS (base)(R14*1), w, c; \
	VFMADD231PS (base)(R12*1), w, d
#define DWSTORE4(base, a, b, c, d) \
	VMOVUPS a, (base)(BX*1); \
	VMOVUPS b, (base)(R10*1); \
	VMOVUPS c, (base)(R14*1); \
	VMOVUPS d, (base)(R12*1)

// func dwPlanes(x, w, bias, out *float32, taps *int64, ntaps, npos, nch, xcs, ocs int)
//
// Depthwise convolution of nch channels on channel-first data, for npos
// output positions of one row whose input columns are consecutive (stride
// 1) and which all see the same taps, with w the weights tap-major
// (w[t*nch+ch] for tap t = taps[2t+1]/nch): for channel ch and position p,
//   acc = bias[ch]; for every tap t in order:
//   acc = fma(x[ch*xcs+taps[2t]+p], w[taps[2t+1]+ch], acc); out[ch*ocs+p] = acc.
// Two channels run side by side. With npos >= 8, positions go in groups
// of four 8-lane vectors; a group's vectors past the end are moved back to
// end at npos, so some positions are computed twice, with the same result.
// With npos < 8 they go one at a time.
TEXT ·dwPlanes(SB), NOSPLIT, $16-80
	MOVQ x+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ out+24(FP), DX
	MOVQ bias+16(FP), AX
	MOVQ AX, bptr-8(SP)
	MOVQ nch+56(FP), AX
	MOVQ AX, left-16(SP)
	MOVQ xcs+64(FP), R13
	SHLQ $2, R13

dpch:
	MOVQ left-16(SP), AX
	CMPQ AX, $2
	JLT  dpone
	MOVQ bptr-8(SP), AX
	VBROADCASTSS (AX), Y8
	VBROADCASTSS 4(AX), Y9
	XORQ BX, BX
	MOVQ npos+48(FP), AX
	CMPQ AX, $8
	JLT  d2single

d2group:
	MOVQ npos+48(FP), AX
	SHLQ $2, AX
	CMPQ BX, AX
	JGE  d2next
	SUBQ $32, AX
	DWCLAMP
	DWSET4(Y8, Y0, Y1, Y2, Y3)
	DWSET4(Y9, Y4, Y5, Y6, Y7)
	MOVQ taps+32(FP), R11
	MOVQ ntaps+40(FP), CX

d2gt:
	TESTQ CX, CX
	JZ    d2gs
	MOVQ  0(R11), AX
	LEAQ  (DI)(AX*4), AX
	LEAQ  (AX)(R13*1), R8
	MOVQ  8(R11), R9
	LEAQ  (SI)(R9*4), R9
	VBROADCASTSS (R9), Y14
	VBROADCASTSS 4(R9), Y13
	DWFMA4(AX, Y14, Y0, Y1, Y2, Y3)
	DWFMA4(R8, Y13, Y4, Y5, Y6, Y7)
	ADDQ $16, R11
	DECQ CX
	JMP  d2gt

d2gs:
	DWSTORE4(DX, Y0, Y1, Y2, Y3)
	MOVQ ocs+72(FP), AX
	LEAQ (DX)(AX*4), AX
	DWSTORE4(AX, Y4, Y5, Y6, Y7)
	ADDQ $128, BX
	JMP  d2group

d2single:
	MOVQ npos+48(FP), R12

d2sp:
	TESTQ R12, R12
	JZ    d2next
	VMOVAPS X8, X0
	VMOVAPS X9, X4
	MOVQ taps+32(FP), R11
	MOVQ ntaps+40(FP), CX

d2st:
	TESTQ CX, CX
	JZ    d2ss
	MOVQ  0(R11), AX
	LEAQ  (DI)(AX*4), AX
	LEAQ  (AX)(R13*1), R8
	MOVQ  8(R11), R9
	LEAQ  (SI)(R9*4), R9
	VMOVSS (R9), X14
	VMOVSS 4(R9), X13
	VMOVSS (AX)(BX*1), X1
	VMOVSS (R8)(BX*1), X5
	VFMADD231SS X14, X1, X0
	VFMADD231SS X13, X5, X4
	ADDQ $16, R11
	DECQ CX
	JMP  d2st

d2ss:
	VMOVSS X0, (DX)(BX*1)
	MOVQ ocs+72(FP), AX
	LEAQ (DX)(AX*4), AX
	VMOVSS X4, (AX)(BX*1)
	ADDQ $4, BX
	DECQ R12
	JMP  d2sp

d2next:
	ADDQ R13, DI
	ADDQ R13, DI
	ADDQ $8, SI
	MOVQ ocs+72(FP), AX
	LEAQ (DX)(AX*8), DX
	ADDQ $8, bptr-8(SP)
	SUBQ $2, left-16(SP)
	JMP  dpch

dpone:
	TESTQ AX, AX
	JZ    dpdone
	MOVQ  bptr-8(SP), AX
	VBROADCASTSS (AX), Y15
	XORQ BX, BX
	MOVQ npos+48(FP), AX
	CMPQ AX, $8
	JLT  dp1

dpgroup:
	MOVQ npos+48(FP), AX
	SHLQ $2, AX
	CMPQ BX, AX
	JGE  dpdone
	SUBQ $32, AX
	DWCLAMP
	DWSET4(Y15, Y0, Y1, Y2, Y3)
	MOVQ taps+32(FP), R11
	MOVQ ntaps+40(FP), CX

dpgt:
	TESTQ CX, CX
	JZ    dpgs
	MOVQ  0(R11), AX
	LEAQ  (DI)(AX*4), AX
	MOVQ  8(R11), R9
	VBROADCASTSS (SI)(R9*4), Y14
	DWFMA4(AX, Y14, Y0, Y1, Y2, Y3)
	ADDQ $16, R11
	DECQ CX
	JMP  dpgt

dpgs:
	DWSTORE4(DX, Y0, Y1, Y2, Y3)
	ADDQ $128, BX
	JMP  dpgroup

dp1:
	MOVQ npos+48(FP), R12

dp1p:
	TESTQ R12, R12
	JZ    dpdone
	VMOVAPS X15, X0
	MOVQ taps+32(FP), R11
	MOVQ ntaps+40(FP), CX

dp1t:
	TESTQ CX, CX
	JZ    dp1s
	MOVQ  0(R11), AX
	LEAQ  (DI)(AX*4), AX
	MOVQ  8(R11), R9
	VMOVSS (SI)(R9*4), X14
	VMOVSS (AX)(BX*1), X4
	VFMADD231SS X14, X4, X0
	ADDQ $16, R11
	DECQ CX
	JMP  dp1t

dp1s:
	VMOVSS X0, (DX)(BX*1)
	ADDQ $4, BX
	DECQ R12
	JMP  dp1p

dpdone:
	VZEROUPPER
	RET

// The eight accumulators of convTile64x1, a pair per block: block k's
// are Y(2k), Y(2k+1) at acc (DX) + k*astride bytes (AX); BX is clobbered.
// op is one of the PAIR operations.
#define ACC64(op) \
	op(0(DX), 32(DX), Y0, Y1); \
	op(0(DX)(AX*1), 32(DX)(AX*1), Y2, Y3); \
	op(0(DX)(AX*2), 32(DX)(AX*2), Y4, Y5); \
	LEAQ (DX)(AX*2), BX; \
	op(0(BX)(AX*1), 32(BX)(AX*1), Y6, Y7)

// func convTile64x1(x, w, acc *float32, taps *int64, ntaps, nc, wstride, astride, fresh int)
//
// convTile16x1 for four blocks of sixteen output channels at once (eight
// independent chains instead of two): block k's weights start at
// w + k*wstride and its sums at acc + k*astride (floats).
TEXT ·convTile64x1(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ acc+16(FP), DX
	MOVQ taps+24(FP), R11
	MOVQ ntaps+32(FP), R12
	MOVQ nc+40(FP), R13
	MOVQ wstride+48(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R14
	MOVQ astride+56(FP), AX
	SHLQ $2, AX
	MOVQ fresh+64(FP), CX
	TESTQ CX, CX
	JNZ  q1zero
	ACC64(PAIRLOAD)
	JMP  q1start

q1zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

q1start:
	TESTQ R13, R13
	JZ    q1done

q1tap:
	TESTQ R12, R12
	JZ    q1done
	MOVQ  0(R11), AX
	MOVQ  8(R11), BX
	LEAQ  (DI)(AX*4), R8
	LEAQ  (SI)(BX*4), BX
	MOVQ  R13, CX

q1chan:
	VBROADCASTSS (R8), Y15
	LEAQ (BX)(R14*1), R9
	VFMADD231PS 0(BX), Y15, Y0
	VFMADD231PS 32(BX), Y15, Y1
	VFMADD231PS 0(BX)(R10*1), Y15, Y2
	VFMADD231PS 32(BX)(R10*1), Y15, Y3
	VFMADD231PS 0(BX)(R10*2), Y15, Y4
	VFMADD231PS 32(BX)(R10*2), Y15, Y5
	VFMADD231PS 0(R9), Y15, Y6
	VFMADD231PS 32(R9), Y15, Y7
	ADDQ $4, R8
	ADDQ $64, BX
	DECQ CX
	JNZ  q1chan

	ADDQ $16, R11
	DECQ R12
	JMP  q1tap

q1done:
	MOVQ astride+56(FP), AX
	SHLQ $2, AX
	MOVQ fresh+64(FP), CX
	TESTQ CX, CX
	JZ   q1store
	ACC64(PAIRADD)

q1store:
	ACC64(PAIRSTORE)
	VZEROUPPER
	RET

#define PT8STORE(off, reg) \
	MOVLQSX off(BX), DX; \
	SHLQ $6, DX; \
	VMOVUPS reg, (DI)(DX*1)

// func packT8x8(src *float32, stride int, dst *float32, rows *int32)
//
// Transposes eight lanes of eight entries into packed weight rows:
// dst[rows[e]*16+l] = src[l*stride+e] for e, l < 8 (a copy, no
// arithmetic).
TEXT ·packT8x8(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ stride+8(FP), AX
	SHLQ $2, AX
	MOVQ dst+16(FP), DI
	MOVQ rows+24(FP), BX
	LEAQ (AX)(AX*2), CX
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(AX*1), Y1
	VMOVUPS (SI)(AX*2), Y2
	VMOVUPS (SI)(CX*1), Y3
	LEAQ (SI)(AX*4), SI
	VMOVUPS (SI), Y4
	VMOVUPS (SI)(AX*1), Y5
	VMOVUPS (SI)(AX*2), Y6
	VMOVUPS (SI)(CX*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	PT8STORE(0, Y8)
	PT8STORE(4, Y9)
	PT8STORE(8, Y10)
	PT8STORE(12, Y11)
	PT8STORE(16, Y12)
	PT8STORE(20, Y13)
	PT8STORE(24, Y14)
	PT8STORE(28, Y15)
	VZEROUPPER
	RET
