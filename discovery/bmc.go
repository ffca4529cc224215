package discovery

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/hmsuite/hms/internal/problem"
)

// BMCConfig is how discovery reaches BMCs and which credentials it sets.
type BMCConfig struct {
	// DefaultUser and DefaultPassword are the factory credentials (root, initial0).
	DefaultUser, DefaultPassword string
	// Port is the HTTPS port (443).
	Port int
	// Insecure skips certificate checks (self-signed BMCs); else RootCAs
	// (nil: the system pool) must vouch for the BMC.
	Insecure bool
	RootCAs  *x509.CertPool
	// Timeout bounds one Redfish exchange (10 s).
	Timeout time.Duration
	// PasswordLength and PasswordChars are the generated password's policy
	// (24, letters and digits).
	PasswordLength int
	PasswordChars  string
	// HTTPClient, if set, is used as is (tests).
	HTTPClient *http.Client
}

// DefaultPasswordChars are letters and digits: every BMC accepts them.
const DefaultPasswordChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// errRefused marks credentials a BMC refused (401/403), as opposed to a BMC
// that did not answer (ErrUnavailable).
var errRefused = errors.New("credentials refused")

// BMCs talks Redfish to BMCs with gofish: log in, change the account's
// password, check the service root.
type BMCs struct {
	cfg BMCConfig
	hc  *http.Client
}

// NewBMCs returns a BMC client; zero fields of cfg take the defaults.
func NewBMCs(cfg BMCConfig) *BMCs {
	if cfg.DefaultUser == "" {
		cfg.DefaultUser, cfg.DefaultPassword = "root", "initial0"
	}
	if cfg.Port == 0 {
		cfg.Port = 443
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.PasswordLength <= 0 {
		cfg.PasswordLength = 24
	}
	if cfg.PasswordChars == "" {
		cfg.PasswordChars = DefaultPasswordChars
	}
	hc := cfg.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: cfg.RootCAs, InsecureSkipVerify: cfg.Insecure, //nolint:gosec // the operator's -bmc-insecure
			// BMCs speak neither ML-KEM nor TLS 1.3 hybrids; offering only
			// classic curves saves the client that work on every handshake.
			CurvePreferences:   []tls.CurveID{tls.X25519, tls.CurveP256},
			ClientSessionCache: tls.NewLRUClientSessionCache(4096)}
		tr.MaxIdleConnsPerHost = 2
		tr.IdleConnTimeout = 30 * time.Second
		hc = &http.Client{Transport: keepIdle{tr}, Timeout: cfg.Timeout}
	}
	return &BMCs{cfg: cfg, hc: hc}
}

// keepIdle hides the transport's CloseIdleConnections: gofish's Logout
// calls it, which would drop the kept-alive connections to every other BMC
// (each then costs a new TLS handshake); idle ones expire on their own.
type keepIdle struct{ rt http.RoundTripper }

func (k keepIdle) RoundTrip(r *http.Request) (*http.Response, error) { return k.rt.RoundTrip(r) }

// Addr is where the BMC at ip answers: ip, with the port when it is not 443.
func (b *BMCs) Addr(ip string) string {
	if b.cfg.Port == 443 {
		return ip
	}
	return net.JoinHostPort(ip, strconv.Itoa(b.cfg.Port))
}

// GeneratePassword returns a random password of the configured policy.
func (b *BMCs) GeneratePassword() (string, error) {
	out := make([]byte, b.cfg.PasswordLength)
	n := big.NewInt(int64(len(b.cfg.PasswordChars)))
	for i := range out {
		k, err := rand.Int(rand.Reader, n)
		if err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		out[i] = b.cfg.PasswordChars[k.Int64()]
	}
	return string(out), nil
}

// connect opens a gofish client of the BMC at addr. It authenticates with
// Basic on every request rather than with a session: a session costs a
// login and a logout per BMC, and a password change ends it anyway.
func (b *BMCs) connect(ctx context.Context, addr, user, password string) (*gofish.APIClient, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	c, err := gofish.ConnectContext(ctx, gofish.ClientConfig{Endpoint: "https://" + addr, Username: user,
		Password: password, HTTPClient: b.hc, NoModifyTransport: true, ReuseConnections: true, BasicAuth: true})
	if err != nil {
		return nil, classify(addr, err)
	}
	return c.WithContext(context.WithoutCancel(ctx)), nil
}

// classify turns a gofish error into errRefused or ErrUnavailable; the
// message never holds a credential (gofish's do not).
func classify(addr string, err error) error {
	var re *schemas.Error
	if errors.As(err, &re) && (re.HTTPReturnedStatusCode == http.StatusUnauthorized || re.HTTPReturnedStatusCode == http.StatusForbidden) {
		return fmt.Errorf("bmc %s: %w", addr, errRefused)
	}
	return problem.Unavailablef("bmc %s: %v", addr, err)
}

// Login checks that user/password log in to the BMC at addr: one GET of
// AccountService with Basic authentication (no session to create and
// delete). A 401 or 403 is errRefused.
func (b *BMCs) Login(ctx context.Context, addr, user, password string) error {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/redfish/v1/AccountService", nil)
	if err != nil {
		return problem.Invalidf("bmc %s: %v", addr, err)
	}
	req.SetBasicAuth(user, password)
	resp, err := b.hc.Do(req)
	if err != nil {
		return problem.Unavailablef("bmc %s: %v", addr, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("bmc %s: %w", addr, errRefused)
	}
	return problem.Unavailablef("bmc %s: AccountService: %s", addr, resp.Status)
}

// accountsURI is where Redfish 1.6 and later put the account collection
// (the schema's URIs); older BMCs are reached through the service root.
const accountsURI = "/redfish/v1/AccountService/Accounts"

// CheckChanged checks that the BMC at addr now takes user/password and
// refuses user/old, with one request each. They go one after the other on
// the connection the change was made on: at once, the second would cost a
// new connection and TLS handshake.
func (b *BMCs) CheckChanged(ctx context.Context, addr, user, old, password string) error {
	if err := b.Login(ctx, addr, user, password); err != nil {
		return fmt.Errorf("new password does not log in: %w", err)
	}
	if err := b.Login(ctx, addr, user, old); !errors.Is(err, errRefused) {
		return fmt.Errorf("bmc %s: factory password still accepted after the change (%v)", addr, err)
	}
	return nil
}

// SetPassword logs in as user with old and changes that account's password
// to password (PATCH of the account's Password).
func (b *BMCs) SetPassword(ctx context.Context, addr, user, old, password string) error {
	c, err := b.connect(ctx, addr, user, old)
	if err != nil {
		return err
	}
	accs, err := schemas.ListReferencedManagerAccounts(c, accountsURI)
	if err != nil {
		// Not at the standard place: follow the links.
		as, err := c.Service.AccountService()
		if err != nil {
			return classify(addr, err)
		}
		if accs, err = as.Accounts(); err != nil {
			return classify(addr, err)
		}
	}
	for _, a := range accs {
		if a.UserName != user {
			continue
		}
		a.Password = password
		if err := a.Update(); err != nil {
			return fmt.Errorf("bmc %s: change password of %s: %w", addr, user, classify(addr, err))
		}
		return nil
	}
	return problem.NotFoundf("bmc %s: no account %s", addr, user)
}

// SetNetworkProtocol PATCHes the first manager's NetworkProtocol with the
// NTP servers and, in Oem, the syslog target (MEDS does this on a new BMC).
func (b *BMCs) SetNetworkProtocol(ctx context.Context, addr, user, password string, ntp []string, syslog string) error {
	c, err := b.connect(ctx, addr, user, password)
	if err != nil {
		return err
	}
	ms, err := c.Service.Managers()
	if err != nil || len(ms) == 0 {
		return problem.Unavailablef("bmc %s: no manager: %v", addr, err)
	}
	np, err := ms[0].NetworkProtocol()
	if err != nil {
		return classify(addr, err)
	}
	body := map[string]any{"NTP": map[string]any{"NTPServers": ntp, "ProtocolEnabled": len(ntp) > 0}}
	if syslog != "" {
		body["Oem"] = map[string]any{"Syslog": map[string]any{"ProtocolEnabled": true, "Target": syslog}}
	}
	resp, err := c.Patch(np.ODataID, body)
	if err != nil {
		return classify(addr, err)
	}
	resp.Body.Close()
	return nil
}

// Present reports whether the BMC at addr answers its service root (no
// credentials needed), and returns the pin of the TLS key it presented
// ("" without TLS).
func (b *BMCs) Present(ctx context.Context, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/redfish/v1/", nil)
	if err != nil {
		return "", problem.Invalidf("bmc %s: %v", addr, err)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return "", problem.Unavailablef("bmc %s: %v", addr, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", problem.Unavailablef("bmc %s: service root: %s", addr, resp.Status)
	}
	if resp.TLS == nil {
		return "", nil
	}
	return connKey(*resp.TLS), nil
}
