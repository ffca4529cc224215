// Package wire holds the node-centric API's wire types: the JSON bodies of
// the nodes daemon (/nodes/v1/computenodes, bootprofiles, nodegroups and
// apply) as the daemon, its client and `hms apply` read and write them.
// Field names follow OpenCHAMI's node-centric proposal (ComputeNode,
// BootProfile, NodeGroup), plus nid, role and bmc_credentials_file, which
// HSM and Redfish discovery need. It links no server, database or HTTP code.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// The kinds a document of a nodes file may have.
const (
	KindComputeNode = "ComputeNode"
	KindBootProfile = "BootProfile"
	KindNodeGroup   = "NodeGroup"
)

// ComputeNode is one node as the administrator declares it. Xname is its
// identity; ID is the daemon's copy of it.
type ComputeNode struct {
	ID           string   `json:"id,omitempty"`
	Xname        string   `json:"xname"`
	NID          int      `json:"nid,omitempty"`
	Role         string   `json:"role,omitempty"`
	SubRole      string   `json:"subrole,omitempty"`
	ManagementIP string   `json:"management_ip,omitempty"`
	BMCIP        string   `json:"bmc_ip,omitempty"`
	BMCMAC       string   `json:"bmc_mac,omitempty"`
	BootMAC      string   `json:"boot_mac,omitempty"`
	Arch         string   `json:"arch,omitempty"`
	BootProfile  string   `json:"boot_profile,omitempty"`
	Groups       []string `json:"groups,omitempty"`
	// BMCCredentialsFile names a secret file (username and password) by
	// reference. The credentials themselves travel only in
	// ApplyRequest.Secrets and are never shown back.
	BMCCredentialsFile string     `json:"bmc_credentials_file,omitempty"`
	LastUpdated        *time.Time `json:"last_updated,omitempty"`
	// Observed is filled only by GET /nodes/v1/computenodes/{xname}.
	Observed *Observed `json:"observed,omitempty"`
}

// Observed is what the other services see of a node, beside its desired
// state: HSM's State and Flag, BSS's last boot script fetch and hbtd's last
// heartbeat. Empty fields are unknown.
type Observed struct {
	State         string     `json:"state,omitempty"`
	Flag          string     `json:"flag,omitempty"`
	LastBootFetch *time.Time `json:"last_bootscript,omitempty"`
	LastHeartbeat *time.Time `json:"last_heartbeat,omitempty"`
	// Heartbeating is hbtd's view (it keeps no time of the last beat):
	// true while the node beats, false once hbtd declared it dead.
	Heartbeating *bool    `json:"heartbeating,omitempty"`
	Errors       []string `json:"errors,omitempty"`
}

// BootProfile is what a node boots: image, kernel, initrd, kernel
// parameters, and the cloud-init user (SSH key, admin user, extra
// user-data).
type BootProfile struct {
	ID            string     `json:"id,omitempty"`
	Name          string     `json:"name"`
	SSHKey        string     `json:"ssh_key,omitempty"`
	AdminUsername string     `json:"admin_username,omitempty"`
	UserData      string     `json:"user_data,omitempty"`
	ImageURL      string     `json:"image_url,omitempty"`
	KernelURL     string     `json:"kernel_url,omitempty"`
	InitrdURL     string     `json:"initrd_url,omitempty"`
	KernelParams  string     `json:"kernel_params,omitempty"`
	LastUpdated   *time.Time `json:"last_updated,omitempty"`
}

// NodeGroup is a named set of nodes (an HSM group), optionally with the
// boot profile its members use when they name none themselves.
type NodeGroup struct {
	ID          string     `json:"id,omitempty"`
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Nodes       []string   `json:"nodes,omitempty"`
	BootProfile string     `json:"boot_profile,omitempty"`
	LastUpdated *time.Time `json:"last_updated,omitempty"`
}

// Resource is one document of a nodes file: exactly one of the three
// pointers is set, matching Kind. On the wire it is the resource's own
// object with "kind" added at top level (no metadata/spec nesting).
type Resource struct {
	Kind        string
	ComputeNode *ComputeNode
	BootProfile *BootProfile
	NodeGroup   *NodeGroup
}

// Name is the resource's identity within its kind: a node's xname, a
// profile's or group's name.
func (r Resource) Name() string {
	switch {
	case r.ComputeNode != nil:
		return r.ComputeNode.Xname
	case r.BootProfile != nil:
		return r.BootProfile.Name
	case r.NodeGroup != nil:
		return r.NodeGroup.Name
	}
	return ""
}

// MarshalJSON writes the resource's object with "kind" first.
func (r Resource) MarshalJSON() ([]byte, error) {
	var body any
	switch r.Kind {
	case KindComputeNode:
		body = r.ComputeNode
	case KindBootProfile:
		body = r.BootProfile
	case KindNodeGroup:
		body = r.NodeGroup
	default:
		return nil, fmt.Errorf("resource: unknown kind %q", r.Kind)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(b, []byte("null")) {
		return nil, fmt.Errorf("resource: kind %s has no body", r.Kind)
	}
	kind, _ := json.Marshal(r.Kind)
	out := append([]byte(`{"kind":`), kind...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// UnmarshalJSON reads an object with a top-level "kind". Unknown fields are
// refused, so a typo in a nodes file is an error, not a silent default.
func (r *Resource) UnmarshalJSON(b []byte) error {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	*r = Resource{Kind: head.Kind}
	// Each body is decoded beside a "kind" field of its own, so that a
	// strict decode accepts "kind" and refuses every other unknown field,
	// in one pass over the bytes.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	switch head.Kind {
	case KindComputeNode:
		v := struct {
			Kind string `json:"kind"`
			*ComputeNode
		}{ComputeNode: new(ComputeNode)}
		r.ComputeNode = v.ComputeNode
		return dec.Decode(&v)
	case KindBootProfile:
		v := struct {
			Kind string `json:"kind"`
			*BootProfile
		}{BootProfile: new(BootProfile)}
		r.BootProfile = v.BootProfile
		return dec.Decode(&v)
	case KindNodeGroup:
		v := struct {
			Kind string `json:"kind"`
			*NodeGroup
		}{NodeGroup: new(NodeGroup)}
		r.NodeGroup = v.NodeGroup
		return dec.Decode(&v)
	case "":
		return fmt.Errorf("resource: missing kind (one of %s, %s, %s)", KindComputeNode, KindBootProfile, KindNodeGroup)
	}
	return fmt.Errorf("resource: unknown kind %q (one of %s, %s, %s)", head.Kind, KindComputeNode, KindBootProfile, KindNodeGroup)
}

// Credentials are a BMC's username and password, read by the CLI from the
// file a node's bmc_credentials_file names.
type Credentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// ApplyRequest is the body of POST /nodes/v1/apply: the whole declared set
// (one file or directory), and what to do with it.
type ApplyRequest struct {
	Resources []Resource `json:"resources"`
	// DryRun computes and returns the plan without writing anything.
	DryRun bool `json:"dry_run,omitempty"`
	// Prune also deletes what the daemon owns but Resources no longer lists.
	Prune bool `json:"prune,omitempty"`
	// Delete removes the listed resources instead of applying them
	// (`hms delete -f`).
	Delete bool `json:"delete,omitempty"`
	// Secrets maps a bmc_credentials_file reference to its content. Write
	// only: never stored in plain text, never returned.
	Secrets map[string]Credentials `json:"secrets,omitempty"`
}

// The actions of a Change or ServiceChange.
const (
	ActionCreate    = "create"
	ActionUpdate    = "update"
	ActionDelete    = "delete"
	ActionUnchanged = "unchanged"
)

// Plan is the answer of POST /nodes/v1/apply: one Change per resource, in
// the order they are (or would be) applied, and whether they were.
type Plan struct {
	Changes []Change `json:"changes"`
	Applied bool     `json:"applied"`
}

// Change is what happens to one resource. Before and After are the
// resource as stored and as declared (null for a create or a delete), so a
// client can render a diff.
type Change struct {
	Kind     string          `json:"kind"`
	Name     string          `json:"name"`
	Action   string          `json:"action"`
	Before   json.RawMessage `json:"before,omitempty"`
	After    json.RawMessage `json:"after,omitempty"`
	Services []ServiceChange `json:"services,omitempty"`
	// Error is set when applying this resource failed. The other
	// resources were still applied; this one is not recorded as applied,
	// so the next apply retries it.
	Error string `json:"error,omitempty"`
}

// ServiceChange is one write to an underlying service (sls, hsm, bss)
// that a Change needs, e.g. {hsm, create, /hsm/v2/State/Components/x1000c0s0b0n0}.
type ServiceChange struct {
	Service string          `json:"service"`
	Action  string          `json:"action"`
	Target  string          `json:"target"`
	Before  json.RawMessage `json:"before,omitempty"`
	After   json.RawMessage `json:"after,omitempty"`
}

// Counts summarises a plan by action, for the CLI's last line
// ("3 to create, 1 to update, 0 to delete").
func (p Plan) Counts() map[string]int {
	n := map[string]int{}
	for _, c := range p.Changes {
		n[c.Action]++
	}
	return n
}
