package ipxe

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/ipxe/bss"

	"github.com/hmsuite/hms/internal/problem"
)

// tokenHeader carries the referral token of a POST or PUT.
const tokenHeader = bss.TokenHeader

// decodeParams reads a bootparameters body with hms-bss's detail, "Bad
// Request: " and Go's error text, through decodeStrict: a duplicate key or
// trailing bytes, which hms-bss let through, are refused the same way.
func decodeParams(w http.ResponseWriter, r *http.Request) (BootParams, error) {
	var bp BootParams
	body, err := readBody(w, r, "Bad Request: %s")
	if err != nil {
		return bp, err
	}
	if err := decodeStrict(body, &bp); err != nil {
		return bp, problem.Invalidf("Bad Request: %s", err)
	}
	return bp, nil
}

func (a *API) postParams(w http.ResponseWriter, r *http.Request) {
	a.store(w, r, http.StatusCreated, a.svc.Post)
}

func (a *API) putParams(w http.ResponseWriter, r *http.Request) {
	a.store(w, r, http.StatusOK, a.svc.Put)
}

func (a *API) store(w http.ResponseWriter, r *http.Request, status int, op func(ctx context.Context, bp BootParams) (string, error)) {
	bp, err := decodeParams(w, r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	token, err := op(r.Context(), bp)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if token != "" {
		w.Header().Set(tokenHeader, token)
	}
	writeEmpty(w, status)
}

func (a *API) patchParams(w http.ResponseWriter, r *http.Request) {
	bp, err := decodeParams(w, r)
	if err == nil {
		err = a.svc.Patch(r.Context(), bp)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeEmpty(w, http.StatusOK)
}

func (a *API) deleteParams(w http.ResponseWriter, r *http.Request) {
	bp, err := decodeParams(w, r)
	if err == nil {
		err = a.svc.Delete(r.Context(), bp)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeEmpty(w, http.StatusOK)
}

func emptyQuery(q *ParamsQuery) bool {
	return len(q.Names) == 0 && len(q.MACs) == 0 && len(q.NIDs) == 0 && q.Kernel == "" && q.Initrd == ""
}

// getParams answers GET bootparameters: everything, or what the query (or,
// without one, the body) asks for.
func (a *API) getParams(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, "Failed to receive request body: %v")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	q := ParamsQuery{Names: listParam(r.URL.Query(), "name"), MACs: listParam(r.URL.Query(), "mac")}
	if q.NIDs, err = parseNIDs(listParam(r.URL.Query(), "nid")); err != nil {
		a.fail(w, r, err)
		return
	}
	if emptyQuery(&q) {
		if len(strings.TrimSpace(string(body))) == 0 {
			writeJSON(w, http.StatusOK, jsonType, a.svc.All())
			return
		}
		var bp BootParams
		if err := decodeStrict(body, &bp); err != nil {
			a.fail(w, r, problem.Invalidf("Failed to interpret request body '%s': %v", body, err))
			return
		}
		q = ParamsQuery{Names: bp.Hosts, MACs: bp.MACs, NIDs: bp.NIDs, Kernel: bp.Kernel, Initrd: bp.Initrd}
		if emptyQuery(&q) {
			a.fail(w, r, problem.Invalidf("No specified data requested"))
			return
		}
	}
	out, err := a.svc.Get(&q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonType, out)
}

// All is every record: kernel images, initrd images, then one per key.
// Nothing stored is nil (JSON null, as hms-bss answers).
func (s *Service) All() []BootParams {
	kernels, initrds, entries := s.store.all()
	var out []BootParams
	for _, im := range kernels {
		out = append(out, BootParams{Params: im.Params, Kernel: im.Path})
	}
	for _, im := range initrds {
		out = append(out, BootParams{Params: im.Params, Initrd: im.Path})
	}
	for _, e := range entries {
		out = append(out, e.Entry.params([]string{e.Key}))
	}
	return out
}

// params is e as a BootParams for hosts.
func (e *Entry) params(hosts []string) BootParams {
	return BootParams{Hosts: hosts, Params: e.Params, Kernel: e.Kernel, Initrd: e.Initrd, CloudInit: cloneCloudInit(e.CloudInit)}
}

// Get answers a GET bootparameters query: a name is a stored key, else an
// HSM node (which gets the entry it boots); a MAC or NID its own key, else
// its HSM node's entry; kernel and initrd their image records.
func (s *Service) Get(q *ParamsQuery) ([]BootParams, error) {
	var out []BootParams
	for _, name := range q.Names {
		if e, ok := s.store.entry(name); ok {
			out = append(out, e.params([]string{name}))
		} else if n, ok := s.cache.Node(name); ok {
			if _, e := s.lookup(n, &ScriptRequest{Name: name}); e != nil {
				out = append(out, e.params([]string{name}))
			}
		}
	}
	for _, mac := range q.MACs {
		req := ScriptRequest{MAC: mac}
		n, _ := s.cache.ByMAC(mac)
		if _, e := s.lookupKeyed(normMAC(mac), n, &req); e != nil {
			bp := e.params(nil)
			bp.MACs = []string{mac}
			out = append(out, bp)
		}
	}
	for _, nid := range q.NIDs {
		req := ScriptRequest{NID: int(nid), HasNID: true}
		n, _ := s.cache.ByNID(int(nid))
		if _, e := s.lookupKeyed(nidKey(nid), n, &req); e != nil {
			bp := e.params(nil)
			bp.NIDs = []int32{nid}
			out = append(out, bp)
		}
	}
	if im, ok := s.store.image(kindKernel, q.Kernel); ok {
		out = append(out, BootParams{Params: im.Params, Kernel: im.Path})
	}
	if im, ok := s.store.image(kindInitrd, q.Initrd); ok {
		out = append(out, BootParams{Params: im.Params, Initrd: im.Path})
	}
	if len(out) == 0 {
		return nil, problem.NotFoundf("Cannot find boot parameters for requested %s", queryKinds(q))
	}
	return out, nil
}

// lookupKeyed is the entry stored under key, else the one node n boots.
func (s *Service) lookupKeyed(key string, n *Node, r *ScriptRequest) (string, *Entry) {
	if e, ok := s.store.entry(key); ok {
		return key, e
	}
	if n == nil {
		return "", nil
	}
	return s.lookup(n, r)
}

// kinds lists what q asked for, as hms-bss's 404 names it.
func queryKinds(q *ParamsQuery) string {
	var k []string
	if len(q.Names) > 0 {
		k = append(k, "Hosts")
	}
	if len(q.MACs) > 0 {
		k = append(k, "MACs")
	}
	if len(q.NIDs) > 0 {
		k = append(k, "NIDs")
	}
	if q.Kernel != "" {
		k = append(k, "kernel")
	}
	if q.Initrd != "" {
		k = append(k, "initrd")
	}
	if len(k) < 2 {
		return strings.Join(k, "")
	}
	return fmt.Sprintf("%s or %s", strings.Join(k[:len(k)-1], ", "), k[len(k)-1])
}
