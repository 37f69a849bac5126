//go:build amd64 && !purego

#include "textflag.h"

// AVX2 kernels selected by useAVX2 (quanterr_amd64.go). Every lane runs
// the operations of the Go code it replaces, in the same order, each
// rounded on its own (no fused multiply-add).

// qeConsts offsets: 8-lane float32 vectors, then 4-lane float64.
#define KDW 0
#define KH 32
#define KDMAX 64
#define KTH 96
#define KCUBEH 128
#define KCUBENEGH 160
#define KMID 192
#define KHALF 224
#define KONE 256
#define KTHREE 288
#define KDW64 320
#define KSKIP0 352

// HALFMOD sets XOUT to fmod32 of the 4 float32 lanes in XIN (as float64:
// a - trunc(a/b)*b, exact for |a/b| < 2**28). Clobbers Y6, Y7.
#define HALFMOD(XIN, XOUT) \
	VCVTPS2PD XIN, Y6 \
	VDIVPD KDW64(BX), Y6, Y7 \
	VROUNDPD $3, Y7, Y7 \
	VMULPD KDW64(BX), Y7, Y7 \
	VSUBPD Y7, Y6, Y6 \
	VCVTPD2PSY Y6, XOUT

// FLOORDIV sets OUT to floorDivClamp's value for the 8 lanes of A (finite):
// 0 where A < 0, dmax where A >= th, else clamp(floorDivPos32(A, dw), 0,
// dmax). A vector whose lanes are all decided by the two tests skips the
// division. Clobbers Y4-Y9; Y10 must be zero.
#define FLOORDIV(A, XA, OUT, FULL, BLEND) \
	VCMPPS $1, Y10, A, Y4 \
	VCMPPS $0x1d, KTH(BX), A, Y5 \
	VORPS Y4, Y5, Y6 \
	VMOVMSKPS Y6, R9 \
	CMPL R9, $0xff \
	JNE FULL \
	VXORPS OUT, OUT, OUT \
	JMP BLEND \
FULL: \
	HALFMOD(XA, X8) \
	VEXTRACTF128 $1, A, X9 \
	HALFMOD(X9, X9) \
	VINSERTF128 $1, X9, Y8, Y8 \
	VSUBPS Y8, A, Y6 \
	VDIVPS KDW(BX), Y6, Y6 \
	VROUNDPS $1, Y6, Y7 \
	VSUBPS Y7, Y6, Y6 \
	VCMPPS $0x1e, KHALF(BX), Y6, Y6 \
	VANDPS KONE(BX), Y6, Y6 \
	VADDPS Y6, Y7, Y7 \
	VMAXPS Y10, Y7, Y7 \
	VMINPS KDMAX(BX), Y7, OUT \
BLEND: \
	VBLENDVPS Y5, KDMAX(BX), OUT, OUT \
	VANDNPS OUT, Y4, OUT

// func quantErrNormAVX2(n, sb, se, dens *float32, cnt int, k *qeConsts)
TEXT ·quantErrNormAVX2(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), DI
	MOVQ sb+8(FP), SI
	MOVQ se+16(FP), DX
	MOVQ dens+24(FP), R8
	MOVQ cnt+32(FP), CX
	MOVQ k+40(FP), BX
	VXORPS Y10, Y10, Y10
	XORQ AX, AX
	SHLQ $2, CX
	TESTQ CX, CX
	JEQ qedone

	MOVQ KSKIP0(BX), R10

qeloop:
	VMOVUPS (R8)(AX*1), Y11 // density
	// Where every term is finite (skip0), a bin of density +0 has norm
	// ((0 + +-0) + +-0) + +-0 = +0: eight of them are stored as such.
	TESTQ R10, R10
	JEQ qecompute
	VPTEST Y11, Y11
	JNZ qecompute
	VMOVUPS Y10, (DI)(AX*1)
	JMP qenext

qecompute:
	VMOVUPS (SI)(AX*1), Y0 // src_bin_begin
	VMOVUPS (DX)(AX*1), Y1 // src_bin_end
	FLOORDIV(Y0, X0, Y2, qefullb, qeblendb) // dst_bin_of_begin
	FLOORDIV(Y1, X1, Y3, qefulle, qeblende) // dst_bin_of_end

	// t1 = d * ((h^3 - p^3) / 3), p = sb - (kb + 0.5) * dw
	VADDPS KHALF(BX), Y2, Y4
	VMULPS KDW(BX), Y4, Y4
	VSUBPS Y4, Y0, Y4
	VMULPS Y4, Y4, Y5
	VMULPS Y4, Y5, Y5
	VMOVUPS KCUBEH(BX), Y6
	VSUBPS Y5, Y6, Y6
	VDIVPS KTHREE(BX), Y6, Y6
	VMULPS Y6, Y11, Y6
	VADDPS Y6, Y10, Y12 // 0 + t1

	// t2 = ((ke - kb) - 1) * (d * mid)
	VSUBPS Y2, Y3, Y4
	VSUBPS KONE(BX), Y4, Y4
	VMULPS KMID(BX), Y11, Y5
	VMULPS Y5, Y4, Y4
	VADDPS Y4, Y12, Y12

	// t3 = d * ((r^3 - (-h)^3) / 3), r = se - (ke * dw + h)
	VMULPS KDW(BX), Y3, Y4
	VADDPS KH(BX), Y4, Y4
	VSUBPS Y4, Y1, Y4
	VMULPS Y4, Y4, Y5
	VMULPS Y4, Y5, Y5
	VSUBPS KCUBENEGH(BX), Y5, Y5
	VDIVPS KTHREE(BX), Y5, Y5
	VMULPS Y5, Y11, Y5
	VADDPS Y5, Y12, Y12

	VMOVUPS Y12, (DI)(AX*1)

qenext:
	ADDQ $32, AX
	CMPQ AX, CX
	JLT qeloop

qedone:
	VZEROUPPER
	RET

// func minMaxAVX2(x *float32, nvec int, lo, hi *[8]float32) (nan bool)
TEXT ·minMaxAVX2(SB), NOSPLIT, $0-33
	MOVQ x+0(FP), SI
	MOVQ nvec+8(FP), CX
	MOVQ lo+16(FP), DI
	MOVQ hi+24(FP), DX
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	VCMPPS $3, Y0, Y0, Y2
	VMOVAPS Y0, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y2, Y5
	ADDQ $32, SI
	DECQ CX

	// two independent chains of min, max and NaN flags
mm2:
	CMPQ CX, $2
	JLT mm1
	VMOVUPS (SI), Y6
	VMOVUPS 32(SI), Y7
	VMINPS Y6, Y0, Y0
	VMAXPS Y6, Y1, Y1
	VCMPPS $3, Y6, Y6, Y8
	VORPS Y8, Y2, Y2
	VMINPS Y7, Y3, Y3
	VMAXPS Y7, Y4, Y4
	VCMPPS $3, Y7, Y7, Y9
	VORPS Y9, Y5, Y5
	ADDQ $64, SI
	SUBQ $2, CX
	JMP mm2

mm1:
	TESTQ CX, CX
	JEQ mmfin
	VMOVUPS (SI), Y6
	VMINPS Y6, Y0, Y0
	VMAXPS Y6, Y1, Y1
	VCMPPS $3, Y6, Y6, Y8
	VORPS Y8, Y2, Y2

mmfin:
	VMINPS Y3, Y0, Y0
	VMAXPS Y4, Y1, Y1
	VORPS Y5, Y2, Y2
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DX)
	VMOVMSKPS Y2, AX
	TESTL AX, AX
	SETNE nan+32(FP)
	VZEROUPPER
	RET

// func sumRows4AVX2(x *float32, ngroups int, acc *[4][8]float32)
TEXT ·sumRows4AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ ngroups+8(FP), CX
	MOVQ acc+16(FP), DI
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3

srloop:
	VADDPS 0(SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ $128, SI
	DECQ CX
	JNZ srloop

	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// histcConsts offsets: 8-lane lo, hi, bins, width, 1 (float32) and
// bins-1 (int32).
#define HLO 0
#define HHI 32
#define HFB 64
#define HWIDTH 96
#define HONE 128
#define HBMAX 160

// HINC adds 1 to h[R] (float32).
#define HINC(R) \
	VMOVSS (DI)(R*4), X5 \
	VADDSS X4, X5, X5 \
	VMOVSS X5, (DI)(R*4)

// func histcAVX2(h, x *float32, nvec int, k *histcConsts) (done int)
TEXT ·histcAVX2(SB), NOSPLIT, $0-40
	MOVQ h+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nvec+16(FP), CX
	MOVQ k+24(FP), BX
	VMOVSS HONE(BX), X4
	XORQ DX, DX

hcloop:
	CMPQ DX, CX
	JGE hcdone
	VMOVUPS (SI), Y0
	VCMPPS $0x1d, HLO(BX), Y0, Y1 // x >= lo
	VCMPPS $0x12, HHI(BX), Y0, Y2 // x <= hi
	VANDPS Y1, Y2, Y1
	VMOVMSKPS Y1, AX
	CMPL AX, $0xff
	JNE hcdone
	VSUBPS HLO(BX), Y0, Y0
	VMULPS HFB(BX), Y0, Y0
	VDIVPS HWIDTH(BX), Y0, Y0
	VCVTTPS2DQ Y0, Y0
	VPMINSD HBMAX(BX), Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VMOVD X0, R8
	VPEXTRD $1, X0, R9
	VPEXTRD $2, X0, R10
	VPEXTRD $3, X0, R11
	HINC(R8)
	HINC(R9)
	HINC(R10)
	HINC(R11)
	VMOVD X1, R8
	VPEXTRD $1, X1, R9
	VPEXTRD $2, X1, R10
	VPEXTRD $3, X1, R11
	HINC(R8)
	HINC(R9)
	HINC(R10)
	HINC(R11)
	ADDQ $32, SI
	INCQ DX
	JMP hcloop

hcdone:
	MOVQ DX, done+32(FP)
	VZEROUPPER
	RET

DATA iota8<>+0(SB)/4, $0
DATA iota8<>+4(SB)/4, $1
DATA iota8<>+8(SB)/4, $2
DATA iota8<>+12(SB)/4, $3
DATA iota8<>+16(SB)/4, $4
DATA iota8<>+20(SB)/4, $5
DATA iota8<>+24(SB)/4, $6
DATA iota8<>+28(SB)/4, $7
GLOBL iota8<>(SB), RODATA|NOPTR, $32

// func offsetsAVX2(off, end *float32, nvec int, k0 int32, bw float32)
TEXT ·offsetsAVX2(SB), NOSPLIT, $0-32
	MOVQ off+0(FP), DI
	MOVQ end+8(FP), SI
	MOVQ nvec+16(FP), CX
	MOVL k0+24(FP), AX
	VMOVD AX, X0
	VPBROADCASTD X0, Y0
	VPADDD iota8<>(SB), Y0, Y0
	MOVL bw+28(FP), AX
	VMOVD AX, X1
	VBROADCASTSS X1, Y1
	MOVL $8, AX
	VMOVD AX, X2
	VPBROADCASTD X2, Y2

ofloop:
	VCVTDQ2PS Y0, Y3
	VMULPS Y1, Y3, Y3
	VMOVUPS Y3, (DI)
	VADDPS Y1, Y3, Y3
	VMOVUPS Y3, (SI)
	VPADDD Y2, Y0, Y0
	ADDQ $32, DI
	ADDQ $32, SI
	DECQ CX
	JNZ ofloop
	VZEROUPPER
	RET

// func divByAVX2(dst, src *float32, nvec int, b float32)
TEXT ·divByAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nvec+16(FP), CX
	MOVL b+24(FP), AX
	VMOVD AX, X1
	VBROADCASTSS X1, Y1

dvloop:
	VMOVUPS (SI), Y0
	VDIVPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	DECQ CX
	JNZ dvloop
	VZEROUPPER
	RET
