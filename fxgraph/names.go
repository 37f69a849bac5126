package fxgraph

import (
	"maps"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops"
)

// namespace hands out unique node names with torch.fx's _Namespace
// algorithm: a sanitised candidate, split into base and numeric suffix, with
// a per-base counter so that each new name costs amortised O(1).
type namespace struct {
	// used maps each reserved name to 1 + the id of the node it was made
	// for (0 when unknown). A name stays reserved after its node is erased
	// or renamed, so the owner is only a hint: when every live node owns
	// its own name, names are unique without a further set (see [Verify]).
	// An id rather than a pointer keeps erased nodes collectable, and a
	// clone, whose nodes keep their ids, needs no remapping.
	used      map[string]int
	baseCount map[string]int
	// next[base] is a lower bound on the suffixes worth probing: every
	// base_k with 1 <= k < next[base] is used. Names are never released, so
	// the bound only grows, and probing for a free base_k skips the used
	// prefix; this keeps FX's results while making each name amortised O(1)
	// (FX's own loop was quadratic, pytorch/pytorch#176515).
	next map[string]int
}

func newNamespace() namespace {
	return namespace{used: map[string]int{}, baseCount: map[string]int{}, next: map[string]int{}}
}

// clone returns an independent copy of ns.
func (ns *namespace) clone() namespace {
	return namespace{used: maps.Clone(ns.used), baseCount: maps.Clone(ns.baseCount), next: maps.Clone(ns.next)}
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
	base, num, hasSuffix := splitSuffix(candidate)
	if !hasSuffix || ns.taken(candidate) {
		num = ns.baseCount[candidate]
		if illegalNames[candidate] {
			num++
			candidate = base + "_" + strconv.Itoa(num)
		}
	}
	if ns.taken(candidate) {
		// Probe base_num in a buffer: only the free name is allocated.
		var arr [48]byte
		buf := arr[:0]
		for {
			num++
			if lo := ns.next[base]; num < lo {
				num = lo
			}
			buf = strconv.AppendInt(append(append(buf[:0], base...), '_'), int64(num), 10)
			if _, taken := ns.used[string(buf)]; !taken {
				break
			}
		}
		candidate = string(buf)
	}
	ns.markUsed(candidate, owner)
	ns.baseCount[base] = num
	return candidate
}

// taken reports whether name is reserved.
func (ns *namespace) taken(name string) bool {
	_, ok := ns.used[name]
	return ok
}

// markUsed records name as used by the node with id owner and advances
// the probe bound of its base.
func (ns *namespace) markUsed(name string, owner int) {
	ns.used[name] = owner + 1
	base, num, ok := splitSuffix(name)
	if !ok {
		return
	}
	lo := max(ns.next[base], 1)
	// name is base_lo written canonically (no leading zero in the suffix).
	if num != lo || name[len(base)+1] == '0' {
		return
	}
	var arr [48]byte
	buf := arr[:0]
	for {
		buf = strconv.AppendInt(append(append(buf[:0], base...), '_'), int64(lo), 10)
		if _, taken := ns.used[string(buf)]; !taken {
			break
		}
		lo++
	}
	ns.next[base] = lo
}

// reserve marks name as used without deriving a new one (for parsed graphs
// whose names are given) for the node with id owner. It reports false if
// the name was taken.
func (ns *namespace) reserve(name string, owner int) bool {
	if ns.taken(name) {
		return false
	}
	ns.markUsed(name, owner)
	if base, num, ok := splitSuffix(name); ok && num > ns.baseCount[base] {
		ns.baseCount[base] = num
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
