package discovery

import (
	"log/slog"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are the reds daemon's flags, declared once for both the reds
// binary and `hms up` (which declares them on f.Sub("reds"):
// -reds-bmc-insecure, HMS_REDS_BMC_INSECURE).
type DaemonFlags struct {
	f                                                 *cli.FlagSet
	listen, db, key, slsURL, hsmURL, token            *string
	roles, bmcUser, bmcPass, bmcCA, pwChars           *string
	community, secrets, ntp, syslog                   *string
	insecure                                          *bool
	bmcPort, pwLen, snmpPort, snmpRetries             *int
	walkers, workers, maxConns                        *int
	bmcTimeout, snmpTimeout, fdbTTL, fdbEvery, fdbGap *time.Duration
	slsEvery, hsmEvery, presence, retryMax            *time.Duration
	grace, leaseGrace                                 *time.Duration
	// Brokers is -kafka-brokers (empty: no Kafka); Level is -log-level.
	Brokers *[]string
	Level   *slog.Level
}

// Defaults are the flag defaults that tell the reds and meds binaries
// apart: the same daemon, in the roles each is named for.
type Defaults struct {
	Listen, DB, Key, Roles string
}

// REDSDefaults are the reds binary's defaults: both roles, as `hms up`
// runs them.
func REDSDefaults() Defaults {
	return Defaults{Listen: ":8269", DB: "./reds.db", Key: "./reds-cred.key", Roles: "river,mountain"}
}

// MEDSDefaults are the meds binary's: the Mountain role alone, beside a
// `reds -roles river`, with its own port, database and key.
func MEDSDefaults() Defaults {
	return Defaults{Listen: ":8270", DB: "./meds.db", Key: "./meds-cred.key", Roles: "mountain"}
}

// RegisterFlags declares reds's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags { return RegisterFlagsWith(f, REDSDefaults()) }

// RegisterFlagsWith declares the daemon's flags on f with defaults d.
func RegisterFlagsWith(f *cli.FlagSet, d Defaults) *DaemonFlags {
	fl := &DaemonFlags{f: f, listen: f.Listen(d.Listen), db: f.DBOrURL(d.DB), Level: f.LogLevel(), Brokers: f.Brokers(),
		key:    f.String("cred-key-file", d.Key, "`FILE` holding the key that seals BMC passwords in the database (created if absent, mode 0600)"),
		slsURL: f.URL("sls-url", "http://127.0.0.1:8376", "SLS base `URL`: switches, connectors, Mountain chassis"),
		hsmURL: f.URL("hsm-url", "http://127.0.0.1:27779", "HSM base `URL`: Ethernet interfaces and RedfishEndpoints are written there"),
		token:  f.String("discovery-token-file", "", "`FILE` with the token nodes booted into the discovery image present (empty: POST /v1/credentials and PUT /v1/discovery are off)"),
		roles:  f.String("roles", d.Roles, "`LIST` of roles: river (DHCP leases + SNMP), mountain (SLS chassis)"),
	}
	fl.bmcFlags(f)
	fl.snmpFlags(f)
	fl.slsEvery = f.Duration("sls-refresh", 5*time.Minute, "re-read switches and Mountain chassis from SLS every `DURATION`")
	fl.hsmEvery = f.Duration("hsm-poll", time.Minute, "read HSM's Ethernet interfaces without ComponentID every `DURATION` (the fallback when another DHCP server writes them)")
	fl.presence = f.Duration("presence-interval", 30*time.Second, "check each registered BMC's service root every `DURATION` (jittered ±10 %)")
	fl.retryMax = f.Duration("retry-max", 5*time.Minute, "longest backoff before a MAC that failed is tried again (`DURATION`)")
	fl.grace = f.Duration("unplaced-grace", 5*time.Minute, "a MAC on no switch is retried quietly for `DURATION` (HSM may yet name it, a node's NIC from its BMC's walk) before /v1/unknown lists it (0: at once)")
	fl.leaseGrace = f.Duration("lease-grace", time.Hour, "a DHCP lease whose expire event reds missed is forgotten `DURATION` after its end (bss publishes renewals, each moving the end; 0: at its end)")
	fl.workers = f.Int("workers", defaultWorkers, "`N` MACs placed and registered at once")
	fl.ntp = f.String("ntp-servers", "", "comma-separated NTP servers set on new Mountain BMCs (`LIST`)")
	fl.syslog = f.String("syslog-target", "", "syslog `HOST:PORT` set on new Mountain BMCs")
	fl.maxConns = f.MaxConnections(httpserver.DefaultMaxConns)
	return fl
}

func (fl *DaemonFlags) bmcFlags(f *cli.FlagSet) {
	fl.bmcUser = f.String("bmc-default-user", "root", "factory `USER` of new BMCs; its password is replaced")
	fl.bmcPass = f.String("bmc-default-password", "initial0", "factory `PASSWORD` of new BMCs")
	fl.insecure = f.Bool("bmc-insecure", false, "accept self-signed BMC certificates")
	fl.bmcCA = f.String("bmc-ca-bundle", "", "PEM `FILE` BMC certificates are checked against (default: the system's)")
	fl.bmcPort = f.Int("bmc-port", 443, "HTTPS `PORT` of BMCs")
	fl.bmcTimeout = f.Duration("bmc-timeout", 10*time.Second, "bound on one Redfish exchange (`DURATION`)")
	fl.pwLen = f.Int("bmc-password-length", 24, "length of generated BMC passwords (`N`, 12 to 64)")
	fl.pwChars = f.String("bmc-password-chars", DefaultPasswordChars, "`CHARS` generated BMC passwords are drawn from (at least 10 distinct)")
}

func (fl *DaemonFlags) snmpFlags(f *cli.FlagSet) {
	fl.snmpPort = f.Int("snmp-port", 161, "SNMP `PORT` of switches whose IP4addr names none")
	fl.community = f.String("snmp-community", "public", "v2c `COMMUNITY` of switches without SNMPUsername in SLS")
	fl.secrets = f.String("snmp-secrets-file", "", "JSON `FILE` mapping SLS's SNMP password references (vault://...) to the passwords")
	fl.snmpTimeout = f.Duration("snmp-timeout", 2*time.Second, "SNMP request timeout (`DURATION`)")
	fl.snmpRetries = f.Int("snmp-retries", 1, "SNMP retries per request (`N`)")
	fl.walkers = f.Int("snmp-concurrency", 8, "`N` switches walked at once")
	fl.fdbTTL = f.Duration("fdb-ttl", time.Minute, "a switch's forwarding table answers for `DURATION` at most")
	fl.fdbEvery = f.Duration("fdb-refresh", 10*time.Minute, "walk every switch every `DURATION` besides the walks new MACs cause")
	fl.fdbGap = f.Duration("fdb-min-interval", time.Second, "start two walks of one switch `DURATION` apart at least (0: no wait); the leases noticed meanwhile share the next")
}

// Config checks the parsed flags, the files they name and that the listen
// port is free, and returns the daemon's configuration (Bus and Log are
// the caller's to set). Errors are *cli.UsageError.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	n := fl.f.Name
	sc := Config{FDBTTL: *fl.fdbTTL, FDBRefresh: *fl.fdbEvery, WalkConcurrency: *fl.walkers, Workers: *fl.workers,
		SLSRefresh: *fl.slsEvery, HSMPoll: *fl.hsmEvery, PresenceInterval: *fl.presence, RetryMax: *fl.retryMax,
		Syslog: *fl.syslog, Switch: SwitchConfig{Port: *fl.snmpPort, Community: *fl.community}, UnplacedGrace: *fl.grace,
		LeaseGrace: *fl.leaseGrace}
	if sc.LeaseGrace == 0 {
		sc.LeaseGrace = -1 // Config's zero is the default
	}
	if sc.UnplacedGrace == 0 {
		sc.UnplacedGrace = -1 // Config's zero is the default
	}
	if sc.FDBMinInterval = *fl.fdbGap; sc.FDBMinInterval == 0 {
		sc.FDBMinInterval = -1
	}
	for _, r := range cli.SplitList(*fl.roles) {
		switch r {
		case "river":
			sc.River = true
		case "mountain":
			sc.Mountain = true
		default:
			return DaemonConfig{}, cli.Usagef("-%s: %q: want river, mountain or both", n("roles"), r)
		}
	}
	if !sc.River && !sc.Mountain {
		return DaemonConfig{}, cli.Usagef("-%s: name at least one of river, mountain", n("roles"))
	}
	sc.NTP = cli.SplitList(*fl.ntp)
	if err := fl.check(); err != nil {
		return DaemonConfig{}, err
	}
	cfg := DaemonConfig{Listen: *fl.listen, DB: *fl.db, CredKeyFile: *fl.key, SLSURL: *fl.slsURL, HSMURL: *fl.hsmURL,
		TokenFile: *fl.token, SNMPSecretsFile: *fl.secrets, BMCCABundle: *fl.bmcCA, Service: sc,
		BMC: BMCConfig{DefaultUser: *fl.bmcUser, DefaultPassword: *fl.bmcPass, Port: *fl.bmcPort, Insecure: *fl.insecure,
			Timeout: *fl.bmcTimeout, PasswordLength: *fl.pwLen, PasswordChars: *fl.pwChars},
		SNMP: SNMPConfig{Timeout: *fl.snmpTimeout, Retries: *fl.snmpRetries}, MaxConns: *fl.maxConns}
	return cfg, nil
}

// check validates the numbers, durations and files.
func (fl *DaemonFlags) check() error {
	n := fl.f.Name
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"bmc-timeout", *fl.bmcTimeout}, {"snmp-timeout", *fl.snmpTimeout}, {"fdb-ttl", *fl.fdbTTL}, {"fdb-refresh", *fl.fdbEvery},
		{"sls-refresh", *fl.slsEvery}, {"hsm-poll", *fl.hsmEvery}, {"presence-interval", *fl.presence}, {"retry-max", *fl.retryMax}} {
		if d.v <= 0 {
			return cli.Usagef("-%s must be positive", n(d.name))
		}
	}
	switch {
	case *fl.grace < 0 || *fl.fdbGap < 0 || *fl.leaseGrace < 0:
		return cli.Usagef("-%s, -%s and -%s must not be negative", n("unplaced-grace"), n("fdb-min-interval"), n("lease-grace"))
	case *fl.pwLen < 12 || *fl.pwLen > 64:
		return cli.Usagef("-%s: %d: want 12 to 64", n("bmc-password-length"), *fl.pwLen)
	case distinct(*fl.pwChars) < 10:
		return cli.Usagef("-%s: want at least 10 distinct characters", n("bmc-password-chars"))
	case *fl.bmcUser == "":
		return cli.Usagef("-%s must not be empty", n("bmc-default-user"))
	case *fl.bmcPort < 1 || *fl.bmcPort > 65535, *fl.snmpPort < 1 || *fl.snmpPort > 65535:
		return cli.Usagef("-%s and -%s: want 1 to 65535", n("bmc-port"), n("snmp-port"))
	case *fl.snmpRetries < 0 || *fl.walkers < 1 || *fl.workers < 1:
		return cli.Usagef("-%s must not be negative; -%s and -%s at least 1", n("snmp-retries"), n("snmp-concurrency"), n("workers"))
	}
	for name, path := range map[string]string{"discovery-token-file": *fl.token, "snmp-secrets-file": *fl.secrets, "bmc-ca-bundle": *fl.bmcCA} {
		if err := cli.CheckFile(n(name), path); err != nil {
			return err
		}
	}
	return cli.CheckListen(n("listen"), *fl.listen)
}

func distinct(s string) int {
	seen := map[rune]bool{}
	for _, r := range s {
		seen[r] = true
	}
	return len(seen)
}
