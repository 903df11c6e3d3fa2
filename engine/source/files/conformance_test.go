package files

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

// writeTree writes files (slash-separated names) below a new temp folder.
func writeTree(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, files map[string][]byte) (source.Source, []string) {
		return New(writeTree(t, files)), []string{"**"}
	})
}
