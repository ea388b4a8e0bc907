package identity

import (
	"fmt"
	"strings"
	"testing"
)

func TestPassword(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$", argonMemoryKiB, argonTime, argonThreads)
	if !strings.HasPrefix(h, prefix) || len(strings.Split(h, "$")) != 6 {
		t.Fatalf("hash %q, want a PHC string starting %q", h, prefix)
	}
	if h2, _ := HashPassword("correct horse battery"); h2 == h {
		t.Errorf("two hashes of one password are equal: no salt")
	}
	if !PasswordMatches(h, "correct horse battery") {
		t.Errorf("the password does not match its hash")
	}
	parts := strings.Split(h, "$")
	for name, phc := range map[string]string{
		"wrong password": "",
		"empty hash":     "-",
		"argon2i":        strings.Replace(h, "argon2id", "argon2i", 1),
		"other version":  strings.Replace(h, "v=19", "v=16", 1),
		"huge memory":    strings.Replace(h, parts[3], "m=4194304,t=2,p=1", 1),
		"no salt":        strings.Join(append(parts[:4:4], "", parts[5]), "$"),
		"bad base64":     h + "!",
		"flipped hash":   strings.Join(append(parts[:5:5], flip(parts[5])), "$"),
	} {
		pw := "correct horse battery"
		switch phc {
		case "":
			phc, pw = h, "correct horse battery!"
		case "-":
			phc = ""
		}
		if PasswordMatches(phc, pw) {
			t.Errorf("%s: matches", name)
		}
	}
	for _, p := range []string{"", "short", "elevenchars", strings.Repeat("x", MaxPasswordBytes+1)} {
		if checkPassword(p) == nil {
			t.Errorf("checkPassword(%.20q) = nil, want ErrWeakPassword", p)
		}
	}
	if err := checkPassword("twelve chars"); err != nil {
		t.Errorf("checkPassword(twelve chars) = %v", err)
	}
}

func flip(s string) string {
	b := []byte(s)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}
