//go:build !linux && !darwin

package main

// maxRSSBytes converts ru_maxrss to bytes; elsewhere it is assumed KiB.
func maxRSSBytes(v int64) int64 { return v * 1024 }
