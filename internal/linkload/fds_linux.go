package linkload

import (
	"os"
	"strconv"
	"strings"
)

// openFDs counts the file descriptors process pid has open: all of them,
// and those that are not sockets (the store's files, the runtime's own). ok
// is false when they cannot be read.
func openFDs(pid int) (all, notSockets int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	f, err := os.Open(dir)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, 0, false
	}
	for _, n := range names {
		target, err := os.Readlink(dir + n)
		if err != nil {
			continue // closed meanwhile
		}
		all++
		if !strings.HasPrefix(target, "socket:") {
			notSockets++
		}
	}
	return all, notSockets, true
}
