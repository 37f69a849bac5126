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
func writeContainer(w io.Writer, root string, recs []record) error {
	type entry struct {
		name   string
		crc    uint32
		size   uint32
		offset uint32
	}
	var out []byte
	entries := make([]entry, 0, len(recs))
	for _, r := range recs {
		name := root + "/" + r.name
		if len(name) > math.MaxUint16 {
			return fmt.Errorf("record %q: name longer than %d bytes", r.name, math.MaxUint16)
		}
		offset := len(out)
		start := offset + 30 + len(name) + 4
		pad := (fieldAlignment - start%fieldAlignment) % fieldAlignment
		end := start + pad + len(r.data) + 16
		if int64(end) >= math.MaxUint32 {
			return fmt.Errorf("record %q: archives of 4 GiB or more are not supported", r.name)
		}
		crc := crc32.ChecksumIEEE(r.data)
		out = binary.LittleEndian.AppendUint32(out, 0x04034b50)
		out = binary.LittleEndian.AppendUint16(out, 0)      // version needed
		out = binary.LittleEndian.AppendUint16(out, 0x0808) // flags
		out = binary.LittleEndian.AppendUint16(out, 0)      // method: stored
		out = binary.LittleEndian.AppendUint32(out, 0)      // time, date
		out = binary.LittleEndian.AppendUint32(out, 0)      // crc (in the descriptor)
		out = binary.LittleEndian.AppendUint32(out, 0)      // compressed size
		out = binary.LittleEndian.AppendUint32(out, 0)      // uncompressed size
		out = binary.LittleEndian.AppendUint16(out, uint16(len(name)))
		out = binary.LittleEndian.AppendUint16(out, uint16(4+pad))
		out = append(out, name...)
		out = append(out, 'F', 'B')
		out = binary.LittleEndian.AppendUint16(out, uint16(pad))
		for range pad {
			out = append(out, 'Z')
		}
		out = append(out, r.data...)
		out = binary.LittleEndian.AppendUint32(out, 0x08074b50)
		out = binary.LittleEndian.AppendUint32(out, crc)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(r.data)))
		out = binary.LittleEndian.AppendUint32(out, uint32(len(r.data)))
		entries = append(entries, entry{name: name, crc: crc, size: uint32(len(r.data)), offset: uint32(offset)})
	}
	cdStart := len(out)
	for _, e := range entries {
		out = binary.LittleEndian.AppendUint32(out, 0x02014b50)
		out = binary.LittleEndian.AppendUint16(out, 0)      // version made by
		out = binary.LittleEndian.AppendUint16(out, 0)      // version needed
		out = binary.LittleEndian.AppendUint16(out, 0x0808) // flags
		out = binary.LittleEndian.AppendUint16(out, 0)      // method
		out = binary.LittleEndian.AppendUint32(out, 0)      // time, date
		out = binary.LittleEndian.AppendUint32(out, e.crc)
		out = binary.LittleEndian.AppendUint32(out, e.size)
		out = binary.LittleEndian.AppendUint32(out, e.size)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(e.name)))
		out = binary.LittleEndian.AppendUint16(out, 0) // extra
		out = binary.LittleEndian.AppendUint16(out, 0) // comment
		out = binary.LittleEndian.AppendUint16(out, 0) // disk
		out = binary.LittleEndian.AppendUint16(out, 0) // internal attributes
		out = binary.LittleEndian.AppendUint32(out, 0) // external attributes
		out = binary.LittleEndian.AppendUint32(out, e.offset)
		out = append(out, e.name...)
	}
	cdSize := len(out) - cdStart
	if int64(len(out)) >= math.MaxUint32 || len(entries) >= math.MaxUint16 {
		return fmt.Errorf("archives of 4 GiB or %d records or more are not supported", math.MaxUint16)
	}
	z64 := len(out)
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
