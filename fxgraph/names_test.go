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
	for _, batched := range []bool{false, true} {
		t.Run(fmt.Sprintf("batched=%v", batched), func(t *testing.T) { testNamespaceMatchesFX(t, batched) })
	}
}

// testNamespaceMatchesFX is TestNamespaceMatchesFX, optionally with the
// namespace in batch mode, its used table filled at the end (and by
// clones, which must be complete).
func testNamespaceMatchesFX(t *testing.T, batched bool) {
	candidates := []string{
		"add", "add", "add", "add_1", "add_2", "add_3", "add_01", "add_0", "add_70", "add_130", "add_1000000",
		"add_1_2", "add_1_1", "sum", "sum_1", "sum_2", "for", "x", "x_5", "_3", "_", "a-b", "", "1abc",
		"qlinear", "qlinear", "qlinear", "qlinear_64", "qlinear_128", "w0", "b0", "add_99999999999999999999",
	}
	for seed := range uint64(40) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			ns, ref := newNamespace(), newRefNamespace()
			owners := map[string]int{} // every name handed out and its owner
			if batched {
				ns.batch = 1
			}
			for step := range 3000 {
				c := candidates[rng.IntN(len(candidates))]
				switch op := rng.IntN(20); {
				case op == 0:
					// Continue on a clone; the original must not change.
					cl := ns.clone()
					before := ns.used.len()
					cl.create("add", step)
					require.Equal(t, before, ns.used.len(), "step %d: clone shares the used table", step)
					ns, ref = cl, ref.clone()
					owners[ref.create("add")] = step
					if batched {
						ns.batch = 1
					}
				case op < 4:
					name := sanitize(c)
					if rng.IntN(2) == 0 {
						name += "_" + strconv.Itoa(rng.IntN(300))
					}
					ok := ref.reserve(name)
					require.Equal(t, ok, ns.reserve(name, step), "step %d: reserve(%q)", step, name)
					if ok {
						owners[name] = step
					}
				default:
					name := ref.create(c)
					require.Equal(t, name, ns.create(c, step), "step %d: create(%q)", step, c)
					owners[name] = step
				}
			}
			ns.batch = 0
			ns.flush()
			require.Equal(t, len(ref.used), ns.used.len())
			for name, owner := range owners {
				got, _ := ns.used.get(name)
				require.Equal(t, owner+1, got, "owner of %q", name)
			}
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
