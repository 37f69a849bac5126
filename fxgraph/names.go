package fxgraph

import (
	"strconv"
	"strings"
)

// namespace hands out unique node names with torch.fx's _Namespace
// algorithm: a sanitised candidate, split into base and numeric suffix, with
// a per-base counter so that each new name costs amortised O(1).
type namespace struct {
	used      map[string]bool
	baseCount map[string]int
}

func newNamespace() namespace {
	return namespace{used: map[string]bool{}, baseCount: map[string]int{}}
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
// (.*)_(\d+)$ does.
func splitSuffix(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, '_')
	if i < 0 || i == len(s)-1 {
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
// torch.fx's _Namespace.create_name.
func (ns *namespace) create(candidate string) string {
	candidate = sanitize(candidate)
	base, num, hasSuffix := splitSuffix(candidate)
	if hasSuffix {
		candidate = base + "_" + strconv.Itoa(num)
	}
	if num == 0 {
		num = ns.baseCount[base]
	}
	for ns.used[candidate] || illegalNames[candidate] {
		num++
		candidate = base + "_" + strconv.Itoa(num)
	}
	ns.used[candidate] = true
	ns.baseCount[base] = num
	return candidate
}

// reserve marks name as used without deriving a new one (for parsed graphs
// whose names are given). It reports false if the name was taken.
func (ns *namespace) reserve(name string) bool {
	if ns.used[name] {
		return false
	}
	ns.used[name] = true
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
