package orchestrator

import (
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are bos's flags, declared once for the bos binary and for
// `hms up` (on f.Sub("bos"): -bos-hsm-url, HMS_BOS_HSM_URL).
type DaemonFlags struct {
	f                                              *cli.FlagSet
	listen, db, hsm, bss, pcs, s3, scnIn, cfs, cmd *string
	timeout, fallback, cmdTimeout, giveUp          *time.Duration
	maxConns, cmdParallel, giveUpChecks            *int
	s3Key, s3SecretFile, s3Region                  *string
	// Level is -log-level.
	Level *slog.Level
}

// RegisterFlags declares bos's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	return &DaemonFlags{f: f,
		listen: f.Listen(":9000"), db: f.DBOrURL("./bos.db"), Level: f.LogLevel(),
		hsm: f.URL("hsm-url", "", "HSM base `URL` (required): nodes, groups, roles and their state"),
		bss: f.URL("bss-url", "", "BSS base `URL` (required): boot parameters and boot-script history"),
		pcs: f.URL("pcs-url", "", "PCS base `URL` (required): power transitions and power status"),
		cfs: f.URL("cfs-url", "", "CFS v3 base `URL` that configures nodes (empty: no configuration step; a booted node counts as configured)"),
		cmd: f.String("config-command", "", "shell `COMMAND` that configures booted nodes instead of CFS, run per batch with {nodes} "+
			"(comma-separated xnames) and {config} replaced (per node with {node}); exit 0: configured, else failed with its output; "+
			"ansible-playbook's json callback (ANSIBLE_STDOUT_CALLBACK=json) or PLAY RECAP decides per node; "+
			"results are kept in -db; a run that bos stopped or died during dies with it and runs again at its next start"),
		cmdTimeout:   f.Duration("config-timeout", 30*time.Minute, "kill a -config-command run after `DURATION` (its nodes fail)"),
		cmdParallel:  f.Int("config-parallel", 4, "run at most `N` -config-command runs at once"),
		s3:           f.URL("s3-endpoint", "", "HTTP(S) `URL` of the S3-compatible store s3://bucket/key manifest paths are read from (path-style)"),
		s3Key:        f.String("s3-access-key", "", "access key `ID` that signs S3 reads (AWS Signature V4; empty: unsigned)"),
		s3SecretFile: f.String("s3-secret-key-file", "", "`FILE` holding the secret key of -s3-access-key"),
		s3Region:     f.String("s3-region", DefaultS3Region, "`REGION` S3 reads are signed for"),
		timeout:      f.Duration("peer-timeout", 20*time.Second, "give up on one request to HSM, BSS, PCS or a manifest after `DURATION`"),
		scnIn:        f.URL("scn-in-url", "", "`URL` HSM posts SCNs to (default http://<hostname>:<port>/v2/scn, loopback when HSM is)"),
		fallback:     f.Duration("fallback-poll", time.Minute, "while HSM sends SCNs, run the operators at least every `DURATION` (polling_frequency until it does)"),
		giveUp: f.Duration("transition-give-up", DefaultTransitionGiveUp, "give up on a PCS transition PCS has not answered about "+
			"for `DURATION` (and -transition-give-up-checks checks in a row); its nodes' power is decided again"),
		giveUpChecks: f.Int("transition-give-up-checks", DefaultTransitionGiveUpChecks,
			"give up on a PCS transition after `N` checks in a row PCS did not answer (and -transition-give-up)"),
		maxConns: f.MaxConnections(httpserver.DefaultMaxConns),
	}
}

// Config checks the parsed flags and that the listen port is free, and
// returns the daemon's configuration (Log is the caller's to set). Errors
// are *cli.UsageError. Peer URLs may be empty here: `hms up` fills them.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	if *fl.timeout <= 0 {
		return DaemonConfig{}, cli.Usagef("-%s must be positive", fl.f.Name("peer-timeout"))
	}
	if *fl.fallback <= 0 {
		return DaemonConfig{}, cli.Usagef("-%s must be positive", fl.f.Name("fallback-poll"))
	}
	if *fl.cmd != "" && *fl.cfs != "" {
		return DaemonConfig{}, cli.Usagef("-%s and -%s exclude each other", fl.f.Name("config-command"), fl.f.Name("cfs-url"))
	}
	if *fl.giveUp <= 0 || *fl.giveUpChecks <= 0 {
		return DaemonConfig{}, cli.Usagef("-%s and -%s must be positive", fl.f.Name("transition-give-up"), fl.f.Name("transition-give-up-checks"))
	}
	if *fl.cmdTimeout <= 0 || *fl.cmdParallel <= 0 {
		return DaemonConfig{}, cli.Usagef("-%s and -%s must be positive", fl.f.Name("config-timeout"), fl.f.Name("config-parallel"))
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	s3, err := fl.s3Config()
	if err != nil {
		return DaemonConfig{}, err
	}
	var cmd *CommandConfig
	if *fl.cmd != "" {
		cmd = &CommandConfig{Command: *fl.cmd, Timeout: *fl.cmdTimeout, Parallel: *fl.cmdParallel}
	}
	return DaemonConfig{Command: cmd, Listen: *fl.listen, DB: *fl.db, HSMURL: *fl.hsm, BSSURL: *fl.bss, PCSURL: *fl.pcs,
		S3: s3, CFSURL: *fl.cfs, SCNInURL: *fl.scnIn, FallbackPoll: *fl.fallback, PeerTimeout: *fl.timeout,
		MaxConns: *fl.maxConns, TransitionGiveUp: *fl.giveUp, TransitionGiveUpChecks: *fl.giveUpChecks}, nil
}

// s3Config reads the S3 flags and the secret key's file.
func (fl *DaemonFlags) s3Config() (S3, error) {
	s3 := S3{Endpoint: *fl.s3, AccessKey: *fl.s3Key, Region: *fl.s3Region}
	if (*fl.s3Key == "") != (*fl.s3SecretFile == "") {
		return S3{}, cli.Usagef("-%s and -%s go together", fl.f.Name("s3-access-key"), fl.f.Name("s3-secret-key-file"))
	}
	if *fl.s3SecretFile != "" {
		b, err := os.ReadFile(*fl.s3SecretFile)
		if err != nil {
			return S3{}, cli.Usagef("-%s: %v", fl.f.Name("s3-secret-key-file"), err)
		}
		s3.SecretKey = strings.TrimSpace(string(b))
		if s3.SecretKey == "" {
			return S3{}, cli.Usagef("-%s: %s is empty", fl.f.Name("s3-secret-key-file"), *fl.s3SecretFile)
		}
	}
	return s3, nil
}
