//go:build ignore

// vendor_uplot writes static/vendor/ from the npm package uplot at the
// version pinned here: npm pack fetches it into a temporary folder, its
// sha512 is checked against the pinned integrity, and the browser build,
// its stylesheet and its licence are copied out. Run by go generate in ui/.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
)

const (
	version   = "1.6.32"
	integrity = "sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw=="
)

// files are what is copied: the package's path → the name in static/vendor.
var files = map[string]string{
	"package/dist/uPlot.iife.min.js": "uPlot.iife.min.js",
	"package/dist/uPlot.min.css":     "uPlot.min.css",
	"package/LICENSE":                "uPlot.LICENSE",
}

func main() {
	log.SetFlags(0)
	tmp, err := os.MkdirTemp("", "uplot-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "pack", "--silent", "uplot@"+version)
	cmd.Dir, cmd.Stderr = tmp, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("npm pack uplot@%s: %v", version, err)
	}
	tgz, err := os.ReadFile(filepath.Join(tmp, "uplot-"+version+".tgz"))
	if err != nil {
		log.Fatal(err)
	}
	sum := sha512.Sum512(tgz)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != integrity {
		log.Fatalf("uplot-%s.tgz: integrity %s, want %s", version, got, integrity)
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		log.Fatal(err)
	}
	tr := tar.NewReader(zr)
	found := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if name, ok := files[h.Name]; ok {
			if found[name], err = io.ReadAll(io.LimitReader(tr, 4<<20)); err != nil {
				log.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join("static", "vendor"), 0o755); err != nil {
		log.Fatal(err)
	}
	for path, name := range files {
		b, ok := found[name]
		if !ok {
			log.Fatalf("uplot-%s.tgz holds no %s", version, path)
		}
		if err := os.WriteFile(filepath.Join("static", "vendor", name), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("static/vendor: uPlot %s\n", version)
}
