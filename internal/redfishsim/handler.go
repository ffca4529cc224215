package redfishsim

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxBody bounds request bodies; BMC requests are small.
const maxBody = 1 << 20

// routes is every endpoint of the BMC, one line each. Paths reach it in
// canonical form (see ServeHTTP), so "/redfish/v1/" arrives as "/redfish/v1".
func (b *BMC) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /redfish", b.versions)
	mux.HandleFunc("GET /redfish/v1", b.get)
	mux.HandleFunc("GET /redfish/v1/{path...}", b.get)
	mux.HandleFunc("GET /redfish/v1/SessionService/Sessions", b.listSessions)
	mux.HandleFunc("GET /redfish/v1/SessionService/Sessions/{id}", b.getSession)
	mux.HandleFunc("POST /redfish/v1/SessionService/Sessions", b.login)
	mux.HandleFunc("DELETE /redfish/v1/SessionService/Sessions/{id}", b.logout)
	mux.HandleFunc("PATCH /redfish/v1/AccountService/Accounts/{id}", b.patchAccount)
	mux.HandleFunc("PATCH /redfish/v1/{path...}", b.patch)
	mux.HandleFunc("POST /redfish/v1/{path...}", b.action)
	mux.HandleFunc("/", b.notAllowed)
	return mux
}

// ServeHTTP answers one Redfish request: injected faults first, then
// authentication (the service root, /redfish, odata, $metadata and login are
// public, as on real BMCs), then the resource.
func (b *BMC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.requests.Add(1)
	r.URL.Path = Canonical(r.URL.Path)
	r.URL.RawPath = ""
	f := b.faults.Load()
	if b.preAuthFaults(w, r, f) {
		return
	}
	if !public(r) && !b.authenticated(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="redfishsim"`)
		writeError(w, http.StatusUnauthorized, "InsufficientPrivilege", "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.")
		return
	}
	if b.changeRequired(r) {
		writeError(w, http.StatusForbidden, "PasswordChangeRequired", "The password provided for this account must be changed before access is granted.  PATCH the Password property for this account located at the target URI to complete this process.")
		return
	}
	if b.postAuthFaults(w, r, f) {
		return
	}
	w.Header().Set("OData-Version", "4.0")
	b.handler.ServeHTTP(w, r)
}

// public reports whether r may be served without credentials.
func public(r *http.Request) bool {
	switch r.URL.Path {
	case "/redfish", Root, Root + "/odata", Root + "/$metadata":
		return r.Method == http.MethodGet || r.Method == http.MethodHead
	case Root + "/SessionService/Sessions":
		return r.Method == http.MethodPost
	}
	return false
}

func (b *BMC) versions(w http.ResponseWriter, r *http.Request) {
	writeBody(w, r, http.StatusOK, []byte(`{"v1":"/redfish/v1/"}`), false)
}

// get serves a resource of the tree (or its changed copy).
func (b *BMC) get(w http.ResponseWriter, r *http.Request) {
	body, isXML, ok := b.lookup(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, "ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
		return
	}
	if !isXML && b.faults.Load().OmitAllowableValues {
		body = omitAllowable(body)
	}
	writeBody(w, r, http.StatusOK, body, isXML)
}

// patch merges a JSON object into a resource and answers with the result.
func (b *BMC) patch(w http.ResponseWriter, r *http.Request) {
	b.patchWith(w, r, nil)
}

// patchHook may consume properties of a PATCH (removing them from patch) or
// refuse it; it runs under the lock before the merge, and the commit function
// it returns runs, still under the lock, only if the whole PATCH succeeds.
type patchHook func(current, patch map[string]any) (commit func(), err error)

// patchWith is PATCH with an optional hook.
func (b *BMC) patchWith(w http.ResponseWriter, r *http.Request, hook patchHook) {
	p := r.URL.Path
	patch, ok := readObject(w, r)
	if !ok {
		return
	}
	b.mu.Lock()
	body, isXML, found := b.lookupLocked(p)
	if !found || isXML {
		b.mu.Unlock()
		writeError(w, http.StatusNotFound, "ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", p))
		return
	}
	if im := r.Header.Get("If-Match"); im != "" && !etagMatches(im, etag(body)) {
		b.mu.Unlock()
		writeError(w, http.StatusPreconditionFailed, "PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")
		return
	}
	var commit func()
	err := b.modifyLocked(p, func(m map[string]any) error {
		if hook != nil {
			var err error
			if commit, err = hook(m, patch); err != nil {
				return err
			}
		}
		return mergePatch(m, patch)
	})
	if err == nil && commit != nil {
		commit()
	}
	body, _, _ = b.lookupLocked(p)
	b.mu.Unlock()
	if err != nil {
		writeMutationError(w, err)
		return
	}
	writeBody(w, r, http.StatusOK, body, false)
}

// readObject reads a JSON object request body or answers 400 and returns false.
func readObject(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "MalformedJSON", "The request body is too large or could not be read.")
		return nil, false
	}
	m, err := decodeObject(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "MalformedJSON", "The request body submitted was malformed JSON and could not be parsed by the receiving service.")
		return nil, false
	}
	return m, true
}

// writeMutationError maps the errors of the mutation helpers to Redfish errors.
func writeMutationError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errNotWritable):
		name, _, _ := strings.Cut(err.Error(), ":")
		writeError(w, http.StatusBadRequest, "PropertyNotWritable", fmt.Sprintf("The property %s is a read only property and cannot be assigned a value.", name))
	case errors.Is(err, errInvalidValue):
		writeError(w, http.StatusBadRequest, "PropertyValueIncorrect", err.Error())
	case errors.Is(err, errNotFound):
		writeError(w, http.StatusNotFound, "ResourceMissingAtURI", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "InternalError", "The request failed due to an internal service error.")
	}
}

// notAllowed answers what no route takes: paths outside /redfish are 404,
// other methods on Redfish paths 405.
func (b *BMC) notAllowed(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/redfish" && !strings.HasPrefix(r.URL.Path, "/redfish/") {
		writeError(w, http.StatusNotFound, "ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
		return
	}
	w.Header().Set("Allow", "GET, HEAD, PATCH, POST")
	writeError(w, http.StatusMethodNotAllowed, "OperationNotAllowed", fmt.Sprintf("The HTTP method %s is not allowed on %s.", r.Method, r.URL.Path))
}

// writeBody writes a resource with its ETag, or 304 if the client has it.
func writeBody(w http.ResponseWriter, r *http.Request, status int, body []byte, isXML bool) {
	tag := etag(body)
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", "no-cache")
	if inm := r.Header.Get("If-None-Match"); inm != "" && r.Method == http.MethodGet && etagMatches(inm, tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if isXML {
		h.Set("Content-Type", "application/xml")
	} else {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
