package redfish

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// Walk reads the Redfish tree of the BMC ep and returns what HSM should
// record. The walk ends by ctx, or by opts.Timeout, whichever comes first.
//
// Result.Status is always set. The error is nil exactly when Status is
// StatusOK; it wraps problem.ErrInvalid for StatusEndpointInvalid and
// problem.ErrUnavailable otherwise, and never contains the password. A failed
// walk may still return partial data, which callers should not store as a
// complete view of the BMC.
func Walk(ctx context.Context, ep Endpoint, opts Options) (Result, error) {
	res := Result{EndpointID: ep.ID, Status: StatusOK}
	bmc, err := xname.Parse(ep.ID)
	if err != nil || !xname.IsController(bmc.Type()) {
		res.Status = StatusEndpointInvalid
		res.Errors = []string{fmt.Sprintf("endpoint ID %q is not a BMC xname", ep.ID)}
		return res, problem.Invalidf("redfish walk: endpoint ID %q is not a BMC xname", ep.ID)
	}
	res.EndpointID = bmc.String()
	base, host, err := endpointURL(ep)
	if err != nil {
		res.Status = StatusEndpointInvalid
		res.Errors = []string{err.Error()}
		return res, fmt.Errorf("redfish walk %s: %w: %w", res.EndpointID, problem.ErrInvalid, err)
	}
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	tr, closeIdle := baseTransport(ep, opts)
	m := newMeter(tr, opts.MaxConcurrentRequests)
	m.authorize(base, ep.User, ep.Password)
	w := &walker{res: &res, bmcID: res.EndpointID, bmcType: bmc.Type(),
		fqdn: host, domain: domainOf(ep.FQDN)}
	w.run(ctx, base, m, opts)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		w.fail(StatusHTTPsGetFailed, fmt.Sprintf("walk timed out after %v", opts.Timeout))
	}

	if n := m.closeAll(); n > 0 {
		w.fail(StatusHTTPsGetFailed, fmt.Sprintf("%d response bodies left open by the client", n))
	}
	closeIdle()
	res.Requests, _ = m.stats()
	w.finish()
	if res.Status != StatusOK {
		return res, fmt.Errorf("redfish walk %s: %s: %w", res.EndpointID, res.Status, problem.ErrUnavailable)
	}
	return res, nil
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxConcurrentRequests <= 0 {
		o.MaxConcurrentRequests = DefaultMaxConcurrentRequests
	}
	return o
}

// endpointURL returns the base URL of ep's Redfish service and the host[:port]
// that HSM shows as RedfishEndpointFQDN.
func endpointURL(ep Endpoint) (base, host string, err error) {
	host = strings.TrimSpace(ep.FQDN)
	if host == "" {
		host = strings.TrimSpace(ep.IPAddress)
		if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			host = "[" + host + "]"
		}
	}
	if host == "" {
		return "", "", errors.New("endpoint has neither FQDN nor IPAddress")
	}
	scheme := strings.ToLower(ep.Scheme)
	if scheme == "" {
		scheme = "https"
	}
	if scheme != "https" && scheme != "http" {
		return "", "", fmt.Errorf("endpoint scheme %q is neither https nor http", ep.Scheme)
	}
	u, err := url.Parse(scheme + "://" + host)
	if err != nil || u.Host != host || u.Path != "" || u.User != nil {
		return "", "", fmt.Errorf("endpoint address %q is not a host[:port]", host)
	}
	return u.String(), host, nil
}

// domainOf returns the domain part of a host name, or "" for an IP address
// or a bare host name.
func domainOf(fqdn string) string {
	h := fqdn
	if hh, _, err := net.SplitHostPort(fqdn); err == nil {
		h = hh
	}
	if net.ParseIP(h) != nil {
		return ""
	}
	if _, d, ok := strings.Cut(h, "."); ok {
		return d
	}
	return ""
}

// baseTransport returns the transport to reach ep and a function releasing
// its idle connections, so that walking thousands of BMCs keeps no sockets.
func baseTransport(ep Endpoint, opts Options) (http.RoundTripper, func()) {
	if opts.HTTPClient != nil {
		tr := opts.HTTPClient.Transport
		if tr == nil {
			tr = http.DefaultTransport
		}
		return tr, func() {}
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: ep.RootCAs,
		// BMCs speak neither ML-KEM nor TLS 1.3 hybrids (reds offers the
		// same); offering only classic curves saves a key share per handshake.
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256}}
	if ep.RootCAs == nil {
		tc.InsecureSkipVerify = true // HSM's default for BMCs with self-signed certificates.
		// Nothing is verified, so resuming a session loses nothing; with
		// RootCAs every handshake is a full one, so that a BMC whose
		// certificate changed is checked again (a resumed session would
		// skip the certificate).
		tc.ClientSessionCache = opts.SessionCache
		if tc.ClientSessionCache == nil {
			tc.ClientSessionCache = tls.NewLRUClientSessionCache(opts.MaxConcurrentRequests)
		}
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{}).DialContext,
		TLSClientConfig:     tc,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: opts.MaxConcurrentRequests,
	}
	return tr, tr.CloseIdleConnections
}

// walker holds the state of one walk. Everything it appends to res goes
// through add or the note helpers, which lock mu.
type walker struct {
	res     *Result
	bmcID   string
	bmcType xname.Type
	fqdn    string
	domain  string

	mu sync.Mutex
}

// run connects and walks the tree, recording the outcome in w.res.
func (w *walker) run(ctx context.Context, base string, m *meter, opts Options) {
	client, err := gofish.ConnectContext(ctx, gofish.ClientConfig{
		Endpoint:              base,
		HTTPClient:            &http.Client{Transport: m},
		MaxConcurrentRequests: int64(opts.MaxConcurrentRequests),
		ReuseConnections:      true,
		NoModifyTransport:     true,
	})
	if err != nil {
		w.failErr(ctx, "service root", err)
		return
	}
	svc := client.GetService()
	w.res.RedfishVersion = svc.RedfishVersion
	w.res.UUID = svc.UUID
	w.walkService(ctx, svc)
}

// rank orders failure statuses: when several failures happen, the most
// telling one is reported.
func rank(s Status) int {
	switch s {
	case StatusChildVerificationFailed:
		return 1
	case StatusHTTPsGetFailed:
		return 2
	case StatusDecodeFailed:
		return 3
	case StatusVerificationFailed:
		return 4
	case StatusEndpointInvalid:
		return 5
	}
	return 0
}

// fail records a failure of the walk.
func (w *walker) fail(s Status, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rank(s) > rank(w.res.Status) {
		w.res.Status = s
	}
	w.res.Errors = append(w.res.Errors, msg)
}

// failErr records a failed GET of what.
func (w *walker) failErr(ctx context.Context, what string, err error) {
	s := w.classify(ctx, err)
	w.fail(s, fmt.Sprintf("%s: %s: %s", what, s, w.describe(ctx, err)))
}

// optional handles the error of an optional GET: a timeout or refused
// credentials still fail the walk, anything else is recorded as missing.
func (w *walker) optional(ctx context.Context, parent, what string, err error) {
	switch s := w.classify(ctx, err); {
	case ctx.Err() != nil, s == StatusVerificationFailed:
		w.failErr(ctx, parent+": "+what, err)
	default:
		w.note(&w.res.Missing, fmt.Sprintf("%s: %s (%s)", parent, what, w.describe(ctx, err)))
	}
}

// note appends msg to one of the result's string lists.
func (w *walker) note(list *[]string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	*list = append(*list, msg)
}

// classify maps a gofish or transport error to a discovery status.
func (w *walker) classify(ctx context.Context, err error) Status {
	if ctx.Err() != nil {
		return StatusHTTPsGetFailed
	}
	var ce *schemas.CollectionError
	if errors.As(err, &ce) {
		worst := StatusOK
		for _, e := range ce.Failures {
			if s := w.classify(ctx, e); rank(s) > rank(worst) {
				worst = s
			}
		}
		return worst
	}
	if code := httpStatus(err); code != 0 {
		if code == http.StatusUnauthorized || code == http.StatusForbidden {
			return StatusVerificationFailed
		}
		return StatusHTTPsGetFailed
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return StatusHTTPsGetFailed // the transport failed: refused, reset, TLS, ...
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, errBodyTooLarge) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return StatusDecodeFailed
	}
	return StatusHTTPsGetFailed
}

// httpStatus returns the HTTP status carried by a gofish error, or 0.
func httpStatus(err error) int {
	var he *schemas.Error
	if errors.As(err, &he) {
		return he.HTTPReturnedStatusCode
	}
	return 0
}

// describe renders err in one short line. gofish errors carry the BMC's body,
// which is kept out: only the status code or the error class is shown.
func (w *walker) describe(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return "timed out"
	}
	var ce *schemas.CollectionError
	if errors.As(err, &ce) {
		parts := make([]string, 0, len(ce.Failures))
		for link, e := range ce.Failures {
			parts = append(parts, link+": "+w.describe(ctx, e))
		}
		sortStrings(parts)
		return strings.Join(parts, "; ")
	}
	if code := httpStatus(err); code != 0 {
		return fmt.Sprintf("HTTP %d", code)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " failed: " + ue.Err.Error()
	}
	return err.Error()
}
