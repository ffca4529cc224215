// Package redact hides secrets in what the suite logs. URLs can carry a
// password in their userinfo (http://user:pw@host/...): subscribers, SCN
// subscription URLs and peer URLs are logged with the password replaced, while
// the APIs keep answering what was stored, as HMS does (see docs/security.md).
package redact

import (
	"net/url"
	"strings"
)

// Mask replaces a password in logs.
const Mask = "xxxxx"

// URL returns s with the password of its userinfo replaced by Mask
// ("http://user:xxxxx@host/p"). A user name without a password is masked
// whole, since it is often a token ("http://xxxxx@host").
// Text that does not parse as a URL is masked from the scheme to the last '@'
// before the host, so a malformed URL cannot leak what a good one would hide.
func URL(s string) string {
	if !strings.Contains(s, "@") {
		return s // nothing to hide; the common case costs no parse
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return rough(s)
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), Mask)
	} else {
		u.User = url.User(Mask)
	}
	return u.String()
}

// rough masks the userinfo of text url.Parse refused: everything between
// "//" and the last '@' of the authority.
func rough(s string) string {
	start := strings.Index(s, "//")
	if start < 0 {
		start = -2
	}
	auth := s[start+2:]
	if end := strings.IndexAny(auth, "/?#"); end >= 0 {
		auth = auth[:end]
	}
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return s
	}
	return s[:start+2] + Mask + s[start+2+at:]
}

// URLs is URL applied to each element, for lists such as Kafka brokers.
func URLs(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = URL(s)
	}
	return out
}
