package observers_test

import (
	"fmt"

	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/tensor"
)

func ExampleMinMaxObserver() {
	obs, err := observers.NewMinMaxObserver(observers.Config{DType: observers.QUInt8, QScheme: observers.PerTensorAffine})
	if err != nil {
		panic(err)
	}
	for _, batch := range [][]float32{{-1, 0.5}, {2, 0.25}} {
		if err := obs.Observe(tensor.F32([]int{2}, batch...)); err != nil {
			panic(err)
		}
	}
	qp, err := obs.CalculateQParams()
	if err != nil {
		panic(err)
	}
	scale, _ := tensor.Data[float32](qp.Scale)
	zp, _ := tensor.Data[int32](qp.ZeroPoint)
	lo, hi := obs.MinMax()
	fmt.Printf("min %g max %g\n", lo, hi)
	fmt.Printf("scale %g zero_point %d (%s)\n", scale[0], zp[0], qp.ZeroPoint.DType())
	// Output:
	// min -1 max 2
	// scale 0.011764706 zero_point 85 (int32)
}
