package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// VersionInfo is what a binary says of itself: its module's version, the
// VCS revision it was built from, and the Go that built it, as
// runtime/debug.ReadBuildInfo has them.
type VersionInfo struct {
	Module   string `json:"module"`
	Version  string `json:"version"`        // "(devel)" when not built from a tagged module
	Revision string `json:"revision"`       // empty when built without VCS information
	Time     string `json:"time,omitempty"` // of the revision, RFC 3339
	Dirty    bool   `json:"dirty"`          // built with changes not committed
	Go       string `json:"go"`
}

// Version reads the running binary's build information.
func Version() VersionInfo {
	v := VersionInfo{Version: "(devel)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Module = bi.Main.Path
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	v.Go = bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Dirty = s.Value == "true"
		}
	}
	return v
}

// String is "VERSION (revision REV+dirty) GO" on one line.
func (v VersionInfo) String() string {
	rev := v.Revision
	if rev == "" {
		rev = "unknown"
	}
	if v.Dirty {
		rev += "+dirty"
	}
	return fmt.Sprintf("%s (revision %s) %s", v.Version, rev, v.Go)
}

func newVersionCmd(name string) *cobra.Command {
	var out Output
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version of this binary",
		Args:  NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := Version()
			if out.JSON() {
				return PrintJSON(cmd.OutOrStdout(), v)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", name, v)
			return err
		},
	}
	out.AddFlag(c.Flags())
	return c
}
