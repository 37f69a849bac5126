//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// AVX2+FMA kernels selected by useAVX2 (simd_amd64.go). Every lane runs
// the float32 operations of the Go code it replaces, in the same order;
// VFMADD is the single-rounding fused multiply-add that FMA32 emulates.

// Sleef expf constants of sleefExpf (elem_libm.go), each broadcast to 8
// lanes.
// 0: rln2
DATA expc<>+0(SB)/4, $0x3fb8aa3b
DATA expc<>+4(SB)/4, $0x3fb8aa3b
DATA expc<>+8(SB)/4, $0x3fb8aa3b
DATA expc<>+12(SB)/4, $0x3fb8aa3b
DATA expc<>+16(SB)/4, $0x3fb8aa3b
DATA expc<>+20(SB)/4, $0x3fb8aa3b
DATA expc<>+24(SB)/4, $0x3fb8aa3b
DATA expc<>+28(SB)/4, $0x3fb8aa3b
// 32: nl2u
DATA expc<>+32(SB)/4, $0xbf317200
DATA expc<>+36(SB)/4, $0xbf317200
DATA expc<>+40(SB)/4, $0xbf317200
DATA expc<>+44(SB)/4, $0xbf317200
DATA expc<>+48(SB)/4, $0xbf317200
DATA expc<>+52(SB)/4, $0xbf317200
DATA expc<>+56(SB)/4, $0xbf317200
DATA expc<>+60(SB)/4, $0xbf317200
// 64: nl2l
DATA expc<>+64(SB)/4, $0xb5bfbe8e
DATA expc<>+68(SB)/4, $0xb5bfbe8e
DATA expc<>+72(SB)/4, $0xb5bfbe8e
DATA expc<>+76(SB)/4, $0xb5bfbe8e
DATA expc<>+80(SB)/4, $0xb5bfbe8e
DATA expc<>+84(SB)/4, $0xb5bfbe8e
DATA expc<>+88(SB)/4, $0xb5bfbe8e
DATA expc<>+92(SB)/4, $0xb5bfbe8e
// 96: c0
DATA expc<>+96(SB)/4, $0x39502bda
DATA expc<>+100(SB)/4, $0x39502bda
DATA expc<>+104(SB)/4, $0x39502bda
DATA expc<>+108(SB)/4, $0x39502bda
DATA expc<>+112(SB)/4, $0x39502bda
DATA expc<>+116(SB)/4, $0x39502bda
DATA expc<>+120(SB)/4, $0x39502bda
DATA expc<>+124(SB)/4, $0x39502bda
// 128: c1
DATA expc<>+128(SB)/4, $0x3ab696c9
DATA expc<>+132(SB)/4, $0x3ab696c9
DATA expc<>+136(SB)/4, $0x3ab696c9
DATA expc<>+140(SB)/4, $0x3ab696c9
DATA expc<>+144(SB)/4, $0x3ab696c9
DATA expc<>+148(SB)/4, $0x3ab696c9
DATA expc<>+152(SB)/4, $0x3ab696c9
DATA expc<>+156(SB)/4, $0x3ab696c9
// 160: c2
DATA expc<>+160(SB)/4, $0x3c0888a6
DATA expc<>+164(SB)/4, $0x3c0888a6
DATA expc<>+168(SB)/4, $0x3c0888a6
DATA expc<>+172(SB)/4, $0x3c0888a6
DATA expc<>+176(SB)/4, $0x3c0888a6
DATA expc<>+180(SB)/4, $0x3c0888a6
DATA expc<>+184(SB)/4, $0x3c0888a6
DATA expc<>+188(SB)/4, $0x3c0888a6
// 192: c3
DATA expc<>+192(SB)/4, $0x3d2aaa7a
DATA expc<>+196(SB)/4, $0x3d2aaa7a
DATA expc<>+200(SB)/4, $0x3d2aaa7a
DATA expc<>+204(SB)/4, $0x3d2aaa7a
DATA expc<>+208(SB)/4, $0x3d2aaa7a
DATA expc<>+212(SB)/4, $0x3d2aaa7a
DATA expc<>+216(SB)/4, $0x3d2aaa7a
DATA expc<>+220(SB)/4, $0x3d2aaa7a
// 224: c4
DATA expc<>+224(SB)/4, $0x3e2aaaab
DATA expc<>+228(SB)/4, $0x3e2aaaab
DATA expc<>+232(SB)/4, $0x3e2aaaab
DATA expc<>+236(SB)/4, $0x3e2aaaab
DATA expc<>+240(SB)/4, $0x3e2aaaab
DATA expc<>+244(SB)/4, $0x3e2aaaab
DATA expc<>+248(SB)/4, $0x3e2aaaab
DATA expc<>+252(SB)/4, $0x3e2aaaab
// 256: c5
DATA expc<>+256(SB)/4, $0x3f000000
DATA expc<>+260(SB)/4, $0x3f000000
DATA expc<>+264(SB)/4, $0x3f000000
DATA expc<>+268(SB)/4, $0x3f000000
DATA expc<>+272(SB)/4, $0x3f000000
DATA expc<>+276(SB)/4, $0x3f000000
DATA expc<>+280(SB)/4, $0x3f000000
DATA expc<>+284(SB)/4, $0x3f000000
// 288: one
DATA expc<>+288(SB)/4, $0x3f800000
DATA expc<>+292(SB)/4, $0x3f800000
DATA expc<>+296(SB)/4, $0x3f800000
DATA expc<>+300(SB)/4, $0x3f800000
DATA expc<>+304(SB)/4, $0x3f800000
DATA expc<>+308(SB)/4, $0x3f800000
DATA expc<>+312(SB)/4, $0x3f800000
DATA expc<>+316(SB)/4, $0x3f800000
// 320: m104
DATA expc<>+320(SB)/4, $0xc2d00000
DATA expc<>+324(SB)/4, $0xc2d00000
DATA expc<>+328(SB)/4, $0xc2d00000
DATA expc<>+332(SB)/4, $0xc2d00000
DATA expc<>+336(SB)/4, $0xc2d00000
DATA expc<>+340(SB)/4, $0xc2d00000
DATA expc<>+344(SB)/4, $0xc2d00000
DATA expc<>+348(SB)/4, $0xc2d00000
// 352: p100
DATA expc<>+352(SB)/4, $0x42c80000
DATA expc<>+356(SB)/4, $0x42c80000
DATA expc<>+360(SB)/4, $0x42c80000
DATA expc<>+364(SB)/4, $0x42c80000
DATA expc<>+368(SB)/4, $0x42c80000
DATA expc<>+372(SB)/4, $0x42c80000
DATA expc<>+376(SB)/4, $0x42c80000
DATA expc<>+380(SB)/4, $0x42c80000
// 384: inf
DATA expc<>+384(SB)/4, $0x7f800000
DATA expc<>+388(SB)/4, $0x7f800000
DATA expc<>+392(SB)/4, $0x7f800000
DATA expc<>+396(SB)/4, $0x7f800000
DATA expc<>+400(SB)/4, $0x7f800000
DATA expc<>+404(SB)/4, $0x7f800000
DATA expc<>+408(SB)/4, $0x7f800000
DATA expc<>+412(SB)/4, $0x7f800000
// 416: bias
DATA expc<>+416(SB)/4, $0x0000007f
DATA expc<>+420(SB)/4, $0x0000007f
DATA expc<>+424(SB)/4, $0x0000007f
DATA expc<>+428(SB)/4, $0x0000007f
DATA expc<>+432(SB)/4, $0x0000007f
DATA expc<>+436(SB)/4, $0x0000007f
DATA expc<>+440(SB)/4, $0x0000007f
DATA expc<>+444(SB)/4, $0x0000007f
GLOBL expc<>(SB), RODATA|NOPTR, $448

// func welfordAVX2(v *float32, cnt int, c *float32, m1, m2 *lanes)
TEXT ·welfordAVX2(SB), NOSPLIT, $0-40
	MOVQ v+0(FP), SI
	MOVQ cnt+8(FP), CX
	MOVQ c+16(FP), DX
	MOVQ m1+24(FP), R8
	MOVQ m2+32(FP), R9
	VMOVUPS (R8), Y0
	VMOVUPS (R9), Y1
	TESTQ CX, CX
	JZ wdone

wloop:
	VMOVUPS (SI), Y2
	VBROADCASTSS (DX), Y3
	VSUBPS Y0, Y2, Y4       // d = v - m1
	VFMADD231PS Y3, Y4, Y0  // m1 = d*c + m1
	VSUBPS Y0, Y2, Y5       // e = v - m1
	VFMADD231PS Y5, Y4, Y1  // m2 = d*e + m2
	ADDQ $32, SI
	ADDQ $4, DX
	DECQ CX
	JNZ wloop

wdone:
	VMOVUPS Y0, (R8)
	VMOVUPS Y1, (R9)
	VZEROUPPER
	RET

// func layerNormOutAVX2(y, x, w, b *float32, n int, m, rstd float32)
TEXT ·layerNormOutAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R8
	MOVQ b+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS m+40(FP), Y14
	VBROADCASTSS rstd+44(FP), Y15
	TESTQ CX, CX
	JZ lndone

lnloop:
	LNOUTSTEP(VMOVUPS)
	JNZ lnloop

lndone:
	VZEROUPPER
	RET

// func quantizeAVX2(dst *byte, src *float32, n int, inv, zp, lo, hi float32, unsigned bool)
// dst[i] = clamp(round_half_even(src[i]*inv) + zp, lo, hi) as int8 (or
// uint8), NaN -> 0; n a multiple of 8 and [lo, hi] within the dtype.
TEXT ·quantizeAVX2(SB), NOSPLIT, $0-41
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS inv+24(FP), Y12
	VBROADCASTSS zp+28(FP), Y13
	VBROADCASTSS lo+32(FP), Y14
	VBROADCASTSS hi+36(FP), Y15
	MOVBLZX unsigned+40(FP), AX
	TESTQ CX, CX
	JZ qdone

qloop:
	VMULPS (SI), Y12, Y0      // x * inv
	VROUNDPS $0, Y0, Y0       // nearest even
	VADDPS Y13, Y0, Y0        // + zp
	VMAXPS Y0, Y14, Y0        // lo > v ? lo : v (NaN stays)
	VMINPS Y0, Y15, Y0        // hi < v ? hi : v (NaN stays)
	VCMPPS $3, Y0, Y0, Y1     // NaN
	VANDNPS Y0, Y1, Y0        // NaN -> 0
	VCVTTPS2DQ Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKSSDW X1, X0, X0      // 8 int16
	TESTQ AX, AX
	JNZ qunsigned
	VPACKSSWB X0, X0, X0
	JMP qstore

qunsigned:
	VPACKUSWB X0, X0, X0

qstore:
	MOVQ X0, (DI)
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JNZ qloop

qdone:
	VZEROUPPER
	RET

// func dequantizeAVX2(dst *float32, src *byte, n int, zp, scale float32, unsigned bool)
// dst[i] = (float32(src[i]) - zp) * scale for int8 (or uint8) src; n a
// multiple of 8.
TEXT ·dequantizeAVX2(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS zp+24(FP), Y14
	VBROADCASTSS scale+28(FP), Y15
	MOVBLZX unsigned+32(FP), AX
	TESTQ CX, CX
	JZ dqdone

dqloop:
	TESTQ AX, AX
	JNZ dqunsigned
	VPMOVSXBD (SI), Y0
	JMP dqconv

dqunsigned:
	VPMOVZXBD (SI), Y0

dqconv:
	VCVTDQ2PS Y0, Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ dqloop

dqdone:
	VZEROUPPER
	RET

// func scaleAVX2(y *float32, n int, r float32)
// y[i] *= r for i < n, n a multiple of 8.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ y+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS r+16(FP), Y15
	TESTQ CX, CX
	JZ scdone

scloop:
	VMULPS (DI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ scloop

scdone:
	VZEROUPPER
	RET

// exp(x - m) for the vector x at (SI) and m in Y15, each lane with
// sleefExpf's float32 operations on d = x - m (elem_libm.go; each fmaf
// is one hardware FMA, ldexp2 two multiplies by 2^(q>>1) and
// 2^(q-(q>>1)); x - m is recomputed for the range checks, and d > 100
// is 100 < d), as es3loop runs it three at a time. The result is in Y2; Y0 (x - m), Y1 and Y3 are clobbered.
#define EXPSUB1 \
	VMOVUPS (SI), Y0; \
	VSUBPS Y15, Y0, Y0; \
	VMULPS expc<>+0(SB), Y0, Y1; \
	VCVTPS2DQ Y1, Y1; \
	VCVTDQ2PS Y1, Y3; \
	VFMADD231PS expc<>+32(SB), Y3, Y0; \
	VFMADD231PS expc<>+64(SB), Y3, Y0; \
	VMOVUPS expc<>+96(SB), Y2; \
	VFMADD213PS expc<>+128(SB), Y0, Y2; \
	VFMADD213PS expc<>+160(SB), Y0, Y2; \
	VFMADD213PS expc<>+192(SB), Y0, Y2; \
	VFMADD213PS expc<>+224(SB), Y0, Y2; \
	VFMADD213PS expc<>+256(SB), Y0, Y2; \
	VMULPS Y0, Y0, Y3; \
	VFMADD213PS Y0, Y3, Y2; \
	VADDPS expc<>+288(SB), Y2, Y2; \
	VPSRAD $1, Y1, Y3; \
	VPSUBD Y3, Y1, Y1; \
	VPADDD expc<>+416(SB), Y3, Y3; \
	VPSLLD $23, Y3, Y3; \
	VPADDD expc<>+416(SB), Y1, Y1; \
	VPSLLD $23, Y1, Y1; \
	VMULPS Y3, Y2, Y2; \
	VMULPS Y1, Y2, Y2; \
	VMOVUPS (SI), Y0; \
	VSUBPS Y15, Y0, Y0; \
	VCMPPS $1, expc<>+320(SB), Y0, Y3; \
	VANDNPS Y2, Y3, Y2; \
	VCMPPS $0x0e, expc<>+352(SB), Y0, Y3; \
	VBLENDVPS Y3, expc<>+384(SB), Y2, Y2; \
	VCMPPS $3, Y0, Y0, Y3; \
	VBLENDVPS Y3, Y0, Y2, Y2

// EXPSUB1 on two neighbouring vectors, (SI) less Y15 into Y2 and 32(SI)
// less Y13 into Y6 (Y4, Y5, Y7 clobbered too), their chains interleaved.
#define EXPSUB2 \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y4; \
	VSUBPS Y15, Y0, Y0; \
	VSUBPS Y13, Y4, Y4; \
	VMULPS expc<>+0(SB), Y0, Y1; \
	VMULPS expc<>+0(SB), Y4, Y5; \
	VCVTPS2DQ Y1, Y1; \
	VCVTPS2DQ Y5, Y5; \
	VCVTDQ2PS Y1, Y3; \
	VCVTDQ2PS Y5, Y7; \
	VFMADD231PS expc<>+32(SB), Y3, Y0; \
	VFMADD231PS expc<>+32(SB), Y7, Y4; \
	VFMADD231PS expc<>+64(SB), Y3, Y0; \
	VFMADD231PS expc<>+64(SB), Y7, Y4; \
	VMOVUPS expc<>+96(SB), Y2; \
	VMOVUPS expc<>+96(SB), Y6; \
	VFMADD213PS expc<>+128(SB), Y0, Y2; \
	VFMADD213PS expc<>+128(SB), Y4, Y6; \
	VFMADD213PS expc<>+160(SB), Y0, Y2; \
	VFMADD213PS expc<>+160(SB), Y4, Y6; \
	VFMADD213PS expc<>+192(SB), Y0, Y2; \
	VFMADD213PS expc<>+192(SB), Y4, Y6; \
	VFMADD213PS expc<>+224(SB), Y0, Y2; \
	VFMADD213PS expc<>+224(SB), Y4, Y6; \
	VFMADD213PS expc<>+256(SB), Y0, Y2; \
	VFMADD213PS expc<>+256(SB), Y4, Y6; \
	VMULPS Y0, Y0, Y3; \
	VMULPS Y4, Y4, Y7; \
	VFMADD213PS Y0, Y3, Y2; \
	VFMADD213PS Y4, Y7, Y6; \
	VADDPS expc<>+288(SB), Y2, Y2; \
	VADDPS expc<>+288(SB), Y6, Y6; \
	VPSRAD $1, Y1, Y3; \
	VPSRAD $1, Y5, Y7; \
	VPSUBD Y3, Y1, Y1; \
	VPSUBD Y7, Y5, Y5; \
	VPADDD expc<>+416(SB), Y3, Y3; \
	VPADDD expc<>+416(SB), Y7, Y7; \
	VPSLLD $23, Y3, Y3; \
	VPSLLD $23, Y7, Y7; \
	VPADDD expc<>+416(SB), Y1, Y1; \
	VPADDD expc<>+416(SB), Y5, Y5; \
	VPSLLD $23, Y1, Y1; \
	VPSLLD $23, Y5, Y5; \
	VMULPS Y3, Y2, Y2; \
	VMULPS Y7, Y6, Y6; \
	VMULPS Y1, Y2, Y2; \
	VMULPS Y5, Y6, Y6; \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y4; \
	VSUBPS Y15, Y0, Y0; \
	VSUBPS Y13, Y4, Y4; \
	VCMPPS $1, expc<>+320(SB), Y0, Y3; \
	VCMPPS $1, expc<>+320(SB), Y4, Y7; \
	VANDNPS Y2, Y3, Y2; \
	VANDNPS Y6, Y7, Y6; \
	VCMPPS $0x0e, expc<>+352(SB), Y0, Y3; \
	VCMPPS $0x0e, expc<>+352(SB), Y4, Y7; \
	VBLENDVPS Y3, expc<>+384(SB), Y2, Y2; \
	VBLENDVPS Y7, expc<>+384(SB), Y6, Y6; \
	VCMPPS $3, Y0, Y0, Y3; \
	VCMPPS $3, Y4, Y4, Y7; \
	VBLENDVPS Y3, Y0, Y2, Y2; \
	VBLENDVPS Y7, Y4, Y6, Y6

// m = vecMaximum(m, v) lane by lane for the vector v at off(SI): NaN if
// either is NaN (nan), otherwise the maximum with +0 over -0 (the AND of
// both operand orders); t is clobbered.
#define MAXNAN(off, v, nan, t, m) \
	VMOVUPS off(SI), v; \
	VCMPPS $3, v, m, nan; \
	VMAXPS v, m, t; \
	VMAXPS m, v, m; \
	VANDPS t, m, m; \
	VORPS nan, m, m

// func expSumAVX2(dst, src *float32, n int, m float32, acc *lanes)
// dst[i] = sleefExpf(src[i] - m) for i < n (n a positive multiple of
// 8), and acc = the first vector of results plus, lane by lane in order,
// the later ones. Each lane runs EXPSUB1's operations;
// three vectors per iteration interleave their chains, and the sums stay
// in order.
TEXT ·expSumAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	MOVQ acc+32(FP), DX
	// the first vector: acc = e
	EXPSUB1
	VMOVUPS Y2, 0(DI)
	VMOVAPS Y2, Y14
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JZ esdone

es3loop:
	CMPQ CX, $24
	JLT es1loop
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y4
	VMOVUPS 64(SI), Y8
	VSUBPS Y15, Y0, Y0
	VSUBPS Y15, Y4, Y4
	VSUBPS Y15, Y8, Y8
	VMULPS expc<>+0(SB), Y0, Y1
	VMULPS expc<>+0(SB), Y4, Y5
	VMULPS expc<>+0(SB), Y8, Y9
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y5, Y5
	VCVTPS2DQ Y9, Y9
	VCVTDQ2PS Y1, Y3
	VCVTDQ2PS Y5, Y7
	VCVTDQ2PS Y9, Y11
	VFMADD231PS expc<>+32(SB), Y3, Y0
	VFMADD231PS expc<>+32(SB), Y7, Y4
	VFMADD231PS expc<>+32(SB), Y11, Y8
	VFMADD231PS expc<>+64(SB), Y3, Y0
	VFMADD231PS expc<>+64(SB), Y7, Y4
	VFMADD231PS expc<>+64(SB), Y11, Y8
	VMOVUPS expc<>+96(SB), Y2
	VMOVUPS expc<>+96(SB), Y6
	VMOVUPS expc<>+96(SB), Y10
	VFMADD213PS expc<>+128(SB), Y0, Y2
	VFMADD213PS expc<>+128(SB), Y4, Y6
	VFMADD213PS expc<>+128(SB), Y8, Y10
	VFMADD213PS expc<>+160(SB), Y0, Y2
	VFMADD213PS expc<>+160(SB), Y4, Y6
	VFMADD213PS expc<>+160(SB), Y8, Y10
	VFMADD213PS expc<>+192(SB), Y0, Y2
	VFMADD213PS expc<>+192(SB), Y4, Y6
	VFMADD213PS expc<>+192(SB), Y8, Y10
	VFMADD213PS expc<>+224(SB), Y0, Y2
	VFMADD213PS expc<>+224(SB), Y4, Y6
	VFMADD213PS expc<>+224(SB), Y8, Y10
	VFMADD213PS expc<>+256(SB), Y0, Y2
	VFMADD213PS expc<>+256(SB), Y4, Y6
	VFMADD213PS expc<>+256(SB), Y8, Y10
	VMULPS Y0, Y0, Y3
	VMULPS Y4, Y4, Y7
	VMULPS Y8, Y8, Y11
	VFMADD213PS Y0, Y3, Y2
	VFMADD213PS Y4, Y7, Y6
	VFMADD213PS Y8, Y11, Y10
	VADDPS expc<>+288(SB), Y2, Y2
	VADDPS expc<>+288(SB), Y6, Y6
	VADDPS expc<>+288(SB), Y10, Y10
	VPSRAD $1, Y1, Y3
	VPSRAD $1, Y5, Y7
	VPSRAD $1, Y9, Y11
	VPSUBD Y3, Y1, Y1
	VPSUBD Y7, Y5, Y5
	VPSUBD Y11, Y9, Y9
	VPADDD expc<>+416(SB), Y3, Y3
	VPADDD expc<>+416(SB), Y7, Y7
	VPADDD expc<>+416(SB), Y11, Y11
	VPSLLD $23, Y3, Y3
	VPSLLD $23, Y7, Y7
	VPSLLD $23, Y11, Y11
	VPADDD expc<>+416(SB), Y1, Y1
	VPADDD expc<>+416(SB), Y5, Y5
	VPADDD expc<>+416(SB), Y9, Y9
	VPSLLD $23, Y1, Y1
	VPSLLD $23, Y5, Y5
	VPSLLD $23, Y9, Y9
	VMULPS Y3, Y2, Y2
	VMULPS Y7, Y6, Y6
	VMULPS Y11, Y10, Y10
	VMULPS Y1, Y2, Y2
	VMULPS Y5, Y6, Y6
	VMULPS Y9, Y10, Y10
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y4
	VMOVUPS 64(SI), Y8
	VSUBPS Y15, Y0, Y0
	VSUBPS Y15, Y4, Y4
	VSUBPS Y15, Y8, Y8
	VCMPPS $1, expc<>+320(SB), Y0, Y3
	VCMPPS $1, expc<>+320(SB), Y4, Y7
	VCMPPS $1, expc<>+320(SB), Y8, Y11
	VANDNPS Y2, Y3, Y2
	VANDNPS Y6, Y7, Y6
	VANDNPS Y10, Y11, Y10
	VCMPPS $0x0e, expc<>+352(SB), Y0, Y3
	VCMPPS $0x0e, expc<>+352(SB), Y4, Y7
	VCMPPS $0x0e, expc<>+352(SB), Y8, Y11
	VBLENDVPS Y3, expc<>+384(SB), Y2, Y2
	VBLENDVPS Y7, expc<>+384(SB), Y6, Y6
	VBLENDVPS Y11, expc<>+384(SB), Y10, Y10
	VCMPPS $3, Y0, Y0, Y3
	VCMPPS $3, Y4, Y4, Y7
	VCMPPS $3, Y8, Y8, Y11
	VBLENDVPS Y3, Y0, Y2, Y2
	VBLENDVPS Y7, Y4, Y6, Y6
	VBLENDVPS Y11, Y8, Y10, Y10
	VMOVUPS Y2, 0(DI)
	VMOVUPS Y6, 32(DI)
	VMOVUPS Y10, 64(DI)
	VADDPS Y2, Y14, Y14
	VADDPS Y6, Y14, Y14
	VADDPS Y10, Y14, Y14
	ADDQ $96, SI
	ADDQ $96, DI
	SUBQ $24, CX
	JNZ es3loop
	JMP esdone

es1loop:
	EXPSUB1
	VMOVUPS Y2, 0(DI)
	VADDPS Y2, Y14, Y14
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ es1loop

esdone:
	VMOVUPS Y14, (DX)
	VZEROUPPER
	RET

// func subSubAVX2(y, x *float32, n int, m, ls float32)
// y[i] = (x[i] - m) - ls for i < n, n a multiple of 8 (log_softmax).
TEXT ·subSubAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y14
	VBROADCASTSS ls+28(FP), Y15
	TESTQ CX, CX
	JZ ssdone

ssloop:
	SUBSUBSTEP(VMOVUPS)
	JNZ ssloop

ssdone:
	VZEROUPPER
	RET

// func softmaxInner8AVX2(y, x *float32, d, stride int)
// softmaxInner for 8 neighbouring inner positions, one per lane, along a
// dim of d elements stride bytes apart: m = x[0], then
// m = vecMaximum(m, x[k]) (NaN if either is NaN; +0 over -0); e_k =
// exp(x[k] - m) as EXPSUB1, y[k] = e_k and sum = 0 + e_0 + e_1 + ...;
// then y[k] /= sum.
TEXT ·softmaxInner8AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), R8
	MOVQ x+8(FP), R9
	MOVQ d+16(FP), R10
	MOVQ stride+24(FP), R11
	// max
	VMOVUPS (R9), Y15
	MOVQ R9, SI
	MOVQ R10, CX
	DECQ CX
	JZ simaxdone

simax:
	ADDQ R11, SI
	MAXNAN(0, Y1, Y2, Y3, Y15)
	DECQ CX
	JNZ simax

simaxdone:
	// exp, store, sum
	VXORPS Y14, Y14, Y14
	MOVQ R9, SI
	MOVQ R8, DI
	MOVQ R10, CX

siexp:
	EXPSUB1
	VMOVUPS Y2, (DI)
	VADDPS Y2, Y14, Y14
	ADDQ R11, SI
	ADDQ R11, DI
	DECQ CX
	JNZ siexp
	// divide
	MOVQ R8, DI
	MOVQ R10, CX

sidiv:
	VMOVUPS (DI), Y0
	VDIVPS Y14, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ R11, DI
	DECQ CX
	JNZ sidiv
	VZEROUPPER
	RET

// func maxExpSum8AVX2(x *float32, d, stride int, m, sum *lanes)
// logSoftmaxInner's vector branch up to the sum, for 8 neighbouring inner
// positions (lanes) along a dim of d > 0 elements stride bytes apart:
// m = -inf, then m = v when v > m (NaN never replaces); sum = 0 +
// exp(x[0] - m) + ... in order, exp as EXPSUB1.
TEXT ·maxExpSum8AVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), R9
	MOVQ d+8(FP), R10
	MOVQ stride+16(FP), R11
	MOVL $0xff800000, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVQ R9, SI
	MOVQ R10, CX

lmmax:
	VMOVUPS (SI), Y1
	VMAXPS Y15, Y1, Y15       // v > m ? v : m
	ADDQ R11, SI
	DECQ CX
	JNZ lmmax
	MOVQ m+24(FP), DX
	VMOVUPS Y15, (DX)
	VXORPS Y14, Y14, Y14
	MOVQ R9, SI
	MOVQ R10, CX

lmexp:
	EXPSUB1
	VADDPS Y2, Y14, Y14
	ADDQ R11, SI
	DECQ CX
	JNZ lmexp
	MOVQ sum+32(FP), DX
	VMOVUPS Y14, (DX)
	VZEROUPPER
	RET

// func softmaxInner16AVX2(y, x *float32, d, stride int)
// softmaxInner8AVX2 on 16 neighbouring positions: two independent lane
// groups whose exp chains interleave.
TEXT ·softmaxInner16AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), R8
	MOVQ x+8(FP), R9
	MOVQ d+16(FP), R10
	MOVQ stride+24(FP), R11
	VMOVUPS (R9), Y15
	VMOVUPS 32(R9), Y13
	MOVQ R9, SI
	MOVQ R10, CX
	DECQ CX
	JZ s16maxdone

s16max:
	ADDQ R11, SI
	MAXNAN(0, Y1, Y2, Y3, Y15)
	MAXNAN(32, Y5, Y6, Y7, Y13)
	DECQ CX
	JNZ s16max

s16maxdone:
	VXORPS Y14, Y14, Y14
	VXORPS Y12, Y12, Y12
	MOVQ R9, SI
	MOVQ R8, DI
	MOVQ R10, CX

s16exp:
	EXPSUB2
	VMOVUPS Y2, (DI)
	VMOVUPS Y6, 32(DI)
	VADDPS Y2, Y14, Y14
	VADDPS Y6, Y12, Y12
	ADDQ R11, SI
	ADDQ R11, DI
	DECQ CX
	JNZ s16exp
	MOVQ R8, DI
	MOVQ R10, CX

s16div:
	VMOVUPS (DI), Y0
	VDIVPS Y14, Y0, Y0
	VMOVUPS Y0, (DI)
	VMOVUPS 32(DI), Y1
	VDIVPS Y12, Y1, Y1
	VMOVUPS Y1, 32(DI)
	ADDQ R11, DI
	DECQ CX
	JNZ s16div
	VZEROUPPER
	RET

// func maxExpSum16AVX2(x *float32, d, stride int, m, sum *[2]lanes)
// maxExpSum8AVX2 on 16 neighbouring positions (two lane groups whose exp
// chains interleave).
TEXT ·maxExpSum16AVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), R9
	MOVQ d+8(FP), R10
	MOVQ stride+16(FP), R11
	MOVL $0xff800000, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VMOVAPS Y15, Y13
	MOVQ R9, SI
	MOVQ R10, CX

l16max:
	VMOVUPS (SI), Y1
	VMAXPS Y15, Y1, Y15
	VMOVUPS 32(SI), Y5
	VMAXPS Y13, Y5, Y13
	ADDQ R11, SI
	DECQ CX
	JNZ l16max
	MOVQ m+24(FP), DX
	VMOVUPS Y15, (DX)
	VMOVUPS Y13, 32(DX)
	VXORPS Y14, Y14, Y14
	VXORPS Y12, Y12, Y12
	MOVQ R9, SI
	MOVQ R10, CX

l16exp:
	EXPSUB2
	VADDPS Y2, Y14, Y14
	VADDPS Y6, Y12, Y12
	ADDQ R11, SI
	DECQ CX
	JNZ l16exp
	MOVQ sum+32(FP), DX
	VMOVUPS Y14, (DX)
	VMOVUPS Y12, 32(DX)
	VZEROUPPER
	RET
