package token

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// blockingPeer is a token endpoint that answers body once release is
// closed, counting the requests it got.
type blockingPeer struct {
	body    string
	release chan struct{}
	calls   atomic.Int32
}

func (p *blockingPeer) RoundTrip(r *http.Request) (*http.Response, error) {
	p.calls.Add(1)
	select {
	case <-p.release:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(p.body)), Request: r}, nil
}

// TestRenewOutsideTheLock: while a renewal is in flight, other callers are
// not held by it: they send the current token while it is valid, and once
// it has expired they wait for that renewal rather than starting theirs.
// One exchange in all.
func TestRenewOutsideTheLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		old := fakeJWT("old", t0.Add(-2*time.Minute), t0.Add(30*time.Second))
		fresh := fakeJWT("fresh", t0, t0.Add(time.Hour))
		peer := &blockingPeer{body: `{"access_token":"` + fresh + `"}`, release: make(chan struct{})}
		var clock atomic.Int64
		clock.Store(t0.UnixNano())
		s := &tokenSource{cfg: Config{Token: old, RenewURL: "http://bss/renew"}, hc: &http.Client{Transport: peer},
			now: func() time.Time { return time.Unix(0, clock.Load()) }}
		ctx := context.Background()

		var wg sync.WaitGroup
		got := make([]string, 4)
		wg.Go(func() { got[0], _ = s.token(ctx) }) // past half its life: renews
		synctest.Wait()
		if tok, _ := s.token(ctx); tok != old || peer.calls.Load() != 1 {
			t.Fatalf("during the renewal another caller got %q after %d exchanges, want the valid old token at once", tok, peer.calls.Load())
		}
		clock.Store(t0.Add(31 * time.Second).UnixNano()) // old has expired
		for i := 1; i < len(got); i++ {
			wg.Go(func() { got[i], _ = s.token(ctx) })
		}
		synctest.Wait()
		if peer.calls.Load() != 1 {
			t.Fatalf("%d exchanges, want the callers waiting for the one in flight", peer.calls.Load())
		}
		close(peer.release)
		wg.Wait()
		for i, tok := range got {
			if tok != fresh {
				t.Errorf("caller %d got %q, want the renewed token", i, tok)
			}
		}
	})
}

// TestClientCredentialsShared: callers with no token yet share one fetch
// from the token endpoint, and one whose context ends stops waiting.
func TestClientCredentialsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		peer := &blockingPeer{body: `{"access_token":"fetched","expires_in":3600}`, release: make(chan struct{})}
		secret := t.TempDir() + "/secret"
		if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := &tokenSource{cfg: Config{OAuth: ClientCredentials{TokenURL: "http://idp/token", ClientID: "hsm", SecretFile: secret}},
			hc: &http.Client{Transport: peer}}
		var wg sync.WaitGroup
		got := make([]string, 3)
		wg.Go(func() { got[0], _ = s.token(context.Background()) }) // fetches
		synctest.Wait()
		for i := 1; i < len(got); i++ {
			wg.Go(func() { got[i], _ = s.token(context.Background()) })
		}
		cctx, cancel := context.WithCancel(context.Background())
		var cancelled error
		wg.Go(func() { _, cancelled = s.token(cctx) })
		synctest.Wait()
		if peer.calls.Load() != 1 {
			t.Fatalf("%d fetches in flight, want one shared", peer.calls.Load())
		}
		cancel()
		synctest.Wait() // the cancelled caller has returned; the fetch is still held
		close(peer.release)
		wg.Wait()
		if cancelled == nil {
			t.Error("a caller whose context ended got a token")
		}
		for i, tok := range got {
			if tok != "fetched" {
				t.Errorf("caller %d got %q, want the fetched token", i, tok)
			}
		}
	})
}
