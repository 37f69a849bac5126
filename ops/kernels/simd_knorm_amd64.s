//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// Pooling and reduction kernels for layer_norm, softmax and pooling
// (simd_knorm_amd64.go). Each vector lane is one output element running
// the float32 operations of the Go loop it replaces, in the same order.

// The pooling kernels' shared steps. Registers: SI the input, DX the
// window's element offsets, R11 the element, R10 = 8g·sw, R9 = sw (then
// 8·sw), Y15 the lanes' offsets l·sw, Y13 all ones.

// Y15 = l·sw for lane l (R9 = sw).
#define LANEOFFS \
	MOVL R9, AX; \
	VMOVD AX, X0; \
	VPBROADCASTD X0, Y0; \
	VPMULLD lanesi<>(SB), Y0, Y15

// AX = offs[e] + 8g·sw, Y2 = the index of each lane's element.
#define POOLIDX \
	MOVL (DX)(R11*4), AX; \
	ADDL R10, AX; \
	VMOVD AX, X2; \
	VPBROADCASTD X2, Y2; \
	VPADDD Y15, Y2, Y2

// Y3 = the even floats of the 16 at (SI)(AX*4) (sw = 2): VSHUFPS gives
// them as qwords 0 2 1 3, VPERMPD puts them in order.
#define POOLLOAD2 \
	VMOVUPS (SI)(AX*4), Y3; \
	VSHUFPS $0x88, 32(SI)(AX*4), Y3, Y3; \
	VPERMPD $0xd8, Y3, Y3

// Y3 = the elements at the indices Y2 (Y4 clobbered).
#define POOLGATHER \
	VMOVDQU Y13, Y4; \
	VGATHERDPS Y4, (SI)(Y2*4), Y3

// A group's start: best Y0 = Y14 (the lowest value), its index Y1 =
// the index of each lane's first element.
#define MPFIRST \
	VMOVAPS Y14, Y0; \
	MOVL (DX), AX; \
	ADDL R10, AX; \
	VMOVD AX, X1; \
	VPBROADCASTD X1, Y1; \
	VPADDD Y15, Y1, Y1

// best Y0, its index Y1 = v Y3, its index Y2 where v > best or v is NaN.
#define MAXSTEP \
	VCMPPS $0x1e, Y0, Y3, Y5; \
	VCMPPS $3, Y3, Y3, Y6; \
	VORPS Y6, Y5, Y5; \
	VBLENDVPS Y5, Y3, Y0, Y0; \
	VBLENDVPS Y5, Y2, Y1, Y1

// MAXSTEP on int32 values: where v > best (signed).
#define IMAXSTEP \
	VPCMPGTD Y0, Y3, Y5; \
	VBLENDVPS Y5, Y3, Y0, Y0; \
	VBLENDVPS Y5, Y2, Y1, Y1

// The max pools' setup (R9 = sw): Y13 all ones, Y15 = l·sw, Y14 the
// 32-bit lowest (the running maximum's start), R10 = 0, R9 = 8·sw; the
// flags from testing groups (BX).
#define MPSETUP(lowest) \
	VPCMPEQD Y13, Y13, Y13; \
	LANEOFFS; \
	MOVL lowest, AX; \
	VMOVD AX, X14; \
	VPBROADCASTD X14, Y14; \
	XORQ R10, R10; \
	SHLQ $3, R9; \
	TESTQ BX, BX

// y (DI) = the 8 maxima Y0, idx (R8) = their indices Y1 sign-extended;
// both advance.
#define MPSTORE \
	VMOVUPS Y0, (DI); \
	VPMOVSXDQ X1, Y6; \
	VEXTRACTI128 $1, Y1, X7; \
	VPMOVSXDQ X7, Y7; \
	VMOVDQU Y6, (R8); \
	VMOVDQU Y7, 32(R8); \
	ADDQ $32, DI; \
	ADDQ $64, R8

// func maxPoolAVX2(y *float32, idx *int64, in *float32, offs *int32, cnt, groups, sw int)
// For g < groups and lane l < 8, output o = 8g+l is the maximum over the
// window elements e < cnt of in[offs[e] + 8g·sw + l·sw], starting from
// -inf at index offs[0] + (8g+l)·sw; an element replaces the running
// maximum when it is greater or NaN. y[o] gets the maximum and idx[o] its
// element's index offs[e] + (8g+l)·sw (sign-extended).
TEXT ·maxPoolAVX2(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ idx+8(FP), R8
	MOVQ in+16(FP), SI
	MOVQ offs+24(FP), DX
	MOVQ cnt+32(FP), CX
	MOVQ groups+40(FP), BX
	MOVQ sw+48(FP), R9
	MPSETUP($0xff800000)     // Y14 = -inf
	JZ mpdone

mpgroup:
	MPFIRST                  // best = -inf, bi = first element's index
	XORQ R11, R11
	CMPQ R9, $16
	JEQ mpload2
	CMPQ R9, $8
	JNE mpgather

mpload:
	POOLIDX
	VMOVUPS (SI)(AX*4), Y3
	MAXSTEP
	INCQ R11
	CMPQ R11, CX
	JLT mpload
	JMP mpstore

mpload2:
	POOLIDX
	POOLLOAD2
	MAXSTEP
	INCQ R11
	CMPQ R11, CX
	JLT mpload2
	JMP mpstore

mpgather:
	POOLIDX
	POOLGATHER
	MAXSTEP
	INCQ R11
	CMPQ R11, CX
	JLT mpgather

mpstore:
	MPSTORE
	ADDQ R9, R10
	DECQ BX
	JNZ mpgroup

mpdone:
	VZEROUPPER
	RET

// func maxPoolI32AVX2(y *int32, idx *int64, in *int32, offs *int32, cnt, groups, sw int)
// maxPoolAVX2 on int32 values: the running maximum starts at MinInt32
// (padding never enters a window here) and an element replaces it when
// it is greater (VPCMPGTD, signed).
TEXT ·maxPoolI32AVX2(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ idx+8(FP), R8
	MOVQ in+16(FP), SI
	MOVQ offs+24(FP), DX
	MOVQ cnt+32(FP), CX
	MOVQ groups+40(FP), BX
	MOVQ sw+48(FP), R9
	MPSETUP($0x80000000)     // Y14 = MinInt32
	JZ impdone

impgroup:
	MPFIRST                  // best = MinInt32, bi = first element's index
	XORQ R11, R11
	CMPQ R9, $16
	JEQ impload2
	CMPQ R9, $8
	JNE impgather

impload:
	POOLIDX
	VMOVUPS (SI)(AX*4), Y3
	IMAXSTEP
	INCQ R11
	CMPQ R11, CX
	JLT impload
	JMP impstore

impload2:
	POOLIDX
	POOLLOAD2
	IMAXSTEP
	INCQ R11
	CMPQ R11, CX
	JLT impload2
	JMP impstore

impgather:
	POOLIDX
	POOLGATHER
	IMAXSTEP
	INCQ R11
	CMPQ R11, CX
	JLT impgather

impstore:
	MPSTORE
	ADDQ R9, R10
	DECQ BX
	JNZ impgroup

impdone:
	VZEROUPPER
	RET

// func avgPoolAVX2(y *float32, in *float32, offs *int32, cnt, groups, sw int, div float32)
// y[8g+l] = (0 + in[offs[0] + (8g+l)·sw] + ... + in[offs[cnt-1] + (8g+l)·sw]) / div.
TEXT ·avgPoolAVX2(SB), NOSPLIT, $0-52
	MOVQ y+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ offs+16(FP), DX
	MOVQ cnt+24(FP), CX
	MOVQ groups+32(FP), BX
	MOVQ sw+40(FP), R9
	VBROADCASTSS div+48(FP), Y12
	VPCMPEQD Y13, Y13, Y13
	LANEOFFS
	XORQ R10, R10
	SHLQ $3, R9
	TESTQ BX, BX
	JZ apdone

apgroup:
	VXORPS Y0, Y0, Y0        // sum = 0
	XORQ R11, R11
	CMPQ R9, $16
	JEQ apload2
	CMPQ R9, $8
	JNE apgather

apload:
	MOVL (DX)(R11*4), AX
	ADDL R10, AX
	VADDPS (SI)(AX*4), Y0, Y0
	INCQ R11
	CMPQ R11, CX
	JLT apload
	JMP apstore

apload2:
	MOVL (DX)(R11*4), AX
	ADDL R10, AX
	POOLLOAD2
	VADDPS Y3, Y0, Y0
	INCQ R11
	CMPQ R11, CX
	JLT apload2
	JMP apstore

apgather:
	POOLIDX
	POOLGATHER
	VADDPS Y3, Y0, Y0
	INCQ R11
	CMPQ R11, CX
	JLT apgather

apstore:
	VDIVPS Y12, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ R9, R10
	DECQ BX
	JNZ apgroup

apdone:
	VZEROUPPER
	RET

// rowSumSmall8's steps on the column accumulators Y0..Y3 (Y4 = 0): add
// the row of four units at SI and advance; add the closing 0 to each
// column; add columns 1, 2, 3 to column 0.
#define RS8ROW \
	VADDPS (SI), Y0, Y0; \
	VADDPS 32(SI), Y1, Y1; \
	VADDPS 64(SI), Y2, Y2; \
	VADDPS 96(SI), Y3, Y3; \
	ADDQ $128, SI

#define RS8ZERO \
	VADDPS Y4, Y0, Y0; \
	VADDPS Y4, Y1, Y1; \
	VADDPS Y4, Y2, Y2; \
	VADDPS Y4, Y3, Y3

#define RS8FOLD \
	VADDPS Y1, Y0, Y0; \
	VADDPS Y2, Y0, Y0; \
	VADDPS Y3, Y0, Y0

// func rowSumSmall8AVX2(x *float32, size int, acc *lanes)
// rowSumSmall8 for size < 64 8-float units: four column accumulators,
// each 0 plus its units in order plus 0, the leftover units added to
// column 0, then columns 1, 2, 3 added to column 0.
TEXT ·rowSumSmall8AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ size+8(FP), CX
	MOVQ acc+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	MOVQ CX, BX
	SHRQ $2, BX              // rows
	JZ rsrest

rsrow:
	RS8ROW
	DECQ BX
	JNZ rsrow

rsrest:
	RS8ZERO
	ANDQ $3, CX
	JZ rsfold

rsleft:
	VADDPS (SI), Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JNZ rsleft

rsfold:
	RS8FOLD
	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET

DATA lanesi<>+0(SB)/4, $0
DATA lanesi<>+4(SB)/4, $1
DATA lanesi<>+8(SB)/4, $2
DATA lanesi<>+12(SB)/4, $3
DATA lanesi<>+16(SB)/4, $4
DATA lanesi<>+20(SB)/4, $5
DATA lanesi<>+24(SB)/4, $6
DATA lanesi<>+28(SB)/4, $7
GLOBL lanesi<>(SB), RODATA|NOPTR, $32

// func welford4AVX2(v *float32, stride, cnt int, c *float32, m1, m2 *[4]lanes)
// welfordAVX2 on four rows at once: row r's vectors start at v + r·stride
// bytes and its lanes are m1[r], m2[r]; the four chains interleave.
TEXT ·welford4AVX2(SB), NOSPLIT, $0-48
	MOVQ v+0(FP), SI
	MOVQ stride+8(FP), R12
	MOVQ cnt+16(FP), CX
	MOVQ c+24(FP), DX
	MOVQ m1+32(FP), R8
	MOVQ m2+40(FP), R9
	LEAQ (R12)(R12*2), R13   // 3·stride
	LEAQ (R12)(R12*4), BX    // 5·stride
	LEAQ (R13)(R12*4), R14   // 7·stride
	VMOVUPS 0(R8), Y0
	VMOVUPS 32(R8), Y1
	VMOVUPS 64(R8), Y2
	VMOVUPS 96(R8), Y3
	VMOVUPS 0(R9), Y4
	VMOVUPS 32(R9), Y5
	VMOVUPS 64(R9), Y6
	VMOVUPS 96(R9), Y7
	TESTQ CX, CX
	JZ w4done

w4loop:
	// prefetch the same place of the next four rows (the caller's next
	// block): the hardware prefetcher does not follow four short streams
	PREFETCHT0 (SI)(R12*4)
	PREFETCHT0 (SI)(BX*1)
	PREFETCHT0 (SI)(R13*2)
	PREFETCHT0 (SI)(R14*1)
	VBROADCASTSS (DX), Y8
	VMOVUPS (SI), Y9
	VMOVUPS (SI)(R12*1), Y11
	VMOVUPS (SI)(R12*2), Y13
	VMOVUPS (SI)(R13*1), Y15
	VSUBPS Y0, Y9, Y10
	VSUBPS Y1, Y11, Y12
	VSUBPS Y2, Y13, Y14
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y8, Y12, Y1
	VFMADD231PS Y8, Y14, Y2
	VSUBPS Y0, Y9, Y9
	VSUBPS Y1, Y11, Y11
	VSUBPS Y2, Y13, Y13
	VFMADD231PS Y9, Y10, Y4
	VFMADD231PS Y11, Y12, Y5
	VFMADD231PS Y13, Y14, Y6
	VSUBPS Y3, Y15, Y10
	VFMADD231PS Y8, Y10, Y3
	VSUBPS Y3, Y15, Y15
	VFMADD231PS Y15, Y10, Y7
	ADDQ $32, SI
	ADDQ $4, DX
	DECQ CX
	JNZ w4loop

w4done:
	VMOVUPS Y0, 0(R8)
	VMOVUPS Y1, 32(R8)
	VMOVUPS Y2, 64(R8)
	VMOVUPS Y3, 96(R8)
	VMOVUPS Y4, 0(R9)
	VMOVUPS Y5, 32(R9)
	VMOVUPS Y6, 64(R9)
	VMOVUPS Y7, 96(R9)
	VZEROUPPER
	RET

// func finishMomentsAVX2(tail *float32, ntail, n int, m1v, m2v *lanes, N int) (mean, variance float32)
// finishMoments with scalar float32 arithmetic and hardware FMA: Welford
// with a division over the ntail tail values, then AddMoments of the 8
// lanes (count n each), then m2/N.
TEXT ·finishMomentsAVX2(SB), NOSPLIT, $0-56
	MOVQ tail+0(FP), SI
	MOVQ ntail+8(FP), CX
	MOVQ n+16(FP), BX
	MOVQ m1v+24(FP), R8
	MOVQ m2v+32(FP), R9
	VXORPS X0, X0, X0        // m1
	VXORPS X1, X1, X1        // m2
	XORQ AX, AX              // m0
	TESTQ CX, CX
	JZ fmlanes

fmtail:
	VMOVSS (SI), X2          // v
	VSUBSS X0, X2, X3        // d = v - m1
	INCQ AX
	VCVTSI2SSQ AX, X4, X4
	VDIVSS X4, X3, X5
	VADDSS X5, X0, X0        // m1 += d / m0
	VSUBSS X0, X2, X6        // v - m1
	VFMADD231SS X6, X3, X1   // m2 = fma(d, v - m1, m2)
	ADDQ $4, SI
	DECQ CX
	JNZ fmtail

fmlanes:
	VXORPS X7, X7, X7
	VCVTSI2SSQ BX, X7, X7    // float32(n)
	XORQ DX, DX

fmlane:
	LEAQ (AX)(BX*1), R10     // nn = m0 + n
	VXORPS X9, X9, X9        // c = 0 when n == 0
	TESTQ BX, BX
	JZ fmnoc
	VCVTSI2SSQ R10, X8, X8
	VDIVSS X8, X7, X9        // c = n / nn

fmnoc:
	VCVTSI2SSQ AX, X10, X10  // float32(m0)
	VMOVSS (R8)(DX*4), X11
	VSUBSS X0, X11, X11      // d = m1Add - m1
	VFMADD231SS X11, X9, X0  // m1 = fma(c, d, m1)
	VMULSS X11, X11, X12     // d·d
	VMULSS X9, X12, X12      // ·c
	VMOVSS (R9)(DX*4), X13
	VFMADD231SS X10, X12, X13 // fma(d·d·c, m0, m2Add)
	VADDSS X13, X1, X1       // m2 += that
	MOVQ R10, AX
	INCQ DX
	CMPQ DX, $8
	JLT fmlane

	MOVQ N+40(FP), CX
	VCVTSI2SSQ CX, X14, X14
	VDIVSS X14, X1, X1
	VMOVSS X0, mean+48(FP)
	VMOVSS X1, variance+52(FP)
	RET

// func meanPlanesAVX2(x *float32, hw, planes int, y *float32, div float32)
// y[p] = cascadeSum(x[p·hw : (p+1)·hw]) / div for p < planes, for
// 8 <= hw < 512: rowSumSmall8 over the hw/8 vectors, then 0 plus the
// scalar tail plus the 8 lanes in order, added to 0, divided by div.
TEXT ·meanPlanesAVX2(SB), NOSPLIT, $32-36
	MOVQ x+0(FP), SI
	MOVQ hw+8(FP), R8
	MOVQ planes+16(FP), R9
	MOVQ y+24(FP), DI
	VMOVSS div+32(FP), X15
	VXORPS Y4, Y4, Y4
	MOVQ R8, R10
	SHRQ $3, R10             // vectors per plane
	MOVQ R8, R11
	ANDQ $7, R11             // tail
	TESTQ R9, R9
	JZ mpldone

mplane:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ R10, BX
	SHRQ $2, BX
	JZ mplrest

mplrow:
	RS8ROW
	DECQ BX
	JNZ mplrow

mplrest:
	RS8ZERO
	MOVQ R10, CX
	ANDQ $3, CX
	JZ mplfold

mplleft:
	VADDPS (SI), Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JNZ mplleft

mplfold:
	RS8FOLD
	VMOVUPS Y0, 0(SP)
	VXORPS X5, X5, X5        // acc = 0
	MOVQ R11, CX
	TESTQ CX, CX
	JZ mpllanes

mpltail:
	VADDSS (SI), X5, X5
	ADDQ $4, SI
	DECQ CX
	JNZ mpltail

mpllanes:
	VADDSS 0(SP), X5, X5
	VADDSS 4(SP), X5, X5
	VADDSS 8(SP), X5, X5
	VADDSS 12(SP), X5, X5
	VADDSS 16(SP), X5, X5
	VADDSS 20(SP), X5, X5
	VADDSS 24(SP), X5, X5
	VADDSS 28(SP), X5, X5
	VXORPS X6, X6, X6
	VADDSS X5, X6, X6        // out = 0 + sum
	VDIVSS X15, X6, X6
	VMOVSS X6, (DI)
	ADDQ $4, DI
	DECQ R9
	JNZ mplane

mpldone:
	VZEROUPPER
	RET

// func addMomentsVec4AVX2(c, fm0 float32, m1Add, m2Add, m1, m2 *[4]lanes)
// addMomentsVec's lane arithmetic on four rows' lanes, each operation
// rounded on its own: d = m1Add - m1, m1 += c·d,
// m2 = (m2 + m2Add) + ((d·d)·c)·fm0.
TEXT ·addMomentsVec4AVX2(SB), NOSPLIT, $0-40
	VBROADCASTSS c+0(FP), Y8
	VBROADCASTSS fm0+4(FP), Y9
	MOVQ m1Add+8(FP), AX
	MOVQ m2Add+16(FP), BX
	MOVQ m1+24(FP), CX
	MOVQ m2+32(FP), DX
	MOVQ $4, SI

am4loop:
	VMOVUPS (CX), Y0
	VMOVUPS (AX), Y1
	VSUBPS Y0, Y1, Y1        // d
	VMULPS Y1, Y8, Y2        // c·d
	VADDPS Y2, Y0, Y0
	VMOVUPS Y0, (CX)
	VMULPS Y1, Y1, Y3        // d·d
	VMULPS Y8, Y3, Y3        // ·c
	VMULPS Y9, Y3, Y3        // ·fm0
	VMOVUPS (DX), Y4
	VADDPS (BX), Y4, Y4      // m2 + m2Add
	VADDPS Y3, Y4, Y4
	VMOVUPS Y4, (DX)
	ADDQ $32, AX
	ADDQ $32, BX
	ADDQ $32, CX
	ADDQ $32, DX
	DECQ SI
	JNZ am4loop
	VZEROUPPER
	RET

// func layerNormOutNTAVX2(y, x, w, b *float32, n int, m, rstd float32)
// layerNormOutAVX2 with non-temporal stores (y 32-byte aligned): the
// output is not read back, so its lines are not fetched first. The
// caller runs sfenceAVX2 before the output is used.
TEXT ·layerNormOutNTAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R8
	MOVQ b+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS m+40(FP), Y14
	VBROADCASTSS rstd+44(FP), Y15
	TESTQ CX, CX
	JZ lnntdone

lnntloop:
	LNOUTSTEP(VMOVNTPS)
	JNZ lnntloop

lnntdone:
	VZEROUPPER
	RET

// func sfenceAVX2()
TEXT ·sfenceAVX2(SB), NOSPLIT, $0-0
	SFENCE
	RET

// func scaleIntoNTAVX2(y, x *float32, n int, r float32)
// y[i] = x[i] * r for i < n, n a multiple of 8, with non-temporal stores
// (y 32-byte aligned; sfenceAVX2 before y is used).
TEXT ·scaleIntoNTAVX2(SB), NOSPLIT, $0-28
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS r+24(FP), Y15
	TESTQ CX, CX
	JZ scntdone

scntloop:
	VMULPS (SI), Y15, Y0
	VMOVNTPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ scntloop

scntdone:
	VZEROUPPER
	RET

// func subSubNTAVX2(y, x *float32, n int, m, ls float32)
// subSubAVX2 with non-temporal stores (y 32-byte aligned).
TEXT ·subSubNTAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y14
	VBROADCASTSS ls+28(FP), Y15
	TESTQ CX, CX
	JZ ssntdone

ssntloop:
	SUBSUBSTEP(VMOVNTPS)
	JNZ ssntloop

ssntdone:
	VZEROUPPER
	RET

// func maxLanes4AVX2(x *float32, nvec int, acc *lanes) (nan bool)
// acc = x[0:8]; acc = max(acc, x[8k:8k+8]) lane by lane with Go's max
// for numbers (+0 over -0: the AND of both operand orders of VMAXPS),
// with four accumulators (vectors k mod 4) folded at the end: that max
// is associative and commutative, so the lanes get the same bits as one
// accumulator would. nan reports a NaN anywhere, and then acc is not
// meaningful.
TEXT ·maxLanes4AVX2(SB), NOSPLIT, $0-25
	MOVQ x+0(FP), SI
	MOVQ nvec+8(FP), CX
	MOVQ acc+16(FP), DI
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	VCMPPS $3, Y0, Y0, Y8     // NaN lanes seen so far
	VMOVAPS Y8, Y9
	ADDQ $32, SI
	DECQ CX

m4loop:
	CMPQ CX, $4
	JLT m4one
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VCMPPS $3, Y4, Y4, Y10
	VCMPPS $3, Y5, Y5, Y11
	VORPS Y10, Y8, Y8
	VORPS Y11, Y9, Y9
	VCMPPS $3, Y6, Y6, Y10
	VCMPPS $3, Y7, Y7, Y11
	VORPS Y10, Y8, Y8
	VORPS Y11, Y9, Y9
	VMAXPS Y4, Y0, Y10
	VMAXPS Y0, Y4, Y0
	VANDPS Y10, Y0, Y0
	VMAXPS Y5, Y1, Y11
	VMAXPS Y1, Y5, Y1
	VANDPS Y11, Y1, Y1
	VMAXPS Y6, Y2, Y12
	VMAXPS Y2, Y6, Y2
	VANDPS Y12, Y2, Y2
	VMAXPS Y7, Y3, Y13
	VMAXPS Y3, Y7, Y3
	VANDPS Y13, Y3, Y3
	ADDQ $128, SI
	SUBQ $4, CX
	JMP m4loop

m4one:
	TESTQ CX, CX
	JZ m4fold
	VMOVUPS (SI), Y4
	VCMPPS $3, Y4, Y4, Y10
	VORPS Y10, Y8, Y8
	VMAXPS Y4, Y0, Y10
	VMAXPS Y0, Y4, Y0
	VANDPS Y10, Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JMP m4one

m4fold:
	VMAXPS Y1, Y0, Y10
	VMAXPS Y0, Y1, Y0
	VANDPS Y10, Y0, Y0
	VMAXPS Y3, Y2, Y11
	VMAXPS Y2, Y3, Y2
	VANDPS Y11, Y2, Y2
	VMAXPS Y2, Y0, Y10
	VMAXPS Y0, Y2, Y0
	VANDPS Y10, Y0, Y0
	VMOVUPS Y0, (DI)
	VORPS Y9, Y8, Y8
	VMOVMSKPS Y8, AX
	TESTL AX, AX
	SETNE nan+24(FP)
	VZEROUPPER
	RET

// func subSub8AVX2(y, x *float32, d, stride int, m, ls *lanes)
// y[k] = (x[k] - m) - ls lane by lane for the d elements stride bytes
// apart of 8 neighbouring inner positions (log_softmax's last step).
TEXT ·subSub8AVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), CX
	MOVQ stride+24(FP), R11
	MOVQ m+32(FP), AX
	MOVQ ls+40(FP), BX
	VMOVUPS (AX), Y14
	VMOVUPS (BX), Y15
	TESTQ CX, CX
	JZ ss8done

ss8loop:
	VMOVUPS (SI), Y0
	VSUBPS Y14, Y0, Y0
	VSUBPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ R11, SI
	ADDQ R11, DI
	DECQ CX
	JNZ ss8loop

ss8done:
	VZEROUPPER
	RET
