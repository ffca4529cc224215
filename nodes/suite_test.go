package nodes_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/sealed"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/ipxe"
	bssclient "github.com/hmsuite/hms/ipxe/client"
	"github.com/hmsuite/hms/layout"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/nodes"
	"github.com/hmsuite/hms/nodes/client"
	"github.com/hmsuite/hms/statemgr"
	hsmclient "github.com/hmsuite/hms/statemgr/client"
)

// suite is sls, hsm and bss started from their packages, each behind a
// proxy that counts the writes (every request but GET) it passes, and a
// nodes API over them.
type suite struct {
	nodes   *client.Client
	backend *nodes.Services
	sls     *slsclient.Client
	hsm     *hsmclient.Client
	bss     *bssclient.Client
	writes  map[string]*atomic.Int64
	// urls are the services' URLs (their counting proxies), by name.
	urls map[string]string
	// opens counts the credentials the daemon unseals.
	opens *atomic.Int64
	// dropPath is the HSM path whose first POST's answer is lost;
	// dropped is set once it was.
	dropPath string
	dropped  atomic.Bool
}

// runner is a started daemon.
type runner interface {
	URL() string
	Run(ctx context.Context) error
}

func newSuite(tb testing.TB) *suite { tb.Helper(); return newSuiteOn(tb, testpeer.SQLite, "") }

// newSuiteOn is newSuite with the nodes daemon's database on db, whose
// proxy of HSM passes the first POST of path (if not empty) to HSM and then
// drops the connection instead of answering: a request that committed and
// whose answer was lost.
func newSuiteOn(tb testing.TB, db testpeer.DB, path string) *suite {
	tb.Helper()
	dir := tb.TempDir()
	dbPath := db(tb)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	tb.Cleanup(func() { cancel(); wg.Wait() })
	run := func(d runner, err error) string {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = d.Run(ctx) }()
		return d.URL()
	}
	slsURL := run(layout.StartDaemon(ctx, layout.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "sls.db")}))
	pub := bus.NewUnread()
	tb.Cleanup(func() { pub.Close() })
	hsmURL := run(statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		SLSURL: slsURL, Publisher: pub, CredKeyFile: filepath.Join(dir, "hsm.key")}))
	bssURL := run(ipxe.StartDaemon(ctx, ipxe.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "bss.db"), HSMURL: hsmURL}))
	s := &suite{writes: map[string]*atomic.Int64{}, dropPath: path}
	slsURL, hsmURL, bssURL = s.counted(tb, "sls", slsURL), s.counted(tb, "hsm", hsmURL), s.counted(tb, "bss", bssURL)
	s.sls, s.hsm, s.bss = slsclient.New(slsURL, nil), hsmclient.New(hsmURL, nil, "test"), bssclient.New(bssURL, nil)
	s.urls = map[string]string{"sls": slsURL, "hsm": hsmURL, "bss": bssURL}

	store, err := nodes.OpenStore(ctx, dbPath)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	box, err := sealed.LoadKey(filepath.Join(dir, "nodes.key"))
	if err != nil {
		tb.Fatal(err)
	}
	backend := nodes.NewServices(nodes.ServicesConfig{SLSURL: slsURL, HSMURL: hsmURL, BSSURL: bssURL})
	svc := nodes.New(store, nodes.Config{Backend: backend, Box: box})
	s.opens = nodes.CountOpens(svc)
	srv := httptest.NewServer(nodes.NewAPI(svc, nil).Handler())
	tb.Cleanup(srv.Close)
	s.nodes, s.backend = client.New(srv.URL, srv.Client(), "test"), backend
	return s
}

// counted returns the URL of a proxy to target that counts its writes.
func (s *suite) counted(tb testing.TB, name, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	n := new(atomic.Int64)
	s.writes[name] = n
	proxy := httputil.NewSingleHostReverseProxy(u)
	// As many idle connections as the daemon keeps (the default two would
	// make the proxy dial for most requests of an apply).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	proxy.Transport = tr
	tb.Cleanup(tr.CloseIdleConnections)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			n.Add(1)
		}
		if name == "hsm" && r.Method == http.MethodPost && s.dropPath != "" && strings.HasSuffix(r.URL.Path, s.dropPath) &&
			s.dropped.CompareAndSwap(false, true) {
			proxy.ServeHTTP(httptest.NewRecorder(), r) // HSM commits...
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close() // ...and its answer is lost
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// counts returns the writes each service has seen so far.
func (s *suite) counts() map[string]int64 {
	out := map[string]int64{}
	for k, v := range s.writes {
		out[k] = v.Load()
	}
	return out
}
