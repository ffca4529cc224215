package httpclient

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrRefused marks a delivery that the receiver refused for good: sending
// the same request again cannot succeed, so a sender moves it aside (a
// dead letter) instead of retrying it ahead of everything queued after it.
var ErrRefused = errors.New("refused for good by the receiver")

// StatusError returns the error of a delivery answered with a non-2xx
// status: it wraps ErrRefused when Refused(status).
func StatusError(status int) error {
	if Refused(status) {
		return fmt.Errorf("answered %d %s: %w", status, http.StatusText(status), ErrRefused)
	}
	return fmt.Errorf("answered %d %s", status, http.StatusText(status))
}

// Refused reports whether an HTTP status refuses a request for good: a 4xx
// other than 408 Request Timeout and 429 Too Many Requests, which both
// mean "try again later". 5xx and 3xx are worth retrying.
func Refused(status int) bool {
	return status >= 400 && status <= 499 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}
