package ctl

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"gopkg.in/yaml.v3"

	"github.com/hmsuite/hms/nodes/wire"
)

// readSecrets reads the file each node's bmc_credentials_file names
// (relative to the nodes file, or to the working directory for stdin),
// keyed by the reference as written, which is what the daemon looks up in
// ApplyRequest.Secrets. No error message carries a credential.
func readSecrets(ds []decl) (map[string]wire.Credentials, []fileError) {
	out := map[string]wire.Credentials{}
	path := map[string]string{} // reference -> file read
	var errs []fileError
	for _, d := range ds {
		n := d.res.ComputeNode
		if n == nil || n.BMCCredentialsFile == "" {
			continue
		}
		ref, at := n.BMCCredentialsFile, d.where("bmc_credentials_file")
		file := ref
		if !filepath.IsAbs(file) {
			file = filepath.Join(d.dir, ref)
		}
		if prev, ok := path[ref]; ok {
			if prev != file {
				errs = append(errs, fileError{at: at, msg: "bmc_credentials_file " + ref + " names both " + prev + " and " + file + " (files in two directories): give one of them another name"})
			}
			continue
		}
		path[ref] = file
		c, err := readCredentials(file)
		if err != nil {
			errs = append(errs, fileError{at: at, msg: "ComputeNode " + n.Xname + ": bmc_credentials_file " + ref + ": " + err.Error()})
			continue
		}
		out[ref] = c
	}
	return out, errs
}

// credentialsError is a problem with a credentials file; it never quotes
// the file's content.
type credentialsError string

func (e credentialsError) Error() string { return string(e) }

// readCredentials reads a YAML or JSON {username, password} file.
func readCredentials(file string) (wire.Credentials, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return wire.Credentials{}, credentialsError("cannot read: " + rootCause(err).Error())
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return wire.Credentials{}, credentialsError("not YAML or JSON")
	}
	var c wire.Credentials
	if len(doc.Content) == 0 || deref(doc.Content[0]).Kind != yaml.MappingNode {
		return c, credentialsError("want a mapping with username and password")
	}
	p := parser{file: file}
	p.fields(deref(doc.Content[0]), "credentials", reflect.ValueOf(&c).Elem(), map[string]pos{})
	if len(p.errs) > 0 {
		return wire.Credentials{}, credentialsError(fmt.Sprintf("line %d: %s", p.errs[0].at.line, p.errs[0].msg))
	}
	if c.Username == "" || c.Password == "" {
		return wire.Credentials{}, credentialsError("want both username and password")
	}
	return c, nil
}
