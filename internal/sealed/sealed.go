// Package sealed encrypts small secrets (BMC credentials) at rest with
// AES-256-GCM under a key file, in the format HSM uses for its
// RedfishEndpoint credentials (statemgr's Creds): a 32-byte key file of mode
// 0600, created on first use; a sealed value is the 12-byte nonce followed by
// the ciphertext, with the owner's ID (an xname) as additional data, so a
// value copied to another row does not open.
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// KeySize is the size of a key file: an AES-256 key.
const KeySize = 32

// Box seals and opens values with one key.
type Box struct {
	aead cipher.AEAD
}

// LoadKey reads the key at path, creating it (KeySize random bytes, mode
// 0600) when the file does not exist. A key file of the wrong size, or
// readable or writable by group or others, is an error.
func LoadKey(path string) (*Box, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read key file %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read key file %s: %w", path, err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("key file %s: mode %04o lets others read it; want 0600", path, perm)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("key file %s: %d bytes; want %d", path, len(key), KeySize)
	}
	return New(key)
}

func createKey(path string) (*Box, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create key file %s: %w", path, err)
	}
	_, err = f.Write(key)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write key file %s: %w", path, err)
	}
	return New(key)
}

// New returns a Box using the KeySize-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("key: %d bytes; want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain for owner id: nonce followed by the ciphertext.
func (b *Box) Seal(id string, plain []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal secret of %s: %w", id, err)
	}
	return b.aead.Seal(nonce, nonce, plain, []byte(id)), nil
}

// Open decrypts what Seal produced for owner id.
func (b *Box) Open(id string, sealed []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return nil, fmt.Errorf("open secret of %s: sealed value too short", id)
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("open secret of %s (wrong key file?): %w", id, err)
	}
	return plain, nil
}
