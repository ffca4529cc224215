package agent

// BasePath is where hbtd's API lives.
const BasePath = "/hmi/v1"

// Heartbeat is the message a node sends. Field names are matched without regard
// to case, as the shipped service does.
type Heartbeat struct {
	Component string `json:"Component"`
	Hostname  string `json:"Hostname,omitempty"`
	NID       string `json:"NID,omitempty"`
	Status    string `json:"Status"`
	TimeStamp string `json:"TimeStamp"`
}

// HBState is one entry of a heartbeat status answer.
type HBState struct {
	XName        string `json:"XName"`
	Heartbeating bool   `json:"Heartbeating"`
}

// HBStatesRequest is the body of POST /hbstates.
type HBStatesRequest struct {
	XNames []string `json:"XNames"`
}

// HBStatesResponse is the answer to POST /hbstates.
type HBStatesResponse struct {
	HBStates []HBState `json:"HBStates"`
}

// Params are the operating parameters of GET and PATCH /params. Every value is
// a JSON string, as in the shipped service. Kv_url, Interval, Sm_retries and
// Telemetry_host are kept and reported for compatibility: this tracker has no
// KV store, detects deadlines every Tick instead of every Interval, retries HSM
// until it accepts, and publishes to the bus given by -kafka-brokers.
type Params struct {
	Debug          string `json:"Debug"`
	Errtime        string `json:"Errtime"`
	Warntime       string `json:"Warntime"`
	Interval       string `json:"Interval"`
	Kv_url         string `json:"Kv_url"` //nolint:revive // HMS spelling
	Nosm           string `json:"Nosm"`
	Port           string `json:"Port"`
	Sm_retries     string `json:"Sm_retries"`     //nolint:revive // HMS spelling
	Sm_timeout     string `json:"Sm_timeout"`     //nolint:revive // HMS spelling
	Sm_url         string `json:"Sm_url"`         //nolint:revive // HMS spelling
	Use_telemetry  string `json:"Use_telemetry"`  //nolint:revive // HMS spelling
	Telemetry_host string `json:"Telemetry_host"` //nolint:revive // HMS spelling
}
