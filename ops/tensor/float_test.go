package tensor

import (
	"math"
	"testing"
)

// The bit patterns below are worked out by hand from the IEEE layouts:
// float32 = 1 sign, 8 exponent (bias 127), 23 mantissa bits; bfloat16 is
// its upper 16 bits (7 mantissa bits); float16 = 1 sign, 5 exponent
// (bias 15), 10 mantissa bits, subnormals m·2^-24.

func TestFloat32ToBFloat16(t *testing.T) {
	tests := []struct {
		name string
		in   uint32 // float32 bits
		want uint16
	}{
		{"one", 0x3f800000, 0x3f80},
		{"minus one", 0xbf800000, 0xbf80},
		{"+0", 0x00000000, 0x0000},
		{"-0 keeps its sign", 0x80000000, 0x8000},
		// 1 + 2^-8 lies halfway between 0x3f80 and 0x3f81: even 0x3f80 wins.
		{"tie rounds down to even", 0x3f808000, 0x3f80},
		// 0x3f818000 lies halfway between 0x3f81 and 0x3f82: even 0x3f82 wins.
		{"tie rounds up to even", 0x3f818000, 0x3f82},
		{"negative tie to even", 0xbf808000, 0xbf80},
		{"negative tie up to even", 0xbf818000, 0xbf82},
		{"one above tie rounds up", 0x3f808001, 0x3f81},
		{"one below tie rounds down", 0x3f807fff, 0x3f80},
		{"one below odd tie rounds down", 0x3f817fff, 0x3f81},
		{"mantissa carry into exponent", 0x3fffc000, 0x4000},
		{"largest bfloat16 is exact", 0x7f7f0000, 0x7f7f},
		{"just below overflow tie stays finite", 0x7f7f7fff, 0x7f7f},
		// 0x7f7f8000 ties between 0x7f7f (odd) and 0x7f80 (inf): rounds to inf.
		{"overflow tie rounds to inf", 0x7f7f8000, 0x7f80},
		{"max float32 overflows to inf", 0x7f7fffff, 0x7f80},
		{"max negative float32 overflows to -inf", 0xff7fffff, 0xff80},
		{"+inf", 0x7f800000, 0x7f80},
		{"-inf", 0xff800000, 0xff80},
		{"smallest float32 subnormal flushes to 0", 0x00000001, 0x0000},
		{"subnormal tie to even zero", 0x00008000, 0x0000},
		{"subnormal tie to even two", 0x00018000, 0x0002},
		{"smallest bfloat16 subnormal exact", 0x00010000, 0x0001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Float32ToBFloat16(math.Float32frombits(tc.in))
			if got != tc.want {
				t.Fatalf("Float32ToBFloat16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
			}
		})
	}
}

// TestFloat32ToBFloat16NaN checks that every NaN stays a quiet NaN of the
// same sign, including a signalling NaN whose payload lies only in the
// low 16 bits (plain truncation would turn it into an infinity).
func TestFloat32ToBFloat16NaN(t *testing.T) {
	tests := []struct {
		name string
		in   uint32
		want uint16
	}{
		{"canonical quiet NaN", 0x7fc00000, 0x7fc0},
		{"negative quiet NaN", 0xffc00000, 0xffc0},
		{"signalling NaN with low payload", 0x7f800001, 0x7fc0},
		{"negative signalling NaN with low payload", 0xff800001, 0xffc0},
		{"all-ones NaN does not carry into sign", 0x7fffffff, 0x7fff},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Float32ToBFloat16(math.Float32frombits(tc.in))
			if got != tc.want {
				t.Fatalf("Float32ToBFloat16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
			}
			if got&0x7f80 != 0x7f80 || got&0x0040 == 0 {
				t.Fatalf("Float32ToBFloat16(%#08x) = %#04x is not a quiet NaN", tc.in, got)
			}
		})
	}
}

func TestBFloat16ToFloat32(t *testing.T) {
	tests := []struct {
		name string
		in   uint16
		want uint32
	}{
		{"one", 0x3f80, 0x3f800000},
		{"-0", 0x8000, 0x80000000},
		{"largest finite", 0x7f7f, 0x7f7f0000},
		{"smallest subnormal", 0x0001, 0x00010000},
		{"+inf", 0x7f80, 0x7f800000},
		{"-inf", 0xff80, 0xff800000},
		{"quiet NaN keeps payload", 0x7fc1, 0x7fc10000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := math.Float32bits(BFloat16ToFloat32(tc.in))
			if got != tc.want {
				t.Fatalf("BFloat16ToFloat32(%#04x) = %#08x, want %#08x", tc.in, got, tc.want)
			}
		})
	}
}

// TestBFloat16RoundTrip checks every bfloat16 pattern widens and narrows
// back to itself (NaNs: to a NaN), the exactness the conversion promises.
func TestBFloat16RoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		f := BFloat16ToFloat32(uint16(h))
		got := Float32ToBFloat16(f)
		if f != f {
			if got&0x7fff <= 0x7f80 || got&0x8000 != uint16(h)&0x8000 {
				t.Fatalf("NaN %#04x came back as %#04x", h, got)
			}
			continue
		}
		if got != uint16(h) {
			t.Fatalf("%#04x came back as %#04x", h, got)
		}
	}
}

func TestFloat32ToFloat16(t *testing.T) {
	tests := []struct {
		name string
		in   uint32
		want uint16
	}{
		{"one", 0x3f800000, 0x3c00},
		{"minus two", 0xc0000000, 0xc000},
		{"+0", 0x00000000, 0x0000},
		{"-0 keeps its sign", 0x80000000, 0x8000},
		// 1 + 2^-11 is halfway between 0x3c00 and 0x3c01: even 0x3c00 wins.
		{"tie rounds down to even", 0x3f801000, 0x3c00},
		// 1 + 3·2^-11 is halfway between 0x3c01 and 0x3c02: even 0x3c02.
		{"tie rounds up to even", 0x3f803000, 0x3c02},
		{"negative tie to even", 0xbf803000, 0xbc02},
		{"one above tie rounds up", 0x3f801001, 0x3c01},
		{"one below tie rounds down", 0x3f800fff, 0x3c00},
		{"largest finite 65504", 0x477fe000, 0x7bff},
		// 65520 is halfway between 65504 (0x7bff, odd) and 65536 (inf).
		{"65520 ties to inf", 0x477ff000, 0x7c00},
		{"just below 65520 stays 65504", 0x477fefff, 0x7bff},
		{"-65520 ties to -inf", 0xc77ff000, 0xfc00},
		{"1e6 overflows", 0x49742400, 0x7c00},
		{"max float32 overflows", 0x7f7fffff, 0x7c00},
		{"+inf", 0x7f800000, 0x7c00},
		{"-inf", 0xff800000, 0xfc00},
		{"smallest normal 2^-14", 0x38800000, 0x0400},
		{"largest subnormal 1023·2^-24", 0x387fc000, 0x03ff},
		// 1023.5·2^-24 ties between 0x03ff (odd) and 0x0400: rounds up
		// into the normal range.
		{"subnormal tie carries into normal", 0x387fe000, 0x0400},
		{"smallest subnormal 2^-24", 0x33800000, 0x0001},
		{"-2^-24", 0xb3800000, 0x8001},
		// 2^-25 is half the smallest subnormal: ties to even 0.
		{"half smallest subnormal ties to 0", 0x33000000, 0x0000},
		{"negative half smallest subnormal ties to -0", 0xb3000000, 0x8000},
		{"just above half smallest subnormal rounds up", 0x33000001, 0x0001},
		{"just below half smallest subnormal rounds to 0", 0x32ffffff, 0x0000},
		// 1.5·2^-24 ties between 1 and 2 subnormal ulps: even 2.
		{"subnormal tie up to even", 0x33c00000, 0x0002},
		// 2.5·2^-24 ties between 2 and 3 ulps: even 2.
		{"subnormal tie down to even", 0x34200000, 0x0002},
		{"2^-26 underflows", 0x32800000, 0x0000},
		{"float32 subnormal underflows", 0x00000001, 0x0000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Float32ToFloat16(math.Float32frombits(tc.in))
			if got != tc.want {
				t.Fatalf("Float32ToFloat16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
			}
		})
	}
}

// TestFloat32ToFloat16NaN checks NaNs become the quiet NaN 0x7e00 with
// their sign, as c10's fp16_ieee_from_fp32_value does.
func TestFloat32ToFloat16NaN(t *testing.T) {
	tests := []struct {
		name string
		in   uint32
		want uint16
	}{
		{"quiet NaN", 0x7fc00000, 0x7e00},
		{"negative quiet NaN", 0xffc00000, 0xfe00},
		{"signalling NaN with low payload", 0x7f800001, 0x7e00},
		{"all-ones NaN", 0x7fffffff, 0x7e00},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Float32ToFloat16(math.Float32frombits(tc.in))
			if got != tc.want {
				t.Fatalf("Float32ToFloat16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
			}
		})
	}
}

func TestFloat16ToFloat32(t *testing.T) {
	tests := []struct {
		name string
		in   uint16
		want uint32
	}{
		{"one", 0x3c00, 0x3f800000},
		{"minus two", 0xc000, 0xc0000000},
		{"+0", 0x0000, 0x00000000},
		{"-0", 0x8000, 0x80000000},
		{"largest finite 65504", 0x7bff, 0x477fe000},
		{"smallest normal 2^-14", 0x0400, 0x38800000},
		{"largest subnormal 1023·2^-24", 0x03ff, 0x387fc000},
		{"smallest subnormal 2^-24", 0x0001, 0x33800000},
		{"negative smallest subnormal", 0x8001, 0xb3800000},
		{"subnormal 3·2^-24", 0x0003, 0x34400000},
		{"+inf", 0x7c00, 0x7f800000},
		{"-inf", 0xfc00, 0xff800000},
		{"quiet NaN", 0x7e00, 0x7fc00000},
		{"negative quiet NaN", 0xfe00, 0xffc00000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := math.Float32bits(Float16ToFloat32(tc.in))
			if got != tc.want {
				t.Fatalf("Float16ToFloat32(%#04x) = %#08x, want %#08x", tc.in, got, tc.want)
			}
		})
	}
	t.Run("signalling NaN stays NaN", func(t *testing.T) {
		got := Float16ToFloat32(0x7c01)
		if got == got {
			t.Fatalf("Float16ToFloat32(0x7c01) = %g, want NaN", got)
		}
	})
}

// TestFloat16RoundTrip checks every float16 pattern widens exactly: it
// narrows back to itself (NaNs: to a NaN of the same sign).
func TestFloat16RoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		f := Float16ToFloat32(uint16(h))
		got := Float32ToFloat16(f)
		if f != f {
			if got&0x7fff <= 0x7c00 || got&0x8000 != uint16(h)&0x8000 {
				t.Fatalf("NaN %#04x came back as %#04x", h, got)
			}
			continue
		}
		if got != uint16(h) {
			t.Fatalf("%#04x came back as %#04x", h, got)
		}
	}
}
