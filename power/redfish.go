package power

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/hmsuite/hms/power/pcs"
)

// The Redfish calls are plain net/http decoded into gofish's schemas types,
// as HSM's walk does (statemgr/redfish): gofish's client starts every
// connection with a GET of the service root and carries one context per
// client, while a task needs each request bounded by its own context (abort,
// deadline) and, at 10,000 BMCs with 1 s of latency each, no extra round
// trip.

// Target is how to reach and reset one component over Redfish.
type Target struct {
	// BMC is the xname of the component's BMC (its credentials key).
	BMC string
	// Base is the BMC's scheme://host[:port].
	Base string
	// Resource is the @odata.id of the ComputerSystem or Chassis.
	Resource string
	// ResetURI is the Reset action's target; empty: read it from Resource.
	ResetURI string
	// Allowed are ResetType@Redfish.AllowableValues as HSM recorded them;
	// nil when the BMC did not give them (see resetCache).
	Allowed []string
}

// Credential is a BMC login.
type Credential struct {
	Username string `json:"Username"`
	Password string `json:"Password"`
}

// Credentials gives the login of a BMC by its xname.
type Credentials interface {
	For(bmc string) (Credential, bool)
}

// resource is what a task reads of a ComputerSystem or Chassis.
type resource struct {
	PowerState schemas.PowerState `json:"PowerState"`
	Actions    struct {
		System  *resetAction `json:"#ComputerSystem.Reset"`
		Chassis *resetAction `json:"#Chassis.Reset"`
	} `json:"Actions"`
}

type resetAction struct {
	Target     string   `json:"target"`
	Allowable  []string `json:"ResetType@Redfish.AllowableValues"`
	ActionInfo string   `json:"@Redfish.ActionInfo"`
}

func (r *resource) reset() *resetAction {
	if r.Actions.System != nil {
		return r.Actions.System
	}
	return r.Actions.Chassis
}

// powerOf maps a Redfish PowerState to PCS's on/off/undefined; PoweringOn
// counts as off and PoweringOff as on, as PCS's filters treat them.
func powerOf(s schemas.PowerState) string {
	switch s {
	case schemas.OnPowerState, schemas.PoweringOffPowerState:
		return pcs.PowerOn
	case schemas.OffPowerState, schemas.PoweringOnPowerState:
		return pcs.PowerOff
	}
	return pcs.PowerUndefined
}

// errRefused is a BMC's 4xx answer to a reset: the reset type is not
// supported there.
var errRefused = errors.New("refused by the BMC")

// BMCClient sends Redfish requests with bounded concurrency: at most
// perBMC requests in flight to one BMC and global overall.
type BMCClient struct {
	hc      *http.Client
	creds   Credentials
	global  chan struct{}
	perBMC  int
	timeout time.Duration
	// after, if set, times timeout instead of the real clock (tests).
	after func(time.Duration) <-chan time.Time
	m     *bmcMetrics

	mu    sync.Mutex
	hosts map[string]chan struct{}
}

// NewBMCClient returns a client that registers its metrics with reg
// (nil: nowhere). BMC certificates are not checked, as in HMS (BMCs ship
// self-signed ones).
func NewBMCClient(creds Credentials, global, perBMC int, timeout time.Duration, reg prometheus.Registerer) *BMCClient {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // BMCs are self-signed, as HSM's default
		MaxIdleConnsPerHost: perBMC,
		MaxConnsPerHost:     perBMC,
		// No overall idle cap: at 10,000 BMCs a cap below their number
		// closes and reopens a connection for nearly every request. A
		// task's requests are sequential, so it is about one per BMC.
		MaxIdleConns:    0,
		IdleConnTimeout: 90 * time.Second,
	}
	return &BMCClient{hc: &http.Client{Transport: tr, CheckRedirect: noRedirect}, creds: creds,
		global: make(chan struct{}, global), perBMC: perBMC, timeout: timeout, hosts: map[string]chan struct{}{},
		m: newBMCMetrics(reg)}
}

// noRedirect keeps credentials at the BMC's own origin.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Close drops idle connections.
func (c *BMCClient) Close() { c.hc.CloseIdleConnections() }

func (c *BMCClient) acquire(ctx context.Context, host string) (func(), error) {
	c.mu.Lock()
	sem, ok := c.hosts[host]
	if !ok {
		sem = make(chan struct{}, c.perBMC)
		c.hosts[host] = sem
	}
	c.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case c.global <- struct{}{}:
	case <-ctx.Done():
		<-sem
		return nil, ctx.Err()
	}
	return func() { <-c.global; <-sem }, nil
}

// do sends one request to t's BMC and returns the body of a 2xx answer,
// counting it and its failure.
func (c *BMCClient) do(ctx context.Context, t Target, method, path string, body any) ([]byte, error) {
	start := time.Now()
	b, status, err := c.send(ctx, t, method, path, body)
	c.m.requests.WithLabelValues(method).Inc()
	c.m.latency.Observe(time.Since(start).Seconds())
	if err != nil {
		c.m.errors.WithLabelValues(method, errReason(ctx, err, status)).Inc()
	}
	return b, err
}

// send is do without the metrics; status is the BMC's answer (0: none).
func (c *BMCClient) send(ctx context.Context, t Target, method, path string, body any) ([]byte, int, error) {
	release, err := c.acquire(ctx, t.Base)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.Base+path, rd)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cred, ok := c.creds.For(t.BMC); ok {
		req.SetBasicAuth(cred.Username, cred.Password)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if context.Cause(ctx) == errBMCTimeout {
			err = fmt.Errorf("%w: %w", err, context.DeadlineExceeded)
		}
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode >= 300 {
		err := fmt.Errorf("bad status code: %d", resp.StatusCode)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusUnauthorized {
			err = fmt.Errorf("%w: %w", err, errRefused)
		}
		return nil, resp.StatusCode, err
	}
	return b, resp.StatusCode, nil
}

// errBMCTimeout is the cause of a request cancelled by an injected clock's
// -bmc-timeout.
var errBMCTimeout = errors.New("BMC request timed out")

// bounded bounds one request by the timeout, on the injected clock if any.
func (c *BMCClient) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.after == nil {
		return context.WithTimeout(ctx, c.timeout)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	fire, stop := c.after(c.timeout), make(chan struct{})
	go func() {
		select {
		case <-fire:
			cancel(errBMCTimeout)
		case <-stop:
		case <-ctx.Done():
		}
	}()
	return ctx, func() { close(stop); cancel(context.Canceled) }
}

// read GETs the component's resource.
func (c *BMCClient) read(ctx context.Context, t Target) (*resource, error) {
	b, err := c.do(ctx, t, http.MethodGet, t.Resource, nil)
	if err != nil {
		return nil, err
	}
	var r resource
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode %s: %w", t.Resource, err)
	}
	return &r, nil
}

// reset POSTs a Reset action.
func (c *BMCClient) reset(ctx context.Context, t Target, uri, resetType string) error {
	_, err := c.do(ctx, t, http.MethodPost, uri, map[string]string{"ResetType": resetType})
	return err
}

// systems lists the members of the BMC's Systems collection.
func (c *BMCClient) systems(ctx context.Context, t Target) ([]string, error) {
	b, err := c.do(ctx, t, http.MethodGet, "/redfish/v1/Systems", nil)
	if err != nil {
		return nil, err
	}
	var col struct {
		Members []struct {
			ID string `json:"@odata.id"`
		} `json:"Members"`
	}
	if err := json.Unmarshal(b, &col); err != nil {
		return nil, fmt.Errorf("decode Systems: %w", err)
	}
	out := make([]string, len(col.Members))
	for i, m := range col.Members {
		out[i] = strings.TrimRight(m.ID, "/")
	}
	return out, nil
}
