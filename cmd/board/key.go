package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/packages"
)

// newKeyCmd is board key: the Ed25519 keys that sign packages. create
// is offline; add, list and revoke are a running board's.
func newKeyCmd(a *app) *cobra.Command {
	c := cli.Group("key", "Make the Ed25519 keys that sign packages (offline), and the publisher keys a running board trusts: create, add, list, revoke")
	c.Aliases = []string{"keys"}
	c.AddCommand(newKeyCreateCmd(a), keyAdd(a), keyList(a), keyRevoke(a))
	return c
}

// keyJSON is a key as printed.
type keyJSON struct {
	KeyID      string `json:"key_id"`
	PublicKey  string `json:"public_key"`
	PrivateKey string `json:"private_key_file"`
	PublicFile string `json:"public_key_file"`
}

func newKeyCreateCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "create --out FILE",
		Short: "Make a signing key: FILE (private, mode 0600) and FILE.pub; print its id and public key",
		Args:  cli.NoArgs,
	}
	fs := c.Flags()
	var out cli.Output
	out.AddFlag(fs)
	file := fs.String("out", "", "the private key file to create (it must not exist); the public key goes to FILE.pub")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if *file == "" {
			return cli.Usagef("--out: required: the private key file to create")
		}
		for _, f := range []string{*file, *file + ".pub"} {
			if _, err := os.Lstat(f); err == nil {
				return fmt.Errorf("%s exists: a key file is never replaced; choose another --out", f)
			}
		}
		pub, priv, err := packages.NewKey()
		if err != nil {
			return err
		}
		if err := packages.WritePrivateKey(*file, priv); err != nil {
			return err
		}
		text := packages.FormatPublicKey(pub)
		if err := writeNew(*file+".pub", []byte(text+"\n"), 0o644); err != nil {
			return err
		}
		k := keyJSON{KeyID: packages.KeyID(pub), PublicKey: text, PrivateKey: *file, PublicFile: *file + ".pub"}
		t := cli.Table{Header: []string{"KEY ID", "PUBLIC KEY"}}
		t.Append(k.KeyID, k.PublicKey)
		return out.Print(a.stdout, t, k)
	}
	return c
}
