package redfishsim

import (
	"encoding/json"
	"errors"
	"net/http"
)

// errInvalidValue marks a property or parameter value the BMC does not accept.
var errInvalidValue = errors.New("invalid value")

// registry prefixes the MessageIds of error bodies.
const registry = "Base.1.8."

// writeError writes a Redfish error body: code and message, with one
// @Message.ExtendedInfo entry naming the same Base registry message.
func writeError(w http.ResponseWriter, status int, messageID, message string) {
	type info struct {
		ODataType string `json:"@odata.type"`
		MessageID string `json:"MessageId"`
		Message   string `json:"Message"`
		Severity  string `json:"Severity"`
	}
	var body struct {
		Error struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			Extended []info `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	body.Error.Code = registry + messageID
	body.Error.Message = message
	body.Error.Extended = []info{{ODataType: "#Message.v1_1_1.Message", MessageID: registry + messageID, Message: message, Severity: "Critical"}}
	out, _ := json.Marshal(body) // only strings
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}
