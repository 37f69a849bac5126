package tensor

import "fmt"

// category ranks dtypes for promotion: bool < integer < float < complex.
func category(d DType) int {
	switch {
	case d == Bool:
		return 0
	case d.IsInteger():
		return 1
	case d.IsFloat():
		return 2
	case d.IsComplex():
		return 3
	}
	return -1
}

// PromoteTypes returns PyTorch's promote_types(a, b) for two dtypes (both
// tensors with dimensions): the smallest type both convert to without
// leaving their category. It fails for combinations PyTorch rejects
// (float8 mixes, uint64 with a signed type).
func PromoteTypes(a, b DType) (DType, error) {
	if a == b {
		return a, nil
	}
	if a == Unknown {
		return b, nil
	}
	if b == Unknown {
		return a, nil
	}
	ca, cb := category(a), category(b)
	if ca != cb {
		if ca < cb {
			a, b, ca, cb = b, a, cb, ca
		}
		// a has the higher category.
		if ca == 3 && cb == 2 {
			return promoteComplexFloat(a, b), nil
		}
		return a, nil
	}
	switch ca {
	case 0:
		return Bool, nil
	case 1:
		return promoteInts(a, b)
	case 2:
		return promoteFloats(a, b)
	case 3:
		if a.Size() >= b.Size() {
			return a, nil
		}
		return b, nil
	}
	return Unknown, fmt.Errorf("cannot promote %s and %s", a, b)
}

func promoteComplexFloat(c, f DType) DType {
	if f == Float64 {
		return Complex128
	}
	return c
}

func promoteFloats(a, b DType) (DType, error) {
	rank := func(d DType) int {
		switch d {
		case Float64:
			return 3
		case Float32:
			return 2
		case Float16, BFloat16:
			return 1
		}
		return 0 // float8
	}
	ra, rb := rank(a), rank(b)
	switch {
	case ra == 0 || rb == 0:
		return Unknown, fmt.Errorf("promotion of %s and %s is not defined", a, b)
	case ra == 1 && rb == 1:
		return Float32, nil // f16 with bf16
	case ra >= rb:
		return a, nil
	}
	return b, nil
}

func promoteInts(a, b DType) (DType, error) {
	sa, sb := a.IsSigned(), b.IsSigned()
	if sa == sb {
		if a.Size() >= b.Size() {
			return a, nil
		}
		return b, nil
	}
	s, u := a, b
	if !sa {
		s, u = b, a
	}
	if s.Size() > u.Size() {
		return s, nil
	}
	switch u.Size() {
	case 1:
		return Int16, nil
	case 2:
		return Int32, nil
	case 4:
		return Int64, nil
	}
	return Unknown, fmt.Errorf("promotion of %s and %s is not defined", a, b)
}
