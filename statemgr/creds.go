package statemgr

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// credKeySize is the AES-256 key size of a credential key file.
const credKeySize = 32

// Creds seals and opens RedfishEndpoint credentials with AES-GCM, so the
// database never holds them in clear. The endpoint ID is the additional
// data, so a sealed value copied to another endpoint's row does not open.
type Creds struct {
	aead cipher.AEAD
}

// LoadCredKey reads the credential key at path, creating it (32 random bytes,
// mode 0600) when the file does not exist. A key file of the wrong size, or
// readable or writable by group or others, is an error.
func LoadCredKey(path string) (*Creds, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, credKeySize)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate credential key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create credential key file %s: %w", path, err)
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, fmt.Errorf("write credential key file %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("write credential key file %s: %w", path, err)
		}
		return NewCreds(key)
	}
	if err != nil {
		return nil, fmt.Errorf("read credential key file %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read credential key file %s: %w", path, err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("credential key file %s: mode %04o lets others read it; want 0600", path, perm)
	}
	if len(key) != credKeySize {
		return nil, fmt.Errorf("credential key file %s: %d bytes; want %d", path, len(key), credKeySize)
	}
	return NewCreds(key)
}

// NewCreds returns a Creds using the 32-byte key.
func NewCreds(key []byte) (*Creds, error) {
	if len(key) != credKeySize {
		return nil, fmt.Errorf("credential key: %d bytes; want %d", len(key), credKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("credential key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("credential key: %w", err)
	}
	return &Creds{aead: aead}, nil
}

// seal encrypts plain for endpoint id: nonce followed by the ciphertext.
func (c *Creds) seal(id string, plain []byte) ([]byte, error) {
	nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plain)+c.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal credentials of %s: %w", id, err)
	}
	return c.aead.Seal(nonce, nonce, plain, []byte(id)), nil
}

// open decrypts what seal produced for endpoint id.
func (c *Creds) open(id string, sealed []byte) ([]byte, error) {
	n := c.aead.NonceSize()
	if len(sealed) < n {
		return nil, fmt.Errorf("open credentials of %s: sealed value too short", id)
	}
	plain, err := c.aead.Open(nil, sealed[:n], sealed[n:], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("open credentials of %s (wrong key file?): %w", id, err)
	}
	return plain, nil
}
