package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

// IMS artifact types in an image manifest.
const (
	ArtifactKernel = "application/vnd.cray.image.kernel"
	ArtifactInitrd = "application/vnd.cray.image.initrd"
	ArtifactRootfs = "application/vnd.cray.image.rootfs.squashfs"
)

// Manifest is an IMS-style manifest.json.
type Manifest struct {
	Version   string     `json:"version"`
	Artifacts []Artifact `json:"artifacts"`
}

// Artifact is one file of an image.
type Artifact struct {
	Type string `json:"type"`
	Link struct {
		Path string `json:"path"`
		Etag string `json:"etag,omitempty"`
		Type string `json:"type,omitempty"`
	} `json:"link"`
}

// images are what a manifest names.
type images struct {
	kernel, initrd, rootfs, rootfsEtag string
}

// manifestRequest is the GET of the manifest at path: an http(s) URL as
// is, s3://bucket/key from the S3 store (signed when it has a key).
func (s *Service) manifestRequest(ctx context.Context, path string) (*http.Request, error) {
	u, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("manifest path %q: %w", path, err)
	}
	raw := path
	switch u.Scheme {
	case "http", "https":
	case "s3":
		if raw, err = s.cfg.S3.objectURL(u); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("manifest path %q: http, https or s3 URL expected", path)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if u.Scheme == "s3" {
		err = s.cfg.S3.sign(ctx, req, s.now())
	}
	return req, err
}

// readManifest fetches and parses the manifest at path; a manifest without
// a kernel is not one bos can boot.
func (s *Service) readManifest(ctx context.Context, path string) (images, error) {
	req, err := s.manifestRequest(ctx, path)
	if err != nil {
		return images{}, err
	}
	resp, err := s.cfg.Manifests.Do(req)
	if err != nil {
		return images{}, fmt.Errorf("manifest %s: not reachable: %w: %w", path, problem.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		return images{}, fmt.Errorf("manifest %s: %w: %s", path, problem.ErrUnavailable, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return images{}, fmt.Errorf("manifest %s: %s", path, resp.Status)
	}
	var m Manifest
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return images{}, fmt.Errorf("manifest %s: not a manifest: %w", path, err)
	}
	var im images
	for _, a := range m.Artifacts {
		switch a.Type {
		case ArtifactKernel:
			im.kernel = a.Link.Path
		case ArtifactInitrd:
			im.initrd = a.Link.Path
		case ArtifactRootfs:
			im.rootfs, im.rootfsEtag = a.Link.Path, a.Link.Etag
		}
	}
	if im.kernel == "" {
		return images{}, fmt.Errorf("manifest %s: not a manifest: no artifact of type %s", path, ArtifactKernel)
	}
	return im, nil
}

// kernelParams assembles a boot set's command line as BOS does: the
// template's parameters, root= from the rootfs provider, bos_session_id=.
func kernelParams(bs BootSet, im images, session string) string {
	var p []string
	if bs.KernelParameters != "" {
		p = append(p, bs.KernelParameters)
	}
	if bs.RootfsProvider != "" && im.rootfs != "" {
		root := "root=" + bs.RootfsProvider + ":" + im.rootfs + ":" + im.rootfsEtag
		if bs.RootfsProviderPassthrough != "" {
			root += ":" + bs.RootfsProviderPassthrough
		}
		p = append(p, root)
	}
	p = append(p, "bos_session_id="+session)
	return strings.Join(p, " ")
}
