package packages_test

import (
	"slices"
	"testing"

	"github.com/symphonix/symphonix/packages"
)

// TestCompareVersions holds the precedence example of semver.org 2.0.0
// (section 11) and the cases around it.
func TestCompareVersions(t *testing.T) {
	order := []string{
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0", "10.0.0",
		"99999999999999999999.0.0",
	}
	for i := range order {
		for j := range order {
			got := packages.CompareVersions(order[i], order[j])
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if sign(got) != want {
				t.Errorf("CompareVersions(%s, %s) = %d, want sign %d", order[i], order[j], got, want)
			}
		}
	}
	if c := packages.CompareVersions("1.0.0+build.1", "1.0.0+build.2"); c != 0 {
		t.Errorf("build metadata counted: %d", c)
	}
	shuffled := slices.Clone(order)
	slices.Reverse(shuffled)
	slices.SortFunc(shuffled, packages.CompareVersions)
	if !slices.Equal(shuffled, order) {
		t.Errorf("sorted = %v", shuffled)
	}
}

func TestCheckScopeAndDigest(t *testing.T) {
	for _, ok := range []string{"acme", "a", "a-1"} {
		if err := packages.CheckScope(ok); err != nil {
			t.Errorf("CheckScope(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Acme", "-a", "a/b", "a_b"} {
		if err := packages.CheckScope(bad); err == nil {
			t.Errorf("CheckScope(%q) accepted", bad)
		}
	}
	if err := packages.CheckDigest("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"); err != nil {
		t.Error(err)
	}
	if err := packages.CheckDigest("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"); err == nil {
		t.Error("upper-case digest accepted")
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
