package orchestrator

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/cli"
)

// TestFlags: the configuration command, S3 and give-up flags reach the
// daemon's configuration (the secret read from its file, and from the
// environment twin), and the combinations that cannot work are usage
// errors.
func TestFlags(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "s3-secret")
	if err := os.WriteFile(secret, []byte("s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		s3   S3
		cmd  *CommandConfig
		// giveUp and checks are the transition give-up limits (zero: the
		// defaults).
		giveUp  time.Duration
		checks  int
		wantErr string
	}{
		{name: "defaults", s3: S3{Region: DefaultS3Region}},
		{name: "command", args: []string{"-config-command", "ansible-playbook -l {nodes} site.yml", "-config-timeout", "10m"},
			s3: S3{Region: DefaultS3Region}, cmd: &CommandConfig{Command: "ansible-playbook -l {nodes} site.yml", Timeout: 10 * time.Minute, Parallel: 4}},
		{name: "signed S3", args: []string{"-s3-endpoint", "http://rgw:8080", "-s3-access-key", "bos", "-s3-region", "site"},
			env: map[string]string{"HMS_BOS_S3_SECRET_KEY_FILE": secret},
			s3:  S3{Endpoint: "http://rgw:8080", AccessKey: "bos", SecretKey: "s3cr3t", Region: "site"}},
		{name: "command and CFS", args: []string{"-config-command", "true", "-cfs-url", "http://cfs"}, wantErr: "exclude each other"},
		{name: "key without secret", args: []string{"-s3-access-key", "bos"}, wantErr: "go together"},
		{name: "empty secret", args: []string{"-s3-access-key", "bos", "-s3-secret-key-file", empty}, wantErr: "is empty"},
		{name: "no parallel runs", args: []string{"-config-parallel", "0"}, wantErr: "must be positive"},
		{name: "give-up limits", args: []string{"-transition-give-up-checks", "3"},
			env: map[string]string{"HMS_BOS_TRANSITION_GIVE_UP": "10m"}, s3: S3{Region: DefaultS3Region},
			giveUp: 10 * time.Minute, checks: 3},
		{name: "no give-up checks", args: []string{"-transition-give-up-checks", "0"}, wantErr: "must be positive"},
		{name: "no give-up time", args: []string{"-transition-give-up", "0s"}, wantErr: "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cli.NewFlagSet("bos", func(k string) string { return tt.env[k] }, io.Discard)
			fl := RegisterFlags(f)
			if err := f.Parse(append([]string{"-listen", "127.0.0.1:0"}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			cfg, err := fl.Config()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.s3, cfg.S3); d != "" {
				t.Errorf("S3 (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.cmd, cfg.Command); d != "" {
				t.Errorf("command (-want +got):\n%s", d)
			}
			if tt.giveUp == 0 {
				tt.giveUp, tt.checks = DefaultTransitionGiveUp, DefaultTransitionGiveUpChecks
			}
			if cfg.TransitionGiveUp != tt.giveUp || cfg.TransitionGiveUpChecks != tt.checks {
				t.Errorf("give up after %v and %d checks, want %v and %d", cfg.TransitionGiveUp, cfg.TransitionGiveUpChecks, tt.giveUp, tt.checks)
			}
		})
	}
}
