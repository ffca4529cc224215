// Package mtls is the TLS between the suite's daemons: the certificate a
// daemon serves with and presents to its peers as its client certificate
// (-tls-cert, -tls-key), and the CA that signs its callers' certificates and
// its peers' (-client-ca). With a certificate a daemon serves HTTPS; with
// -client-ca too it refuses, in the TLS handshake, every caller that does
// not present a certificate signed by that CA, health and liveness probes
// included (they never reach HTTP). The files are re-read when they change,
// so a certificate can be renewed without a restart. It is a leaf package:
// node-side binaries may link it.
package mtls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/cli"
)

// Config names the PEM files of a daemon's TLS. Zero: plain HTTP.
type Config struct {
	// CertFile and KeyFile are the daemon's certificate (with its chain)
	// and private key: served to callers, and presented to https:// peers.
	CertFile, KeyFile string
	// ClientCA holds the CA certificate(s) that callers' certificates must
	// chain to; https:// peers are trusted when they chain to these CAs or
	// to the system's roots (a site's JWKS or OAuth server signed by a
	// public CA keeps working). Empty: callers need no certificate, peers
	// are checked against the system's roots.
	ClientCA string
}

// On reports whether the daemon serves HTTPS.
func (c Config) On() bool { return c.CertFile != "" }

// Scheme is "https" when the daemon serves HTTPS, else "http".
func (c Config) Scheme() string {
	if c.On() {
		return "https"
	}
	return "http"
}

// Server returns the TLS configuration of a daemon's server (nil when off):
// TLS 1.2 or later, HTTP/1.1, and with ClientCA a verified client
// certificate required. Each handshake takes the files as they are now.
func (c Config) Server() (*tls.Config, error) {
	if !c.On() {
		return nil, nil
	}
	f := c.files()
	if _, _, err := f.load(); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, pool, err := f.load()
			if err != nil {
				return nil, err
			}
			sc := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}, Certificates: []tls.Certificate{*cert}}
			if pool != nil {
				sc.ClientAuth, sc.ClientCAs = tls.RequireAndVerifyClientCert, pool
			}
			return sc, nil
		}}, nil
}

// ClientTLS returns what a daemon's clients use for https:// peers (nil
// when off): its certificate as client certificate, taken from the files as
// they are at each handshake, and the system's roots plus ClientCA's CAs
// as they are now (ConfigureTransport reads them again when the file
// changes; the same clients fetch a site's JWKS and OAuth tokens, whose
// certificates a public or site CA signs). A tool's
// Config (ForClient) may have ClientCA alone: it trusts those CAs and
// presents no certificate.
func (c Config) ClientTLS() *tls.Config {
	if !c.clientOn() {
		return nil
	}
	cc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.On() {
		f := c.files()
		cc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, _, err := f.load()
			return cert, err
		}
	}
	if c.ClientCA != "" {
		// The roots as they are now: Client's connections take them
		// afresh from the file at each dial (ConfigureTransport).
		if pool, err := c.rootPool(); err == nil {
			cc.RootCAs = pool
		}
	}
	return cc
}

// ConfigureTransport makes tr's https:// requests present the daemon's
// certificate and trust ClientCA (ClientTLS), reading the CA file again
// when it changed: a tls.Config's RootCAs cannot change per handshake, so
// with ClientCA each connection is dialled with a copy of the
// configuration holding the CAs of the file as it is then (a rotated CA is
// trusted without a restart, as the servers' files are). Requests through
// a proxy keep the roots read now.
func (c Config) ConfigureTransport(tr *http.Transport) {
	tr.TLSClientConfig = c.ClientTLS()
	if c.ClientCA == "" || tr.TLSClientConfig == nil {
		return
	}
	base, r, dial := tr.TLSClientConfig, &roots{path: c.ClientCA}, tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	timeout := tr.TLSHandshakeTimeout
	tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		cfg := base.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		cfg.RootCAs = r.get(cfg.RootCAs)
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return conn, nil
	}
}

// roots caches the pool of rootPool, reading the CA file again when its
// size or modification time changed. A change that does not parse (a file
// being written) keeps the last good pool.
type roots struct {
	path  string
	mu    sync.Mutex
	stamp stamp
	pool  *x509.CertPool
}

// get returns the current pool, or last when the file never parsed.
func (r *roots) get(last *x509.CertPool) *x509.CertPool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := stampOf(r.path)
	if r.pool != nil && now == r.stamp {
		return r.pool
	}
	if pool, err := (Config{ClientCA: r.path}).rootPool(); err == nil {
		r.pool, r.stamp = pool, now
	}
	if r.pool == nil {
		return last
	}
	return r.pool
}

// stampOf is the size and modification time of the file at p (zero if it
// cannot be read).
func stampOf(p string) stamp {
	if p == "" {
		return stamp{}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return stamp{}
	}
	return stamp{fi.ModTime().UnixNano(), fi.Size()}
}

// clientOn reports whether clients need a TLS configuration of their own.
func (c Config) clientOn() bool { return c.On() || c.ClientCA != "" }

// ForClient checks the files of a tool that calls the daemons and serves
// nothing (the hms CLI, hbagent): certFile and keyFile, both or neither, are
// the client certificate it presents to daemons run with -client-ca;
// caFile holds the CA(s) it trusts for the daemons' certificates (empty:
// the system's roots). Its Client works with caFile alone too.
func ForClient(certFile, keyFile, caFile string) (Config, error) {
	c := Config{CertFile: certFile, KeyFile: keyFile, ClientCA: caFile}
	if (certFile == "") != (keyFile == "") {
		return Config{}, errors.New("a client certificate needs both its certificate and key files")
	}
	if c.On() {
		if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
			return Config{}, fmt.Errorf("tls certificate: %w", err)
		}
	}
	if _, err := c.caPool(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Client returns a copy of hc (nil: a new client) whose https:// requests
// present the daemon's certificate and trust ClientCA, or hc itself when TLS
// is off. A client whose Transport is not an *http.Transport (a test's) is
// returned as it is.
func (c Config) Client(hc *http.Client) *http.Client {
	if !c.clientOn() {
		return hc
	}
	var cp http.Client
	if hc != nil {
		cp = *hc
	}
	var tr *http.Transport
	switch t := cp.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	default:
		return hc
	}
	c.ConfigureTransport(tr)
	cp.Transport = tr
	return &cp
}

func (c Config) files() *files { return &files{cfg: c} }

// files caches the parsed certificate and CA pool, parsing them again when
// a file's size or modification time changed. A change that does not parse
// (a certificate written before its key) keeps the last good pair.
type files struct {
	cfg   Config
	mu    sync.Mutex
	stamp [3]stamp
	cert  *tls.Certificate
	pool  *x509.CertPool
}

type stamp struct{ mtime, size int64 }

func (f *files) load() (*tls.Certificate, *x509.CertPool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var now [3]stamp
	for i, p := range []string{f.cfg.CertFile, f.cfg.KeyFile, f.cfg.ClientCA} {
		now[i] = stampOf(p)
	}
	if f.cert != nil && now == f.stamp {
		return f.cert, f.pool, nil
	}
	cert, pool, err := f.cfg.parse()
	if err != nil {
		if f.cert != nil {
			return f.cert, f.pool, nil
		}
		return nil, nil, err
	}
	f.cert, f.pool, f.stamp = cert, pool, now
	return cert, pool, nil
}

// parse reads the key pair and the CA file.
func (c Config) parse() (*tls.Certificate, *x509.CertPool, error) {
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("tls certificate: %w", err)
	}
	pool, err := c.caPool()
	if err != nil {
		return nil, nil, err
	}
	return &cert, pool, nil
}

// caPool reads ClientCA (nil when not set).
func (c Config) caPool() (*x509.CertPool, error) {
	if c.ClientCA == "" {
		return nil, nil
	}
	b, err := os.ReadFile(c.ClientCA)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate", c.ClientCA)
	}
	return pool, nil
}

// rootPool is the system's roots (none if unreadable) plus ClientCA's CAs.
func (c Config) rootPool() (*x509.CertPool, error) {
	b, err := os.ReadFile(c.ClientCA)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate", c.ClientCA)
	}
	return pool, nil
}

// Flags are -tls-cert, -tls-key and the CA flag: a daemon's -client-ca
// (Register) or a tool's -ca-file (RegisterClient).
type Flags struct {
	f             *cli.FlagSet
	cert, key, ca *string
	// tool: the flags of a tool that calls daemons and serves nothing
	// (ForClient's rules).
	tool bool
}

// Register declares -tls-cert, -tls-key and -client-ca on f.
func Register(f *cli.FlagSet) *Flags {
	return register(f, false, "PEM `FILE` of the certificate (and chain) to serve HTTPS with and to present to https:// peers as client certificate; re-read when it changes",
		"client-ca", "PEM `FILE` of the CA(s) callers' certificates must chain to: the TLS handshake refuses a caller without one (health probes too); https:// peers are trusted when they chain to these CAs or to the system's roots. Needs -tls-cert")
}

// RegisterClient declares -tls-cert, -tls-key and -ca-file on f, for a
// tool that calls daemons over https:// and serves nothing (hbagent).
func RegisterClient(f *cli.FlagSet) *Flags {
	return register(f, true, "PEM `FILE` of the client certificate (and chain) presented to https:// daemons run with -client-ca; re-read when it changes",
		"ca-file", "PEM `FILE` of the CA(s) trusted for the daemons' https:// certificates (default: the system's roots)")
}

func register(f *cli.FlagSet, tool bool, certHelp, caName, caHelp string) *Flags {
	return &Flags{f: f, tool: tool, cert: f.String("tls-cert", "", certHelp),
		key: f.String("tls-key", "", "PEM `FILE` of the private key of -tls-cert"), ca: f.String(caName, "", caHelp)}
}

// Config checks the files the flags name and returns the configuration
// (a tool's: ForClient). Errors are *cli.UsageError.
func (fl *Flags) Config() (Config, error) {
	c := Config{CertFile: *fl.cert, KeyFile: *fl.key, ClientCA: *fl.ca}
	if fl.tool {
		if _, err := ForClient(c.CertFile, c.KeyFile, c.ClientCA); err != nil {
			return Config{}, cli.Usagef("-%s, -%s, -%s: %v", fl.f.Name("tls-cert"), fl.f.Name("tls-key"), fl.f.Name("ca-file"), err)
		}
		return c, nil
	}
	switch {
	case (c.CertFile == "") != (c.KeyFile == ""):
		return Config{}, cli.Usagef("-%s and -%s go together", fl.f.Name("tls-cert"), fl.f.Name("tls-key"))
	case c.ClientCA != "" && c.CertFile == "":
		return Config{}, cli.Usagef("-%s needs -%s and -%s (the daemon must serve HTTPS to ask for client certificates)",
			fl.f.Name("client-ca"), fl.f.Name("tls-cert"), fl.f.Name("tls-key"))
	case !c.On():
		return c, nil
	}
	if _, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile); err != nil {
		return Config{}, cli.Usagef("-%s, -%s: %v", fl.f.Name("tls-cert"), fl.f.Name("tls-key"), err)
	}
	if _, err := c.caPool(); err != nil {
		return Config{}, cli.Usagef("-%s: %v", fl.f.Name("client-ca"), err)
	}
	return c, nil
}
