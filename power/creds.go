package power

import (
	"encoding/json"
	"fmt"
	"os"
)

// StaticCredentials are BMC logins by BMC xname; the key "default" serves
// every BMC not listed. They are the -bmc-credentials file, which
// overrides the logins read from HSM (see HSMCredentials).
type StaticCredentials map[string]Credential

// For returns bmc's login, else the default one.
func (c StaticCredentials) For(bmc string) (Credential, bool) {
	if cred, ok := c[bmc]; ok {
		return cred, true
	}
	cred, ok := c["default"]
	return cred, ok
}

// LoadCredentials reads a credentials file: a JSON object of
// {"Username","Password"} by BMC xname, with "default" for the others. The
// file must not be readable by group or others.
func LoadCredentials(path string) (StaticCredentials, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("BMC credentials: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("BMC credentials file %s: mode %04o lets others read it; want 0600", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("BMC credentials: %w", err)
	}
	var c StaticCredentials
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("BMC credentials file %s: %w", path, err)
	}
	return c, nil
}
