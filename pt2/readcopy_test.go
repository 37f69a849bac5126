package pt2

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIntactStoredAgreesWithZip: every record of the fixture archives
// (stored, with data descriptors, as PyTorch writes them) is read by the
// shortcut, with the bytes archive/zip reads.
func TestIntactStoredAgreesWithZip(t *testing.T) {
	files, err := filepath.Glob("../tests/testdata/pt2e/*.pt2")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		z := &zipRecords{data: data}
		for _, f := range zr.File {
			if f.UncompressedSize64 == 0 {
				continue
			}
			v, ok := z.intactStored(f)
			require.True(t, ok, "%s: %s", file, f.Name)
			rc, err := f.Open()
			require.NoError(t, err)
			want, err := io.ReadAll(rc)
			require.NoError(t, err)
			rc.Close()
			assert.True(t, bytes.Equal(want, v), "%s: %s", file, f.Name)
		}
	}
}

// TestBadDataDescriptor: a record whose data descriptor holds another
// CRC than its header is not taken by the shortcut: the read fails with
// archive/zip's checksum error, as it always has, and so does a read that
// shares the archive's bytes (ShareBytes, as ReadFile reads), which once
// took a weight without looking at its descriptor.
func TestBadDataDescriptor(t *testing.T) {
	data, err := os.ReadFile("../tests/testdata/pt2e/mlp.float.pt2")
	require.NoError(t, err)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	for _, name := range []string{"models/model.json", "data/weights/weight_0"} {
		var f *zip.File
		for _, g := range zr.File {
			if strings.HasSuffix(g.Name, "/"+name) {
				f = g
			}
		}
		require.NotNil(t, f, name)
		require.NotZero(t, f.Flags&0x8, "%s has a data descriptor", name)
		off, err := f.DataOffset()
		require.NoError(t, err)
		bad := bytes.Clone(data)
		d := bad[off+int64(f.CompressedSize64):]
		if binary.LittleEndian.Uint32(d) == 0x08074b50 {
			d = d[4:]
		}
		require.Equal(t, f.CRC32, binary.LittleEndian.Uint32(d))
		d[0] ^= 0xff
		_, ok := (&zipRecords{data: bad}).intactStored(f)
		assert.False(t, ok, name)
		for _, opts := range []*Options{nil, {ShareBytes: true}} {
			_, err = Read(bad, opts)
			require.ErrorIs(t, err, ErrArchive, name)
			assert.Contains(t, err.Error(), `entry "`+f.Name+`": `+zip.ErrChecksum.Error(), name)
		}
	}
}
