package ctl

import (
	"errors"
	"fmt"
	"net/http"

	redsclient "github.com/hmsuite/hms/discovery/client"
	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/cli"
	bssclient "github.com/hmsuite/hms/ipxe/client"
	slsclient "github.com/hmsuite/hms/layout/client"
	nodesclient "github.com/hmsuite/hms/nodes/client"
	"github.com/hmsuite/hms/orchestrator"
	powerclient "github.com/hmsuite/hms/power/client"
	"github.com/hmsuite/hms/statemgr/client"
)

// session is one command's run: its options, the daemons' URLs and the
// output format.
type session struct {
	Options
	urls   map[string]endpoint
	format string
	hc     map[string]*http.Client // service -> client naming it when unreachable
	// bosTenant is the tenant bos requests act for ("": none).
	bosTenant string
}

func newSession(o Options, c connection, format *string) (*session, error) {
	urls, err := resolve(o, c)
	if err != nil {
		return nil, err
	}
	s := &session{Options: o, urls: urls, format: "table", hc: map[string]*http.Client{}}
	if format != nil {
		switch *format {
		case "table", "wide", "json", "yaml":
			s.format = *format
		default:
			return nil, usagef("-o %q: want table, wide, json or yaml", *format)
		}
	}
	base := o.HTTP
	if base == nil {
		base = &http.Client{Timeout: *c.timeout}
	}
	tc, err := resolveTLS(o, c)
	if err != nil {
		return nil, err
	}
	base = tc.Client(base)
	tok, err := resolveToken(o, c)
	if err != nil {
		return nil, err
	}
	if tc := tok.Client(base); tc != nil {
		base = tc
	}
	for name, e := range urls {
		rt := base.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		hc := *base
		hc.Transport = unreachable{rt: rt, service: name, at: e}
		s.hc[name] = &hc
	}
	return s, nil
}

func (s *session) sls() *slsclient.Client { return slsclient.New(s.urls["sls"].URL, s.hc["sls"]) }
func (s *session) hsm() *client.Client    { return client.New(s.urls["hsm"].URL, s.hc["hsm"], "hms-cli") }
func (s *session) hbtd() *agent.Client    { return agent.NewClient(s.urls["hbtd"].URL, s.hc["hbtd"]) }
func (s *session) hmnfd() *fanout.Client {
	return fanout.NewClient(s.urls["hmnfd"].URL, s.hc["hmnfd"])
}
func (s *session) bss() *bssclient.Client { return bssclient.New(s.urls["bss"].URL, s.hc["bss"]) }
func (s *session) nodes() *nodesclient.Client {
	return nodesclient.New(s.urls["nodes"].URL, s.hc["nodes"], "hms-cli")
}
func (s *session) pcs() *powerclient.Client {
	return powerclient.New(s.urls["pcs"].URL, s.hc["pcs"], "hms-cli")
}
func (s *session) reds() *redsclient.Client {
	return redsclient.New(s.urls["reds"].URL, s.hc["reds"], "hms-cli")
}
func (s *session) bos() *orchestrator.Client {
	hc := s.hc["bos"]
	if s.bosTenant != "" && hc != nil {
		tc := *hc
		tc.Transport = tenantHeader{rt: hc.Transport, tenant: s.bosTenant}
		hc = &tc
	}
	return orchestrator.NewClient(s.urls["bos"].URL, hc, "hms-cli")
}

// tenantHeader sends bos's Cray-Tenant-Name on every request.
type tenantHeader struct {
	rt     http.RoundTripper
	tenant string
}

func (t tenantHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(orchestrator.TenantHeader, t.tenant)
	rt := t.rt
	if rt == nil {
		rt = http.DefaultTransport
	}
	return rt.RoundTrip(r)
}

// unreachable marks the transport failures of one daemon's requests with
// the daemon, its URL and where that URL came from, so the one-line error
// tells the operator what to fix.
type unreachable struct {
	rt      http.RoundTripper
	service string
	at      endpoint
}

func (u unreachable) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := u.rt.RoundTrip(r)
	if err != nil && r.Context().Err() == nil {
		err = &unreachableError{service: u.service, at: u.at, err: err}
	}
	return resp, err
}

type unreachableError struct {
	service string
	at      endpoint
	err     error
}

func (e *unreachableError) Error() string {
	how := "set by " + e.at.Source
	if e.at.Source == "default" {
		how = fmt.Sprintf("the default; set -%s-url, HMS_%s_URL or a config file", e.service, upper(e.service))
	}
	return fmt.Sprintf("cannot reach %s at %s (%s): %v", e.service, e.at.URL, how, rootCause(e.err))
}

func (e *unreachableError) Unwrap() error { return e.err }

// rootCause is the innermost error: "connection refused" rather than the
// dial's whole chain.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// explain replaces an error that holds a transport failure by that failure
// alone: the request path and the client's wrapping add nothing for the
// operator.
func explain(err error) error {
	var ue *unreachableError
	if errors.As(err, new(*cli.ExitError)) {
		return err // explained when it was made
	}
	if errors.As(err, &ue) {
		return ue
	}
	return err
}
