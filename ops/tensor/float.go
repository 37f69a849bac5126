package tensor

import "math"

// Float32ToBFloat16 rounds f to bfloat16 with round-to-nearest-even, as
// PyTorch's c10::BFloat16 conversion does. Finite values beyond the
// largest bfloat16 (0x7f7f) round to ±inf, -0 stays -0 and float32
// subnormals round like any other value. A NaN keeps its sign and top
// payload bits with the quiet bit set (c10's scalar path returns 0x7fc0 and
// its AVX2 path 0xffff instead, so NaN bit patterns are not compared
// against PyTorch).
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x0040
	}
	lsb := (b >> 16) & 1
	b += 0x7fff + lsb
	return uint16(b >> 16)
}

// BFloat16ToFloat32 widens a bfloat16 bit pattern exactly (a shift by 16
// bits), so ±0, ±inf, subnormals and NaN payloads are kept.
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundBFloat16 rounds f through bfloat16 and back, as x.to(torch.bfloat16).float().
func RoundBFloat16(f float32) float32 { return BFloat16ToFloat32(Float32ToBFloat16(f)) }

// Float16ToFloat32 widens an IEEE binary16 bit pattern exactly:
// subnormals become normal float32 values, ±0 and ±inf are kept, and a NaN
// keeps its sign and payload (shifted into the top mantissa bits).
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// subnormal: normalise
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		man &= 0x3ff
		return math.Float32frombits(sign | e<<23 | man<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// Float32ToFloat16 rounds f to IEEE binary16 with round-to-nearest-even,
// including into the subnormal range (half the smallest subnormal, 2^-25,
// ties to ±0). Values from 65520 up round to ±inf, -0 stays -0, and every
// NaN becomes the quiet NaN 0x7e00 with f's sign, as c10's
// fp16_ieee_from_fp32_value does.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		rest := man & (1<<shift - 1)
		r := man >> shift
		if rest > half || (rest == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rest := man & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && r&1 == 1) {
		r++
	}
	return sign | uint16(r)
}
