package hivesink_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
)

func TestConformance(t *testing.T) {
	sinktest.Run(t, func(t *testing.T) sink.Sink {
		sk, err := hivesink.Open(context.Background(), hivesink.Options{Warehouse: filepath.Join(t.TempDir(), "lake")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sk.Close() })
		return sk
	})
}
