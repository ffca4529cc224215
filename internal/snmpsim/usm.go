package snmpsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gosnmp/gosnmp"
)

// User is one SNMPv3 (USM, RFC 3414) user of an agent: authNoPriv when
// PrivProtocol is NoPriv (or zero), else authPriv. Users without
// authentication are not simulated: no switch HMS walks has them.
type User struct {
	Name string
	// AuthProtocol is MD5, SHA (HMAC-96, RFC 3414) or SHA224 to SHA512
	// (RFC 7860); AuthPassphrase at least 8 characters.
	AuthProtocol   gosnmp.SnmpV3AuthProtocol
	AuthPassphrase string
	// PrivProtocol is NoPriv, DES (CBC-DES, RFC 3414), AES (CFB-128,
	// RFC 3826), AES192/AES256 (Blumenthal key extension) or
	// AES192C/AES256C (Reeder, as Cisco); PrivPassphrase at least 8.
	PrivProtocol   gosnmp.SnmpV3PrivProtocol
	PrivPassphrase string
}

// The USM statistics a Report carries (RFC 3414 5, usmStats*).
const (
	usmStatsUnsupportedSecLevels = ".1.3.6.1.6.3.15.1.1.1.0"
	usmStatsNotInTimeWindows     = ".1.3.6.1.6.3.15.1.1.2.0"
	usmStatsUnknownUserNames     = ".1.3.6.1.6.3.15.1.1.3.0"
	usmStatsUnknownEngineIDs     = ".1.3.6.1.6.3.15.1.1.4.0"
	usmStatsWrongDigests         = ".1.3.6.1.6.3.15.1.1.5.0"
	usmStatsDecryptionErrors     = ".1.3.6.1.6.3.15.1.1.6.0"
)

// timeWindow is the USM time window in seconds (RFC 3414 3.2 7b).
const timeWindow = 150

// usmUser is a User with its keys localised to the agent's engine ID.
type usmUser struct {
	User
	authKey, privKey []byte
}

// engine is an agent's SNMPv3 side: the authoritative engine (RFC 3411)
// and its USM users.
type engine struct {
	id    []byte
	boots uint32
	start time.Time
	now   func() time.Time
	users map[string]*usmUser
	log   gosnmp.Logger

	unsupported, notInWindow, unknownUser, unknownEngine, wrongDigest, decryption atomic.Uint32
}

func newEngine(cfg Config, log gosnmp.Logger) (*engine, error) {
	e := &engine{id: slices.Clone(cfg.EngineID), boots: max(cfg.Boots, 1), now: cfg.Now, users: map[string]*usmUser{}, log: log}
	if e.now == nil {
		e.now = time.Now
	}
	e.start = e.now()
	if e.id == nil {
		// RFC 3411 5: the enterprise bit and number (0 here: not a
		// vendor's), format 5 (administratively assigned octets), and 8
		// random octets, so each agent started is a new engine.
		e.id = make([]byte, 13)
		copy(e.id, []byte{0x80, 0, 0, 0, 5})
		_, _ = rand.Read(e.id[5:]) // never fails (crypto/rand)
	}
	if len(e.id) < 5 || len(e.id) > 32 || e.boots >= maxInt32 {
		return nil, fmt.Errorf("snmpsim: engine ID of %d bytes (want 5 to 32) or boots %d", len(e.id), e.boots)
	}
	for _, u := range cfg.Users {
		lu, err := localize(u, e.id)
		if err != nil {
			return nil, err
		}
		if _, dup := e.users[u.Name]; dup {
			return nil, fmt.Errorf("snmpsim: user %q twice", u.Name)
		}
		e.users[u.Name] = lu
	}
	return e, nil
}

// localize checks u and derives its keys for engineID with gosnmp's USM
// code (password to key, RFC 3414 A.2; AES key extension for AES192/256).
func localize(u User, engineID []byte) (*usmUser, error) {
	if u.PrivProtocol == 0 {
		u.PrivProtocol = gosnmp.NoPriv
	}
	switch {
	case u.Name == "" || len(u.Name) > 32:
		return nil, fmt.Errorf("snmpsim: user name %q: want 1 to 32 characters", u.Name)
	case u.AuthProtocol < gosnmp.MD5 || u.AuthProtocol > gosnmp.SHA512:
		return nil, fmt.Errorf("snmpsim: user %s: authentication protocol %v not supported", u.Name, u.AuthProtocol)
	case u.PrivProtocol > gosnmp.AES256C:
		return nil, fmt.Errorf("snmpsim: user %s: privacy protocol %v not supported", u.Name, u.PrivProtocol)
	case len(u.AuthPassphrase) < 8 || (u.PrivProtocol != gosnmp.NoPriv && len(u.PrivPassphrase) < 8):
		return nil, fmt.Errorf("snmpsim: user %s: passphrases must have at least 8 characters", u.Name)
	}
	sp := &gosnmp.UsmSecurityParameters{AuthoritativeEngineID: string(engineID), UserName: u.Name,
		AuthenticationProtocol: u.AuthProtocol, AuthenticationPassphrase: u.AuthPassphrase,
		PrivacyProtocol: u.PrivProtocol, PrivacyPassphrase: u.PrivPassphrase}
	if err := sp.InitSecurityKeys(); err != nil {
		return nil, fmt.Errorf("snmpsim: user %s: keys: %w", u.Name, err)
	}
	return &usmUser{User: u, authKey: sp.SecretKey, privKey: sp.PrivacyKey}, nil
}

// macLen is the length of the truncated HMAC of p (RFC 3414 6, 7; RFC 7860 4.2.1).
func macLen(p gosnmp.SnmpV3AuthProtocol) int {
	switch p {
	case gosnmp.SHA224:
		return 16
	case gosnmp.SHA256:
		return 24
	case gosnmp.SHA384:
		return 32
	case gosnmp.SHA512:
		return 48
	}
	return 12
}

// engineTime is snmpEngineTime: seconds since the engine started.
func (e *engine) engineTime() uint32 {
	d := e.now().Sub(e.start) / time.Second
	return uint32(min(max(d, 0), maxInt32))
}

// answer processes one v3 message as RFC 3414 3.2 orders the checks;
// messages that cannot be parsed, or with an unknown security model or
// invalid flags, are dropped (a real agent only counts them).
func (a *Agent) answerV3(req []byte) ([]byte, bool) {
	e := a.v3
	msg := slices.Clone(req) // authentication zeroes the MAC in place
	m, ok := parseV3(msg)
	if !ok || m.secModel != int64(gosnmp.UserSecurityModel) || m.flags&(flagAuth|flagPriv) == flagPriv ||
		m.encrypted != (m.flags&flagPriv != 0) {
		return nil, false
	}
	plainID := uint32(0)
	if !m.encrypted {
		plainID = requestID(m.data)
	}
	if !bytes.Equal(m.engineID, e.id) { // engine discovery lands here too (RFC 3414 4)
		return e.report(m, usmStatsUnknownEngineIDs, &e.unknownEngine, nil, plainID)
	}
	u := e.users[string(m.user)]
	switch {
	case u == nil:
		return e.report(m, usmStatsUnknownUserNames, &e.unknownUser, nil, plainID)
	case m.flags&flagAuth == 0 || (m.flags&flagPriv != 0 && u.PrivProtocol == gosnmp.NoPriv):
		return e.report(m, usmStatsUnsupportedSecLevels, &e.unsupported, nil, plainID)
	case !authentic(msg, m, u):
		return e.report(m, usmStatsWrongDigests, &e.wrongDigest, nil, plainID)
	case !e.inTimeWindow(m):
		// Authenticated, so the manager can trust the time it carries.
		return e.report(m, usmStatsNotInTimeWindows, &e.notInWindow, u, plainID)
	}
	p, err := e.decode(msg, m, u)
	if err != nil {
		if !m.encrypted {
			return nil, false
		}
		return e.report(m, usmStatsDecryptionErrors, &e.decryption, u, 0)
	}
	vars, ok := a.handle(p)
	if !ok {
		return nil, false
	}
	resp := &gosnmp.SnmpPacket{PDUType: gosnmp.GetResponse, RequestID: p.RequestID, Variables: vars, ContextName: p.ContextName}
	if u.PrivProtocol != gosnmp.NoPriv && m.flags&flagPriv == 0 {
		// The user is authPriv, and its view is readable at that level
		// only (net-snmp's `rouser NAME priv`): VACM says no.
		resp.Error, resp.ErrorIndex, resp.Variables = gosnmp.AuthorizationError, 1, p.Variables
	}
	flags := gosnmp.SnmpV3MsgFlags(m.flags & (flagAuth | flagPriv))
	return bounded(resp, p, int(m.maxSize), func(r *gosnmp.SnmpPacket) ([]byte, bool) {
		return e.marshal(m, u, flags, r)
	})
}

// authentic checks the message's HMAC with u's key (RFC 3414 6.3.2, 7.3.2,
// RFC 7860 4.2.2); it zeroes the MAC in msg, as gosnmp's decoder expects.
func authentic(msg []byte, m *v3msg, u *usmUser) bool {
	n := macLen(u.AuthProtocol)
	if len(m.authParams) != n {
		return false
	}
	got := slices.Clone(m.authParams)
	clear(msg[m.authAt : m.authAt+n])
	mac := hmac.New(u.AuthProtocol.HashType().New, u.authKey)
	mac.Write(msg)
	return hmac.Equal(mac.Sum(nil)[:n], got)
}

// inTimeWindow is RFC 3414 3.2 7b for the authoritative engine.
func (e *engine) inTimeWindow(m *v3msg) bool {
	t := int64(e.engineTime())
	return m.boots == int64(e.boots) && m.time >= t-timeWindow && m.time <= t+timeWindow
}

// decode decrypts (with gosnmp's USM code) and parses an authenticated message.
func (e *engine) decode(msg []byte, m *v3msg, u *usmUser) (*gosnmp.SnmpPacket, error) {
	flags := gosnmp.SnmpV3MsgFlags(m.flags & (flagAuth | flagPriv))
	dec := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel, MsgFlags: flags,
		SecurityParameters: e.params(u, u.Name, flags), Logger: e.log}
	return dec.SnmpDecodePacket(msg)
}

// params are the USM parameters of a message the engine sends: its own
// engine ID, boots and time, u's keys (nil: unauthenticated) and a new
// salt when encrypted.
func (e *engine) params(u *usmUser, user string, flags gosnmp.SnmpV3MsgFlags) *gosnmp.UsmSecurityParameters {
	sp := &gosnmp.UsmSecurityParameters{AuthoritativeEngineID: string(e.id), AuthoritativeEngineBoots: e.boots,
		AuthoritativeEngineTime: e.engineTime(), UserName: user,
		AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv, Logger: e.log}
	if u != nil {
		sp.AuthenticationProtocol, sp.SecretKey = u.AuthProtocol, u.authKey
		sp.PrivacyProtocol, sp.PrivacyKey = u.PrivProtocol, u.privKey
	}
	if flags&gosnmp.AuthPriv == gosnmp.AuthPriv {
		// A random salt never repeats an IV under one key in practice
		// (RFC 3826 3.1.2.1 asks only that it be unique); DES takes the
		// 8 octets as its salt as well (RFC 3414 8.1.1.1).
		sp.PrivacyParameters = make([]byte, 8)
		_, _ = rand.Read(sp.PrivacyParameters)
	}
	return sp
}

// report answers with a Report PDU carrying the counter oid (RFC 3412
// 7.1.3c, RFC 3414 3.2): unauthenticated, or authNoPriv with u's key
// when u is given; nothing when the message is not reportable.
func (e *engine) report(m *v3msg, oid string, c *atomic.Uint32, u *usmUser, reqID uint32) ([]byte, bool) {
	n := c.Add(1)
	if m.flags&flagReportable == 0 {
		return nil, false
	}
	flags := gosnmp.NoAuthNoPriv
	if u != nil {
		flags = gosnmp.AuthNoPriv
	}
	return e.marshal(m, u, flags, &gosnmp.SnmpPacket{PDUType: gosnmp.Report, RequestID: reqID,
		Variables: []gosnmp.SnmpPDU{{Name: oid, Type: gosnmp.Counter32, Value: n}}})
}

// marshal completes pkt as the engine's answer to m at flags and encodes,
// encrypts and authenticates it with gosnmp.
func (e *engine) marshal(m *v3msg, u *usmUser, flags gosnmp.SnmpV3MsgFlags, pkt *gosnmp.SnmpPacket) ([]byte, bool) {
	pkt.Version, pkt.MsgFlags, pkt.SecurityModel = gosnmp.Version3, flags, gosnmp.UserSecurityModel
	pkt.MsgID, pkt.ContextEngineID, pkt.Logger = uint32(m.msgID), string(e.id), e.log
	pkt.SecurityParameters = e.params(u, string(m.user), flags)
	out, err := pkt.MarshalMsg()
	return out, err == nil
}
