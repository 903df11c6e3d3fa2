package icesink_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
)

func TestConformance(t *testing.T) {
	sinktest.Run(t, func(t *testing.T) sink.Sink {
		dir := t.TempDir()
		sk, err := icesink.Open(context.Background(), icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sk.Close() })
		return sk
	})
}
