package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Binary's plain loops against the element formulas written out here,
// with broadcasting, scalars, alpha and NaN.
func TestBinaryLoopsMatchFormulas(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	fv := make([]float32, 6*5)
	for i := range fv {
		fv[i] = float32(r.NormFloat64())
		if i%7 == 0 {
			fv[i] = float32(math.NaN())
		}
	}
	fa := tensor.F32([]int{6, 5}, fv...)
	fb := tensor.F32([]int{5}, fv[5:10]...) // broadcasts over rows
	iv := make([]int32, 30)
	for i := range iv {
		iv[i] = int32(r.IntN(2000) - 1000)
	}
	ia := tensor.MustFromData(tensor.Int32, []int{6, 5}, iv)
	ib := tensor.MustFromData(tensor.Int32, []int{6, 1}, iv[:6])
	nan := float32(math.NaN())
	fop := map[BinaryOp]func(x, y float32) float32{
		OpAdd: func(x, y float32) float32 { return x + y },
		OpSub: func(x, y float32) float32 { return x - y },
		OpMul: func(x, y float32) float32 { return x * y },
		OpDiv: func(x, y float32) float32 { return x / y },
		OpMaximum: func(x, y float32) float32 {
			if x != x || y != y {
				return nan
			}
			return max(x, y)
		},
		OpMinimum: func(x, y float32) float32 {
			if x != x || y != y {
				return nan
			}
			return min(x, y)
		},
	}
	for op, f := range fop {
		for _, bOp := range []Operand{T(fb), S(2.5)} {
			got, err := Binary(op, T(fa), bOp, nil)
			if err != nil {
				t.Fatal(err)
			}
			gv := must(tensor.Data[float32](got))
			for i := range gv {
				y := float32(2.5)
				if bOp.T != nil {
					y = fv[5+i%5]
				}
				if want := f(fv[i], y); math.Float32bits(gv[i]) != math.Float32bits(want) {
					t.Fatalf("%s element %d: %g, want %g", binaryOpNames[op], i, gv[i], want)
				}
			}
		}
	}
	iop := map[BinaryOp]func(x, y int64) int64{
		OpAdd:     func(x, y int64) int64 { return x + 3*y },
		OpSub:     func(x, y int64) int64 { return x - 3*y },
		OpMul:     func(x, y int64) int64 { return x * y },
		OpMaximum: func(x, y int64) int64 { return max(x, y) },
		OpMinimum: func(x, y int64) int64 { return min(x, y) },
	}
	for op, f := range iop { // alpha 3 scales add and sub only
		got, err := Binary(op, T(ia), T(ib), int64(3))
		if err != nil {
			t.Fatal(err)
		}
		if got.DType() != tensor.Int32 {
			t.Fatalf("%s: dtype %s", binaryOpNames[op], got.DType())
		}
		gv := must(tensor.Data[int32](got))
		for i := range gv {
			x, y := int64(iv[i]), int64(iv[i/5])
			if want := int32(f(x, y)); gv[i] != want {
				t.Fatalf("%s element %d: %d, want %d", binaryOpNames[op], i, gv[i], want)
			}
		}
	}
}
