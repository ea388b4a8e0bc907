package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree is every file under dir, by its path there, with its bytes.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckedInUpToDate: run on a copy of store/migrations, the generator
// writes nothing: the migrations checked in have all of ent/schema, and
// go generate ./... leaves the tree as it is.
func TestCheckedInUpToDate(t *testing.T) {
	want := tree(t, filepath.Join("..", "..", "store", "migrations"))
	dir := t.TempDir()
	writeTree(t, dir, want)
	if err := run(t.Context(), dir, false); err != nil {
		t.Fatal(err)
	}
	got := tree(t, dir)
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("the generator wrote %s: ent/schema has changes the checked-in migrations lack (run go generate ./ent)", name)
		} else if got[name] != want[name] {
			t.Errorf("the generator changed %s", name)
		}
	}
}

// TestFromNothing: into empty directories the generator writes one
// baseline per dialect, its atlas.sum and the PostgreSQL state; run again,
// it writes nothing more.
func TestFromNothing(t *testing.T) {
	dir := t.TempDir()
	if err := run(t.Context(), dir, false); err != nil {
		t.Fatal(err)
	}
	first := tree(t, dir)
	var names []string
	for name := range first {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) != 5 || names[0] != "postgres.hcl" || !strings.HasSuffix(names[1], "_baseline.sql") || names[2] != "postgres/atlas.sum" ||
		!strings.HasSuffix(names[3], "_baseline.sql") || names[4] != "sqlite/atlas.sum" {
		t.Fatalf("the generator wrote %v into nothing, want a baseline and atlas.sum for each dialect and postgres.hcl", names)
	}
	if !strings.Contains(first[names[1]], `CREATE TABLE "tokens"`) || !strings.Contains(first[names[3]], "CREATE TABLE `tokens`") {
		t.Errorf("the baselines do not make the tokens table")
	}
	if err := run(t.Context(), dir, false); err != nil {
		t.Fatal(err)
	}
	if again := tree(t, dir); len(again) != len(first) {
		t.Errorf("the second run wrote %d files, the first %d: the state did not round-trip", len(again), len(first))
	}
}
