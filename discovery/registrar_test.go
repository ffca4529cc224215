package discovery

import (
	"context"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestRegistrarBatch: endpoints ready together are registered by one POST;
// a batch HSM refuses whole because one endpoint exists is registered one
// by one, the existing endpoint PATCHed (enabled again, new address).
func TestRegistrarBatch(t *testing.T) {
	s := newSuite(t, map[string]any{}, nil)
	ctx := t.Context()
	ep := func(x, ip string) Endpoint {
		return Endpoint{Xname: x, MAC: "02:00:00:00:00:01", IP: ip, Addr: ip, User: "root", Password: "secret"}
	}
	off := false
	if err := s.hsm.CreateRedfishEndpoints(ctx, hsm.RedfishEndpoint{ID: "x3000c0s3b0", FQDN: "127.0.0.99", Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		eps   []Endpoint
		posts int
	}{
		{name: "new", eps: []Endpoint{ep("x3000c0s1b0", "127.0.0.11"), ep("x3000c0s2b0", "127.0.0.12")}, posts: 1},
		{name: "one exists", eps: []Endpoint{ep("x3000c0s4b0", "127.0.0.14"), ep("x3000c0s3b0", "127.0.0.13")}, posts: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &countPosts{HSM: s.hsm}
			r := newRegistrar(h)
			for i, err := range r.post(ctx, tt.eps) {
				if err != nil {
					t.Errorf("%s: %v", tt.eps[i].Xname, err)
				}
				got, err := s.hsm.RedfishEndpoint(ctx, tt.eps[i].Xname)
				if err != nil || got.FQDN != tt.eps[i].Addr || got.Enabled == nil || !*got.Enabled || !got.RediscoverOnUpdate {
					t.Errorf("%s in HSM: %+v, %v", tt.eps[i].Xname, got, err)
				}
			}
			if h.posts != tt.posts {
				t.Errorf("%d POSTs, want %d", h.posts, tt.posts)
			}
		})
	}
}

// countPosts counts the RedfishEndpoint POSTs (one goroutine only).
type countPosts struct {
	HSM
	posts int
}

func (c *countPosts) CreateRedfishEndpoints(ctx context.Context, eps ...hsm.RedfishEndpoint) error {
	c.posts++
	return c.HSM.CreateRedfishEndpoints(ctx, eps...)
}

// TestRegistrarRun: register goes through the running registrar and
// returns HSM's answer; it gives up when its context ends.
func TestRegistrarRun(t *testing.T) {
	s := newSuite(t, map[string]any{}, nil)
	r := newRegistrar(s.hsm)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.run(ctx); close(done) }()
	e := Endpoint{Xname: "x3000c0s1b0", IP: "127.0.0.11", Addr: "127.0.0.11", User: "root", Password: "secret"}
	if err := r.register(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hsm.RedfishEndpoint(ctx, e.Xname); err != nil {
		t.Errorf("registered endpoint: %v", err)
	}
	cancel()
	<-done
	if err := r.register(ctx, e); err == nil {
		t.Error("register after the registrar stopped: no error")
	}
}
