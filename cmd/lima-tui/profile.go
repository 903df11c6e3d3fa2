package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// createProfile creates (or truncates) a profile file readable only by its
// owner: a profile holds function names and, for the heap, sizes of the
// user's data, so it is 0600 like every file Lima creates outside the lake.
func createProfile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	// An existing file keeps its mode through O_CREATE; make it 0600.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// startProfiles starts a CPU profile written to cpuPath (when not empty)
// and returns the function that stops it and writes a heap profile to
// memPath (when not empty). Both are runtime/pprof files for `go tool
// pprof`. The files are created before the run starts, so a path that cannot
// be written fails before anything is loaded.
func startProfiles(cpuPath, memPath string) (stop func() error, err error) {
	var cpu, mem *os.File
	if cpuPath != "" {
		if cpu, err = createProfile(cpuPath); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	if memPath != "" {
		if mem, err = createProfile(memPath); err != nil {
			if cpu != nil {
				pprof.StopCPUProfile()
				cpu.Close()
			}
			return nil, fmt.Errorf("--memprofile: %w", err)
		}
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				errs = append(errs, fmt.Errorf("--cpuprofile: %w", err))
			}
		}
		if mem != nil {
			runtime.GC() // the heap profile shows live objects as of the last GC
			if err := pprof.Lookup("heap").WriteTo(mem, 0); err != nil {
				errs = append(errs, fmt.Errorf("--memprofile: %w", err))
			}
			if err := mem.Close(); err != nil {
				errs = append(errs, fmt.Errorf("--memprofile: %w", err))
			}
		}
		return errors.Join(errs...)
	}, nil
}
