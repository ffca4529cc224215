package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/mtls"
)

// A service is a daemon the CLI talks to.
type service struct {
	name string
	port int    // its default port
	path string // its readiness probe, below the URL ("": status does not probe it)
}

// services lists the daemons in the order status shows them.
func services() []service {
	return []service{
		{name: "sls", port: 8376, path: "/v1/readiness"},
		{name: "hsm", port: 27779, path: "/hsm/v2/service/ready"},
		{name: "hbtd", port: 28500, path: "/hmi/v1/readiness"},
		{name: "hmnfd", port: 28600, path: "/hmi/v2/readiness"},
		// BSS has no readiness route; /service/status/etcd answers 200 only
		// when its store answers.
		{name: "bss", port: 27778, path: "/boot/v1/service/status/etcd"},
		{name: "pcs", port: 28007, path: "/readiness"},
		{name: "bos", port: 9000, path: "/v2/healthz"},
		{name: "reds", port: 8269, path: "/v1/readiness"},
		{name: "nodes", port: 27780, path: "/nodes/v1/readiness"},
	}
}

// connection holds the connection flags as parsed.
type connection struct {
	urls      map[string]*string // service -> -<service>-url
	timeout   *time.Duration
	tokenFile *string
	tls       map[string]*string // tls-cert, tls-key, ca-file
}

func declareConnection(fs *flag.FlagSet) connection {
	c := connection{urls: map[string]*string{}}
	for _, s := range services() {
		c.urls[s.name] = fs.String(s.name+"-url", "", fmt.Sprintf("`URL` of %s (env HMS_%s_URL; default http://127.0.0.1:%d)", s.name, strings.ToUpper(s.name), s.port))
	}
	c.timeout = fs.Duration("request-timeout", 30*time.Second, "`DURATION` a single request to a daemon may take")
	c.tokenFile = fs.String("token-file", "", "`FILE` holding the Bearer token sent to the daemons when they check tokens (default: $HMS_TOKEN, else token-file or token in the config file)")
	c.tls = map[string]*string{
		"tls-cert": fs.String("tls-cert", "", "PEM `FILE` of the client certificate presented to https:// daemons run with -client-ca (env HMS_TLS_CERT, or tls-cert in the config file)"),
		"tls-key":  fs.String("tls-key", "", "PEM `FILE` of the key of -tls-cert (env HMS_TLS_KEY, or tls-key in the config file)"),
		"ca-file":  fs.String("ca-file", "", "PEM `FILE` of the CA(s) trusted for the daemons' https:// certificates (env HMS_CA_FILE, or ca-file in the config file; default: the system's roots)"),
	}
	return c
}

func isConnectionFlag(name string) bool {
	switch name {
	case "request-timeout", "token-file", "tls-cert", "tls-key", "ca-file":
		return true
	}
	return strings.HasSuffix(name, "-url")
}

// endpoint is a daemon's URL and where it was found.
type endpoint struct {
	URL    string `json:"URL"`
	Source string `json:"Source"` // "-hsm-url", "HMS_HSM_URL", a file name, or "default"
}

// resolve finds each daemon's URL: flag, else environment, else the user's
// config file, else the system's, else the default port on 127.0.0.1.
func resolve(o Options, c connection) (map[string]endpoint, error) {
	files, err := readConfigs(o)
	if err != nil {
		return nil, err
	}
	out := map[string]endpoint{}
	for _, s := range services() {
		key := s.name + "-url"
		env := "HMS_" + strings.ToUpper(s.name) + "_URL"
		e := endpoint{URL: "http://127.0.0.1:" + strconv.Itoa(s.port), Source: "default"}
		switch {
		case *c.urls[s.name] != "":
			e = endpoint{URL: *c.urls[s.name], Source: "-" + key}
		case o.Getenv(env) != "":
			e = endpoint{URL: o.Getenv(env), Source: env}
		default:
			for _, f := range files {
				if v, ok := f.values[key]; ok {
					e = endpoint{URL: v, Source: f.name}
					break
				}
			}
		}
		if err := checkURL(e.URL); err != nil {
			return nil, cli.Usagef("%s %q (%s): %v", key, e.URL, e.Source, err)
		}
		out[s.name] = e
	}
	return out, nil
}

// resolveToken finds the token sent to the daemons: -token-file, else
// $HMS_TOKEN, else token-file or token of the user's config file, else of
// the system's. A relative token-file is relative to its config file.
func resolveToken(o Options, c connection) (token.Config, error) {
	if *c.tokenFile != "" {
		return token.Config{File: *c.tokenFile}, nil
	}
	if o.Getenv != nil && o.Getenv(token.Env) != "" {
		return token.Config{Token: o.Getenv(token.Env)}, nil
	}
	files, err := readConfigs(o)
	if err != nil {
		return token.Config{}, err
	}
	for _, f := range files {
		if p, ok := f.values["token-file"]; ok && p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(f.name), p)
			}
			return token.Config{File: p}, nil
		}
		if t, ok := f.values["token"]; ok && t != "" {
			return token.Config{Token: t}, nil
		}
	}
	return token.Config{}, nil
}

// resolveTLS finds the client certificate, its key and the CA file: each
// from its flag (-tls-cert), else its environment variable (HMS_TLS_CERT),
// else the user's config file, else the system's (relative to the file).
func resolveTLS(o Options, c connection) (mtls.Config, error) {
	files, err := readConfigs(o)
	if err != nil {
		return mtls.Config{}, err
	}
	v := map[string]string{}
	for _, key := range []string{"tls-cert", "tls-key", "ca-file"} {
		if p := *c.tls[key]; p != "" {
			v[key] = p
			continue
		}
		if p := o.Getenv("HMS_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))); p != "" {
			v[key] = p
			continue
		}
		for _, f := range files {
			if p, ok := f.values[key]; ok && p != "" {
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(f.name), p)
				}
				v[key] = p
				break
			}
		}
	}
	cfg, err := mtls.ForClient(v["tls-cert"], v["tls-key"], v["ca-file"])
	if err != nil {
		return mtls.Config{}, cli.Usagef("tls-cert, tls-key, ca-file: %v", err)
	}
	return cfg, nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want http://HOST:PORT or https://HOST:PORT")
	}
	return nil
}

// configFile is one config file as read.
type configFile struct {
	name   string
	values map[string]string
}

// configPaths are the config files, most specific first.
func configPaths(o Options) []string {
	var paths []string
	if x := o.Getenv("XDG_CONFIG_HOME"); x != "" {
		paths = append(paths, filepath.Join(x, "hms", "config.yaml"))
	} else if h := o.Getenv("HOME"); h != "" {
		paths = append(paths, filepath.Join(h, ".config", "hms", "config.yaml"))
	}
	if o.SystemConfig != "" {
		paths = append(paths, o.SystemConfig)
	}
	return paths
}

// readConfigs reads the config files that exist; a file that exists but
// does not parse, or names a key no flag has, is an error.
func readConfigs(o Options) ([]configFile, error) {
	known := map[string]bool{}
	for _, k := range configKeys() {
		known[k] = true
	}
	var out []configFile
	for _, p := range configPaths(o) {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, cli.Usagef("config file: %v", err)
		}
		values := map[string]string{}
		if err := yaml.UnmarshalStrict(b, &values); err != nil {
			return nil, cli.Usagef("config file %s: %v", p, err)
		}
		for k := range values {
			if !known[k] {
				return nil, cli.Usagef("config file %s: unknown key %q (keys: %s)", p, k, strings.Join(configKeys(), ", "))
			}
		}
		out = append(out, configFile{name: p, values: values})
	}
	return out, nil
}

func configKeys() []string {
	var keys []string
	for _, s := range services() {
		keys = append(keys, s.name+"-url")
	}
	return append(keys, "token-file", "token", "tls-cert", "tls-key", "ca-file")
}

// configHelp is the end of `hms help config`.
func configHelp() string {
	return `Each daemon's URL is the first of:
  1. its flag, such as -hsm-url http://mgmt1:27779
  2. its environment variable, such as HMS_HSM_URL
  3. $XDG_CONFIG_HOME/hms/config.yaml (default ~/.config/hms/config.yaml)
  4. /etc/hms/config.yaml
  5. http://127.0.0.1:<the daemon's default port>
A config file holds the flag names as keys:
  sls-url: http://mgmt1:8376
  hsm-url: http://mgmt1:27779
  token-file: /root/hms-data/auth/admin.token
The token sent to the daemons when they check tokens is the first of
-token-file, $HMS_TOKEN, then token-file (relative to the config file) or
token (the token itself: keep such a file mode 0600) in the config files.
For daemons serving https://, tls-cert and tls-key name the client
certificate and key presented to daemons run with -client-ca, and ca-file
the CA(s) trusted for the daemons' certificates (default: the system's
roots); each is its flag, else HMS_TLS_CERT, HMS_TLS_KEY, HMS_CA_FILE, else
the config files (relative to the config file):
  tls-cert: /etc/hms/pki/operator.pem
  tls-key: /etc/hms/pki/operator-key.pem
  ca-file: /etc/hms/pki/ca.pem
Keys: ` + strings.Join(configKeys(), ", ") + `
`
}

func defineConfig(*flag.FlagSet) execFunc {
	return func(_ context.Context, s *session, _ []string) error {
		var rows [][]string
		for _, svc := range services() {
			e := s.urls[svc.name]
			rows = append(rows, []string{svc.name, e.URL, e.Source})
		}
		return s.emit(s.urls, table{cols: []column{{name: "DAEMON"}, {name: "URL"}, {name: "SOURCE"}}, rows: rows})
	}
}
