package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// defaultCalibrationBudget is the default of run's --calibration-budget:
// the bytes the random calibration batches may take in all.
const defaultCalibrationBudget int64 = 1 << 30

// byteSize is a flag.Value holding a byte count written as a number with
// an optional binary unit: 1073741824, 1GiB, 512MiB, 64K.
type byteSize int64

func (b *byteSize) String() string { return formatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	v, err := parseBytes(s)
	if err != nil {
		return err
	}
	*b = byteSize(v)
	return nil
}

// parseBytes reads a byte count: digits, then optionally K, M, G or T
// (powers of 1024, with or without "iB" or "B").
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	unit := int64(1)
	upper := strings.ToUpper(t)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
		{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(upper, u.suffix) {
			t, unit = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("byte count %q: want a non-negative number with an optional unit (K, M, G, T; powers of 1024)", s)
	}
	if n > (1<<63-1)/unit {
		return 0, fmt.Errorf("byte count %q is too large", s)
	}
	return n * unit, nil
}

func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.name)
		}
	}
	return strconv.FormatInt(n, 10)
}

// checkCalibrationBudget refuses random calibration batches that would
// take more than budget bytes in all, naming the first input over it.
func checkCalibrationBudget(specs []inputSpec, n int, budget int64) error {
	var total int64
	for _, s := range specs {
		b, err := tensor.CheckedBytes(s.dtype, s.shape)
		if err != nil {
			return fmt.Errorf("input %s: %w", s, err)
		}
		if b > 0 && int64(n) > (1<<63-1-total)/b {
			return fmt.Errorf("input %s: %d random batches overflow the byte count", s, n)
		}
		total += int64(n) * b
		if total > budget {
			return fmt.Errorf("input %s: %d random batch%s of %d bytes each bring calibration data to %d bytes, more than the budget of %d (%s; --calibration-budget)",
				s, n, pluralES(n), b, total, budget, formatBytes(budget))
		}
	}
	return nil
}

// randomTensor draws one tensor of spec s from r: standard normal floats,
// integers uniform in [0, 10), drawn in element order straight into the
// tensor's storage.
func randomTensor(r *rand.Rand, s inputSpec) (*tensor.Tensor, error) {
	n, err := tensor.CheckedNumel(s.shape)
	if err != nil {
		return nil, err
	}
	draw := func(int) float64 { return float64(r.IntN(10)) }
	if s.dtype.IsFloat() {
		draw = func(int) float64 { return r.NormFloat64() }
	}
	return inputTensor(s.dtype, s.shape, n, draw)
}

// newRand is the generator of the random calibration batches for seed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

// checkFinite refuses calibration batches holding NaN or an infinity,
// naming the batch, the input and the element: observers would turn
// them into a NaN or infinite scale reported against a node downstream.
// Each batch holds one tensor per spec (loadBatches checks the count).
func checkFinite(file string, batches [][]*tensor.Tensor, specs []inputSpec) error {
	for b, batch := range batches {
		for i, t := range batch {
			if !t.DType().IsFloat() {
				continue
			}
			vals, err := t.Float64s()
			if err != nil {
				return err
			}
			for k, v := range vals {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("%s: batch %d, input %q: element %v is %v; calibration data must be finite", file, b, specs[i].name, tensor.Unravel(k, t.Shape()), v)
				}
			}
		}
	}
	return nil
}
