package wizard

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lima-lake/lima/gates"
)

// MachineZone is the IANA name of this machine's time zone, the schedule's
// recommended zone: time.Local's name when Go knows it (TZ=Europe/Berlin),
// else the zone /etc/localtime links to (…/zoneinfo/Asia/Seoul), else
// UTC. It reads the environment and the file system: call it outside
// Update (New does, through Deps.MachineZone).
func MachineZone() string {
	return machineZone(time.Local.String(), os.LookupEnv, os.Readlink, func(name string) bool {
		_, err := time.LoadLocation(name)
		return err == nil
	})
}

// machineZone resolves the zone from what Go calls time.Local, the TZ
// variable and the /etc/localtime link; known reports whether a name is a
// zone the schedule can load.
func machineZone(local string, env func(string) (string, bool), readlink func(string) (string, error), known func(string) bool) string {
	ok := func(z string) bool { return z != "" && z != "Local" && known(z) }
	if ok(local) {
		return local
	}
	link := "/etc/localtime"
	if tz, set := env("TZ"); set {
		tz = strings.TrimPrefix(tz, ":")
		switch {
		case tz == "":
			return "UTC" // TZ= means UTC
		case !strings.HasPrefix(tz, "/"):
			if ok(tz) {
				return tz
			}
			return "UTC"
		}
		if z := zoneOfPath(tz); ok(z) {
			return z
		}
		link = tz
	}
	if target, err := readlink(link); err == nil {
		if z := zoneOfPath(target); ok(z) {
			return z
		}
	}
	return "UTC"
}

// zoneOfPath is the zone name of a zoneinfo file's path (the part after
// zoneinfo/, without the posix/ or right/ variants); "" when the path is
// not under a zoneinfo folder.
func zoneOfPath(p string) string {
	p = filepath.ToSlash(filepath.Clean(p))
	_, after, found := strings.Cut(p, "/zoneinfo/")
	if !found {
		return ""
	}
	for _, v := range []string{"posix/", "right/"} {
		after = strings.TrimPrefix(after, v)
	}
	return after
}

// withDefaults returns the gate 1 questions with the recommended answers
// the wizard knows better than gates does (the machine's time zone).
func withDefaults(qs []gates.Question, d map[string]string) []gates.Question {
	for i := range qs {
		if v, ok := d[qs[i].ID]; ok && v != "" {
			qs[i].Default = v
		}
	}
	return qs
}
