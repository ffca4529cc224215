package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// Base is the control API's path prefix.
const Base = "/sim/v1"

// Request is the body of the control API's POST routes.
type Request struct {
	// XNames are BMC (x3000c0s1b0, x1000c0s0b1, x1000c0b0) or node
	// (x3000c0s1b0n0) xnames.
	XNames []string `json:"xnames"`
	// Layout (add only) also writes the new hardware to SLS.
	Layout bool `json:"layout,omitempty"`
}

func (s *Sim) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Base+"/devices", func(w http.ResponseWriter, r *http.Request) {
		httpserver.WriteJSON(w, http.StatusOK, s.Devices())
	})
	mux.HandleFunc("POST "+Base+"/add", s.handle(s.Add))
	mux.HandleFunc("POST "+Base+"/remove", s.handle(s.Remove))
	mux.HandleFunc("POST "+Base+"/power/on", s.handle(func(_ context.Context, q Request) error { return s.Power(q.XNames, true) }))
	mux.HandleFunc("POST "+Base+"/power/off", s.handle(func(_ context.Context, q Request) error { return s.Power(q.XNames, false) }))
	mux.HandleFunc("POST "+Base+"/kill-bmc", s.handle(func(_ context.Context, q Request) error { return s.KillBMC(q.XNames) }))
	return mux
}

func (s *Sim) handle(fn func(context.Context, Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var q Request
		if err := httpserver.ReadJSON(w, r, 1<<20, &q); err != nil {
			problem.Write(w, r, s.cfg.Log, err)
			return
		}
		if err := fn(r.Context(), q); err != nil {
			problem.Write(w, r, s.cfg.Log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// serveControl serves the control API until ctx ends.
func (s *Sim) serveControl(ctx context.Context) error {
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(s.ctl); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// lookup returns the devices named by xnames, all or none.
func (s *Sim) lookup(xnames []string) ([]*device, error) {
	if len(xnames) == 0 {
		return nil, fmt.Errorf("no xname given: %w", errInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*device
	for _, x := range xnames {
		p, err := parsePlace(x)
		if err != nil {
			return nil, err
		}
		d, ok := s.devices[p.bmcX()]
		if !ok {
			return nil, fmt.Errorf("%s: %w", x, errNotFound)
		}
		out = append(out, d)
	}
	return out, nil
}

// Power presses the power button of each node's BMC (a Redfish reset On or
// ForceOff, as pcs would send), which boots or stops the node.
func (s *Sim) Power(xnames []string, on bool) error {
	ds, err := s.lookup(xnames)
	if err != nil {
		return err
	}
	rt := "ForceOff"
	if on {
		rt = "On"
	}
	for _, d := range ds {
		if d.p.kind == chassisBMC {
			return fmt.Errorf("%s is a chassis controller, with no node to power: %w", d.p.bmcX(), errInvalid)
		}
	}
	for _, d := range ds {
		if err := d.bmc.Reset(systemPath, rt); err != nil {
			return fmt.Errorf("%s: %w", d.p.bmcX(), err)
		}
	}
	return nil
}

// KillBMC makes each BMC stop answering (its process died): it leaves
// its listener and the switch; its node keeps its power state.
func (s *Sim) KillBMC(xnames []string) error {
	ds, err := s.lookup(xnames)
	if err != nil {
		return err
	}
	for _, d := range ds {
		d.stopBMC()
		d.update(func(st *Status) { st.BMCAddr = "" })
	}
	return nil
}

// Remove takes hardware out of the machine: the node is powered off, the
// BMC stops and leaves the switch. SLS is left to the admin (hms node
// remove), as in the HMS remove-node workflow.
func (s *Sim) Remove(_ context.Context, q Request) error {
	ds, err := s.lookup(q.XNames)
	if err != nil {
		return err
	}
	for _, d := range ds {
		d.remove()
		d.update(func(st *Status) { st.BMCAddr = "" })
		s.mu.Lock()
		delete(s.devices, d.p.bmcX())
		s.mu.Unlock()
	}
	return nil
}

// Add puts new hardware in the machine, powered on: its BMC gets an address
// and is found by discovery, its node boots. With q.Layout the hardware is
// written to SLS first (else the admin does it: hms layout, SLS's API).
func (s *Sim) Add(ctx context.Context, q Request) error {
	if len(q.XNames) == 0 {
		return fmt.Errorf("no xname given: %w", errInvalid)
	}
	var added []Status
	for _, x := range q.XNames {
		p, err := parsePlace(x)
		if err != nil {
			return err
		}
		s.mu.Lock()
		_, dup := s.devices[p.bmcX()]
		s.mu.Unlock()
		if dup {
			return fmt.Errorf("%s: %w", x, errExists)
		}
		added = append(added, Status{BMC: p.bmcX()})
	}
	for i := range added {
		p, _ := parsePlace(added[i].BMC)
		s.mu.Lock()
		added[i].NID = s.nextNID + 1
		s.mu.Unlock()
		if q.Layout {
			if err := s.writeLayout(ctx, added[i:i+1]); err != nil {
				return err
			}
		}
		if _, err := s.add(p, true); err != nil {
			return err
		}
	}
	return nil
}

// Client drives a running sim's control API (hms sim add|remove|power|kill-bmc).
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the control API at baseURL.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	return &Client{base: strings.TrimRight(baseURL, "/") + Base, hc: hc}
}

// Do posts q to the route (add, remove, power/on, power/off, kill-bmc).
func (c *Client) Do(ctx context.Context, route string, q Request) error {
	b, _ := json.Marshal(q)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+route, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.send(req, nil)
}

// Devices lists the simulated devices.
func (c *Client) Devices(ctx context.Context) ([]Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/devices", nil)
	if err != nil {
		return nil, err
	}
	var out []Status
	return out, c.send(req, &out)
}

func (c *Client) send(req *http.Request, out any) error {
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("hms sim control API: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<22))
	if resp.StatusCode >= 300 {
		var p struct{ Detail string }
		if json.Unmarshal(b, &p) == nil && p.Detail != "" {
			return problem.FromStatus(resp.StatusCode, p.Detail)
		}
		return problem.FromStatus(resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
