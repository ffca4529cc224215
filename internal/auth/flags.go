package auth

import (
	"net/http"
	"net/url"
	"time"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/mtls"
)

// Config is the auth configuration of a daemon: how it checks the tokens of
// its callers, and the token it sends to its peers.
type Config struct {
	// JWKSURL is where the issuer publishes its keys (Keycloak:
	// <realm>/protocol/openid-connect/certs); KeyFile is a PEM or JWKS file
	// used instead. Neither: auth is off.
	JWKSURL, KeyFile string
	// NodeKeys are the keys of bss's node tokens (iss NodeIssuer): a JWKS
	// URL (bss serves /boot/v1/node-jwks) or a PEM or JWKS file. Tokens
	// they verify get the node role only. Empty: node tokens are checked
	// like any other (against JWKSURL or KeyFile).
	NodeKeys string
	// Issuer and Audience, when set, must match iss and one of aud.
	Issuer, Audience string
	// RolesClaims are dotted paths to the claims that carry roles
	// ("roles", "realm_access.roles", "resource_access.hms.roles").
	RolesClaims []string
	// Skew is the clock difference tolerated (0: DefaultSkew).
	Skew time.Duration
	// Shadow logs refusals without refusing.
	Shadow bool
	// MetricsAuth requires a viewer, operator or admin token on /metrics
	// (Daemon.Configure); false leaves it open.
	MetricsAuth bool
	// Token is what the daemon sends to its peers.
	Token token.Config
	// TLS is the daemon's certificate, served and presented to its peers,
	// and the CA its callers' and peers' certificates chain to.
	TLS mtls.Config
}

// Client returns a copy of hc (nil: a new client) for calling the daemon's
// peers: it presents the daemon's certificate to https:// peers and trusts
// the client CA (TLS), and sends the daemon's token (Token). hc itself when
// neither is configured.
func (c Config) Client(hc *http.Client) *http.Client { return c.Token.Client(c.TLS.Client(hc)) }

// On reports whether tokens are checked (or, in shadow mode, looked at).
func (c Config) On() bool { return c.JWKSURL != "" || c.KeyFile != "" || c.NodeKeys != "" }

// Flags are the auth flags every daemon shares; RegisterFlags declares them.
type Flags struct {
	f                                               *cli.FlagSet
	jwksURL, keyFile, issuer, audience, rolesClaims *string
	nodeKeys                                        *string
	skew                                            *time.Duration
	shadow, help, metrics                           *bool
	token                                           *token.Flags
	tls                                             *mtls.Flags
}

// RegisterFlags declares the auth flags on f: -jwks-url, -jwt-key-file,
// -jwt-issuer, -jwt-audience, -roles-claim, -jwt-skew, -auth-shadow,
// -help-auth, the peer token's -token and -token-file (and OAuth client
// credentials), and the TLS flags -tls-cert, -tls-key and -client-ca.
func RegisterFlags(f *cli.FlagSet) *Flags {
	return &Flags{f: f,
		jwksURL:  f.String("jwks-url", "", "URL of the JWKS whose keys sign callers' Bearer tokens (Keycloak: .../realms/R/protocol/openid-connect/certs); with it or -jwt-key-file every route needs a token except those -help-auth lists as open (health, liveness, readiness, openapi, metrics, and a few daemon-specific ones)"),
		keyFile:  f.String("jwt-key-file", "", "PEM public key(s) or JWKS file that sign callers' tokens, instead of -jwks-url"),
		nodeKeys: f.String("node-jwt-keys", "", "`URL or FILE`: the public key(s) of the node tokens bss mints (bss -node-token-key; bss serves them on /boot/v1/node-jwks), as a JWKS URL or a PEM or JWKS file; tokens of issuer "+NodeIssuer+" are checked against them and get the node role only"),
		issuer:   f.String("jwt-issuer", "", "the iss tokens must carry (empty: not checked)"),
		audience: f.String("jwt-audience", "", "a value the aud of tokens must include (empty: not checked)"),
		rolesClaims: f.String("roles-claim", "roles",
			"comma-separated dotted paths of the claims holding roles (admin, operator, viewer, node), e.g. realm_access.roles,resource_access.hms.roles"),
		skew:    f.Duration("jwt-skew", DefaultSkew, "clock difference tolerated on exp and nbf"),
		shadow:  f.Bool("auth-shadow", false, "check tokens and log what would be refused, but refuse nothing (for rollout)"),
		help:    f.Bool("help-auth", false, "print which roles may call each route, and exit"),
		metrics: f.Bool("metrics-auth", false, "require a viewer, operator or admin token on /metrics too (default: /metrics stays open for scrapers without a token)"),
		token:   token.Register(f),
		tls:     mtls.Register(f),
	}
}

// Config checks the parsed flags and returns the configuration. With
// -help-auth it prints the tables and returns cli.ErrHelp. Errors are
// *cli.UsageError.
func (fl *Flags) Config(tables ...Table) (Config, error) { return fl.config(false, tables) }

// LocalConfig is Config for a caller that supplies the key source itself
// once the flags are checked (hms up -auth-local, with keys of its own):
// -auth-shadow and -metrics-auth need no key source on the command line.
// The caller refuses the key source flags.
func (fl *Flags) LocalConfig(tables ...Table) (Config, error) { return fl.config(true, tables) }

func (fl *Flags) config(keysLater bool, tables []Table) (Config, error) {
	if *fl.help {
		for _, t := range tables {
			t.Print(fl.f.Stdout())
		}
		return Config{}, cli.ErrHelp
	}
	c := Config{JWKSURL: *fl.jwksURL, KeyFile: *fl.keyFile, Issuer: *fl.issuer, Audience: *fl.audience,
		RolesClaims: cli.SplitList(*fl.rolesClaims), Skew: *fl.skew, Shadow: *fl.shadow, NodeKeys: *fl.nodeKeys,
		MetricsAuth: *fl.metrics}
	if c.JWKSURL != "" && c.KeyFile != "" {
		return Config{}, cli.Usagef("-%s and -%s exclude each other", fl.f.Name("jwks-url"), fl.f.Name("jwt-key-file"))
	}
	if c.JWKSURL != "" {
		if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Config{}, cli.Usagef("-%s: want an http or https URL, got %q", fl.f.Name("jwks-url"), c.JWKSURL)
		}
	}
	if c.KeyFile != "" {
		if _, err := readKeyFile(c.KeyFile); err != nil {
			return Config{}, cli.Usagef("-%s: %v", fl.f.Name("jwt-key-file"), err)
		}
	}
	if c.NodeKeys != "" && c.JWKSURL == "" && c.KeyFile == "" {
		// Node keys alone would turn checking on with no key for anyone
		// else: every admin, CLI and peer call would be a 401.
		return Config{}, cli.Usagef("-%s needs -%s or -%s (the site's keys; node tokens alone would refuse every admin and peer call)",
			fl.f.Name("node-jwt-keys"), fl.f.Name("jwks-url"), fl.f.Name("jwt-key-file"))
	}
	if c.NodeKeys != "" && !isURL(c.NodeKeys) {
		if _, err := readKeyFile(c.NodeKeys); err != nil {
			return Config{}, cli.Usagef("-%s: %v", fl.f.Name("node-jwt-keys"), err)
		}
	}
	if c.MetricsAuth && !c.On() && !keysLater {
		return Config{}, cli.Usagef("-%s needs a key source (-%s or -%s)", fl.f.Name("metrics-auth"), fl.f.Name("jwks-url"), fl.f.Name("jwt-key-file"))
	}
	if c.Shadow && !c.On() && !keysLater {
		return Config{}, cli.Usagef("-%s needs -%s or -%s", fl.f.Name("auth-shadow"), fl.f.Name("jwks-url"), fl.f.Name("jwt-key-file"))
	}
	if c.Skew < 0 || c.Skew > 10*time.Minute {
		return Config{}, cli.Usagef("-%s: want 0 to 10m, got %s", fl.f.Name("jwt-skew"), c.Skew)
	}
	tc, err := fl.token.Config()
	if err != nil {
		return Config{}, err
	}
	c.Token = tc
	if c.TLS, err = fl.tls.Config(); err != nil {
		return Config{}, err
	}
	return c, nil
}
