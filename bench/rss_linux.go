package main

// maxRSSBytes converts ru_maxrss to bytes: Linux reports KiB.
func maxRSSBytes(v int64) int64 { return v * 1024 }
