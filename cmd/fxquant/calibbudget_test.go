package main

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "1GiB": 1 << 30, "512MiB": 512 << 20, "64K": 64 << 10, "2g": 2 << 30, "3 MB": 3 << 20} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.5G", "G", "9999999999T"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("parseBytes(%q) succeeded", bad)
		}
	}
}

// Random calibration data is checked against the budget before anything
// is drawn: [2^40, 32] used to allocate until the runtime died, and
// [2^63-1, 32] panicked in make.
func TestRandomBatchesBudget(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("sizes of 64-bit ints")
	}
	shl := func(n uint) int { return 1 << n }
	for _, c := range []struct {
		shape []int
		want  string
	}{
		{[]int{shl(40), 32}, "input x: f32[1099511627776, 32]: 4 random batches of 140737488355328 bytes each bring calibration data to 562949953421312 bytes, more than the budget of 1073741824 (1GiB; --calibration-budget)"},
		{[]int{math.MaxInt, 32}, "input x: f32[9223372036854775807, 32]: tensor: too large: shape [9223372036854775807 32] has more than"},
		{[]int{shl(28), 16}, "input x: f32[268435456, 16]: 4 random batches"},
	} {
		_, err := randomBatchesWithin([]inputSpec{{name: "x", dtype: tensor.Float32, shape: c.shape}}, 4, 1, 1<<30)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("shape %v: error %v, want %q", c.shape, err, c.want)
		}
	}
	// exactly at the budget: 4 batches of 2x8 float32 = 256 bytes
	b, err := randomBatchesWithin([]inputSpec{{name: "x", dtype: tensor.Float32, shape: []int{2, 8}}}, 4, 1, 256)
	if err != nil || len(b) != 4 {
		t.Fatalf("256 bytes within a 256-byte budget: %d batches, %v", len(b), err)
	}
	if _, err := randomBatchesWithin([]inputSpec{{name: "x", dtype: tensor.Float32, shape: []int{2, 8}}}, 4, 1, 255); err == nil {
		t.Error("256 bytes accepted within a 255-byte budget")
	}
}

// The random values are drawn as before the budget: normal floats then
// integers in [0, 10), one generator draw per element in order.
func TestRandomBatchesValues(t *testing.T) {
	specs := []inputSpec{{name: "x", dtype: tensor.Float32, shape: []int{3}}, {name: "i", dtype: tensor.Int64, shape: []int{2}}}
	b, err := randomBatches(specs, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tensor.Data[float32](b[0][0])
	i, _ := tensor.Data[int64](b[0][1])
	r := newRand(7)
	for k := range 3 {
		if want := float32(r.NormFloat64()); x[k] != want {
			t.Errorf("x[%d] = %v, want %v", k, x[k], want)
		}
	}
	for k := range 2 {
		if want := int64(r.IntN(10)); i[k] != want {
			t.Errorf("i[%d] = %v, want %v", k, i[k], want)
		}
	}
}

func TestCheckFinite(t *testing.T) {
	specs := []inputSpec{{name: "x", dtype: tensor.Float32, shape: []int{2, 3}}}
	ok := tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	bad := tensor.F32([]int{2, 3}, 1, 2, 3, 4, float32(math.Inf(-1)), 6)
	if err := checkFinite("c.json", [][]*tensor.Tensor{{ok}}, specs); err != nil {
		t.Fatal(err)
	}
	err := checkFinite("c.json", [][]*tensor.Tensor{{ok}, {bad}}, specs)
	// element 4 of a 2x3 tensor is [1 1]
	if want := `c.json: batch 1, input "x": element [1 1] is -Inf; calibration data must be finite`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// A file over the reader's total limit is refused before it is read; a
// sparse file makes the size without using the disk.
func TestInputSizeChecked(t *testing.T) {
	name := sparseFile(t, "huge.json", "", pt2.DefaultMaxTotalBytes+1)
	_, err := loadFile(name, false)
	if want := "huge.json: file is 4294967297 bytes, more than the 4294967296 fxquant reads"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// A text or JSON file over the JSON limit is refused before it is read.
func TestTextInputSizeChecked(t *testing.T) {
	name := sparseFile(t, "big.json", "{", pt2.DefaultMaxJSONBytes+1)
	_, err := loadFile(name, false)
	if want := "big.json: file is 268435457 bytes and not a zip, more than the 268435456 fxquant reads as JSON or text"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// sparseFile creates a file called name in a new temporary directory,
// starting with head and size bytes long, as a sparse file that takes no
// disk space; it skips the test where the file system has none.
func sparseFile(t *testing.T, name, head string, size int64) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Skip("no sparse files here:", err)
	}
	return path
}
