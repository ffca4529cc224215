package ipxe

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxPooledScript is the largest script buffer put back in the pool: a
// rare huge command line does not pin its buffer.
const maxPooledScript = 16 << 10

// bootscript answers GET /boot/v1/bootscript. The script is rendered into
// a pooled buffer: at boot-storm rates every allocation shows in the tail
// latency (issue 12: p99 under 10 ms at 30,000 scripts/s).
func (a *API) bootscript(w http.ResponseWriter, r *http.Request) {
	var req ScriptRequest
	q, ok := parseScriptQuery(r.URL.RawQuery)
	if !ok {
		q = scriptQueryOf(r.URL.Query())
	}
	req.Arch, req.TS, req.MAC, req.Name = q.arch, q.ts, q.mac, q.name
	if q.nid != "" {
		if v, err := strconv.ParseInt(q.nid, 0, 32); err == nil && v >= 0 {
			req.NID, req.HasNID = int(v), true
		}
	}
	if req.MAC == "" && req.Name == "" && !req.HasNID {
		a.style.WriteStatus(w, r, http.StatusBadRequest, "Need a mac=, name=, or nid= parameter")
		return
	}
	if q.retry != "" {
		req.Retry, _ = strconv.Atoi(q.retry) // (an empty one cost an error value per script)
	}
	req.Caller, _ = callerIP(r, a.svc.trusted)
	buf := a.scripts.Get().(*[]byte)
	defer a.scripts.Put(buf)
	script, err := a.svc.AppendBootscript((*buf)[:0], &req)
	if cap(script) <= maxPooledScript {
		*buf = script
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header()["Content-Type"] = a.textPlain
	_, _ = w.Write(script)
}

// scriptQuery is the bootscript's query parameters as hms-bss reads them:
// arch, ts and retry are their first value (url.Values.Get), mac, name and
// nid the first non-empty item of their comma-separated values (listParam).
type scriptQuery struct {
	mac, name, nid, arch, ts, retry string
}

// scriptQueryOf reads the parameters from a parsed query.
func scriptQueryOf(q url.Values) scriptQuery {
	first := func(name string) string {
		if l := listParam(q, name); len(l) > 0 {
			return l[0]
		}
		return ""
	}
	return scriptQuery{mac: first("mac"), name: first("name"), nid: first("nid"),
		arch: q.Get("arch"), ts: q.Get("ts"), retry: q.Get("retry")}
}

// maxFastParams bounds the queries parseScriptQuery reads itself, far
// below url.ParseQuery's limit on the number of parameters.
const maxFastParams = 16

// parseScriptQuery reads raw as scriptQueryOf(url.ParseQuery(raw)) does,
// without building the url.Values, for the queries iPXE sends: nothing to
// unescape ('%', '+'), no ';' (which url.ParseQuery refuses per pair) and
// a few parameters. ok is false for any other query: the caller parses it
// with net/url.
func parseScriptQuery(raw string) (q scriptQuery, ok bool) {
	if strings.ContainsAny(raw, "%+;") || strings.Count(raw, "&") >= maxFastParams {
		return scriptQuery{}, false
	}
	var seenArch, seenTS, seenRetry bool
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		switch key {
		case "mac":
			q.mac = firstItem(q.mac, value)
		case "name":
			q.name = firstItem(q.name, value)
		case "nid":
			q.nid = firstItem(q.nid, value)
		case "arch":
			q.arch, seenArch = firstValue(q.arch, seenArch, value)
		case "ts":
			q.ts, seenTS = firstValue(q.ts, seenTS, value)
		case "retry":
			q.retry, seenRetry = firstValue(q.retry, seenRetry, value)
		}
	}
	return q, true
}

// firstItem is cur, or when it is empty the first non-empty item of the
// comma-separated v.
func firstItem(cur, v string) string {
	for cur == "" && v != "" {
		cur, v, _ = strings.Cut(v, ",")
	}
	return cur
}

// firstValue keeps the first value given (even an empty one).
func firstValue(cur string, seen bool, v string) (string, bool) {
	if seen {
		return cur, true
	}
	return v, true
}
