package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// npyMagic starts every .npy file.
var npyMagic = []byte("\x93NUMPY")

// npyDTypes maps the supported little-endian descr strings to dtypes.
var npyDTypes = map[string]tensor.DType{
	"<f4": tensor.Float32,
	"<f8": tensor.Float64,
	"|i1": tensor.Int8,
	"|u1": tensor.UInt8,
	"<i4": tensor.Int32,
	"<i8": tensor.Int64,
}

// readNPY decodes a NumPy .npy file (format versions 1, 2 and 3) holding a
// C-ordered array of little-endian float32, float64, int8, uint8, int32 or
// int64. Errors say which part of the header or data is wrong.
// maxNPYElems bounds an .npy array's element count, so that the count
// times an element's size cannot overflow an int.
const maxNPYElems = min(1<<40, math.MaxInt/8)

func readNPY(data []byte) (*tensor.Tensor, error) {
	if !bytes.HasPrefix(data, npyMagic) {
		return nil, errors.New("npy: not a .npy file (no \\x93NUMPY magic)")
	}
	if len(data) < 8 {
		return nil, errors.New("npy: truncated header")
	}
	major := data[6]
	var hlen, off int
	switch major {
	case 1:
		if len(data) < 10 {
			return nil, errors.New("npy: truncated header")
		}
		hlen, off = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case 2, 3:
		if len(data) < 12 {
			return nil, errors.New("npy: truncated header")
		}
		hlen, off = int(binary.LittleEndian.Uint32(data[8:12])), 12
	default:
		return nil, fmt.Errorf("npy: format version %d.%d, want 1.x, 2.x or 3.x", major, data[7])
	}
	if hlen < 0 || off+hlen > len(data) {
		return nil, fmt.Errorf("npy: header of %d bytes runs past the end of the file (%d bytes)", hlen, len(data))
	}
	descr, fortran, shape, err := parseNPYHeader(string(data[off : off+hlen]))
	if err != nil {
		return nil, fmt.Errorf("npy: header: %w", err)
	}
	dt, ok := npyDTypes[descr]
	if !ok {
		return nil, fmt.Errorf("npy: dtype %q is not supported; want one of <f4, <f8, |i1, |u1, <i4, <i8", descr)
	}
	if fortran {
		return nil, errors.New("npy: fortran_order is True; want a C-ordered array")
	}
	n := 1
	for _, d := range shape {
		if d < 0 || (d > 0 && n > maxNPYElems/d) {
			return nil, fmt.Errorf("npy: shape %v is too large", shape)
		}
		n *= d
	}
	body := data[off+hlen:]
	if want := n * dt.Size(); len(body) != want {
		return nil, fmt.Errorf("npy: data holds %d bytes, want %d for shape %v of %s", len(body), want, shape, dt)
	}
	t, err := tensor.FromBytes(dt, shape, tensor.ContiguousStrides(shape), 0, body, false)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return t, nil
}

// parseNPYHeader reads the Python dict literal of a .npy header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	h = strings.TrimSpace(h)
	if !strings.HasPrefix(h, "{") || !strings.HasSuffix(h, "}") {
		return "", false, nil, fmt.Errorf("want a dict literal, got %q", h)
	}
	body := h[1 : len(h)-1]
	seen := map[string]bool{}
	for len(strings.TrimSpace(body)) > 0 {
		body = strings.TrimSpace(body)
		key, rest, ok := cutQuoted(body)
		if !ok {
			return "", false, nil, fmt.Errorf("want a quoted key at %q", body)
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, ":") {
			return "", false, nil, fmt.Errorf("want ':' after key %q", key)
		}
		rest = strings.TrimSpace(rest[1:])
		var val string
		if strings.HasPrefix(rest, "(") {
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return "", false, nil, fmt.Errorf("key %q: unterminated tuple", key)
			}
			val, rest = rest[:end+1], rest[end+1:]
		} else if q, r, ok := cutQuoted(rest); ok {
			val, rest = "'"+q+"'", r
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			val, rest = strings.TrimSpace(rest[:end]), rest[end:]
		}
		rest = strings.TrimSpace(rest)
		rest = strings.TrimPrefix(rest, ",")
		body = rest
		seen[key] = true
		switch key {
		case "descr":
			if !strings.HasPrefix(val, "'") {
				return "", false, nil, fmt.Errorf("descr: want a string, got %s", val)
			}
			descr = strings.Trim(val, "'")
		case "fortran_order":
			switch val {
			case "True":
				fortran = true
			case "False":
			default:
				return "", false, nil, fmt.Errorf("fortran_order: want True or False, got %s", val)
			}
		case "shape":
			if !strings.HasPrefix(val, "(") {
				return "", false, nil, fmt.Errorf("shape: want a tuple, got %s", val)
			}
			shape = []int{}
			for _, f := range strings.Split(strings.Trim(val, "()"), ",") {
				f = strings.TrimSpace(f)
				if f == "" {
					continue
				}
				d, err := strconv.Atoi(strings.TrimSuffix(f, "L"))
				if err != nil || d < 0 {
					return "", false, nil, fmt.Errorf("shape: bad dimension %q", f)
				}
				shape = append(shape, d)
			}
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return "", false, nil, fmt.Errorf("missing key %q", k)
		}
	}
	return descr, fortran, shape, nil
}

// cutQuoted reads a single- or double-quoted string without escapes at the
// start of s and returns its content and the rest.
func cutQuoted(s string) (string, string, bool) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", s, false
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", s, false
	}
	return s[1 : 1+end], s[2+end:], true
}
