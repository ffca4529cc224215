package ipxe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/ipxe/dhcp"
	"github.com/hmsuite/hms/ipxe/tftp"
	"github.com/hmsuite/hms/statemgr/client"
)

// bootChain is the DHCP and TFTP servers beside the API (either may be nil).
type bootChain struct {
	dhcp  *dhcp.Server
	tftp  *tftp.Server
	files http.Handler // the TFTP root over HTTP, for UEFI HTTP boot
}

// serverID fills in the DHCP server's own address from its interface when
// not given.
func serverID(cfg *dhcp.ServerConfig) error {
	if cfg.Handler.ServerID.IsValid() || cfg.Handler.Proxy && cfg.Interface == "" {
		return nil
	}
	ifi, err := net.InterfaceByName(cfg.Interface)
	if err != nil {
		return fmt.Errorf("dhcp interface %q: %w", cfg.Interface, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return fmt.Errorf("dhcp interface %q: %w", cfg.Interface, err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP.To4()); ok && n.IP.To4() != nil {
				cfg.Handler.ServerID = ip
				return nil
			}
		}
	}
	return fmt.Errorf("dhcp interface %q has no IPv4 address", cfg.Interface)
}

// startBootChain binds the TFTP and DHCP servers cfg asks for. advertise is
// BSS's advertise URL: iPXE's boot script URL, and siaddr when its host is
// an IPv4 address.
func startBootChain(ctx context.Context, cfg DaemonConfig, db *sqldb.DB, cache *Cache, advertise string, reg prometheus.Registerer) (bc *bootChain, err error) {
	bc = &bootChain{}
	defer func() {
		if err != nil {
			bc.Close()
		}
	}()
	if cfg.TFTP != nil {
		tc := *cfg.TFTP
		tc.Log, tc.Registerer = cfg.Log.With("server", "tftp"), reg
		if bc.tftp, err = tftp.Listen(tc); err != nil {
			return bc, err
		}
		bc.files = http.StripPrefix("/ipxe/", http.FileServerFS(bc.tftp.FS()))
		for _, f := range []string{dhcp.DefaultBootFiles().BIOS, dhcp.DefaultBootFiles().EFI64} {
			if !bc.tftp.Has(f) {
				cfg.Log.Warn("tftp_boot_file_unservable", "file", f,
					"hint", "missing, or a symlink leaving -tftp-root (Debian's ipxe.efi is one): copy it in with cp -L")
			}
		}
	}
	if cfg.DHCP == nil {
		return bc, nil
	}
	dc := *cfg.DHCP
	dc.Handler.BootURL = advertise
	if dc.Handler.Files == (dhcp.BootFiles{}) {
		dc.Handler.Files = dhcp.DefaultBootFiles()
	}
	if bc.tftp != nil {
		dc.Handler.Has = bc.tftp.Has
	}
	if u, err := url.Parse(advertise); err == nil {
		if a, err := netip.ParseAddr(u.Hostname()); err == nil && a.Is4() && !a.IsLoopback() {
			dc.Handler.NextServer = a
		}
	}
	dc.Lookup = cacheLookup{cache}
	dc.Publisher = cfg.Publisher
	if cfg.HSMURL != "" {
		dc.HSM = client.New(cfg.HSMURL, cfg.Auth.Client(nil), "bss-dhcp") // the unknown MACs it writes
	}
	dc.Log, dc.Registerer = cfg.Log.With("server", "dhcp"), reg
	bc.dhcp, err = dhcp.Listen(ctx, dc, db)
	return bc, err
}

// handler adds /ipxe/<file> (the TFTP root) to the API when TFTP is on.
func (bc *bootChain) handler(api http.Handler) http.Handler {
	if bc.files == nil {
		return api
	}
	mux := http.NewServeMux()
	mux.Handle("GET /ipxe/", bc.files)
	mux.Handle("/", api)
	return mux
}

// leases is the DHCP server's lease table for the API (nil without one).
func (bc *bootChain) leases() LeaseReader {
	if bc.dhcp == nil {
		return nil
	}
	return bc.dhcp.Handler()
}

// runners are the servers' Run functions.
func (bc *bootChain) runners() []func(context.Context) error {
	var out []func(context.Context) error
	if bc.dhcp != nil {
		out = append(out, bc.dhcp.Run)
	}
	if bc.tftp != nil {
		out = append(out, bc.tftp.Run)
	}
	return out
}

// Close releases servers that will not be run.
func (bc *bootChain) Close() error {
	var errs []error
	if bc.dhcp != nil {
		errs = append(errs, bc.dhcp.Close())
	}
	if bc.tftp != nil {
		errs = append(errs, bc.tftp.Close())
	}
	return errors.Join(errs...)
}

// cacheLookup is the DHCP server's view of the HSM cache.
type cacheLookup struct{ c *Cache }

func (l cacheLookup) KnownMAC(mac net.HardwareAddr) (string, netip.Addr, bool) {
	return l.c.KnownMAC(mac)
}

func (l cacheLookup) Reserved(ip netip.Addr) bool {
	_, ok := l.c.ByIP(ip)
	return ok
}
