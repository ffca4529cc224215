// Package mtlstest makes certificate authorities and certificates for one
// test: a CA, and certificates it signs for loopback (127.0.0.1, ::1,
// localhost) usable by servers and clients, written as PEM files under the
// test's temporary directory.
package mtlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/mtls"
)

// CA is a certificate authority of one test.
type CA struct {
	t    *testing.T
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

// NewCA makes a CA valid for a day and writes its certificate to a file.
func NewCA(t *testing.T) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: serial(t), Subject: pkix.Name{CommonName: "hms test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{t: t, dir: t.TempDir(), cert: cert, key: key}
	ca.file = filepath.Join(ca.dir, "ca.pem")
	write(t, ca.file, "CERTIFICATE", der)
	return ca
}

// File is the PEM file of the CA's certificate (-client-ca).
func (ca *CA) File() string { return ca.file }

// Issue signs a certificate for cn, valid for loopback as a server and as
// a client, and returns the PEM files of the certificate and its key.
func (ca *CA) Issue(cn string) (certFile, keyFile string) {
	t := ca.t
	t.Helper()
	certFile, keyFile = filepath.Join(ca.dir, cn+".pem"), filepath.Join(ca.dir, cn+"-key.pem")
	ca.IssueTo(cn, certFile, keyFile)
	return certFile, keyFile
}

// IssueTo is Issue writing to the files given (replacing them: a renewed
// certificate).
func (ca *CA) IssueTo(cn, certFile, keyFile string) {
	t := ca.t
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, keyFile, "PRIVATE KEY", kb)
	write(t, certFile, "CERTIFICATE", der)
}

// Config is a daemon's TLS: a certificate for cn, and this CA as client CA.
func (ca *CA) Config(cn string) mtls.Config {
	cert, key := ca.Issue(cn)
	return mtls.Config{CertFile: cert, KeyFile: key, ClientCA: ca.File()}
}

// Client is an HTTP client presenting a certificate for cn and trusting
// this CA only: what a peer daemon or an admin's tool uses.
func (ca *CA) Client(cn string) *http.Client { return ca.Config(cn).Client(nil) }

// Anonymous is an HTTP client trusting this CA that presents no
// certificate.
func (ca *CA) Anonymous() *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func write(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
