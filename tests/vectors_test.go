package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vectorDir holds PyTorch's vector files, copied unchanged from the shared
// fixtures. Every *.json file in it is run; more files of the same
// categories are dropped in from outside to check the kernels.
const vectorDir = "testdata/torch-vectors"

// caseRunner checks one case of a category. raw is the case object.
type caseRunner func(t *testing.T, file *vectorFile, raw json.RawMessage)

// vectorRunners maps a file's category to the runner of its cases. Each
// category's runner registers itself from its own file.
var vectorRunners = map[string]caseRunner{}

// pendingCategories lists categories whose runner needs a part of fxquant
// that has not landed; their cases are reported as pending by name, never
// skipped silently.
var pendingCategories = map[string]string{}

func registerVectorRunner(category string, r caseRunner) {
	if _, dup := vectorRunners[category]; dup {
		panic("vector runner registered twice: " + category)
	}
	vectorRunners[category] = r
}

// vectorFile is the common header of a vector file.
type vectorFile struct {
	Path         string            `json:"-"`
	Format       string            `json:"format"`
	Category     string            `json:"category"`
	TorchVersion string            `json:"torch_version"`
	NCases       int               `json:"n_cases"`
	Cases        []json.RawMessage `json:"cases"`
}

type caseHeader struct {
	ID string `json:"id"`
}

func vectorFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no vector files in %s", vectorDir)
	slices.Sort(files)
	return files
}

// TestVectors runs every case of every vector file, dispatching on the
// file's category. An unknown category, or a case that cannot be read,
// fails the test.
func TestVectors(t *testing.T) {
	for _, path := range vectorFiles(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var f vectorFile
			require.NoError(t, json.Unmarshal(data, &f), "reading %s", path)
			f.Path = path
			require.Equal(t, "pt2e-oracle-vectors/1", f.Format, "%s: unknown format", path)
			require.NotEmpty(t, f.Cases, "%s has no cases", path)
			if f.NCases != 0 {
				require.Len(t, f.Cases, f.NCases, "%s: n_cases disagrees with the case list", path)
			}
			if why, pending := pendingCategories[f.Category]; pending {
				for _, raw := range f.Cases {
					var h caseHeader
					require.NoError(t, json.Unmarshal(raw, &h))
					t.Logf("PENDING %s: %s", h.ID, why)
				}
				t.Logf("%s: %d cases, category %s, all pending", filepath.Base(path), len(f.Cases), f.Category)
				return
			}
			run, ok := vectorRunners[f.Category]
			require.True(t, ok, "%s: no runner for category %q", path, f.Category)
			for i, raw := range f.Cases {
				var h caseHeader
				require.NoError(t, json.Unmarshal(raw, &h), "%s: case %d unreadable", path, i)
				require.NotEmpty(t, h.ID, "%s: case %d has no id", path, i)
				t.Run(h.ID, func(t *testing.T) { run(t, &f, raw) })
			}
			t.Logf("%s: %d cases, category %s", filepath.Base(path), len(f.Cases), f.Category)
		})
	}
}
