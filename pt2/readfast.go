package pt2

import (
	"math"
	"math/bits"
	"strings"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// This file holds fast-mode decoders (see readpath.go) for the shapes
// that make up most of a program: a TensorMeta of int sizes on the CPU,
// {"as_int": N} lists, {"name": ...} arguments. Each reads a value of a
// document already known to be valid JSON in one pass without building
// objects or paths, and gives up (ok false) on anything else, for the
// general decoder to read it: a fast decoder accepts only what the
// general one accepts and returns what it returns.

// cursor reads a valid JSON value.
type cursor struct {
	b []byte
	i int
}

func (c *cursor) space() { c.i = skipSpace(c.b, c.i) }

// eat consumes ch, after spaces, when it comes next.
func (c *cursor) eat(ch byte) bool {
	c.space()
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return true
	}
	return false
}

// key reads an object key of plain bytes and its colon.
func (c *cursor) key() ([]byte, bool) {
	k, ok := c.str()
	return k, ok && c.eat(':')
}

// str reads a plain string, its bytes between the quotes.
func (c *cursor) str() ([]byte, bool) {
	c.space()
	if c.i >= len(c.b) || c.b[c.i] != '"' {
		return nil, false
	}
	end, plain := plainString(c.b, c.i)
	s := c.b[c.i+1 : end-1]
	c.i = end
	return s, plain
}

// int reads an integer of at most 18 digits, without fraction or
// exponent (what fits an int64 for sure).
func (c *cursor) int() (int64, bool) {
	c.space()
	neg := c.i < len(c.b) && c.b[c.i] == '-'
	if neg {
		c.i++
	}
	start := c.i
	var n int64
	for c.i < len(c.b) && isDigit(c.b[c.i]) {
		n = n*10 + int64(c.b[c.i]-'0')
		c.i++
	}
	if d := c.i - start; d == 0 || d > 18 {
		return 0, false
	}
	if c.i < len(c.b) && (c.b[c.i] == '.' || c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// value reads any value, its bytes.
func (c *cursor) value() []byte {
	c.space()
	start := c.i
	c.i = skipValue(c.b, c.i)
	return c.b[start:c.i:c.i]
}

// lit reads the literal word (true, false, null).
func (c *cursor) lit(word string) bool {
	c.space()
	if len(c.b)-c.i >= len(word) && string(c.b[c.i:c.i+len(word)]) == word {
		c.i += len(word)
		return true
	}
	return false
}

// bool reads true or false.
func (c *cursor) bool() (v, ok bool) {
	if c.lit("true") {
		return true, true
	}
	return false, c.lit("false")
}

// asInt reads {"as_int": N}.
func (c *cursor) asInt() (int64, bool) {
	if !c.eat('{') {
		return 0, false
	}
	if k, ok := c.key(); !ok || string(k) != "as_int" {
		return 0, false
	}
	n, ok := c.int()
	return n, ok && c.eat('}')
}

// asInts appends the elements of a list [{"as_int": N}, ...] to dst.
func (c *cursor) asInts(dst []int64) ([]int64, bool) {
	if !c.eat('[') {
		return nil, false
	}
	if c.eat(']') {
		return dst, true
	}
	for {
		n, ok := c.asInt()
		if !ok {
			return nil, false
		}
		dst = append(dst, n)
		if c.eat(']') {
			return dst, true
		}
		if !c.eat(',') {
			return nil, false
		}
	}
}

// Keys of a TensorMeta, as bits of a seen-set.
const (
	tmDType = 1 << iota
	tmSizes
	tmRequiresGrad
	tmDevice
	tmStrides
	tmOffset
	tmLayout
)

// fastTensorMeta is decodeTensorMeta for a TensorMeta whose sizes,
// strides and storage offset are ints, on a device without an index.
func fastTensorMeta(raw []byte) (m tensorMeta, ok bool) {
	c := cursor{b: raw}
	if !c.eat('{') || c.eat('}') {
		return m, false
	}
	var seen int
	var code int64
	var buf []int64
	nSizes := 0
	m.DeviceType = "cpu"
	m.Layout = int64(ops.LayoutStrided)
	for {
		k, ok := c.key()
		if !ok {
			return m, false
		}
		var bit int
		switch string(k) {
		case "dtype":
			bit = tmDType
			code, ok = c.int()
		case "sizes":
			bit = tmSizes
			if seen&tmStrides != 0 {
				return m, false // strides first: not the usual order
			}
			buf, ok = c.asInts(make([]int64, 0, 8))
			nSizes = len(buf)
		case "requires_grad":
			bit = tmRequiresGrad
			m.RequiresGrad, ok = c.bool()
		case "device":
			bit = tmDevice
			m.DeviceType, ok = c.device()
		case "strides":
			bit = tmStrides
			if seen&tmSizes == 0 {
				return m, false
			}
			buf, ok = c.asInts(buf)
		case "storage_offset":
			bit = tmOffset
			c.space()
			if c.i < len(c.b) && c.b[c.i] == '{' {
				m.StorageOffset, ok = c.asInt()
			} else {
				m.StorageOffset, ok = c.int()
			}
		case "layout":
			bit = tmLayout
			m.Layout, ok = c.int()
		default:
			return m, false
		}
		if !ok || seen&bit != 0 {
			return m, false
		}
		seen |= bit
		if c.eat('}') {
			break
		}
		if !c.eat(',') {
			return m, false
		}
	}
	if seen&(tmDType|tmSizes|tmStrides) != tmDType|tmSizes|tmStrides {
		return m, false
	}
	d, known := tensor.DTypeFromSerde(int(code))
	if !known || int64(int(code)) != code {
		return m, false
	}
	m.DType = d
	m.Sizes, m.Strides = buf[:nSizes:nSizes], buf[nSizes:]
	if len(m.Strides) != len(m.Sizes) || m.Layout != int64(ops.LayoutStrided) {
		return m, false
	}
	n := uint64(1)
	for _, s := range m.Sizes {
		if s < 0 {
			return m, false
		}
		if s > 0 {
			hi, lo := bits.Mul64(n, uint64(s))
			if hi != 0 || lo > math.MaxInt {
				return m, false // let ShapeInts judge
			}
			n = lo
		}
	}
	return m, true
}

// device reads a Device {"type": ..., "index": null} (index absent or
// null), giving its type.
func (c *cursor) device() (string, bool) {
	if !c.eat('{') || c.eat('}') {
		return "", false
	}
	var typ []byte
	seen := 0
	for {
		k, ok := c.key()
		if !ok {
			return "", false
		}
		bit := 0
		switch string(k) {
		case "type":
			bit = 1
			typ, ok = c.str()
		case "index":
			bit = 2
			ok = c.lit("null")
		default:
			return "", false
		}
		if !ok || seen&bit != 0 {
			return "", false
		}
		seen |= bit
		if c.eat('}') {
			break
		}
		if !c.eat(',') {
			return "", false
		}
	}
	if seen&1 == 0 {
		return "", false
	}
	if string(typ) == "cpu" {
		return "cpu", true
	}
	return string(typ), true
}

// fastNameArg is decodeNameArg for {"name": "<plain>"}: the name's bytes.
func fastNameArg(raw []byte) ([]byte, bool) {
	c := cursor{b: raw}
	if !c.eat('{') {
		return nil, false
	}
	if k, ok := c.key(); !ok || string(k) != "name" {
		return nil, false
	}
	s, ok := c.str()
	return s, ok && c.eat('}')
}

// fastInput splits a node input {"name": ..., "arg": ..., "kind": ...}
// (any order, kind absent or null allowed, no other key) into its name,
// its arg's JSON and its kind (0 when absent).
func (b *builder) fastInput(raw []byte) (name string, arg []byte, kind int64, ok bool) {
	c := cursor{b: raw}
	if !c.eat('{') || c.eat('}') {
		return "", nil, 0, false
	}
	seen := 0
	for {
		k, ok := c.key()
		if !ok {
			return "", nil, 0, false
		}
		bit := 0
		switch string(k) {
		case "name":
			bit = 1
			var s []byte
			if s, ok = c.str(); ok {
				name = b.intern(s)
			}
		case "arg":
			bit = 2
			arg = c.value()
			ok = string(arg) != "null"
		case "kind":
			bit = 4
			c.space()
			if !c.lit("null") {
				kind, ok = c.int()
			}
		default:
			return "", nil, 0, false
		}
		if !ok || seen&bit != 0 {
			return "", nil, 0, false
		}
		seen |= bit
		if c.eat('}') {
			break
		}
		if !c.eat(',') {
			return "", nil, 0, false
		}
	}
	return name, arg, kind, seen&3 == 3
}

// intern returns s as a string, one string per distinct text (argument
// names repeat on every node).
func (b *builder) intern(s []byte) string {
	if v, ok := b.strs[string(s)]; ok {
		return v
	}
	v := string(s)
	if b.strs == nil {
		b.strs = map[string]string{}
	}
	b.strs[v] = v
	return v
}

// unescapeASCII decodes the valid JSON string raw (exactly one string)
// when it is ASCII with no \u escape, as encoding/json decodes it; ok is
// false for anything else (non-ASCII bytes, \u escapes: encoding/json's
// rules for those are left to it).
func unescapeASCII(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	var out strings.Builder
	escaped := false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c >= 0x80 {
			return "", false
		}
		if c != '\\' {
			if escaped {
				out.WriteByte(c)
			}
			continue
		}
		if !escaped {
			escaped = true
			out.Grow(len(in))
			out.Write(in[:i])
		}
		i++
		if i >= len(in) {
			return "", false
		}
		switch in[i] {
		case '"', '\\', '/':
			out.WriteByte(in[i])
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		default:
			return "", false
		}
	}
	if !escaped {
		return string(in), true
	}
	return out.String(), true
}

// fastDecode is payloadEntry.decode for the usual entry: path_name,
// is_param and use_pickle (bools, optional) and a tensor_meta that
// fastTensorMeta reads, no other key; it reports whether it read one.
func (pe *payloadEntry) fastDecode() bool {
	c := cursor{b: pe.raw}
	if !c.eat('{') || c.eat('}') {
		return false
	}
	var e payloadEntry
	seen := 0
	for {
		k, ok := c.key()
		if !ok {
			return false
		}
		bit := 0
		switch string(k) {
		case "path_name":
			bit = 1
			var s []byte
			if s, ok = c.str(); ok {
				e.pathName = string(s)
			}
		case "is_param":
			bit = 2
			e.isParam, ok = c.bool()
		case "use_pickle":
			bit = 4
			e.usePickle, ok = c.bool()
		case "tensor_meta":
			bit = 8
			e.meta, ok = fastTensorMeta(c.value())
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if c.eat('}') {
			break
		}
		if !c.eat(',') {
			return false
		}
	}
	if seen&1 == 0 || (!e.usePickle && seen&8 == 0) {
		return false
	}
	if e.usePickle {
		e.meta = tensorMeta{}
	}
	pe.pathName, pe.isParam, pe.usePickle, pe.meta = e.pathName, e.isParam, e.usePickle, e.meta
	return true
}
