package pt2_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/pt2"
)

// TestFixturesWriteByteIdentical is the strongest evidence that PyTorch
// 2.14 loads what the writer produces: reading a fixture written by
// torch.export.save and writing it again gives the very same file, byte
// for byte: the zip container (padding, descriptors, ZIP64 end records),
// the record order, every payload, both payload configs, models/model.json
// and the serialization id.
func TestFixturesWriteByteIdentical(t *testing.T) {
	for _, file := range fixtures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			want, err := os.ReadFile(file)
			require.NoError(t, err)
			p, err := pt2.Read(want, opaque)
			require.NoError(t, err)
			requireRewritesTo(t, p, want)
		})
	}
}

// requireRewritesTo writes p as an archive and requires the bytes want,
// naming the first byte that differs.
func requireRewritesTo(t *testing.T, p *pt2.Program, want []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, p.WriteArchive(&buf, nil))
	if d := pt2.DiffAt(string(want), buf.String()); d != "" {
		t.Fatalf("written archive (%d bytes, want %d): %q", buf.Len(), len(want), d)
	}
}

// metaEntry is one archive entry as the fixtures' *.meta.json lists it
// (what Python's zipfile saw in the archive PyTorch wrote).
type metaEntry struct {
	Name         string `json:"name"`
	Size         int    `json:"size"`
	CompressType int    `json:"compress_type"`
	CRC32        string `json:"crc32"`
}

// TestFixturesEntriesMatchMeta writes each fixture again and checks its
// entry list against the list recorded in <stem>.meta.json: names in
// order, sizes, compression and CRC-32. Unlike the byte comparison above,
// the expectation here is the generator's independent record of the
// archive PyTorch wrote.
func TestFixturesEntriesMatchMeta(t *testing.T) {
	metas, err := filepath.Glob(filepath.Join(fixtureDir, "*.meta.json"))
	require.NoError(t, err)
	require.NotEmpty(t, metas)
	for _, mf := range metas {
		raw, err := os.ReadFile(mf)
		require.NoError(t, err)
		var m struct {
			Archives map[string]struct {
				StoredAs string      `json:"stored_as"`
				Entries  []metaEntry `json:"entries"`
			} `json:"archives"`
		}
		require.NoError(t, json.Unmarshal(raw, &m), mf)
		for key, a := range m.Archives {
			if a.StoredAs == "" {
				continue
			}
			t.Run(filepath.Base(mf)+"/"+key, func(t *testing.T) {
				p, err := pt2.ReadFile(filepath.Join(fixtureDir, a.StoredAs), opaque)
				require.NoError(t, err)
				var buf bytes.Buffer
				require.NoError(t, p.WriteArchive(&buf, nil))
				zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
				require.NoError(t, err)
				var got []metaEntry
				for _, f := range zr.File {
					got = append(got, metaEntry{Name: f.Name, Size: int(f.UncompressedSize64), CompressType: int(f.Method), CRC32: fmt.Sprintf("%08x", f.CRC32)})
				}
				assert.Equal(t, a.Entries, got)
			})
		}
	}
}
