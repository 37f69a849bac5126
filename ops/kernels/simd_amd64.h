// Loop steps shared by simd_amd64.s and simd_knorm_amd64.s; store is
// VMOVUPS, or VMOVNTPS for the non-temporal variants.

// Registers of layerNormOut{,NT}AVX2: DI y, SI x, R8 w, R9 b, CX n,
// Y14 m, Y15 rstd. One 8-float step: y = (x-m)*rstd*w + b; CX -= 8.
#define LNOUTSTEP(store) \
	VMOVUPS (SI), Y0; \
	VSUBPS Y14, Y0, Y0; \
	VMULPS Y15, Y0, Y0; \
	VMOVUPS (R8), Y1; \
	VFMADD213PS (R9), Y1, Y0; \
	store Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DI; \
	ADDQ $32, R8; \
	ADDQ $32, R9; \
	SUBQ $8, CX

// Registers of subSub{,NT}AVX2: DI y, SI x, CX n, Y14 m, Y15 ls. One
// 8-float step: y = (x-m) - ls; CX -= 8.
#define SUBSUBSTEP(store) \
	VMOVUPS (SI), Y0; \
	VSUBPS Y14, Y0, Y0; \
	VSUBPS Y15, Y0, Y0; \
	store Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DI; \
	SUBQ $8, CX
