package gates

import (
	"os"
	"path/filepath"
	"strings"
)

// systemRoots are folders whose every sub-folder belongs to the operating
// system: a lake is never written or torn down inside them.
var systemRoots = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys", "/usr"}

// systemFolders are folders that hold other things than a lake: a lake may
// sit below them (/var/lib/lima, /tmp/lake) but never be one of them.
var systemFolders = []string{"/home", "/mnt", "/media", "/opt", "/root", "/srv", "/tmp", "/var", "/var/lib", "/var/tmp", "/Users", "/Volumes"}

// UnsafeLakeFolder says why a local folder must never be a warehouse —
// the file system's root, a home folder or a system folder — or "" when
// it may be one. Gate 2 refuses such a warehouse before anything is
// written, and gate 5 refuses to tear it down. The folder's links are
// resolved first (a link to / is /).
func UnsafeLakeFolder(dir string) string {
	if dir == "" {
		return ""
	}
	p := filepath.Clean(realPath(dir))
	if p == "/" || (filepath.VolumeName(p) != "" && p == filepath.VolumeName(p)+string(filepath.Separator)) {
		return "the warehouse " + dir + " is the root of the file system"
	}
	for _, r := range systemRoots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return "the warehouse " + dir + " is inside the system folder " + r
		}
	}
	for _, f := range systemFolders {
		if p == f {
			return "the warehouse " + dir + " is the system folder " + f + ", which holds more than a lake"
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && p == filepath.Clean(realPath(home)) {
		return "the warehouse " + dir + " is your home folder"
	}
	if parent := filepath.Dir(p); parent == "/home" || parent == "/Users" {
		return "the warehouse " + dir + " is a home folder"
	}
	return ""
}

// unsafeLakeFix is the fix of a finding from UnsafeLakeFolder.
const unsafeLakeFix = "set storage.warehouse to a folder of its own, such as ./lake inside the workspace"
