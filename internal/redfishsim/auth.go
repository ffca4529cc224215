package redfishsim

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// sessionsPath is the SessionService collection logins are created in.
const sessionsPath = Root + "/SessionService/Sessions"

// authenticated reports whether r carries a live session token or Basic
// credentials of an account.
func (b *BMC) authenticated(r *http.Request) bool {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		b.mu.Lock()
		_, ok := b.sessions[tok]
		b.mu.Unlock()
		return ok
	}
	user, pass, ok := r.BasicAuth()
	return ok && b.checkPassword(user, pass) != nil
}

// checkPassword returns the account user logs in to with pass, or nil.
func (b *BMC) checkPassword(user, pass string) *account {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range b.accounts {
		if a.user == user && a.password != "" &&
			subtle.ConstantTimeCompare([]byte(a.password), []byte(pass)) == 1 {
			return a
		}
	}
	return nil
}

// changeRequired reports whether r is refused because its account still
// has its factory password (Config.PasswordChangeRequired): only reading
// AccountService, changing that account and logging out are allowed.
func (b *BMC) changeRequired(r *http.Request) bool {
	if public(r) {
		return false
	}
	acc := b.accountOf(r)
	if acc == nil {
		return false
	}
	b.mu.Lock()
	must, own := acc.mustChange, acc.path
	b.mu.Unlock()
	if !must {
		return false
	}
	p := r.URL.Path
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return p != Root+"/AccountService" && !strings.HasPrefix(p, accountsPath)
	case http.MethodPatch:
		return p != own
	case http.MethodDelete:
		return !strings.HasPrefix(p, sessionsPath+"/")
	}
	return true
}

// accountOf returns the account r authenticates as, or nil.
func (b *BMC) accountOf(r *http.Request) *account {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		b.mu.Lock()
		defer b.mu.Unlock()
		s, ok := b.sessions[tok]
		if !ok {
			return nil
		}
		for _, a := range b.accounts {
			if a.user == s.user {
				return a
			}
		}
		return nil
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return nil
	}
	return b.checkPassword(user, pass)
}

// login creates a session: 201 with X-Auth-Token and Location.
func (b *BMC) login(w http.ResponseWriter, r *http.Request) {
	var creds struct{ UserName, Password string }
	m, ok := readObject(w, r)
	if !ok {
		return
	}
	raw, _ := json.Marshal(m) // a decoded object always re-encodes
	if err := json.Unmarshal(raw, &creds); err != nil || creds.UserName == "" {
		writeError(w, http.StatusBadRequest, "PropertyMissing", "The property UserName is a required property and must be included in the request.")
		return
	}
	if b.checkPassword(creds.UserName, creds.Password) == nil {
		writeError(w, http.StatusUnauthorized, "NoValidSession", "There is no valid session established with the implementation.")
		return
	}
	var buf [16]byte
	_, _ = rand.Read(buf[:]) // crypto/rand never fails on Linux
	s := &session{user: creds.UserName, token: hex.EncodeToString(buf[:])}
	b.mu.Lock()
	if len(b.sessions) >= b.maxSess {
		b.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "SessionLimitExceeded", "The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.")
		return
	}
	b.nextSess++
	s.id = strconv.Itoa(b.nextSess)
	if b.sessions == nil {
		b.sessions = map[string]*session{}
	}
	b.sessions[s.token] = s
	b.mu.Unlock()
	w.Header().Set("X-Auth-Token", s.token)
	w.Header().Set("Location", sessionsPath+"/"+s.id)
	writeBody(w, r, http.StatusCreated, sessionBody(s), false)
}

// logout deletes a session; its token stops working at once.
func (b *BMC) logout(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b.mu.Lock()
	found := false
	for tok, s := range b.sessions {
		if s.id == id {
			delete(b.sessions, tok)
			found = true
		}
	}
	b.mu.Unlock()
	if !found {
		writeError(w, http.StatusNotFound, "ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (b *BMC) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b.mu.Lock()
	var found *session
	for _, s := range b.sessions {
		if s.id == id {
			found = s
		}
	}
	b.mu.Unlock()
	if found == nil {
		b.get(w, r) // a session the tree itself holds, or 404
		return
	}
	writeBody(w, r, http.StatusOK, sessionBody(found), false)
}

// listSessions answers the Sessions collection: the sessions the tree holds
// (a mockup's examples) and then the live ones.
func (b *BMC) listSessions(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	ids := make([]int, 0, len(b.sessions))
	for _, s := range b.sessions {
		n, _ := strconv.Atoi(s.id)
		ids = append(ids, n)
	}
	b.mu.Unlock()
	sort.Ints(ids)
	var members []any
	for _, p := range b.tree.children(sessionsPath) {
		members = append(members, map[string]string{"@odata.id": p})
	}
	for _, n := range ids {
		members = append(members, map[string]string{"@odata.id": fmt.Sprintf("%s/%d", sessionsPath, n)})
	}
	if members == nil {
		members = []any{}
	}
	body, _ := json.Marshal(map[string]any{
		"@odata.id": sessionsPath, "@odata.type": "#SessionCollection.SessionCollection",
		"Name": "Session Collection", "Members": members, "Members@odata.count": len(members),
	})
	writeBody(w, r, http.StatusOK, body, false)
}

func sessionBody(s *session) []byte {
	body, _ := json.Marshal(map[string]string{
		"@odata.id": sessionsPath + "/" + s.id, "@odata.type": "#Session.v1_1_0.Session",
		"Id": s.id, "Name": "User Session", "UserName": s.user,
	})
	return body
}

// patchAccount is PATCH of an account: Password sets the password login then
// requires (it is never stored in, or shown by, the resource); UserName
// renames the login.
func (b *BMC) patchAccount(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	b.patchWith(w, r, func(_, patch map[string]any) (func(), error) {
		acc := b.accountAt(p)
		if acc == nil {
			return nil, fmt.Errorf("%s: %w", p, errNotFound)
		}
		pw, hasPW := patch["Password"]
		name, hasName := patch["UserName"]
		newPW, okPW := pw.(string)
		newName, okName := name.(string)
		if hasPW && (!okPW || newPW == "") {
			return nil, fmt.Errorf("the value for Password must be a non-empty string: %w", errInvalidValue)
		}
		if hasName && (!okName || newName == "") {
			return nil, fmt.Errorf("the value for UserName must be a non-empty string: %w", errInvalidValue)
		}
		delete(patch, "Password")
		if hasPW && acc.mustChange {
			patch["PasswordChangeRequired"] = false
		}
		return func() {
			if hasPW {
				acc.password, acc.mustChange = newPW, false
				// As on real BMCs, a new password ends the account's sessions.
				for tok, s := range b.sessions {
					if s.user == acc.user {
						delete(b.sessions, tok)
					}
				}
			}
			if hasName {
				acc.user = newName
			}
		}, nil
	})
}

// accountAt returns the account whose resource is at p. b.mu must be held.
func (b *BMC) accountAt(p string) *account {
	for _, a := range b.accounts {
		if a.path == p {
			return a
		}
	}
	return nil
}
