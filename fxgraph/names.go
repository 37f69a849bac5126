package fxgraph

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops"
)

// namespace hands out unique node names with torch.fx's _Namespace
// algorithm: a sanitised candidate, split into base and numeric suffix, with
// a per-base counter so that each new name costs amortised O(1).
//
// A name is usually made with one operation on a large table, the insert
// into used: everything else FX's algorithm asks about a base (its
// counter, which of its suffixes are taken) sits in one small record per
// base, found with one lookup in the much smaller bases table, or none when
// the base is the one the previous name was made from.
type namespace struct {
	// used maps each reserved name to 1 + the id of the node it was made
	// for (0 when unknown). A name stays reserved after its node is erased
	// or renamed, so the owner is only a hint: when every live node owns
	// its own name, names are unique without a further set (see [Verify]).
	// An id rather than a pointer keeps erased nodes collectable, and a
	// clone, whose nodes keep their ids, needs no remapping.
	//
	// Names enter used only through markUsed, which also records a
	// suffixed name in its base's record: the records answer "is base_k
	// taken" without a lookup in used.
	used nameTable
	// nonIdent counts (at least) the keys of used that are not
	// identifiers; while it is 0, a name that is a key needs no identifier
	// check (see Verify).
	nonIdent int
	// bases maps a base (FX's base_count key) to its index in recs.
	bases map[string]int32
	recs  []nameBase
	// last caches the base of the previous create call whose candidate was
	// already taken: a record index + 1 (0: none) and the candidate. Names
	// are never released, so that candidate is still taken.
	last     int32
	lastName string
	// While batch > 0 (see [Graph.BatchNames]), canonical suffixed names
	// go to pending, and their bases' records, instead of used; flush
	// moves them to used. The records still answer "is base_k taken".
	batch   int
	pending []pendingName
	// j is the graph's undo journal while a transaction is open (see
	// [Graph.Begin]), else nil. epoch changes whenever a transaction
	// begins or ends, so a base record saved in one (nameBase.saved) is
	// saved again in the next.
	j     *journal
	epoch uint32
}

// pendingName is a name reserved during a batch, not yet in used.
type pendingName struct {
	name  string
	owner int
}

// nameBase is what the namespace knows about one base: FX's counter, and
// which canonical suffixed names base_k are taken.
type nameBase struct {
	// count is FX's base_count[base].
	count int
	// next is a lower bound on the suffixes worth probing: every base_k
	// with 1 <= k < next is taken. Names are never released, so the bound
	// only grows, and probing for a free base_k skips the taken prefix;
	// this keeps FX's results while making each name amortised O(1) (FX's
	// own loop was quadratic, pytorch/pytorch#176515).
	next int
	// taken has bit k set when the canonical name base_k (k written
	// without leading zeros) is reserved, for k < 64*len(taken); far
	// holds the reserved suffixes beyond that range. The bitmap grows only
	// to suffixes near the ones it holds, so a stray base_1000000 costs a
	// map entry, not a megabit.
	taken []uint64
	far   map[int]struct{}
	// illegal: base is a Python keyword, builtin or FX global.
	illegal bool
	// saved is the namespace's epoch when an open transaction last saved
	// count and next (see namespace.rec).
	saved uint32
}

func newNamespace() namespace {
	return namespace{bases: map[string]int32{}}
}

// clone returns an independent copy of ns, whose used table is complete
// (names pending in a batch of ns are moved to ns's table first).
func (ns *namespace) clone() namespace {
	ns.flush()
	c := namespace{used: ns.used.clone(), nonIdent: ns.nonIdent, bases: maps.Clone(ns.bases), recs: slices.Clone(ns.recs),
		last: ns.last, lastName: ns.lastName, epoch: ns.epoch}
	for i := range c.recs {
		r := &c.recs[i]
		r.taken = slices.Clone(r.taken)
		r.far = maps.Clone(r.far)
	}
	return c
}

// base returns the index in recs of base's record, creating it if needed.
// Pointers into recs are valid until the next call that creates a record.
func (ns *namespace) base(base string) int32 {
	if i, ok := ns.bases[base]; ok {
		return i
	}
	if ns.bases == nil {
		ns.bases = map[string]int32{}
	}
	i := int32(len(ns.recs))
	ns.bases[base] = i
	if ns.j != nil {
		ns.j.nsNewBases = append(ns.j.nsNewBases, base)
	}
	ns.recs = append(ns.recs, nameBase{illegal: illegalNames[base]})
	return i
}

// countOf returns FX's base_count[key] (0 when key never was a base).
func (ns *namespace) countOf(key string) int {
	if i, ok := ns.bases[key]; ok {
		return ns.recs[i].count
	}
	return 0
}

// has reports whether the canonical name base_k is reserved, for k >= 0.
func (b *nameBase) has(k int) bool {
	if w := k >> 6; w < len(b.taken) {
		return b.taken[w]&(1<<(k&63)) != 0
	}
	_, ok := b.far[k]
	return ok
}

// add records the canonical name base_k (k >= 0) as reserved.
func (b *nameBase) add(k int) {
	w := k >> 6
	if w >= len(b.taken) && w <= 2*len(b.taken)+1 {
		// Near the bitmap: grow it, moving the far suffixes it now covers.
		n := max(w+1, 2*len(b.taken))
		b.taken = append(b.taken, make([]uint64, n-len(b.taken))...)
		for f := range b.far {
			if f>>6 < len(b.taken) {
				b.taken[f>>6] |= 1 << (f & 63)
				delete(b.far, f)
			}
		}
	}
	if w < len(b.taken) {
		b.taken[w] |= 1 << (k & 63)
		return
	}
	if b.far == nil {
		b.far = map[int]struct{}{}
	}
	b.far[k] = struct{}{}
}

// suffixTaken reports whether base_k is reserved; b is base's record.
func (ns *namespace) suffixTaken(b *nameBase, base string, k int) bool {
	if k >= 0 {
		return b.has(k)
	}
	// Only an overflowing counter gets here; base_-k is no suffixed name.
	return ns.taken(base + "_" + strconv.Itoa(k))
}

// illegalNames are Python keywords, builtins and FX codegen globals: a
// candidate equal to one of them gets a numeric suffix (sum -> sum_1).
var illegalNames = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields(`False None True and as assert async await break class continue def del elif else
except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield
abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex copyright credits
delattr dict dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help hex
id input int isinstance issubclass iter len license list locals map max memoryview min next object oct open ord pow
print property quit range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip
ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup BlockingIOError BrokenPipeError
BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError
ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning EnvironmentError Exception ExceptionGroup
FileExistsError FileNotFoundError FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning
IndentationError IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError
ModuleNotFoundError NameError NotADirectoryError NotImplemented NotImplementedError OSError OverflowError
PendingDeprecationWarning PermissionError ProcessLookupError RecursionError ReferenceError ResourceWarning
RuntimeError RuntimeWarning StopAsyncIteration StopIteration SyntaxError SyntaxWarning SystemError SystemExit
TabError TimeoutError TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError
UnicodeTranslateError UnicodeWarning UserWarning ValueError Warning ZeroDivisionError
inf nan NoneType torch device fx_pytree pytree`) {
		m[s] = true
	}
	return m
}()

// SnakeCase applies torch.fx's _snake_case: an underscore before each
// uppercase letter that follows a lowercase letter, then lowercase.
func SnakeCase(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' }) < 0 {
		return s
	}
	var b strings.Builder
	prevLower := false
	for _, r := range s {
		isUpper := r >= 'A' && r <= 'Z'
		if isUpper && prevLower {
			b.WriteByte('_')
		}
		prevLower = r >= 'a' && r <= 'z'
		if isUpper {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sanitize replaces each run of characters outside [0-9a-zA-Z_] with "_",
// maps "" to "_unnamed" and prefixes a leading digit with "_".
func sanitize(s string) string {
	if ops.IsIdentifier(s) {
		return s
	}
	var b strings.Builder
	inRun := false
	for _, r := range s {
		ok := r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if ok {
			b.WriteRune(r)
			inRun = false
		} else if !inRun {
			b.WriteByte('_')
			inRun = true
		}
	}
	out := b.String()
	if out == "" {
		return "_unnamed"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

// splitSuffix splits "add_3" into ("add", 3, true), as FX's regex
// ^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$ does: the base must keep at
// least one character, so "_3" has no suffix.
func splitSuffix(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, '_')
	if i <= 0 || i == len(s)-1 {
		return s, 0, false
	}
	for _, r := range s[i+1:] {
		if r < '0' || r > '9' {
			return s, 0, false
		}
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return s, 0, false
	}
	return s[:i], n, true
}

// create returns a fresh name for candidate and reserves it, following
// torch.fx's _Namespace.create_name:
//
//	base, num = split(candidate)
//	if no suffix or candidate used: num = base_count.get(candidate, 0),
//	    and an illegal candidate becomes base_{num+1}
//	while candidate used: num += 1; candidate = base_num
//	base_count[base] = num
func (ns *namespace) create(candidate string, owner int) string {
	candidate = sanitize(candidate)
	if ns.last > 0 && candidate == ns.lastName {
		// The previous taken candidate again (a run of nodes with one
		// target): it has no suffix and is still taken.
		b := ns.rec(ns.last - 1)
		return ns.probe(b, candidate, b.count, owner)
	}
	base, num, hasSuffix := splitSuffix(candidate)
	taken := ns.taken(candidate)
	var b *nameBase
	switch {
	case !hasSuffix && !taken && !illegalNames[base]:
		// FX sets base_count[base] to its value, 0 when base has no
		// record: a record only matters once it holds something.
		if i, ok := ns.bases[base]; ok {
			b = ns.rec(i)
			num = b.count
			break
		}
		ns.markUsed(candidate, owner, nil)
		return candidate
	case !hasSuffix:
		i := ns.base(base) // candidate == base
		b = ns.rec(i)
		num = b.count
		if b.illegal {
			num++
			candidate = base + "_" + strconv.Itoa(num)
			taken = ns.suffixTaken(b, base, num)
		} else if taken {
			ns.last, ns.lastName = i+1, candidate
		}
	case taken:
		// FX keys the counter by the whole candidate here.
		num = ns.countOf(candidate)
		if illegalNames[candidate] {
			num++
			candidate = base + "_" + strconv.Itoa(num)
			taken = ns.taken(candidate)
		}
		b = ns.rec(ns.base(base))
	default:
		b = ns.rec(ns.base(base))
	}
	if taken {
		return ns.probe(b, base, num, owner)
	}
	ns.markUsed(candidate, owner, b)
	b.count = num
	return candidate
}

// probe reserves the first free base_k with k > num (FX's while loop) for
// the node with id owner and makes k base's counter; b is base's record.
func (ns *namespace) probe(b *nameBase, base string, num, owner int) string {
	for {
		num++
		if num < b.next {
			num = b.next
		}
		if !ns.suffixTaken(b, base, num) {
			break
		}
	}
	var arr [48]byte // the name is built here: only the result is allocated
	name := string(strconv.AppendInt(append(append(arr[:0], base...), '_'), int64(num), 10))
	ns.markUsed(name, owner, b)
	b.count = num
	return name
}

// taken reports whether name is reserved.
func (ns *namespace) taken(name string) bool {
	if _, ok := ns.used.get(name); ok {
		return true
	}
	if len(ns.pending) == 0 {
		return false
	}
	// A name pending in a batch is a canonical base_k in its base's record.
	base, num, ok := splitSuffix(name)
	if !ok || canonicalSuffix(name, base) != nil {
		return false
	}
	i, ok := ns.bases[base]
	return ok && ns.recs[i].has(num)
}

// canonicalSuffix returns nil when name, split into base and a numeric
// suffix, writes the suffix without leading zeros (base_7, not base_07),
// so that it is the name the namespace's records stand for.
func canonicalSuffix(name, base string) error {
	if d := name[len(base)+1:]; len(d) > 1 && d[0] == '0' {
		return errNotCanonical
	}
	return nil
}

var errNotCanonical = errors.New("suffix with a leading zero")

// flush moves the names pending in a batch to used.
func (ns *namespace) flush() {
	for _, p := range ns.pending {
		ns.used.set(p.name, p.owner+1)
	}
	clear(ns.pending)
	ns.pending = ns.pending[:0]
}

// markUsed records name as used by the node with id owner. A canonical
// suffixed name base_k is also recorded in base's record (b, when the
// caller has it; nil to look it up), whose probe bound it advances.
func (ns *namespace) markUsed(name string, owner int, b *nameBase) *nameBase {
	if !ops.IsIdentifier(name) {
		ns.nonIdent++ // counting a key twice only costs Verify its shortcut
	}
	if ns.j != nil {
		ns.j.nsNames = append(ns.j.nsNames, name)
	}
	base, num, ok := splitSuffix(name)
	if !ok || canonicalSuffix(name, base) != nil {
		ns.used.set(name, owner+1)
		return nil // no suffix, or not canonical: base_07 is not base_7
	}
	if ns.batch > 0 {
		ns.pending = append(ns.pending, pendingName{name, owner})
	} else {
		ns.used.set(name, owner+1)
	}
	if b == nil {
		b = ns.rec(ns.base(base))
	}
	b.add(num)
	if lo := max(b.next, 1); num == lo {
		for b.has(lo) {
			lo++
		}
		b.next = lo
	}
	return b
}

// reserve marks name as used without deriving a new one (for parsed graphs
// whose names are given) for the node with id owner. It reports false if
// the name was taken.
func (ns *namespace) reserve(name string, owner int) bool {
	if ns.taken(name) {
		return false
	}
	b := ns.markUsed(name, owner, nil)
	if base, num, ok := splitSuffix(name); ok {
		if b == nil { // a suffix with a leading zero
			b = ns.rec(ns.base(base))
		}
		b.count = max(b.count, num)
	}
	return true
}

// TargetToName returns the candidate node name FX derives from a target:
// the overload's __name__ ("quantize_per_tensor.default") or a string
// target with dunders stripped, snake-cased.
func TargetToName(s string) string {
	if strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__") && len(s) > 4 {
		s = s[2 : len(s)-2]
	}
	return SnakeCase(s)
}
