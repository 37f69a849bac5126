package fxgraph

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// refNamespace is torch.fx's _Namespace written as plainly as FX writes
// it (a set of used names, base_count, and a probe loop that tries each
// suffix in turn), to check the namespace's faster bookkeeping against.
type refNamespace struct {
	used      map[string]bool
	baseCount map[string]int
}

func newRefNamespace() *refNamespace {
	return &refNamespace{used: map[string]bool{}, baseCount: map[string]int{}}
}

func (r *refNamespace) clone() *refNamespace {
	c := newRefNamespace()
	for k, v := range r.used {
		c.used[k] = v
	}
	for k, v := range r.baseCount {
		c.baseCount[k] = v
	}
	return c
}

func (r *refNamespace) create(candidate string) string {
	candidate = sanitize(candidate)
	base, num, hasSuffix := splitSuffix(candidate)
	if !hasSuffix || r.used[candidate] {
		num = r.baseCount[candidate]
		if illegalNames[candidate] {
			num++
			candidate = base + "_" + strconv.Itoa(num)
		}
	}
	for r.used[candidate] {
		num++
		candidate = base + "_" + strconv.Itoa(num)
	}
	r.used[candidate] = true
	r.baseCount[base] = num
	return candidate
}

func (r *refNamespace) reserve(name string) bool {
	if r.used[name] {
		return false
	}
	r.used[name] = true
	if base, num, ok := splitSuffix(name); ok && num > r.baseCount[base] {
		r.baseCount[base] = num
	}
	return true
}

// TestNamespaceMatchesFX runs random sequences of create and reserve
// calls (and clones) on the namespace and on refNamespace and requires the
// same names and answers. The candidates repeat bases with and without
// suffixes, leading zeros, illegal names, suffixes far beyond the others
// and runs of one candidate, which exercise the probe bound, the suffix
// bitmap and its far set, and the cache of the last base.
func TestNamespaceMatchesFX(t *testing.T) {
	candidates := []string{
		"add", "add", "add", "add_1", "add_2", "add_3", "add_01", "add_0", "add_70", "add_130", "add_1000000",
		"add_1_2", "add_1_1", "sum", "sum_1", "sum_2", "for", "x", "x_5", "_3", "_", "a-b", "", "1abc",
		"qlinear", "qlinear", "qlinear", "qlinear_64", "qlinear_128", "w0", "b0", "add_99999999999999999999",
	}
	for seed := range uint64(40) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			ns, ref := newNamespace(), newRefNamespace()
			for step := range 3000 {
				c := candidates[rng.IntN(len(candidates))]
				switch op := rng.IntN(20); {
				case op == 0:
					// Continue on a clone; the original must not change.
					before := len(ns.used)
					cl := ns.clone()
					cl.create("add", step)
					require.Equal(t, before, len(ns.used), "step %d: clone shares the used table", step)
					ns, ref = cl, ref.clone()
					ref.create("add")
				case op < 4:
					name := sanitize(c)
					if rng.IntN(2) == 0 {
						name += "_" + strconv.Itoa(rng.IntN(300))
					}
					require.Equal(t, ref.reserve(name), ns.reserve(name, step), "step %d: reserve(%q)", step, name)
				default:
					require.Equal(t, ref.create(c), ns.create(c, step), "step %d: create(%q)", step, c)
				}
			}
			require.Equal(t, len(ref.used), len(ns.used))
		})
	}
}

// TestNamespaceRunOfOneCandidate checks the common case the namespace is
// tuned for, one candidate many times over, against FX's names written out
// by hand: add, add_1, add_2, ...; reserving add_202 moves the counter of
// add to 202, so add_201 is passed over; a taken suffixed candidate probes
// from base_count of the whole candidate (0), so it finds that gap, and
// its counter then becomes add's.
func TestNamespaceRunOfOneCandidate(t *testing.T) {
	ns := newNamespace()
	require.Equal(t, "add", ns.create("add", 0))
	for k := 1; k <= 200; k++ {
		require.Equal(t, "add_"+strconv.Itoa(k), ns.create("add", k))
	}
	require.True(t, ns.reserve("add_202", 300))
	require.Equal(t, "add_203", ns.create("add", 301))
	require.Equal(t, "add_204", ns.create("add", 302))
	require.True(t, ns.reserve("add_5000", 303))
	require.Equal(t, "add_201", ns.create("add_5000", 304))
	require.Equal(t, "add_205", ns.create("add", 305))
}
