package pt2

import (
	"fmt"
	"os"
	"strings"
)

// checkFileSize refuses, before reading it, a file larger than the total
// the reader may read (Limits.MaxTotalBytes).
func checkFileSize(name string, opts *Options) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	l := opts.limits()
	if limit := limitOr(l.MaxTotalBytes, DefaultMaxTotalBytes); st.Size() > limit {
		return fmt.Errorf("%s: %w: file is %d bytes, more than %d (MaxTotalBytes)", name, ErrLimit, st.Size(), limit)
	}
	return nil
}

// checkByteOrder checks the byteorder record. PyTorch 2.14's PT2 loader
// (torch/export/pt2_archive/_package.py, _build_file_map) never reads
// it: get_storage_from_record gives the payload's bytes in the machine's
// order. A file marked "big" would therefore mean little-endian data to
// PyTorch on every machine it runs on, while its record says otherwise,
// so it is refused at its record rather than guessed at.
func checkByteOrder(z *zipRecords) error {
	bo, ok, err := z.read("byteorder")
	if err != nil || !ok {
		return err
	}
	switch string(bo) {
	case "little":
		return nil
	case "big":
		return fmt.Errorf("%w: record byteorder is \"big\": PyTorch 2.14 ignores this record and reads payloads in the machine's byte order, so the weights are ambiguous; fxquant reads little-endian archives only", ErrUnsupported)
	}
	return fmt.Errorf("%w: record byteorder is %q, want \"little\"", ErrArchive, bo)
}

// checkOffset checks a payload's storage offset (in elements); the end
// of the view is checked against the storage by tensor.NewView.
func checkOffset(off int64) error {
	if off < 0 {
		return fmt.Errorf("tensor_meta.storage_offset %d is negative", off)
	}
	if off > maxRecord {
		return fmt.Errorf("tensor_meta.storage_offset %d is past any storage (more than %d elements)", off, maxRecord)
	}
	return nil
}

// checkStoredData refuses a PT2 archive in which a parameter, buffer or
// constant of the signature has no payload: torch.export.load builds its
// state dict from the payload configs, and a lifted input without one
// has no value. Payloads kept as pickles (p.Unreadable) are exempt.
func (p *Program) checkStoredData() error {
	pickled := map[string]bool{}
	for _, u := range p.Unreadable {
		if u.FQN != "" {
			pickled[u.FQN] = true
		} else if strings.HasPrefix(u.Record, "data/weights/") || strings.HasPrefix(u.Record, "data/constants/") {
			return nil // a pickled payload without an FQN may hold any of them
		}
	}
	for _, s := range p.Signature.Inputs {
		var kind string
		switch s.Kind {
		case Parameter, Buffer:
			kind = "weights"
			if s.Kind == Buffer && !s.Persistent {
				kind = "constants"
			}
		case TensorConstant:
			kind = "constants"
		default:
			continue
		}
		if _, ok := p.Graph.Attr(s.Target); ok || pickled[s.Target] {
			continue
		}
		return fmt.Errorf("%w: %s %q (placeholder %q) has no stored data: no entry for it in data/%s/%s_%s_config.json",
			ErrArchive, s.Kind, s.Target, s.Name, kind, p.ModelName, kind)
	}
	return nil
}

// checkJSONSize refuses a bare program JSON document over MaxJSONBytes
// before it is decoded (decoding takes several times its size).
func checkJSONSize(n int, opts *Options) error {
	l := opts.limits()
	if limit := limitOr(l.MaxJSONBytes, DefaultMaxJSONBytes); int64(n) > limit {
		return fmt.Errorf("%w: program JSON is %d bytes, more than %d (MaxJSONBytes)", ErrLimit, n, limit)
	}
	return nil
}
