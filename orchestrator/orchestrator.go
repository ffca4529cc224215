// Package orchestrator is the Boot Orchestration Service (BOS v2): session
// templates say which nodes boot which image with which kernel parameters;
// a session applies a template (boot, reboot or shutdown) to its nodes; and
// operators, reconcile loops inside the daemon, move each BOS component
// towards its desired state: boot parameters into BSS, power through PCS,
// observed state from HSM, PCS and BSS's endpoint history.
//
// The wire format is BOS v2's (/v2, see docs/bos.md). Templates, sessions,
// components and options persist in SQLite or PostgreSQL, so a restarted
// daemon resumes every session where it was. Peers are reached over HTTP
// only, with their typed clients: statemgr/client (HSM), ipxe.Client (BSS), power/client (PCS).
package orchestrator

import (
	"regexp"
	"time"
)

// Operations a session carries out.
const (
	OpBoot     = "boot"
	OpReboot   = "reboot"
	OpShutdown = "shutdown"
)

// Session statuses.
const (
	SessionPending  = "pending"
	SessionRunning  = "running"
	SessionComplete = "complete"
)

// Component phases.
const (
	PhaseNone        = ""
	PhasePoweringOn  = "powering_on"
	PhasePoweringOff = "powering_off"
	PhaseConfiguring = "configuring"
)

// Component statuses (status.status); failed and on_hold are only ever set
// through status_override.
const (
	StatusPowerOnPending           = "power_on_pending"
	StatusPowerOnCalled            = "power_on_called"
	StatusPowerOffPending          = "power_off_pending"
	StatusPowerOffGracefullyCalled = "power_off_gracefully_called"
	StatusPowerOffForcefullyCalled = "power_off_forcefully_called"
	StatusConfiguring              = "configuring"
	StatusStable                   = "stable"
	StatusFailed                   = "failed"
	StatusOnHold                   = "on_hold"
)

// Component actions (last_action.action).
const (
	ActionCleanup          = "actual_state_cleanup"
	ActionApplyStaged      = "apply_staged"
	ActionDiscovered       = "newly_discovered"
	ActionPowerOffForceful = "powering_off_forcefully"
	ActionPowerOffGraceful = "powering_off_gracefully"
	ActionPowerOn          = "powering_on"
	ActionSessionSetup     = "session_setup"
)

// namePattern is the spec's pattern of template, session and boot set names.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9](?:[-._a-zA-Z0-9]{0,125}[a-zA-Z0-9])?$`)

// Link is a links entry.
type Link struct {
	Href string `json:"href,omitempty"`
	Rel  string `json:"rel,omitempty"`
}

// CFS is the configuration a template or boot set names.
type CFS struct {
	Configuration string `json:"configuration,omitempty"`
}

// BootSet is one image and the nodes that boot it.
type BootSet struct {
	Name                      string   `json:"name,omitempty"`
	Path                      string   `json:"path"`
	CFS                       *CFS     `json:"cfs,omitempty"`
	Type                      string   `json:"type"`
	Etag                      string   `json:"etag,omitempty"`
	KernelParameters          string   `json:"kernel_parameters,omitempty"`
	NodeList                  []string `json:"node_list,omitempty"`
	NodeRolesGroups           []string `json:"node_roles_groups,omitempty"`
	NodeGroups                []string `json:"node_groups,omitempty"`
	Arch                      string   `json:"arch,omitempty"`
	RootfsProvider            string   `json:"rootfs_provider,omitempty"`
	RootfsProviderPassthrough string   `json:"rootfs_provider_passthrough,omitempty"`
}

// Template is a session template.
type Template struct {
	Name        string             `json:"name"`
	Tenant      string             `json:"tenant"`
	Description string             `json:"description,omitempty"`
	EnableCFS   *bool              `json:"enable_cfs,omitempty"`
	CFS         *CFS               `json:"cfs,omitempty"`
	BootSets    map[string]BootSet `json:"boot_sets"`
	Links       []Link             `json:"links,omitempty"`
}

// SessionStatus is a session's status object; EndTime and Error are null
// until set.
type SessionStatus struct {
	StartTime string  `json:"start_time"`
	EndTime   *string `json:"end_time"`
	Status    string  `json:"status"`
	Error     *string `json:"error"`
}

// Session applies a template's operation to its nodes.
type Session struct {
	Name            string        `json:"name"`
	Tenant          string        `json:"tenant"`
	Operation       string        `json:"operation"`
	TemplateName    string        `json:"template_name"`
	Limit           string        `json:"limit"`
	Stage           bool          `json:"stage"`
	Components      string        `json:"components"`
	IncludeDisabled bool          `json:"include_disabled"`
	Status          SessionStatus `json:"status"`

	// version is the stored version this copy was read at (Store.UpdateSession).
	version int64
}

// BootArtifacts are what a node boots.
type BootArtifacts struct {
	Kernel           string `json:"kernel"`
	KernelParameters string `json:"kernel_parameters"`
	Initrd           string `json:"initrd"`
}

// ActualState is what a component was last seen to boot.
type ActualState struct {
	BootArtifacts BootArtifacts `json:"boot_artifacts"`
	BSSToken      string        `json:"bss_token"`
	LastUpdated   string        `json:"last_updated,omitempty"`
}

// DesiredState is what a component should boot.
type DesiredState struct {
	BootArtifacts BootArtifacts `json:"boot_artifacts"`
	Configuration string        `json:"configuration"`
	BSSToken      string        `json:"bss_token"`
	LastUpdated   string        `json:"last_updated,omitempty"`
}

// StagedState is what a staged session will make the component's desired state.
type StagedState struct {
	BootArtifacts BootArtifacts `json:"boot_artifacts"`
	Configuration string        `json:"configuration"`
	Session       string        `json:"session"`
	LastUpdated   string        `json:"last_updated,omitempty"`
}

// LastAction is the most recent action taken on a component.
type LastAction struct {
	LastUpdated string `json:"last_updated,omitempty"`
	Action      string `json:"action"`
	Failed      bool   `json:"failed"`
}

// EventStats counts the attempts since the component last reached its
// desired state.
type EventStats struct {
	PowerOnAttempts          int `json:"power_on_attempts"`
	PowerOffGracefulAttempts int `json:"power_off_graceful_attempts"`
	PowerOffForcefulAttempts int `json:"power_off_forceful_attempts"`
}

// ComponentStatus is where a component stands.
type ComponentStatus struct {
	Phase          string `json:"phase"`
	Status         string `json:"status"`
	StatusOverride string `json:"status_override"`
}

// Component is BOS's record of one node.
type Component struct {
	ID           string          `json:"id"`
	ActualState  ActualState     `json:"actual_state"`
	DesiredState DesiredState    `json:"desired_state"`
	StagedState  StagedState     `json:"staged_state"`
	LastAction   LastAction      `json:"last_action"`
	EventStats   EventStats      `json:"event_stats"`
	Status       ComponentStatus `json:"status"`
	Enabled      bool            `json:"enabled"`
	Error        string          `json:"error"`
	Session      string          `json:"session"`
	RetryPolicy  *int            `json:"retry_policy,omitempty"`

	// version counts the component's writes (0: never stored); an operator
	// that acts on what it read earlier checks it is still the same.
	version int64
}

// timeFormat is how BOS writes times.
const timeFormat = time.RFC3339

func stamp(t time.Time) string { return t.UTC().Format(timeFormat) }

// parseStamp reads a time written by stamp; the zero time for "" or junk.
func parseStamp(s string) time.Time {
	t, err := time.Parse(timeFormat, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// computeStatus derives status.status from the phase and the last action,
// as BOS's component controller does; status_override wins.
func (c *Component) computeStatus() {
	st := &c.Status
	switch {
	case st.StatusOverride != "":
		st.Status = st.StatusOverride
	case st.Phase == PhasePoweringOff && c.LastAction.Action == ActionPowerOffGraceful:
		st.Status = StatusPowerOffGracefullyCalled
	case st.Phase == PhasePoweringOff && c.LastAction.Action == ActionPowerOffForceful:
		st.Status = StatusPowerOffForcefullyCalled
	case st.Phase == PhasePoweringOff:
		st.Status = StatusPowerOffPending
	case st.Phase == PhasePoweringOn && c.LastAction.Action == ActionPowerOn:
		st.Status = StatusPowerOnCalled
	case st.Phase == PhasePoweringOn:
		st.Status = StatusPowerOnPending
	case st.Phase == PhaseConfiguring:
		st.Status = StatusConfiguring
	default:
		st.Status = StatusStable
	}
}
