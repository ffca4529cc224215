package fanout

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/testpeer"
)

// TestAuthTable: the table names every route hmnfd serves, and nothing else.
func TestAuthTable(t *testing.T) {
	svc, _ := openService(t, dbPath(t), Config{Client: &http.Client{Transport: newReceiver()}})
	authtest.CheckTable(t, AuthTable(), NewAPI(svc, quietLog(), Params{}, nil).Handler().Patterns())
}

// TestNodeTokenSubscribesItselfOnly: a node token may subscribe its own
// xname (v1 and v2), not another's; refused requests store nothing.
func TestNodeTokenSubscribesItselfOnly(t *testing.T) { pg.EachDB(t, testNodeTokenSubscribesItselfOnly) }

func testNodeTokenSubscribesItselfOnly(t *testing.T, db testpeer.DB) {
	is := authtest.New(t)
	svc, _ := openService(t, db(t), Config{Client: &http.Client{Transport: newReceiver()}})
	h, err := is.Config().Wrap(NewAPI(svc, quietLog(), Params{Port: 28600}, nil).Handler(), AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	node := is.Token("x1000c0s0b0n0", auth.Node)
	sub := func(who string) string {
		return `{"Subscriber":"` + who + `","Components":["x1000c0s0b0n0"],"States":["Ready"],"Url":"http://127.0.0.1:9/scn"}`
	}
	v2 := `{"Components":["x1000c0s0b0n0"],"States":["Ready"],"Url":"http://127.0.0.1:9/scn"}`
	steps := []struct {
		method, path, body, token string
		want                      int
	}{
		{method: "POST", path: "/hmi/v1/subscribe", body: sub("hbagent@x1000c0s0b0n0"), want: 401},
		{method: "POST", path: "/hmi/v1/subscribe", body: sub("hbagent@x1000c0s0b0n1"), token: node, want: 403},
		{method: "POST", path: "/hmi/v2/subscriptions/x1000c0s0b0n1/agents/a", body: v2, token: node, want: 403},
		{method: "GET", path: "/hmi/v1/subscriptions", token: node, want: 403},
		{method: "POST", path: "/hmi/v1/scn", body: `{"Components":["x1"],"State":"Off"}`, token: is.Token("olaf", auth.Operator), want: 403},
		{method: "POST", path: "/hmi/v1/subscribe", body: sub("hbagent@x1000c0s0b0n0"), token: node, want: 200},
		{method: "POST", path: "/hmi/v2/subscriptions/x1000c0s0b0n0/agents/b", body: v2, token: node, want: 200},
		{method: "GET", path: "/hmi/v2/subscriptions/x1000c0s0b0n0", token: node, want: 200},
	}
	for _, s := range steps {
		req, _ := http.NewRequestWithContext(t.Context(), s.method, srv.URL+s.path, strings.NewReader(s.body))
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != s.want {
			t.Errorf("%s %s: %d, want %d", s.method, s.path, resp.StatusCode, s.want)
		}
	}
	stored, err := svc.store.subscriptions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 {
		t.Errorf("stored %d subscriptions, want the node's own 2", len(stored))
	}
	for _, s := range stored {
		if s.key.Component != "x1000c0s0b0n0" {
			t.Errorf("stored a subscription for %s", s.key.Component)
		}
	}
}

// TestSCNTokenDelivers: the scn role may post SCNs to hmnfd and do nothing
// else; deliveries to subscribers carry hmnfd's SCN token, over net/http
// and over its own HTTP/1.1 client.
func TestSCNTokenDelivers(t *testing.T) {
	is := authtest.New(t)
	svc, _ := openService(t, dbPath(t), Config{Client: &http.Client{Transport: newReceiver()}})
	h, err := is.Config().Wrap(NewAPI(svc, quietLog(), Params{Port: 28600}, nil).Handler(), AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	scn := is.Token("hms-scn", auth.SCN)
	for _, s := range []struct {
		method, path, body string
		want               int
	}{
		{method: "POST", path: "/hmi/v1/scn", body: `{"Components":["x1000c0s0b0n0"],"State":"Off"}`, want: 200},
		{method: "POST", path: "/hmi/v1/subscribe", body: `{"Subscriber":"a@x1000c0s0b0n0","Components":["x1000c0s0b0n0"],"States":["Ready"],"Url":"http://127.0.0.1:9/scn"}`, want: 403},
		{method: "GET", path: "/hmi/v1/subscriptions", want: 403},
		{method: "PATCH", path: "/hmi/v1/params", body: `{}`, want: 403},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), s.method, srv.URL+s.path, strings.NewReader(s.body))
		req.Header.Set("Authorization", "Bearer "+scn)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != s.want {
			t.Errorf("scn token %s %s: %d, want %d", s.method, s.path, resp.StatusCode, s.want)
		}
	}

	seen := make(chan string, 1)
	sub := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.Header.Get("Authorization"):
		default:
		}
	}))
	t.Cleanup(sub.Close)
	tok := func(context.Context) (string, error) { return "scn-token", nil }
	c := newH1Client(5*time.Second, 1)
	defer c.close()
	c.auth = tok
	if err := c.post(t.Context(), mustTarget(t, sub.URL+"/scn"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "Bearer scn-token" {
		t.Errorf("h1Client delivery: Authorization %q", got)
	}
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver()
		var mu sync.Mutex
		got := map[string]string{}
		cfg := bubbleConfig(rc)
		cfg.Client = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			got[r.URL.Host] = r.Header.Get("Authorization")
			mu.Unlock()
			return rc.RoundTrip(r)
		})}
		cfg.Auth, cfg.AuthHosts = tok, token.Hosts{"bss.mgmt"}
		svc, _ := openService(t, dbPath(t), cfg)
		// bss.mgmt is listed; node.mgmt, a subscriber that chose its own
		// URL, must not collect the token.
		mustSubscribe(t, svc, Key{Component: "x1c0s0b0n0", Agent: "a"}, Subscription{States: []string{"Off"}, Url: "https://bss.mgmt/scn"})
		mustSubscribe(t, svc, Key{Component: "x1c0s0b0n0", Agent: "b"}, Subscription{States: []string{"Off"}, Url: "https://node.mgmt/scn"})
		stop := runService(t, svc)
		defer stop()
		enqueueStates(t, svc, 1, 1, "x1c0s0b0n0", "Off")
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff(map[string]string{"bss.mgmt": "Bearer scn-token", "node.mgmt": ""}, got); diff != "" {
			t.Errorf("net/http deliveries' Authorization by host (-want +got):\n%s", diff)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
