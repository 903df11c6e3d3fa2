package rawland_test

import (
	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/internal/s3x"
)

func rawlandTarget(cl *s3x.Client, root string) (rawland.Target, error) {
	u, err := s3x.ParseURI(root)
	return rawland.Target{S3: u, Client: cl}, err
}
