package tensor

// Fast paths of Float64s and Int64s for contiguous tensors of plain
// numeric storage: one conversion loop instead of an Indices closure call
// per element (the qparam tensors of groupwise quantization hold hundreds
// of thousands of values). Other layouts and dtypes return ok = false and
// take the general path.

func convertSlice[D int64 | float64, S int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | float32 | float64](src []S) []D {
	out := make([]D, len(src))
	for i, v := range src {
		out[i] = D(v)
	}
	return out
}

func (t *Tensor) fastFloat64s() ([]float64, bool) {
	if !t.IsContiguous() {
		return nil, false
	}
	switch s := t.data.(type) {
	case []float32:
		return convertSlice[float64](s), true
	case []float64:
		return convertSlice[float64](s), true
	case []int8:
		return convertSlice[float64](s), true
	case []int16:
		return convertSlice[float64](s), true
	case []int32:
		return convertSlice[float64](s), true
	case []int64:
		return convertSlice[float64](s), true
	case []uint8:
		if t.dtype == UInt8 || t.dtype == UInt4 {
			return convertSlice[float64](s), true
		}
	}
	return nil, false
}

func (t *Tensor) fastInt64s() ([]int64, bool) {
	if !t.IsContiguous() {
		return nil, false
	}
	switch s := t.data.(type) {
	case []int8:
		return convertSlice[int64](s), true
	case []int16:
		return convertSlice[int64](s), true
	case []int32:
		return convertSlice[int64](s), true
	case []int64:
		return convertSlice[int64](s), true
	case []uint8:
		if t.dtype == UInt8 || t.dtype == UInt4 {
			return convertSlice[int64](s), true
		}
	}
	return nil, false
}
