package discovery

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hmsuite/hms/discovery/wire"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/layout/sls"
)

// Layout is what discovery reads from SLS (slsclient.Client).
type Layout interface {
	SearchHardware(ctx context.Context, s sls.HardwareSearch) ([]sls.Hardware, error)
	GetHardware(ctx context.Context, x string) (sls.Hardware, error)
}

// switchTypes are the SLS types of the management switches discovery walks.
var switchTypes = []string{
	xname.MgmtSwitch.SLSType(), xname.MgmtHLSwitch.SLSType(), xname.CDUMgmtSwitch.SLSType(),
}

// SwitchConfig is how switches found in SLS are reached.
type SwitchConfig struct {
	// Port is the SNMP port when IP4addr has none (161).
	Port int
	// Community is the v2c community of a switch with no SNMPUsername.
	Community string
	// Secrets resolves SNMP passwords SLS holds as references
	// ("vault://hms-creds/x3000c0w14"); a value with no entry is used as is.
	Secrets map[string]string
}

// Switches lists the management switches SLS knows, with their SNMP
// address and credentials; a switch without IP4addr is skipped.
func Switches(ctx context.Context, lay Layout, cfg SwitchConfig) ([]Switch, error) {
	var out []Switch
	for _, t := range switchTypes {
		hs, err := lay.SearchHardware(ctx, sls.HardwareSearch{Type: t})
		if err != nil {
			return nil, fmt.Errorf("list switches: %w", err)
		}
		for _, h := range hs {
			p, err := h.Switch()
			if err != nil || p.IP4addr == "" {
				continue
			}
			out = append(out, Switch{Xname: h.Xname, Addr: snmpAddr(p.IP4addr, cfg.Port), Creds: switchCreds(p, cfg)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Xname < out[j].Xname })
	return out, nil
}

// snmpAddr is ip with the SNMP port, unless it already names one.
func snmpAddr(ip string, port int) string {
	if _, _, err := net.SplitHostPort(ip); err == nil {
		return ip
	}
	if port == 0 {
		port = 161
	}
	return net.JoinHostPort(ip, strconv.Itoa(port))
}

func switchCreds(p sls.SwitchProps, cfg SwitchConfig) SNMPCreds {
	if p.SNMPUsername == "" {
		return SNMPCreds{Community: cfg.Community}
	}
	secret := func(v string) string {
		if s, ok := cfg.Secrets[v]; ok {
			return s
		}
		return v
	}
	return SNMPCreds{User: p.SNMPUsername, AuthProtocol: p.SNMPAuthProtocol, AuthPasswd: secret(p.SNMPAuthPassword),
		PrivProtocol: p.SNMPPrivProtocol, PrivPasswd: secret(p.SNMPPrivPassword)}
}

// Reasons a MAC stays unknown (Unknown.Reason).
const (
	ReasonNotOnSwitch = wire.ReasonNotOnAnySwitch
	ReasonNoConnector = wire.ReasonNoConnector
	ReasonTwoPorts    = wire.ReasonOnTwoPorts
	ReasonSNMP        = wire.ReasonSNMPFailed
	ReasonSLS         = wire.ReasonSLSFailed
	ReasonBMC         = wire.ReasonBMCRefused
	ReasonBMCDown     = wire.ReasonBMCUnreachable
	ReasonHSM         = wire.ReasonHSMFailed
)

// Location is where a MAC was found and the BMC xname SLS cables there.
type Location struct {
	Switch, Port, Connector, Xname string
}

// locateError is a MAC that could not be placed, with the reason for
// /v1/unknown.
type locateError struct {
	reason, detail string
	sw, port       string
	// onNoSwitch: every switch answered and none has the MAC (perhaps a
	// node's NIC, which HSM's walk of its BMC will name): deferred.
	onNoSwitch bool
}

func (e *locateError) Error() string { return e.reason + ": " + e.detail }

// Locator places MACs: switch FDBs, then SLS connectors.
type Locator struct {
	sls Layout
	fdb *FDB

	mu       sync.Mutex
	switches []Switch
}

// NewLocator returns a Locator reading SLS and the FDB cache.
func NewLocator(lay Layout, fdb *FDB) *Locator { return &Locator{sls: lay, fdb: fdb} }

// SetSwitches replaces the switches walked (read from SLS by the caller).
func (l *Locator) SetSwitches(sws []Switch) {
	l.mu.Lock()
	l.switches = sws
	l.mu.Unlock()
	l.fdb.Forget(sws)
}

// Switches returns the switches walked.
func (l *Locator) Switches() []Switch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.switches
}

// Locate finds mac (as seen at since) on the switches, then the SLS
// connector of that port and the BMC xname cabled to it. A MAC on ports of
// several switches is placed by the one port SLS has a connector for (the
// others are uplinks); two such ports, or none, leave it unknown.
func (l *Locator) Locate(ctx context.Context, mac string, since time.Time) (Location, error) {
	hits, err := l.Ports(ctx, mac, since)
	if err != nil {
		return Location{}, err
	}
	return l.Place(ctx, mac, hits)
}

// Hit is a switch port whose forwarding table holds a MAC.
type Hit struct{ Switch, Port string }

// Ports returns the switch ports whose forwarding tables, read at or after
// since, hold mac; none is an error.
func (l *Locator) Ports(ctx context.Context, mac string, since time.Time) ([]Hit, error) {
	sws := l.Switches()
	if len(sws) == 0 {
		return nil, &locateError{reason: ReasonNotOnSwitch, detail: errNoSwitches.Error()}
	}
	var hits []Hit
	var walkErrs []string
	tables, errs := l.fdb.Tables(ctx, sws, since)
	for i, sw := range sws {
		t, err := tables[i], errs[i]
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			walkErrs = append(walkErrs, walkErr(sw.Xname, err))
			continue
		}
		for _, p := range t[mac] {
			hits = append(hits, Hit{sw.Xname, p})
		}
	}
	if len(hits) == 0 {
		if len(walkErrs) > 0 {
			return nil, &locateError{reason: ReasonSNMP, detail: strings.Join(walkErrs, "; ")}
		}
		return nil, &locateError{reason: ReasonNotOnSwitch, onNoSwitch: true,
			detail: fmt.Sprintf("%s is in no forwarding table of %d switches", mac, len(sws))}
	}
	return hits, nil
}

// Place returns the BMC SLS cables to the one port of hits it has a
// connector for.
func (l *Locator) Place(ctx context.Context, mac string, hits []Hit) (Location, error) {
	var found []Location
	for _, h := range hits {
		loc, err := l.connector(ctx, h.Switch, h.Port)
		if err != nil {
			if problem.Status(err) != 404 {
				return Location{}, &locateError{reason: ReasonSLS, detail: err.Error(), sw: h.Switch, port: h.Port}
			}
			continue
		}
		found = append(found, loc)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Location{}, &locateError{reason: ReasonNoConnector, sw: hits[0].Switch, port: hits[0].Port,
			detail: fmt.Sprintf("no MgmtSwitchConnector with VendorName %s under %s names a BMC", hits[0].Port, hits[0].Switch)}
	}
	return Location{}, &locateError{reason: ReasonTwoPorts, sw: found[0].Switch, port: found[0].Port,
		detail: fmt.Sprintf("%s is on %s %s and %s %s", mac, found[0].Switch, found[0].Port, found[1].Switch, found[1].Port)}
}

// connector returns the BMC SLS cables to port of switch sw (ErrNotFound if none).
func (l *Locator) connector(ctx context.Context, sw, port string) (Location, error) {
	hs, err := l.sls.SearchHardware(ctx, sls.HardwareSearch{Type: xname.MgmtSwitchConnector.SLSType(),
		Parent: sw, Extra: map[string]string{"VendorName": port}})
	if err != nil {
		return Location{}, fmt.Errorf("search connectors of %s: %w", sw, err)
	}
	for _, h := range hs {
		c, err := h.Connector()
		if err != nil || c.VendorName != port {
			continue
		}
		if bmc := bmcOf(c.NodeNics); bmc != "" {
			return Location{Switch: sw, Port: port, Connector: h.Xname, Xname: bmc}, nil
		}
	}
	return Location{}, problem.NotFoundf("no connector of %s at %s", sw, port)
}

// isBMC reports whether x names a BMC.
func isBMC(x string) bool {
	switch xname.TypeOf(xname.Normalize(x)) {
	case xname.NodeBMC, xname.RouterBMC, xname.ChassisBMC:
		return true
	}
	return false
}

// bmcOf returns the BMC among a connector's NodeNics: a BMC xname, or the
// BMC a NIC of one hangs under.
func bmcOf(nics []string) string {
	for _, n := range nics {
		x := xname.Normalize(n)
		switch xname.TypeOf(x) {
		case xname.NodeBMC, xname.RouterBMC, xname.ChassisBMC:
			return x
		case xname.NodeBMCNic:
			return xname.Parent(x)
		}
	}
	return ""
}
