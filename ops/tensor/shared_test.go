package tensor

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSharedBytesMatchCopies: for every dtype, FromBytesShared reads the
// values FromBytes reads from the same bytes, without a copy, and
// StorageBytes gives back the bytes Bytes writes.
func TestSharedBytesMatchCopies(t *testing.T) {
	if !hostLittleEndian {
		t.Skip("big-endian machine: the shared paths are off")
	}
	for d := range DType(64) {
		if !d.Valid() || d.Size() == 0 {
			continue
		}
		t.Run(d.String(), func(t *testing.T) {
			n := 6
			buf := make([]byte, n*d.Size()+16)
			raw := buf[16 : 16+n*d.Size()] // 16-aligned inside a fresh allocation
			for i := range raw {
				raw[i] = byte(i*37 + 1)
				if d == Bool {
					raw[i] = byte(i % 2)
				}
			}
			want, err := FromBytes(d, []int{n}, nil, 0, raw, false)
			require.NoError(t, err)
			got, ok := FromBytesShared(d, raw)
			require.True(t, ok)
			assert.Equal(t, want.Bytes(), got.Bytes())
			assert.True(t, bytes.Equal(raw, got.Bytes()))
			sb, ok := StorageBytes(got)
			require.True(t, ok)
			assert.True(t, bytes.Equal(raw, sb))
			assert.Same(t, &raw[0], &sb[0], "no copy")
			sb2, ok := StorageBytes(want)
			require.True(t, ok)
			assert.True(t, bytes.Equal(want.Bytes(), sb2))
		})
	}
	if d := Float32; true {
		raw := make([]byte, 12)
		_, ok := FromBytesShared(d, raw[1:9])
		assert.False(t, ok, "misaligned")
		_, ok = FromBytesShared(d, raw[:6])
		assert.False(t, ok, "not a whole number of elements")
	}
	_, ok := FromBytesShared(Bool, []byte{0, 1, 2})
	assert.False(t, ok, "bool byte 2")
}
