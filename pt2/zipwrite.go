package pt2

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// record is one entry of a PT2 archive, named relative to the root folder.
type record struct {
	name string
	data []byte
}

// checksums returns the CRC-32 (IEEE) of each record's data.
func checksums(recs []record) []uint32 {
	out := make([]uint32, len(recs))
	for i, r := range recs {
		out[i] = crc32.ChecksumIEEE(r.data)
	}
	return out
}

// fieldAlignment is PyTorchStreamWriter's kFieldAlignment: record data
// starts on a 64-byte boundary.
const fieldAlignment = 64

// writeContainer writes records as caffe2's PyTorchStreamWriter (miniz in
// ZIP64 mode) lays them out, byte for byte:
//
//   - each local header has version 0, flags 0x0808 (data descriptor,
//     UTF-8), method 0 (stored), time and date 0, and zero CRC and sizes;
//   - its extra field is the "FB" padding block, filled with 'Z', sized so
//     the data starts at a multiple of 64 (detail::getPadding);
//   - the data is followed by a 16-byte data descriptor (signature, CRC,
//     32-bit sizes);
//   - the central directory repeats version 0, flags 0x0808 and no
//     attributes, and the archive ends with a ZIP64 end record (version
//     made by 0x031e, needed 45), its locator and the classic end record.
//
// Archives of 4 GiB or more would need ZIP64 extra fields in each header;
// they are refused.
// crcs holds the records' checksums (see checksums), computed once for
// the serialization id and the headers.
func writeContainer(w io.Writer, root string, recs []record, crcs []uint32) error {
	type entry struct {
		name    string // below root/
		nameLen int    // of root/name, as the headers write it
		size    uint32
		offset  uint32
		pad     int
	}
	appendName := func(b []byte, e entry) []byte {
		return append(append(append(b, root...), '/'), e.name...)
	}
	// First the layout, so that an archive over the limits is refused
	// before anything is written; then each record streams to w, its
	// data as it is (no copy of the archive is built in memory).
	entries := make([]entry, 0, len(recs))
	pos, cdLen := 0, 0
	for _, r := range recs {
		nameLen := len(root) + 1 + len(r.name)
		if nameLen > math.MaxUint16 {
			return fmt.Errorf("record %q: name longer than %d bytes", r.name, math.MaxUint16)
		}
		start := pos + 30 + nameLen + 4
		pad := (fieldAlignment - start%fieldAlignment) % fieldAlignment
		end := start + pad + len(r.data) + 16
		if int64(end) >= math.MaxUint32 {
			return fmt.Errorf("record %q: archives of 4 GiB or more are not supported", r.name)
		}
		entries = append(entries, entry{name: r.name, nameLen: nameLen, size: uint32(len(r.data)), offset: uint32(pos), pad: pad})
		pos = end
		cdLen += 46 + nameLen
	}
	if int64(pos+cdLen) >= math.MaxUint32 || len(entries) >= math.MaxUint16 {
		return fmt.Errorf("archives of 4 GiB or %d records or more are not supported", math.MaxUint16)
	}
	// one buffer for each local header (at most 97 bytes and the name)
	// and then the central directory and end records
	out := make([]byte, 0, cdLen+256)
	for i, r := range recs {
		e := entries[i]
		out = out[:0]
		out = binary.LittleEndian.AppendUint32(out, 0x04034b50)
		out = binary.LittleEndian.AppendUint16(out, 0)      // version needed
		out = binary.LittleEndian.AppendUint16(out, 0x0808) // flags
		out = binary.LittleEndian.AppendUint16(out, 0)      // method: stored
		out = binary.LittleEndian.AppendUint32(out, 0)      // time, date
		out = binary.LittleEndian.AppendUint32(out, 0)      // crc (in the descriptor)
		out = binary.LittleEndian.AppendUint32(out, 0)      // compressed size
		out = binary.LittleEndian.AppendUint32(out, 0)      // uncompressed size
		out = binary.LittleEndian.AppendUint16(out, uint16(e.nameLen))
		out = binary.LittleEndian.AppendUint16(out, uint16(4+e.pad))
		out = appendName(out, e)
		out = append(out, 'F', 'B')
		out = binary.LittleEndian.AppendUint16(out, uint16(e.pad))
		for range e.pad {
			out = append(out, 'Z')
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		if len(r.data) > 0 {
			if _, err := w.Write(r.data); err != nil {
				return err
			}
		}
		out = out[:0]
		out = binary.LittleEndian.AppendUint32(out, 0x08074b50)
		out = binary.LittleEndian.AppendUint32(out, crcs[i])
		out = binary.LittleEndian.AppendUint32(out, uint32(len(r.data)))
		out = binary.LittleEndian.AppendUint32(out, uint32(len(r.data)))
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	out = out[:0]
	cdStart := pos
	for i, e := range entries {
		out = binary.LittleEndian.AppendUint32(out, 0x02014b50)
		out = binary.LittleEndian.AppendUint16(out, 0)      // version made by
		out = binary.LittleEndian.AppendUint16(out, 0)      // version needed
		out = binary.LittleEndian.AppendUint16(out, 0x0808) // flags
		out = binary.LittleEndian.AppendUint16(out, 0)      // method
		out = binary.LittleEndian.AppendUint32(out, 0)      // time, date
		out = binary.LittleEndian.AppendUint32(out, crcs[i])
		out = binary.LittleEndian.AppendUint32(out, e.size)
		out = binary.LittleEndian.AppendUint32(out, e.size)
		out = binary.LittleEndian.AppendUint16(out, uint16(e.nameLen))
		out = binary.LittleEndian.AppendUint16(out, 0) // extra
		out = binary.LittleEndian.AppendUint16(out, 0) // comment
		out = binary.LittleEndian.AppendUint16(out, 0) // disk
		out = binary.LittleEndian.AppendUint16(out, 0) // internal attributes
		out = binary.LittleEndian.AppendUint32(out, 0) // external attributes
		out = binary.LittleEndian.AppendUint32(out, e.offset)
		out = appendName(out, e)
	}
	cdSize := len(out)
	z64 := cdStart + cdSize
	out = binary.LittleEndian.AppendUint32(out, 0x06064b50)
	out = binary.LittleEndian.AppendUint64(out, 44)     // size of the rest of the record
	out = binary.LittleEndian.AppendUint16(out, 0x031e) // made by: unix, 3.0
	out = binary.LittleEndian.AppendUint16(out, 45)     // needed: 4.5
	out = binary.LittleEndian.AppendUint32(out, 0)      // this disk
	out = binary.LittleEndian.AppendUint32(out, 0)      // disk with the directory
	out = binary.LittleEndian.AppendUint64(out, uint64(len(entries)))
	out = binary.LittleEndian.AppendUint64(out, uint64(len(entries)))
	out = binary.LittleEndian.AppendUint64(out, uint64(cdSize))
	out = binary.LittleEndian.AppendUint64(out, uint64(cdStart))
	out = binary.LittleEndian.AppendUint32(out, 0x07064b50)
	out = binary.LittleEndian.AppendUint32(out, 0) // disk with the ZIP64 end record
	out = binary.LittleEndian.AppendUint64(out, uint64(z64))
	out = binary.LittleEndian.AppendUint32(out, 1) // number of disks
	out = binary.LittleEndian.AppendUint32(out, 0x06054b50)
	out = binary.LittleEndian.AppendUint16(out, 0)
	out = binary.LittleEndian.AppendUint16(out, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(entries)))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(entries)))
	out = binary.LittleEndian.AppendUint32(out, uint32(cdSize))
	out = binary.LittleEndian.AppendUint32(out, uint32(cdStart))
	out = binary.LittleEndian.AppendUint16(out, 0) // comment length
	_, err := w.Write(out)
	return err
}
