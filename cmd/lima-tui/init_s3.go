package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lima-lake/lima/engine/source/s3src"
)

// initS3Source lists an S3 source prefix (with the default credential
// chain, AWS_REGION and AWS_ENDPOINT_URL) as init checks a folder: it must
// be reachable and hold objects. It returns how many.
func initS3Source(uri string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src, err := s3src.Open(ctx, uri)
	if err != nil {
		return 0, err
	}
	objs, err := src.Objects(ctx)
	if err != nil {
		return 0, fmt.Errorf("cannot list the prefix: %w", err)
	}
	if len(objs) == 0 {
		return 0, errors.New("no objects under this prefix; give the prefix holding the files")
	}
	return len(objs), nil
}
