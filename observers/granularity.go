package observers

import (
	"fmt"
	"strings"
)

// MappingType is torchao's MappingType: how the quant range maps onto
// the observed range.
type MappingType uint8

// The mapping types. The zero value is invalid (it must be given).
const (
	Symmetric MappingType = iota + 1
	SymmetricNoClippingErr
	Asymmetric
)

// String returns the enum name torchao passes to its ops, e.g.
// "ASYMMETRIC".
func (m MappingType) String() string {
	switch m {
	case Symmetric:
		return "SYMMETRIC"
	case SymmetricNoClippingErr:
		return "SYMMETRIC_NO_CLIPPING_ERR"
	case Asymmetric:
		return "ASYMMETRIC"
	}
	return fmt.Sprintf("MappingType(%d)", uint8(m))
}

// ParseMappingType parses "ASYMMETRIC", "MappingType.ASYMMETRIC", ...
func ParseMappingType(s string) (MappingType, error) {
	name := strings.TrimPrefix(strings.TrimSpace(s), "MappingType.")
	for _, m := range []MappingType{Symmetric, SymmetricNoClippingErr, Asymmetric} {
		if m.String() == name {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown mapping type %q", ErrConfig, s)
}

// ZeroPointDomain is torchao's ZeroPointDomain. The zero value is INT,
// torchao's default.
type ZeroPointDomain uint8

// The zero-point domains.
const (
	ZeroPointDomainInt ZeroPointDomain = iota
	ZeroPointDomainFloat
	ZeroPointDomainNone
)

// String returns "INT", "FLOAT" or "NONE".
func (z ZeroPointDomain) String() string {
	switch z {
	case ZeroPointDomainInt:
		return "INT"
	case ZeroPointDomainFloat:
		return "FLOAT"
	case ZeroPointDomainNone:
		return "NONE"
	}
	return fmt.Sprintf("ZeroPointDomain(%d)", uint8(z))
}

// Granularity says which elements share one scale and zero point; it
// turns an input shape into torchao's block_size ([BlockSize]).
type Granularity interface {
	// String prints the granularity as torchao's repr does, e.g.
	// "PerGroup(group_size=16)".
	String() string
	isGranularity()
}

// PerTensor: one scale for the whole tensor (block_size = the shape).
type PerTensor struct{}

// PerAxis: one scale per slice along Axis (block_size = the shape with
// Axis set to 1). A negative Axis counts from the end.
type PerAxis struct {
	Axis int // the axis with one scale per slice; negative counts from the end
}

// PerGroup: one scale per GroupSize consecutive elements of the last dim
// (block_size = (1, ..., 1, GroupSize)); the last dim must be divisible.
type PerGroup struct {
	GroupSize int // elements of the last dim that share one scale
}

// PerToken: one scale per row of the last dim (block_size = (1, ..., 1,
// d_last)).
type PerToken struct{}

// PerRow: one scale per row along Dim (block_size all 1 except Dim, which
// is that dim's size). torchao's default is Dim -1; use [NewPerRow] for it.
type PerRow struct {
	Dim int // the dim that is kept whole in each block; negative counts from the end
}

// NewPerRow returns PerRow{Dim: -1}, torchao's PerRow().
func NewPerRow() PerRow { return PerRow{Dim: -1} }

func (PerTensor) isGranularity() {}
func (PerAxis) isGranularity()   {}
func (PerGroup) isGranularity()  {}
func (PerToken) isGranularity()  {}
func (PerRow) isGranularity()    {}

// String returns "PerTensor()".
func (PerTensor) String() string { return "PerTensor()" }

// String returns "PerAxis(axis=N)".
func (g PerAxis) String() string { return fmt.Sprintf("PerAxis(axis=%d)", g.Axis) }

// String returns "PerGroup(group_size=N)".
func (g PerGroup) String() string { return fmt.Sprintf("PerGroup(group_size=%d)", g.GroupSize) }

// String returns "PerToken()".
func (PerToken) String() string { return "PerToken()" }

// String returns "PerRow(dim=N)".
func (g PerRow) String() string { return fmt.Sprintf("PerRow(dim=%d)", g.Dim) }

func normAxis(a, n int) (int, bool) {
	if a < 0 {
		a += n
	}
	return a, a >= 0 && a < n
}

// BlockSize returns torchao's get_block_size(shape, g).
func BlockSize(shape []int, g Granularity) ([]int, error) {
	n := len(shape)
	switch g := g.(type) {
	case PerTensor:
		return append([]int(nil), shape...), nil
	case PerAxis:
		a, ok := normAxis(g.Axis, n)
		if !ok {
			return nil, fmt.Errorf("%w: %s: axis out of range for shape %v", ErrInput, g, shape)
		}
		b := append([]int(nil), shape...)
		b[a] = 1
		return b, nil
	case PerGroup:
		if n == 0 {
			return nil, fmt.Errorf("%w: %s needs at least 1 dim, got a 0-dim input", ErrInput, g)
		}
		if g.GroupSize <= 0 || shape[n-1]%g.GroupSize != 0 {
			return nil, fmt.Errorf("%w: %s: last dim %d of shape %v is not a multiple of the group size", ErrInput, g, shape[n-1], shape)
		}
		b := make([]int, n)
		for i := range b {
			b[i] = 1
		}
		b[n-1] = g.GroupSize
		return b, nil
	case PerToken:
		if n == 0 {
			return nil, fmt.Errorf("%w: %s needs at least 1 dim, got a 0-dim input", ErrInput, g)
		}
		b := make([]int, n)
		for i := range b {
			b[i] = 1
		}
		b[n-1] = shape[n-1]
		return b, nil
	case PerRow:
		a, ok := normAxis(g.Dim, n)
		if !ok {
			return nil, fmt.Errorf("%w: %s: dim out of range for shape %v", ErrInput, g, shape)
		}
		b := make([]int, n)
		for i := range b {
			b[i] = 1
		}
		b[a] = shape[a]
		return b, nil
	case nil:
		return nil, fmt.Errorf("%w: granularity is None", ErrConfig)
	}
	return nil, fmt.Errorf("%w: unsupported granularity %s", ErrConfig, g)
}

// reductionParams is torchao's _get_reduction_params: the shape the input
// is viewed as, and which of its dims are reduced.
func reductionParams(block, size []int) (shape []int, reduced []bool, err error) {
	if len(block) != len(size) {
		return nil, nil, fmt.Errorf("%w: block_size %v does not match the rank of shape %v", ErrInput, block, size)
	}
	for i := range block {
		if block[i] < 1 {
			return nil, nil, fmt.Errorf("%w: block_size %v: want sizes >= 1", ErrInput, block)
		}
		if block[i] != size[i] && block[i] > 1 {
			if size[i]%block[i] != 0 {
				return nil, nil, fmt.Errorf("%w: dim %d of shape %v is not divisible by block size %d", ErrInput, i, size, block[i])
			}
			shape = append(shape, size[i]/block[i], block[i])
			reduced = append(reduced, false, true)
		} else {
			shape = append(shape, size[i])
			reduced = append(reduced, block[i] != 1)
		}
	}
	return shape, reduced, nil
}

// blockMinMax returns amin/amax of v (row-major over size) over the blocks
// of block, with keepdim=False: NaN propagates, and the first element wins
// ties.
func blockMinMax(v []float32, size, block []int) (mins, maxs []float32, outShape []int, err error) {
	shape, reduced, err := reductionParams(block, size)
	if err != nil {
		return nil, nil, nil, err
	}
	ostride := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if !reduced[i] {
			ostride[i] = acc
			acc *= shape[i]
		}
	}
	for i := range shape {
		if !reduced[i] {
			outShape = append(outShape, shape[i])
		}
	}
	if outShape == nil {
		outShape = []int{}
	}
	mins = make([]float32, acc)
	maxs = make([]float32, acc)
	seen := make([]bool, acc)
	idx := make([]int, len(shape))
	o := 0
	for _, e := range v {
		switch {
		case !seen[o]:
			mins[o], maxs[o], seen[o] = e, e, true
		case mins[o] != mins[o]:
		case e != e:
			mins[o], maxs[o] = e, e
		default:
			if e < mins[o] {
				mins[o] = e
			}
			if e > maxs[o] {
				maxs[o] = e
			}
		}
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			o += ostride[d]
			if idx[d] < shape[d] {
				break
			}
			o -= ostride[d] * shape[d]
			idx[d] = 0
		}
	}
	return mins, maxs, outShape, nil
}
