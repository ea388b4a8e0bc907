// Package deploytest checks the files that install and release the board
// and the agent — deploy/, the Dockerfile, .goreleaser.yaml, LICENSE —
// without a cluster, a container runtime or a release: each is parsed, and
// what a change could quietly break is asserted (the probes' paths, running
// as non-root on a read-only root, one replica on SQLite, the agent's token
// kept off command lines, every platform built static).
package deploytest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// root is the module's root, from this package's folder.
const root = "../../"

// decodeAll reads every YAML document of the file at path into generic
// values.
func decodeAll(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(root + path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	return docs
}

// at walks v by keys (strings for maps, ints for lists) and returns what
// is there, or nil.
func at(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// strs is v as a list of strings.
func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// check fails t with what when got is not want.
func check(t *testing.T, what string, got, want any) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// TestKubernetes: the board's Deployment runs one replica, replaced by
// Recreate (SQLite takes one board), as a non-root user on a read-only
// root, probed alive at /healthz and ready at /readyz on its own port; it
// listens beyond loopback and keeps its store on the claim; the Service
// and the Deployment select the same pods.
func TestKubernetes(t *testing.T) {
	t.Parallel()
	byKind := map[string]map[string]any{}
	for _, doc := range decodeAll(t, "deploy/kubernetes/board.yaml") {
		kind, _ := doc["kind"].(string)
		if _, dup := byKind[kind]; dup {
			t.Fatalf("two of kind %s; want one each", kind)
		}
		byKind[kind] = doc
	}
	dep, svc, pvc := byKind["Deployment"], byKind["Service"], byKind["PersistentVolumeClaim"]
	if dep == nil || svc == nil || pvc == nil {
		t.Fatalf("kinds %v; want a Deployment, a Service and a PersistentVolumeClaim", slices.Sorted(mapsKeys(byKind)))
	}
	check(t, "apps/v1 Deployment", dep["apiVersion"], "apps/v1")
	check(t, "replicas", at(dep, "spec", "replicas"), 1)
	check(t, "strategy", at(dep, "spec", "strategy", "type"), "Recreate")

	pod := at(dep, "spec", "template", "spec")
	check(t, "pod runAsNonRoot", at(pod, "securityContext", "runAsNonRoot"), true)
	if uid, _ := at(pod, "securityContext", "runAsUser").(int); uid == 0 {
		t.Errorf("pod runAsUser = %v, want a non-root uid", at(pod, "securityContext", "runAsUser"))
	}
	check(t, "seccompProfile", at(pod, "securityContext", "seccompProfile", "type"), "RuntimeDefault")
	containers, _ := at(pod, "containers").([]any)
	if len(containers) != 1 {
		t.Fatalf("%d containers, want the board alone", len(containers))
	}
	c := containers[0]
	check(t, "readOnlyRootFilesystem", at(c, "securityContext", "readOnlyRootFilesystem"), true)
	check(t, "allowPrivilegeEscalation", at(c, "securityContext", "allowPrivilegeEscalation"), false)
	check(t, "runAsNonRoot", at(c, "securityContext", "runAsNonRoot"), true)
	if drop := strs(at(c, "securityContext", "capabilities", "drop")); !slices.Equal(drop, []string{"ALL"}) {
		t.Errorf("capabilities dropped = %v, want ALL", drop)
	}

	portName, _ := at(c, "ports", 0, "name").(string)
	check(t, "container port", at(c, "ports", 0, "containerPort"), 7777)
	for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		check(t, probe+" path", at(c, probe, "httpGet", "path"), path)
		check(t, probe+" port", at(c, probe, "httpGet", "port"), portName)
		if at(c, probe, "httpGet", "httpHeaders") != nil {
			t.Errorf("%s sends headers: the probes are unauthenticated", probe)
		}
	}

	args := strs(at(c, "args"))
	if flag(args, "--listen") != "0.0.0.0:7777" {
		t.Errorf("args %v: want --listen 0.0.0.0:7777, beyond loopback, on the container port", args)
	}
	data := flag(args, "--data")
	mounted := ""
	for _, m := range at(c, "volumeMounts").([]any) {
		mount, _ := at(m, "mountPath").(string)
		if data == mount || strings.HasPrefix(data, mount+"/") {
			mounted, _ = at(m, "name").(string)
		}
	}
	claim := ""
	for _, v := range at(pod, "volumes").([]any) {
		if at(v, "name") == mounted {
			claim, _ = at(v, "persistentVolumeClaim", "claimName").(string)
		}
	}
	check(t, "--data "+data+" on the claim", claim, at(pvc, "metadata", "name"))
	if data == "/data" {
		t.Errorf("--data is the volume's root, which fsGroup leaves group-writable and the board refuses; want a folder in it")
	}
	// Everything else the board writes (SQLite's temporary files) goes to
	// a volume too: the root is read-only.
	tmp := false
	for _, m := range at(c, "volumeMounts").([]any) {
		tmp = tmp || at(m, "mountPath") == "/tmp"
	}
	if !tmp {
		t.Errorf("no volume at /tmp on a read-only root")
	}

	labels, _ := at(dep, "spec", "template", "metadata", "labels").(map[string]any)
	for what, sel := range map[string]any{"the Deployment's selector": at(dep, "spec", "selector", "matchLabels"), "the Service's selector": at(svc, "spec", "selector")} {
		m, _ := sel.(map[string]any)
		if len(m) == 0 {
			t.Errorf("%s is empty", what)
		}
		for k, v := range m {
			if labels[k] != v {
				t.Errorf("%s %s=%v does not select the pods (labels %v)", what, k, v, labels)
			}
		}
	}
	check(t, "the Service's target port", at(svc, "spec", "ports", 0, "targetPort"), portName)
	if acc := strs(at(pvc, "spec", "accessModes")); !slices.Equal(acc, []string{"ReadWriteOnce"}) {
		t.Errorf("claim access modes = %v, want ReadWriteOnce", acc)
	}
}

// flag is the value after name in args, or "".
func flag(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestCompose: the board and one agent, built from the Dockerfile's two
// targets; the board's port published on loopback only; the agent linked
// to the board by its service name, its token read from a file and never
// written in the compose file or on a command line; both read-only,
// without privileges.
func TestCompose(t *testing.T) {
	t.Parallel()
	docs := decodeAll(t, "deploy/compose/compose.yaml")
	if len(docs) != 1 {
		t.Fatalf("%d documents, want 1", len(docs))
	}
	services, _ := docs[0]["services"].(map[string]any)
	if len(services) != 2 || services["board"] == nil || services["agent"] == nil {
		t.Fatalf("services %v, want board and agent", slices.Sorted(mapsKeys(services)))
	}
	targets := dockerTargets(t)
	for name, s := range services {
		if target, _ := at(s, "build", "target").(string); !slices.Contains(targets, target) {
			t.Errorf("%s builds target %q; the Dockerfile has %v", name, target, targets)
		}
		check(t, name+" context", at(s, "build", "context"), "../..")
		check(t, name+" read_only", at(s, "read_only"), true)
		if drop := strs(at(s, "cap_drop")); !slices.Equal(drop, []string{"ALL"}) {
			t.Errorf("%s cap_drop = %v, want ALL", name, drop)
		}
		if !slices.Contains(strs(at(s, "security_opt")), "no-new-privileges:true") {
			t.Errorf("%s: want no-new-privileges", name)
		}
		if at(s, "user") != nil {
			t.Errorf("%s sets user %v: the image runs as nonroot already", name, at(s, "user"))
		}
	}
	board, agent := services["board"], services["agent"]
	if ports := strs(at(board, "ports")); !slices.Equal(ports, []string{"127.0.0.1:7777:7777"}) {
		t.Errorf("board ports = %v, want 7777 on loopback only", ports)
	}
	check(t, "the agent's MONITOR_URL", at(agent, "environment", "MONITOR_URL"), "http://board:7777")
	if at(agent, "environment", "MONITOR_TOKEN") != nil {
		t.Errorf("the agent's token is written in the compose file")
	}
	for _, arg := range append(strs(at(agent, "command")), strs(at(agent, "entrypoint"))...) {
		if strings.Contains(arg, "token") {
			t.Errorf("the agent's command line names a token: %q", arg)
		}
	}
	if path := at(agent, "env_file", 0, "path"); path != "./agent.env" {
		t.Errorf("the agent's env_file = %v, want ./agent.env, where its token is", path)
	}
	if ignored, err := os.ReadFile(root + ".gitignore"); err != nil || !strings.Contains(string(ignored), "deploy/compose/agent.env") {
		t.Errorf(".gitignore does not keep deploy/compose/agent.env (the token) out of git: %v", err)
	}
}

// dockerTargets are the stages of the Dockerfile, checking on the way that
// every final one runs as distroless's nonroot user with nothing but its
// binary, and that the board's listens beyond loopback and keeps its
// store in its volume.
func dockerTargets(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(root + "Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var (
		targets []string
		stage   string
		lines   = map[string][]string{}
	)
	from := regexp.MustCompile(`^FROM\s+(\S+)\s+AS\s+(\S+)$`)
	bases := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := from.FindStringSubmatch(line); m != nil {
			stage = m[2]
			targets = append(targets, stage)
			bases[stage] = m[1]
			continue
		}
		if stage != "" && line != "" && !strings.HasPrefix(line, "#") {
			lines[stage] = append(lines[stage], line)
		}
	}
	if !slices.Contains(lines["build"], "ENV CGO_ENABLED=0") {
		t.Errorf("the build stage does not turn CGO off: the images are static")
	}
	for _, target := range []string{"board", "agent"} {
		if !slices.Contains(targets, target) {
			t.Errorf("no target %s in the Dockerfile", target)
			continue
		}
		check(t, target+"'s base", bases[target], "gcr.io/distroless/static-debian12:nonroot")
		if !slices.Contains(lines[target], "USER 65532:65532") {
			t.Errorf("%s: want USER 65532:65532 (nonroot)", target)
		}
		check(t, target+"'s entrypoint", lines[target][slices.IndexFunc(lines[target], func(l string) bool { return strings.HasPrefix(l, "ENTRYPOINT") })],
			`ENTRYPOINT ["/usr/local/bin/`+target+`"]`)
	}
	for _, want := range []string{`CMD ["--listen", "0.0.0.0:7777"]`, "ENV SYMPHONIX_DATA=/data", "VOLUME /data", "EXPOSE 7777"} {
		if !slices.Contains(lines["board"], want) {
			t.Errorf("the board's stage lacks %s", want)
		}
	}
	return targets
}

// TestSystemd: the unit runs the board as a user of its own with its store
// in its state folder, closed to others, behind the hardening options.
func TestSystemd(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(root + "deploy/systemd/symphonix-board.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("[%s] %q: not KEY=VALUE", section, line)
			}
			unit[section+"."+k] = append(unit[section+"."+k], v)
		}
	}
	one := func(key string) string {
		if v := unit[key]; len(v) == 1 {
			return v[0]
		}
		t.Errorf("%s: %v, want one", key, unit[key])
		return ""
	}
	for key, want := range map[string]string{
		"Service.DynamicUser":           "yes",
		"Service.NoNewPrivileges":       "yes",
		"Service.ProtectSystem":         "strict",
		"Service.ProtectHome":           "yes",
		"Service.PrivateTmp":            "yes",
		"Service.StateDirectoryMode":    "0700",
		"Service.UMask":                 "0077",
		"Service.CapabilityBoundingSet": "",
		"Install.WantedBy":              "multi-user.target",
	} {
		check(t, key, one(key), want)
	}
	exec := strings.Fields(one("Service.ExecStart"))
	if len(exec) == 0 || exec[0] != "/usr/local/bin/board" {
		t.Fatalf("ExecStart = %v, want /usr/local/bin/board", exec)
	}
	check(t, "--data", flag(exec, "--data"), "/var/lib/"+one("Service.StateDirectory"))
	if flag(exec, "--listen") == "" {
		t.Errorf("ExecStart %v: want --listen said, not left to the default", exec)
	}
}

// TestGoreleaser: both commands, for Linux, macOS and Windows on amd64 and
// arm64, static and without build paths; no version stamped with -X (it is
// read from the build info); archives that carry the licence and the
// README; checksums and SBOMs.
func TestGoreleaser(t *testing.T) {
	t.Parallel()
	docs := decodeAll(t, ".goreleaser.yaml")
	if len(docs) != 1 {
		t.Fatalf("%d documents, want 1", len(docs))
	}
	cfg := docs[0]
	check(t, "version", cfg["version"], 2)
	builds, _ := cfg["builds"].([]any)
	mains := map[string]bool{}
	for _, b := range builds {
		main, _ := at(b, "main").(string)
		mains[main] = true
		if !slices.Contains(strs(at(b, "env")), "CGO_ENABLED=0") {
			t.Errorf("%s: CGO is not off", main)
		}
		if !slices.Contains(strs(at(b, "flags")), "-trimpath") {
			t.Errorf("%s: no -trimpath", main)
		}
		for _, l := range strs(at(b, "ldflags")) {
			if strings.Contains(l, "-X") {
				t.Errorf("%s: ldflags %q stamp a variable; the version comes from the build info", main, l)
			}
		}
		if goos := strs(at(b, "goos")); !slices.Equal(goos, []string{"linux", "darwin", "windows"}) {
			t.Errorf("%s: goos %v", main, goos)
		}
		if arch := strs(at(b, "goarch")); !slices.Equal(arch, []string{"amd64", "arm64"}) {
			t.Errorf("%s: goarch %v", main, arch)
		}
	}
	if !mains["./cmd/board"] || !mains["./cmd/agent"] || len(mains) != 2 {
		t.Errorf("builds of %v, want ./cmd/board and ./cmd/agent", slices.Sorted(mapsKeys(mains)))
	}
	files := strs(at(cfg, "archives", 0, "files"))
	for _, f := range []string{"LICENSE", "README.md"} {
		if !slices.Contains(files, f) {
			t.Errorf("archives carry %v, want %s", files, f)
		}
		if _, err := os.Stat(root + f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if at(cfg, "checksum") == nil || at(cfg, "sboms", 0, "artifacts") != "archive" {
		t.Errorf("checksum %v, sboms %v: want both", at(cfg, "checksum"), at(cfg, "sboms"))
	}
}

// TestLicense: the Apache License 2.0, whole, for The Symphonix Authors.
func TestLicense(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(root + "LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		"Apache License\n                           Version 2.0, January 2004",
		"TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
		"9. Accepting Warranty or Additional Liability.",
		"END OF TERMS AND CONDITIONS",
		"Copyright 2026 The Symphonix Authors",
		`limitations under the License.`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
}
