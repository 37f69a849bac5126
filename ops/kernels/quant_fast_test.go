package kernels

import (
	"slices"
	"sync"
	"testing"
)

// forRuns must cover exactly the (start, end, qparam) runs of chunks, and
// a row handed to fnVec must be the runs of single elements with qparams
// k, k+1, ...
func TestForRunsMatchesChunks(t *testing.T) {
	cases := []struct{ shape, block []int }{
		{[]int{7}, []int{7}},
		{[]int{6}, []int{1}},
		{[]int{4, 64}, []int{1, 32}},
		{[]int{4, 64}, []int{4, 1}},
		{[]int{4, 64}, []int{1, 1}},
		{[]int{3, 5, 8}, []int{1, 5, 8}},
		{[]int{3, 4, 8}, []int{3, 2, 4}},
		{[]int{2, 3, 4, 6}, []int{1, 3, 2, 3}},
		{[]int{2, 3, 4, 6}, []int{2, 1, 4, 1}},
		{[]int{300, 512}, []int{1, 512}}, // many rows: split across goroutines
		{[]int{1 << 17}, []int{1 << 17}}, // one qparam, split by ranges
		{[]int{2, 0, 4}, []int{1, 1, 4}},
	}
	type run struct{ a, b, k int }
	for _, c := range cases {
		lay, err := newQLayout(c.shape, c.block)
		if err != nil {
			t.Fatalf("%v/%v: %v", c.shape, c.block, err)
		}
		var want []run
		lay.chunks(func(a, b, k int) { want = append(want, run{a, b, k}) })
		for _, vec := range []bool{false, true} {
			var mu sync.Mutex
			var got []run
			fn := func(a, b, k int) {
				mu.Lock()
				got = append(got, run{a, b, k})
				mu.Unlock()
			}
			var fnVec func(a, b, k int)
			if vec {
				fnVec = func(a, b, k int) {
					for i := a; i < b; i++ {
						fn(i, i+1, k+i-a)
					}
				}
			}
			lay.forRuns(fn, fnVec)
			cmp := func(x, y run) int { return x.a - y.a }
			slices.SortFunc(got, cmp)
			if c.shape[0] == 1<<17 {
				// one qparam: the pieces of the range must tile it
				for i := 1; i < len(got); i++ {
					if got[i].a != got[i-1].b || got[i].k != 0 {
						t.Fatalf("%v: pieces %v do not tile the range", c.shape, got)
					}
				}
				if len(got) == 0 || got[0].a != 0 || got[len(got)-1].b != 1<<17 {
					t.Fatalf("%v: pieces %v do not cover the range", c.shape, got)
				}
				continue
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%v/%v vec=%v: runs %v, want %v", c.shape, c.block, vec, got, want)
			}
		}
	}
}
