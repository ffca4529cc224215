package cli

import (
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Listen defines -listen HOST:PORT with the given default.
func (f *FlagSet) Listen(def string) *string {
	return f.ListenNamed("listen", def, "`HOST:PORT` to serve HTTP on (empty host: all addresses)")
}

// ListenNamed defines a HOST:PORT flag of another name, for binaries that
// serve on several addresses.
func (f *FlagSet) ListenNamed(name, def, usage string) *string {
	p := new(string)
	*p = def
	f.Var(listenValue{p}, name, usage)
	return p
}

// DBOrURL defines -db, the daemon's database: a SQLite file's PATH or a
// postgres:// URL (sqldb.Open takes either). Every daemon with a database
// takes it, each tested on both.
func (f *FlagSet) DBOrURL(def string) *string {
	return f.String("db", def, "SQLite database `PATH` (created on first start), or postgres://USER:PASSWORD@HOST/DB "+
		"for a PostgreSQL database (LC_COLLATE 'C'; tables created on first start)")
}

// LogLevel defines -log-level (debug, info, warn, error).
func (f *FlagSet) LogLevel() *slog.Level {
	l := new(slog.Level)
	f.TextVar(l, "log-level", slog.LevelInfo, "log `LEVEL`: debug, info, warn or error")
	return l
}

// URL defines a base-URL flag (http or https, with a host); "" is allowed when
// def is "" and means "not configured".
func (f *FlagSet) URL(name, def, usage string) *string {
	p := new(string)
	*p = def
	f.Var(urlValue{p}, name, usage)
	return p
}

// Brokers defines -kafka-brokers host:port[,...]; empty means "no Kafka".
func (f *FlagSet) Brokers() *[]string {
	p := new([]string)
	f.Var(brokersValue{p}, "kafka-brokers", "Kafka `HOST:PORT[,...]`; empty uses the in-process bus")
	return p
}

// Seconds defines a positive duration flag given in whole or fractional seconds,
// as HMS configures its timers.
func (f *FlagSet) Seconds(name string, def time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	*p = def
	f.Var(secondsValue{p}, name, usage)
	return p
}

// MaxConnections defines -max-connections N (a positive whole number,
// default def): how many connections the daemon's HTTP server holds open at
// once (httpserver.Server.MaxConns). Every daemon declares it.
func (f *FlagSet) MaxConnections(def int) *int {
	p := new(int)
	*p = def
	f.Var(positiveValue{p}, "max-connections", "connections held open at once (`N`); beyond it a connection gets a bare 503 and is closed")
	return p
}

// Prefixes defines a flag taking a comma-separated list of CIDR prefixes
// (10.0.0.0/8,fd00::/8); a bare address is its own /32 or /128. Empty
// means none.
func (f *FlagSet) Prefixes(name, usage string) *[]netip.Prefix {
	p := new([]netip.Prefix)
	f.Var(prefixesValue{p}, name, usage)
	return p
}

type prefixesValue struct{ p *[]netip.Prefix }

func (v prefixesValue) String() string {
	if v.p == nil {
		return ""
	}
	s := make([]string, len(*v.p))
	for i, p := range *v.p {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func (v prefixesValue) Set(s string) error {
	var out []netip.Prefix
	for e := range strings.SplitSeq(s, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("%q: want a CIDR prefix such as 10.252.0.0/17, or an address", e)
		}
		out = append(out, p.Masked())
	}
	*v.p = out
	return nil
}

type positiveValue struct{ p *int }

func (v positiveValue) String() string { return intValue(v).String() }

func (v positiveValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a positive whole number, such as 4096")
	}
	*v.p = n
	return nil
}

type listenValue struct{ p *string }

func (v listenValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v listenValue) Set(s string) error {
	if err := ValidateHostPort(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

// ValidateHostPort checks s is HOST:PORT with a port in 0-65535.
func ValidateHostPort(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("want HOST:PORT: %v", err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number in 0-65535", port)
	}
	return nil
}

type urlValue struct{ p *string }

func (v urlValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v urlValue) Set(s string) error {
	if s == "" {
		*v.p = ""
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("want an http:// or https:// URL")
	}
	if u.Host == "" {
		return fmt.Errorf("URL has no host")
	}
	*v.p = strings.TrimRight(s, "/")
	return nil
}

type brokersValue struct{ p *[]string }

func (v brokersValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}

func (v brokersValue) Set(s string) error {
	var out []string
	for b := range strings.SplitSeq(s, ",") {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		if err := ValidateHostPort(b); err != nil {
			return fmt.Errorf("broker %q: %v", b, err)
		}
		out = append(out, b)
	}
	*v.p = out
	return nil
}

type secondsValue struct{ p *time.Duration }

func (v secondsValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.FormatFloat(v.p.Seconds(), 'f', -1, 64)
}

func (v secondsValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	// A value past what a time.Duration holds would wrap when converted.
	if err != nil || f <= 0 || math.IsNaN(f) || f >= float64(math.MaxInt64)/float64(time.Second) {
		return fmt.Errorf("want a positive number of seconds")
	}
	*v.p = time.Duration(f * float64(time.Second))
	return nil
}

// CheckListen binds addr for a moment and lets it go, so that a port another
// program holds stops a daemon as a usage error (exit 2), before it creates a
// file. name is the flag's name, for the message.
func CheckListen(name, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return Usagef("-%s %s: %v", name, addr, err)
	}
	ln.Close()
	return nil
}

// CheckFile reports a usage error unless path names a readable regular file;
// "" is allowed and means "not configured".
func CheckFile(name, path string) error {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return Usagef("-%s: %v", name, err)
	case !fi.Mode().IsRegular():
		return Usagef("-%s: %s is not a regular file", name, path)
	}
	return nil
}

// ReadToken reads the shared secret in the file at path (surrounding space
// trimmed), refusing one under min characters; what names the secret in
// errors. The secret itself is never in an error.
func ReadToken(what, path string, min int) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < min {
		return "", fmt.Errorf("%s file %s: under %d characters", what, path, min)
	}
	return tok, nil
}

// SplitList splits a comma-separated flag value into its items, trimmed,
// dropping empty ones ("a, b,,c" -> a, b, c; "" -> nil).
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
