package orchestrator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// S3 is where s3://bucket/key manifest paths are read: an S3-compatible
// store (Ceph RGW in CSM, MinIO, AWS), path-style (Endpoint/bucket/key),
// each GET signed with AWS Signature Version 4 when a key is given.
//
// The signer is the AWS SDK's own (aws-sdk-go-v2/aws/signer/v4) rather
// than its S3 client: bos does one GET per manifest and reads the answer
// as it reads an http(s) manifest, so only the signature is needed.
type S3 struct {
	// Endpoint is the store's HTTP(S) base URL (empty: s3:// paths cannot be read).
	Endpoint string
	// AccessKey and SecretKey sign requests; empty: requests go unsigned.
	AccessKey, SecretKey string
	// Region is the signing region [us-east-1, what RGW and MinIO accept].
	Region string
}

// DefaultS3Region is S3.Region's default.
const DefaultS3Region = "us-east-1"

// emptySHA256 is the hash of an empty body, which a GET signs.
var emptySHA256 = func() string { h := sha256.Sum256(nil); return hex.EncodeToString(h[:]) }()

// objectURL is where s3://bucket/key (u) is read.
func (s S3) objectURL(u *url.URL) (string, error) {
	if s.Endpoint == "" {
		return "", fmt.Errorf("manifest path %s: an s3:// path needs -s3-endpoint", u)
	}
	if u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return "", fmt.Errorf("manifest path %s: s3://bucket/key expected", u)
	}
	return strings.TrimRight(s.Endpoint, "/") + "/" + u.Host + u.EscapedPath(), nil
}

// sign adds an AWS Signature Version 4 (service s3) to a GET, when a key
// is set; x-amz-content-sha256 is part of it, as S3 requires.
func (s S3) sign(ctx context.Context, req *http.Request, now time.Time) error {
	if s.AccessKey == "" {
		return nil
	}
	region := s.Region
	if region == "" {
		region = DefaultS3Region
	}
	req.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	creds := aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
	// S3 signs the path as sent, not escaped a second time.
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(ctx, creds, req, emptySHA256, "s3", region, now); err != nil {
		return fmt.Errorf("sign S3 request: %w", err)
	}
	return nil
}
