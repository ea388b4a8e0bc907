package packages_test

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"

	"github.com/symphonix/symphonix/packages"
)

// A package refused by Scan says why with a Reason.
func ExampleScan() {
	f, err := os.Open("testdata/bad/traversal.tgz")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	_, err = packages.Scan(f, packages.Limits{})
	var refused *packages.Error
	if errors.As(err, &refused) {
		fmt.Println(refused.Reason, refused.Path)
	}
	// Output: unsafe_path ../../.bashrc
}

// Sign a package digest and check the signature against the keys
// trusted, with a threshold of one.
func ExampleSign() {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)) // use packages.NewKey
	pub := key.Public().(ed25519.PublicKey)
	digest := "sha256:6c8b2e5f2c4e0d5f8a3f3b4f6a2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c"

	env, err := packages.Sign(digest, key, packages.KeyID(pub))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(env.Payload))
	fmt.Println(packages.VerifySignature(env, digest, []ed25519.PublicKey{pub}, 1))
	// Output:
	// {"digest":"sha256:6c8b2e5f2c4e0d5f8a3f3b4f6a2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c"}
	// <nil>
}
