package cli

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnvTwinAndFlagPrecedence(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantListen string
		wantURL    string
		wantLevel  slog.Level
		wantWarn   time.Duration
		wantErr    string
	}{
		{name: "defaults", wantListen: ":8376", wantLevel: slog.LevelInfo, wantWarn: 10 * time.Second},
		{name: "env", env: map[string]string{"HMS_HBTD_LISTEN": "127.0.0.1:1", "HMS_HBTD_HSM_URL": "http://h:27779/", "HMS_HBTD_LOG_LEVEL": "debug", "HMS_HBTD_WARNTIME": "2.5"},
			wantListen: "127.0.0.1:1", wantURL: "http://h:27779", wantLevel: slog.LevelDebug, wantWarn: 2500 * time.Millisecond},
		{name: "flag wins", args: []string{"-listen", ":9"}, env: map[string]string{"HMS_HBTD_LISTEN": ":1"},
			wantListen: ":9", wantLevel: slog.LevelInfo, wantWarn: 10 * time.Second},
		{name: "bad listen", args: []string{"-listen", "nope"}, wantErr: "-listen"},
		{name: "bad port", args: []string{"-listen", ":99999"}, wantErr: "0-65535"},
		{name: "bad url", args: []string{"-hsm-url", "ftp://x"}, wantErr: "http"},
		{name: "bad env", env: map[string]string{"HMS_HBTD_WARNTIME": "-1"}, wantErr: "HMS_HBTD_WARNTIME"},
		{name: "seconds that wrap", args: []string{"-warntime", "9300000000"}, wantErr: "positive number of seconds"},
		{name: "seconds NaN", args: []string{"-warntime", "NaN"}, wantErr: "positive number of seconds"},
		{name: "bad level", args: []string{"-log-level", "loud"}, wantErr: "log-level"},
		{name: "stray arg", args: []string{"extra"}, wantErr: "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			f := NewFlagSet("hbtd", env(tt.env), &out)
			listen := f.Listen(":8376")
			hsm := f.URL("hsm-url", "", "HSM base URL")
			level := f.LogLevel()
			warn := f.Seconds("warntime", 10*time.Second, "warn after")
			err := f.ParseOrUsage(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line containing %q", err, tt.wantErr)
				}
				if !errors.As(err, new(*UsageError)) {
					t.Fatalf("err %T is not a UsageError", err)
				}
				if out.Len() > 0 {
					t.Fatalf("a bad flag printed the usage text:\n%s", out.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *listen != tt.wantListen || *hsm != tt.wantURL || *level != tt.wantLevel || *warn != tt.wantWarn {
				t.Fatalf("got listen=%q url=%q level=%v warn=%v", *listen, *hsm, *level, *warn)
			}
		})
	}
}

func TestHelpListsEveryFlagWithEnvTwin(t *testing.T) {
	var out bytes.Buffer
	f := NewFlagSet("hbtd", env(nil), &out)
	f.Listen(":28500")
	f.URL("hsm-url", "http://127.0.0.1:27779", "HSM base URL")
	f.Brokers()
	if err := f.Parse([]string{"-help"}); !errors.Is(err, ErrHelp) {
		t.Fatalf("err = %v, want ErrHelp", err)
	}
	for _, want := range []string{"-listen", "HMS_HBTD_LISTEN", `":28500"`, "-hsm-url", "HMS_HBTD_HSM_URL", "HMS_HBTD_KAFKA_BROKERS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBrokers(t *testing.T) {
	f := NewFlagSet("hsm", env(nil), &bytes.Buffer{})
	b := f.Brokers()
	if err := f.Parse([]string{"-kafka-brokers", "a:9092, b:9093"}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(*b, "|") != "a:9092|b:9093" {
		t.Fatalf("brokers = %v", *b)
	}
	if err := f.Parse([]string{"-kafka-brokers", "a"}); err == nil {
		t.Fatal("want error for a broker without a port")
	}
}

func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{err: nil, want: 0},
		{err: ErrHelp, want: 0},
		{err: errors.New("down"), want: 1},
		{err: Usagef("bad flag"), want: 2},
		{err: &ExitError{Code: 1}, want: 1},
		{err: fmt.Errorf("diff: %w", &ExitError{Code: 2, Err: Usagef("bad flag")}), want: 2},
	} {
		if got := ExitCode(tt.err); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
