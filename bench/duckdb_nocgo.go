//go:build !cgo

package main

import "errors"

// duckAvailable: DuckDB needs cgo; this build has none.
const duckAvailable = false

func duckChild(variant, csv, out string) error {
	return errors.New("this bench binary was built without cgo, so without DuckDB")
}
