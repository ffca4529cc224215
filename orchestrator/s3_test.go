package orchestrator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hmsuite/hms/internal/problem"
)

// checkSigV4 checks the AWS Signature Version 4 of r (Authorization header
// form, service s3) against secret, written from the specification and not
// from the signer bos uses, so that the test does not grade the signer by
// itself.
func checkSigV4(r *http.Request, accessKey, secret string) error {
	const algo = "AWS4-HMAC-SHA256 "
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), algo)
	if !ok {
		return errors.New("no AWS4-HMAC-SHA256 authorization")
	}
	parts := map[string]string{}
	for _, p := range strings.Split(auth, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		parts[k] = v
	}
	scope := strings.Split(parts["Credential"], "/")
	if len(scope) != 5 || scope[0] != accessKey || scope[3] != "s3" || scope[4] != "aws4_request" {
		return fmt.Errorf("credential %q", parts["Credential"])
	}
	date := r.Header.Get("X-Amz-Date")
	if !strings.HasPrefix(date, scope[1]) {
		return fmt.Errorf("x-amz-date %q outside the scope's day %s", date, scope[1])
	}
	signed := strings.Split(parts["SignedHeaders"], ";")
	if !slices.Contains(signed, "host") || !slices.Contains(signed, "x-amz-content-sha256") || !slices.IsSorted(signed) {
		return fmt.Errorf("signed headers %q", parts["SignedHeaders"])
	}
	var canon strings.Builder
	for _, h := range signed {
		v := r.Header.Get(h)
		if h == "host" {
			v = r.Host
		}
		fmt.Fprintf(&canon, "%s:%s\n", h, strings.TrimSpace(v))
	}
	creq := strings.Join([]string{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, canon.String(), parts["SignedHeaders"],
		r.Header.Get("X-Amz-Content-Sha256")}, "\n")
	sum := sha256.Sum256([]byte(creq))
	sts := strings.Join([]string{"AWS4-HMAC-SHA256", date, strings.Join(scope[1:], "/"), hex.EncodeToString(sum[:])}, "\n")
	key := []byte("AWS4" + secret)
	for _, s := range append(scope[1:], sts) {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		key = m.Sum(nil)
	}
	if got := hex.EncodeToString(key); got != parts["Signature"] {
		return fmt.Errorf("signature %s, want %s", parts["Signature"], got)
	}
	return nil
}

// TestCheckSigV4: the checker accepts the specification's own example (GET
// Object with a Range header) and refuses it with another secret.
func TestCheckSigV4(t *testing.T) {
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt", nil)
	r.Header.Set("Range", "bytes=0-9")
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"+
		"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"+
		"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
	if err := checkSigV4(r, "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"); err != nil {
		t.Errorf("the specification's example: %v", err)
	}
	if err := checkSigV4(r, "AKIAIOSFODNN7EXAMPLE", "another"); err == nil {
		t.Error("another secret passed")
	}
}

// TestS3Manifest: an s3:// manifest is read path-style from -s3-endpoint
// with a signature the store checks; a wrong secret or no key is refused
// by the store and the manifest is not one (a 4xx is not a store down).
func TestS3Manifest(t *testing.T) {
	const access, secret = "bos-reader", "s3cr3t/key+"
	var (
		mu    sync.Mutex
		paths []string
	)
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if err := checkSigV4(r, access, secret); err != nil {
			http.Error(w, "SignatureDoesNotMatch: "+err.Error(), http.StatusForbidden)
			return
		}
		writeJSON(w, map[string]any{"version": "1.0", "artifacts": []map[string]any{
			{"type": ArtifactKernel, "link": map[string]any{"path": "s3://boot-images/img1/kernel"}}}})
	}))
	t.Cleanup(store.Close)
	tests := []struct {
		name    string
		s3      S3
		wantErr string
	}{
		{name: "signed", s3: S3{Endpoint: store.URL, AccessKey: access, SecretKey: secret}},
		{name: "wrong secret", s3: S3{Endpoint: store.URL, AccessKey: access, SecretKey: "guess"}, wantErr: "403 Forbidden"},
		{name: "unsigned", s3: S3{Endpoint: store.URL + "/"}, wantErr: "403 Forbidden"},
		{name: "no endpoint", wantErr: "needs -s3-endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			paths = nil
			mu.Unlock()
			e := newEnvWith(t, func(cfg *DaemonConfig) { cfg.S3 = tt.s3 })
			im, err := e.daemon.svc.readManifest(t.Context(), "s3://boot-images/img1/manifest.json")
			switch {
			case tt.wantErr == "" && (err != nil || im.kernel != "s3://boot-images/img1/kernel"):
				t.Errorf("read %+v, %v", im, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err %v, want one saying %q", err, tt.wantErr)
			case errors.Is(err, problem.ErrUnavailable):
				t.Errorf("err %v counts as the store being down", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.s3.Endpoint != "" && !slices.Equal(paths, []string{"/boot-images/img1/manifest.json"}) {
				t.Errorf("store asked for %q", paths)
			}
		})
	}
}
