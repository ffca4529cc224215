package inventory

import (
	"fmt"

	"github.com/hmsuite/hms/internal/sealed"
)

// credKeySize is the AES-256 key size of a credential key file.
const credKeySize = sealed.KeySize

// Creds seals and opens RedfishEndpoint credentials with AES-GCM, so the
// database never holds them in clear. The endpoint ID is the additional
// data, so a sealed value copied to another endpoint's row does not open.
// The format is internal/sealed's, which reds shares.
type Creds struct {
	box *sealed.Box
}

// LoadCredKey reads the credential key at path, creating it (32 random bytes,
// mode 0600) when the file does not exist. A key file of the wrong size, or
// readable or writable by group or others, is an error.
func LoadCredKey(path string) (*Creds, error) {
	b, err := sealed.LoadKey(path)
	if err != nil {
		return nil, fmt.Errorf("credential %w", err)
	}
	return &Creds{box: b}, nil
}

// NewCreds returns a Creds using the 32-byte key.
func NewCreds(key []byte) (*Creds, error) {
	b, err := sealed.New(key)
	if err != nil {
		return nil, fmt.Errorf("credential %w", err)
	}
	return &Creds{box: b}, nil
}

// seal encrypts plain for endpoint id: nonce followed by the ciphertext.
func (c *Creds) seal(id string, plain []byte) ([]byte, error) { return c.box.Seal(id, plain) }

// open decrypts what seal produced for endpoint id.
func (c *Creds) open(id string, sealed []byte) ([]byte, error) { return c.box.Open(id, sealed) }
