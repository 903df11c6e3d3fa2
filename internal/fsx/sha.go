package fsx

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
)

// SHA256 reads r to its end and returns the hex sha256 of its bytes, the
// checksum Lima records for files and objects (raw/ landing, change files).
func SHA256(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
