package main

// maxRSSBytes converts ru_maxrss to bytes: macOS reports bytes.
func maxRSSBytes(v int64) int64 { return v }
