package tensor

// Stride returns the stride of dimension i, in elements; negative i counts
// from the end. Unlike Strides it does not copy.
func (t *Tensor) Stride(i int) int {
	if i < 0 {
		i += len(t.strides)
	}
	return t.strides[i]
}
