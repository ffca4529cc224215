package ipxe

import (
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/ipxe/dhcp"
	"github.com/hmsuite/hms/ipxe/tftp"
)

// DaemonFlags are the bss daemon's flags, declared once for both the bss
// binary and `hms up` (which declares them on f.Sub("bss"): -bss-advertise-url,
// HMS_BSS_ADVERTISE_URL).
type DaemonFlags struct {
	f                                    *cli.FlagSet
	listen, db, hsmURL, advertise, inURL *string
	resync, retry, retrieval             *time.Duration
	maxConns                             *int
	trusted                              *[]netip.Prefix
	dhcp                                 dhcpFlags
	tftpListen, tftpRoot                 *string
	tftpPerClient, tftpMaxWindow         *int
	tftpMaxWindowBytes                   *int
	nodeKey, discoToken                  *string
	nodeTTL                              *time.Duration
	// Brokers is -kafka-brokers (empty: no Kafka): where the DHCP server's
	// lease events go. Level is -log-level.
	Brokers *[]string
	Level   *slog.Level
}

type dhcpFlags struct {
	iface, subnet, rng, router, dns, file *string
	listen                                *string
	relayPort, bootPort                   *int
	lease                                 *time.Duration
	proxy                                 *bool
}

// RegisterFlags declares bss's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	return &DaemonFlags{f: f,
		listen: f.Listen(":27778"), db: f.DBOrURL("./bss.db"), Level: f.LogLevel(), Brokers: f.Brokers(),
		hsmURL:    f.URL("hsm-url", "", "HSM base `URL`; its nodes, MACs, IPs and roles are cached and kept fresh by SCNs"),
		advertise: f.URL("advertise-url", "", "base `URL` nodes reach bss on, put into chain URLs, ds= and DHCP replies (default this daemon's URL; with DHCP, http://<DHCP interface address>:<port>)"),
		inURL:     f.URL("scn-in-url", "", "`URL` HSM posts SCNs to (default http://<hostname>:<port>/boot/v1/scn, loopback when HSM is)"),
		resync:    f.Duration("hsm-resync", 5*time.Minute, "re-read all of HSM every `DURATION` (SCNs keep the cache fresh in between)"),
		retry:     f.Duration("retry-delay", 30*time.Second, "sleep before a failed boot chains back (`DURATION`, whole seconds)"),
		retrieval: f.Duration("retrieval-delay", 10*time.Second, "sleep before an unknown node chains back with its architecture (`DURATION`)"),
		maxConns:  f.MaxConnections(httpserver.DefaultMaxConns),
		trusted:   f.Prefixes("trusted-proxies", "reverse proxies (`CIDR,...`) whose X-Forwarded-For names the cloud-init caller; default none: the peer address decides whose meta-data it gets"),
		dhcp: dhcpFlags{
			iface:     f.String("dhcp-interface", "", "serve DHCP on network interface `IF` (empty: no DHCP server unless -dhcp-listen)"),
			listen:    f.ListenNamed("dhcp-listen", "", "serve DHCP on `HOST:PORT` instead of port 67 (e.g. 127.0.0.1:6767 for hms sim's relayed clients, no root needed); HOST is the server's identifier"),
			relayPort: f.Int("dhcp-relay-port", dhcp.ServerPort, "UDP `PORT` relays (giaddr) receive replies on"),
			subnet:    f.String("dhcp-subnet", "", "the DHCP interface's subnet `CIDR`"),
			rng:       f.String("dhcp-range", "", "pool `FIRST-LAST` in -dhcp-subnet (default the whole subnet but network, broadcast and router)"),
			router:    f.String("dhcp-router", "", "router `IP` handed out on -dhcp-subnet"),
			dns:       f.String("dhcp-dns", "", "DNS servers `IP,...` handed out on -dhcp-subnet"),
			lease:     f.Duration("dhcp-lease", dhcp.DefaultLease, "lease time of known MACs (`DURATION`; unknown MACs get at most 5m)"),
			proxy:     f.Bool("dhcp-proxy", false, "ProxyDHCP: another server owns the addresses; only add boot options"),
			bootPort:  f.Int("dhcp-boot-server-port", dhcp.BootServerPort, "with -dhcp-proxy, also answer PXE boot server requests on UDP `PORT` (UEFI firmware and iPXE ask there after a proxy offer; 0: off)"),
			file:      f.String("dhcp-config", "", "JSON `FILE` of more subnets, relayed ones too: {\"subnets\":[{\"subnet\",\"range\",\"router\",\"dns\",\"lease\",\"unknown-lease\",\"relayed\"}]}"),
		},
		nodeKey:            f.String("node-token-key", "", "PEM private key `FILE` (Ed25519, ECDSA P-256 or RSA) node tokens are signed with: a node asking from its own address gets one on its kernel command line ("+CmdlineParam+"=) and in its meta-data ("+MetaDataKey+"); the daemons verify them with -node-jwt-keys (this key's JWKS is served on /boot/v1/node-jwks). Empty: no node tokens"),
		discoToken:         f.String("discovery-token-file", "", "`FILE` with the token put on the discovery image's kernel command line ("+DiscoveryParam+"=; the unknown nodes' Unknown-<arch> entry) for reds's node-side routes: the same file as reds -discovery-token-file. Empty: none"),
		nodeTTL:            f.Duration("node-token-ttl", DefaultNodeTokenTTL, "how long a node token is valid (`DURATION`)"),
		tftpListen:         f.ListenNamed("tftp-listen", "", "serve TFTP on `HOST:PORT` (usually :69; empty: no TFTP server)"),
		tftpRoot:           f.String("tftp-root", tftp.DefaultRoot, "`DIR` TFTP serves read-only (and HTTP under /ipxe/)"),
		tftpPerClient:      f.Int("tftp-per-client", tftp.DefaultPerClient, "concurrent TFTP transfers allowed per client address (`N`)"),
		tftpMaxWindow:      f.Int("tftp-max-window", tftp.DefaultMaxWindow, "largest TFTP windowsize (RFC 7440: blocks sent per ACK) granted to a client that asks for one (`N`, 1 to 65535; 1: windowsize not negotiated)"),
		tftpMaxWindowBytes: f.Int("tftp-max-window-bytes", tftp.DefaultMaxWindowBytes, "largest TFTP windowsize x blksize (`BYTES` one client has in flight): a window is granted smaller to fit, or not at all below two blocks"),
	}
}

// Config checks the parsed flags and that the listen port is free, and
// returns the daemon's configuration (Log and Publisher are the caller's to
// set). Errors are *cli.UsageError.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	if *fl.resync <= 0 || *fl.retry < time.Second || *fl.retrieval < time.Second {
		return DaemonConfig{}, cli.Usagef("-%s must be positive; -%s and -%s at least 1s",
			fl.f.Name("hsm-resync"), fl.f.Name("retry-delay"), fl.f.Name("retrieval-delay"))
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	cfg := DaemonConfig{Listen: *fl.listen, DB: *fl.db, HSMURL: *fl.hsmURL, AdvertiseURL: *fl.advertise,
		ScnInURL: *fl.inURL, Resync: *fl.resync, RetryDelay: *fl.retry, RetrievalDelay: *fl.retrieval,
		MaxConns: *fl.maxConns, TrustedProxies: *fl.trusted, NodeTokenKey: *fl.nodeKey, NodeTokenTTL: *fl.nodeTTL,
		DiscoveryTokenFile: *fl.discoToken}
	if cfg.DiscoveryTokenFile != "" {
		if _, err := cli.ReadToken("discovery token", cfg.DiscoveryTokenFile, minDiscoveryToken); err != nil {
			return DaemonConfig{}, cli.Usagef("-%s: %v", fl.f.Name("discovery-token-file"), err)
		}
	}
	if cfg.NodeTokenKey != "" {
		if _, err := auth.LoadSigner(cfg.NodeTokenKey, nil); err != nil {
			return DaemonConfig{}, cli.Usagef("-%s: %v", fl.f.Name("node-token-key"), err)
		}
	}
	if *fl.nodeTTL < time.Minute || *fl.nodeTTL > 30*24*time.Hour {
		return DaemonConfig{}, cli.Usagef("-%s: want 1m to 720h, got %s", fl.f.Name("node-token-ttl"), *fl.nodeTTL)
	}
	var err error
	if cfg.DHCP, err = fl.dhcpConfig(); err != nil {
		return DaemonConfig{}, err
	}
	if *fl.tftpListen != "" {
		if fi, err := os.Stat(*fl.tftpRoot); err != nil || !fi.IsDir() {
			return DaemonConfig{}, cli.Usagef("-%s %s: not a directory", fl.f.Name("tftp-root"), *fl.tftpRoot)
		}
		if *fl.tftpPerClient < 1 {
			return DaemonConfig{}, cli.Usagef("-%s: at least 1", fl.f.Name("tftp-per-client"))
		}
		if *fl.tftpMaxWindow < 1 || *fl.tftpMaxWindow > 65535 {
			return DaemonConfig{}, cli.Usagef("-%s: want 1 to 65535", fl.f.Name("tftp-max-window"))
		}
		if *fl.tftpMaxWindowBytes < 1024 {
			return DaemonConfig{}, cli.Usagef("-%s: at least 1024 (two blocks of 512)", fl.f.Name("tftp-max-window-bytes"))
		}
		cfg.TFTP = &tftp.Config{Listen: *fl.tftpListen, Root: *fl.tftpRoot, PerClient: *fl.tftpPerClient,
			MaxWindow: *fl.tftpMaxWindow, MaxWindowBytes: *fl.tftpMaxWindowBytes}
	}
	return cfg, nil
}

// dhcpConfig is the DHCP server's configuration, nil without -dhcp-interface.
func (fl *DaemonFlags) dhcpConfig() (*dhcp.ServerConfig, error) {
	d := fl.dhcp
	name := fl.f.Name
	if *d.iface == "" && *d.listen == "" {
		for _, n := range []string{"dhcp-subnet", "dhcp-range", "dhcp-router", "dhcp-dns", "dhcp-proxy", "dhcp-boot-server-port", "dhcp-config", "dhcp-lease", "dhcp-relay-port"} {
			if fl.f.IsSet(n) {
				return nil, cli.Usagef("-%s needs -%s", name(n), name("dhcp-interface"))
			}
		}
		return nil, nil
	}
	if *d.iface != "" {
		if _, err := net.InterfaceByName(*d.iface); err != nil {
			return nil, cli.Usagef("-%s %s: %v", name("dhcp-interface"), *d.iface, err)
		}
	}
	if *d.relayPort < 1 || *d.relayPort > 65535 {
		return nil, cli.Usagef("-%s %d: not a port", name("dhcp-relay-port"), *d.relayPort)
	}
	if *d.bootPort < 0 || *d.bootPort > 65535 {
		return nil, cli.Usagef("-%s %d: not a port", name("dhcp-boot-server-port"), *d.bootPort)
	}
	if fl.f.IsSet("dhcp-boot-server-port") && !*d.proxy {
		return nil, cli.Usagef("-%s needs -%s", name("dhcp-boot-server-port"), name("dhcp-proxy"))
	}
	if *d.lease < time.Minute {
		return nil, cli.Usagef("-%s: at least 1m", name("dhcp-lease"))
	}
	var subs []dhcp.Subnet
	if *d.subnet != "" {
		sp := dhcp.SubnetSpec{Subnet: *d.subnet, Range: *d.rng, Router: *d.router, Lease: d.lease.String()}
		if *d.dns != "" {
			sp.DNS = strings.Split(*d.dns, ",")
		}
		s, err := sp.Parse()
		if err != nil {
			return nil, cli.Usagef("-%s: %v", name("dhcp-subnet"), err)
		}
		subs = append(subs, s)
	} else if *d.rng != "" || *d.router != "" || *d.dns != "" {
		return nil, cli.Usagef("-%s, -%s and -%s need -%s", name("dhcp-range"), name("dhcp-router"), name("dhcp-dns"), name("dhcp-subnet"))
	}
	if *d.file != "" {
		more, err := dhcp.LoadFile(*d.file)
		if err != nil {
			return nil, cli.Usagef("-%s: %v", name("dhcp-config"), err)
		}
		for i := range more {
			if more[i].Lease == 0 {
				more[i].Lease = *d.lease
			}
		}
		subs = append(subs, more...)
	}
	if err := dhcp.CheckSubnets(subs, *d.proxy); err != nil {
		return nil, cli.Usagef("-%s: %v", name("dhcp-interface"), err)
	}
	sc := &dhcp.ServerConfig{Interface: *d.iface, Handler: dhcp.Config{Subnets: subs, Proxy: *d.proxy}, RelayPort: *d.relayPort}
	if *d.listen != "" {
		ap, err := netip.ParseAddrPort(*d.listen)
		if err != nil || !ap.Addr().Is4() {
			return nil, cli.Usagef("-%s %s: want IPv4:PORT", name("dhcp-listen"), *d.listen)
		}
		sc.Listen = net.UDPAddrFromAddrPort(ap)
		if *d.iface == "" && !ap.Addr().IsUnspecified() {
			sc.Handler.ServerID = ap.Addr()
		}
	}
	if *d.proxy && *d.bootPort != 0 {
		sc.BootServer = &net.UDPAddr{IP: net.IPv4zero, Port: *d.bootPort}
		if sc.Listen != nil {
			sc.BootServer.IP = sc.Listen.IP
		}
	}
	return sc, nil
}
