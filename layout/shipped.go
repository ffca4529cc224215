package layout

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// The failures whose detail the shipped SLS spells in a fixed way, which
// operators' scripts and the CSM conformance tests match on. The store marks
// its errors with them; each handler swaps in the text its shipped
// counterpart sends (hms-messages.md 2.2). Failures the shipped SLS answers
// with a 500 keep our own 400 and detail.
var (
	failXname        = errors.New("invalid xname")
	failNoXname      = errors.New("no xname")
	failNoClass      = errors.New("no class")
	failClass        = errors.New("invalid class")
	failHWExists     = errors.New("hardware exists")
	failNoHardware   = errors.New("no such hardware")
	failNetType      = errors.New("invalid network type")
	failNetName      = errors.New("invalid network name")
	failNetRange     = errors.New("invalid network range")
	failNetExists    = errors.New("network exists")
	failNoNetwork    = errors.New("no such network")
	failMalformedReq = errors.New("malformed request body")
)

// marked is an error with one of the fail* marks; its text and kind are
// the wrapped error's. arg is what a shipped detail may quote.
type marked struct {
	error
	mark error
	arg  string
}

func (m *marked) Is(target error) bool { return target == m.mark }
func (m *marked) Unwrap() error        { return m.error }

// mark tags err (nil stays nil) with m.
func mark(err, m error, arg string) error {
	if err == nil {
		return nil
	}
	return &marked{error: err, mark: m, arg: arg}
}

// shippedTexts maps marks to the shipped detail of one route; a %s in a
// text is replaced by the mark's arg.
type shippedTexts map[error]string

// apply returns err with the shipped detail of its mark, keeping its status;
// an error without a mark of texts is returned as it is.
func (texts shippedTexts) apply(err error) error {
	var m *marked
	if !errors.As(err, &m) {
		return err
	}
	text, ok := texts[m.mark]
	if !ok {
		return err
	}
	if strings.Contains(text, "%s") {
		text = fmt.Sprintf(text, m.arg)
	}
	return problem.FromStatus(problem.Status(err), text)
}

// The shipped details, per route.

func getHardwareTexts() shippedTexts {
	return shippedTexts{failXname: "invalid xname", failNoHardware: "no such component not in DB"}
}

func postHardwareTexts() shippedTexts {
	return shippedTexts{
		failMalformedReq: "error decoding JSON", failNoXname: "missing required Xname field", failXname: "invalid Xname field",
		failNoClass: "missing required Class field", failClass: "invalid Class field", failHWExists: "object already exists",
	}
}

func putHardwareTexts() shippedTexts {
	return shippedTexts{
		failXname: "invalid xname", failMalformedReq: "unable to unmarshal JSON payload",
		failNoClass: "missing fields Class ", failClass: "invalid component class",
	}
}

func networkTexts() shippedTexts {
	return shippedTexts{
		failMalformedReq: "Failed to unmarshal body", failNetType: "invalid network type", failNetName: "invalid network name",
		failNetRange: "invalid IP Range: %s", failNetExists: "A network with that name already exists in the database",
		failNoNetwork: "Network not found in DB",
	}
}

// readBody is httpserver.ReadJSON with a malformed body marked
// failMalformedReq (an oversized one stays a 413).
func readBody(w http.ResponseWriter, r *http.Request, v any) error {
	err := httpserver.ReadJSON(w, r, BodyLimit, v)
	if errors.Is(err, problem.ErrInvalid) {
		return mark(err, failMalformedReq, "")
	}
	return err
}
