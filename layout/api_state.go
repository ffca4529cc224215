package layout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// networkFail answers a failed network request with the shipped details.
func (a *API) networkFail(w http.ResponseWriter, r *http.Request, err error) {
	problem.Write(w, r, a.log, networkTexts().apply(err))
}

func (a *API) listNetworks(w http.ResponseWriter, r *http.Request) {
	nets, err := a.store.ListNetworks(r.Context())
	if err != nil {
		a.networkFail(w, r, err)
		return
	}
	if len(nets) == 0 {
		// Shipped SLS marshals its nil slice: an empty list is null.
		httpserver.WriteJSON(w, http.StatusOK, nil)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, nets)
}

func (a *API) searchNetworks(w http.ResponseWriter, r *http.Request) {
	q, err := ParseNetworkSearch(r.URL.RawQuery)
	if err != nil {
		a.networkFail(w, r, err)
		return
	}
	nets, err := a.store.SearchNetworks(r.Context(), q)
	if err == nil && len(nets) == 0 {
		err = mark(problem.NotFoundf("no network matches the search"), failNoNetwork, "")
	}
	if err != nil {
		a.networkFail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, nets)
}

func (a *API) getNetwork(w http.ResponseWriter, r *http.Request) {
	n, err := a.store.GetNetwork(r.Context(), r.PathValue("network"))
	if err != nil {
		a.networkFail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, n)
}

func (a *API) createNetwork(w http.ResponseWriter, r *http.Request) {
	var n Network
	if err := readBody(w, r, &n); err != nil {
		a.networkFail(w, r, err)
		return
	}
	if err := a.store.CreateNetwork(r.Context(), n); err != nil {
		a.networkFail(w, r, err)
		return
	}
	a.sendNetwork(w, r, http.StatusCreated, n.Name)
}

func (a *API) putNetwork(w http.ResponseWriter, r *http.Request) {
	var n Network
	if err := readBody(w, r, &n); err != nil {
		a.networkFail(w, r, err)
		return
	}
	// The path names the network whatever Name the body has, and a created
	// network is 200 too, as in the shipped SLS.
	name := r.PathValue("network")
	n.Name = name
	if _, err := a.store.PutNetwork(r.Context(), name, n); err != nil {
		a.networkFail(w, r, err)
		return
	}
	a.sendNetwork(w, r, http.StatusOK, name)
}

// sendNetwork answers a successful write with the stored network.
func (a *API) sendNetwork(w http.ResponseWriter, r *http.Request, status int, name string) {
	n, err := a.store.GetNetwork(r.Context(), name)
	if err != nil {
		a.networkFail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, status, n)
}

func (a *API) patchNetwork(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, BodyLimit))
	if err != nil {
		a.networkFail(w, r, httpserver.DecodeError(err))
		return
	}
	if err := httpserver.CheckJSON(body); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	n, err := a.store.PatchNetwork(r.Context(), r.PathValue("network"), body)
	if err != nil {
		a.networkFail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, n)
}

func (a *API) deleteNetwork(w http.ResponseWriter, r *http.Request) {
	if err := a.store.DeleteNetwork(r.Context(), r.PathValue("network")); err != nil {
		a.networkFail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (a *API) dumpState(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := a.store.WriteDump(r.Context(), w); err != nil {
		// Nothing may have been sent yet if the networks could not be read.
		a.log.WarnContext(r.Context(), "dump_failed", "err", err)
		http.Error(w, "dump failed; see the service log", http.StatusInternalServerError)
	}
}

// loadState takes the dump from the multipart field sls_dump, as the cray CLI
// sends it; a plain application/json body is accepted too.
func (a *API) loadState(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	r.Body = http.MaxBytesReader(w, r.Body, a.DumpLimit)
	hw, nets, err := a.readDump(r)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = fmt.Errorf("sls_dump over %d bytes: %w", mbe.Limit, problem.ErrTooLarge)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.log.InfoContext(r.Context(), "state_loaded", "hardware", hw, "networks", nets, "elapsed", time.Since(start))
	// 204 with no body, as the shipped SLS answers (its spec says 201): the
	// CSM SLS loader aborts on any other status.
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) readDump(r *http.Request) (hw, nets int, err error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "multipart/form-data" && mt != "application/json") {
		return 0, 0, problem.Invalidf("Content-Type: expected multipart/form-data with the field sls_dump")
	}
	if mt == "application/json" {
		return a.store.LoadState(r.Context(), r.Body)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return 0, 0, problem.Invalidf("multipart body: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return 0, 0, problem.Invalidf("multipart field sls_dump: missing")
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return 0, 0, err
			}
			return 0, 0, problem.Invalidf("multipart body: %v", err)
		}
		if part.FormName() == "sls_dump" {
			// A part cut short (a truncated upload) is the client's error,
			// not the store's: read it whole before loading.
			data, err := io.ReadAll(part)
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return 0, 0, err
			}
			if err != nil {
				return 0, 0, problem.Invalidf("multipart field sls_dump: %v", err)
			}
			return a.store.LoadState(r.Context(), bytes.NewReader(data))
		}
	}
}
