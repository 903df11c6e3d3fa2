//go:build !unix

package main

import "os"

// peakRSSBytes is unknown here: this platform has no ru_maxrss.
func peakRSSBytes(*os.ProcessState) int64 { return 0 }
