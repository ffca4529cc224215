package hsm

import "time"

// DiscoveryInfo is what HSM records about the last walk of a RedfishEndpoint.
// The field names are the ones the shipped HSM emits (its swagger says
// LastAttempt/LastStatus; clients read these).
type DiscoveryInfo struct {
	LastDiscoveryAttempt *time.Time `json:"LastDiscoveryAttempt,omitempty"`
	LastDiscoveryStatus  string     `json:"LastDiscoveryStatus"`
	RedfishVersion       string     `json:"RedfishVersion,omitempty"`
}

// RedfishEndpoint is a BMC or other Redfish controller HSM discovers
// hardware through. Password is accepted on input and always answered
// empty; User is returned. The field set is the shipped HSM's: Password
// always present, an empty Name, UseSSDP, MACRequired or TemplateID left
// out (the swagger spells MacRequired; decoding ignores case, so both are
// read).
type RedfishEndpoint struct {
	ID                 string        `json:"ID"`
	Type               string        `json:"Type"`
	Name               string        `json:"Name,omitempty"`
	Hostname           string        `json:"Hostname"`
	Domain             string        `json:"Domain"`
	FQDN               string        `json:"FQDN"`
	Enabled            *bool         `json:"Enabled,omitempty"`
	UUID               string        `json:"UUID"`
	User               string        `json:"User"`
	Password           string        `json:"Password"`
	UseSSDP            bool          `json:"UseSSDP,omitempty"`
	MacRequired        bool          `json:"MACRequired,omitempty"`
	MACAddr            string        `json:"MACAddr"`
	IPAddress          string        `json:"IPAddress"`
	RediscoverOnUpdate bool          `json:"RediscoverOnUpdate"`
	TemplateID         string        `json:"TemplateID,omitempty"`
	DiscoveryInfo      DiscoveryInfo `json:"DiscoveryInfo"`
}

// RedfishEndpointList is the body of GET /Inventory/RedfishEndpoints.
type RedfishEndpointList struct {
	RedfishEndpoints []RedfishEndpoint `json:"RedfishEndpoints"`
}

// RedfishEndpointPatch is the body of PATCH /Inventory/RedfishEndpoints/{xname};
// nil fields are left alone.
type RedfishEndpointPatch struct {
	Name               *string `json:"Name"`
	Hostname           *string `json:"Hostname"`
	Domain             *string `json:"Domain"`
	FQDN               *string `json:"FQDN"`
	Enabled            *bool   `json:"Enabled"`
	User               *string `json:"User"`
	Password           *string `json:"Password"`
	UseSSDP            *bool   `json:"UseSSDP"`
	MacRequired        *bool   `json:"MACRequired"`
	MACAddr            *string `json:"MACAddr"`
	IPAddress          *string `json:"IPAddress"`
	RediscoverOnUpdate *bool   `json:"RediscoverOnUpdate"`
	TemplateID         *string `json:"TemplateID"`
}

// Apply copies the set fields of p onto ep.
func (p *RedfishEndpointPatch) Apply(ep *RedfishEndpoint) {
	for _, f := range []struct{ in, out *string }{
		{p.Name, &ep.Name}, {p.Hostname, &ep.Hostname}, {p.Domain, &ep.Domain}, {p.FQDN, &ep.FQDN},
		{p.User, &ep.User}, {p.Password, &ep.Password}, {p.MACAddr, &ep.MACAddr},
		{p.IPAddress, &ep.IPAddress}, {p.TemplateID, &ep.TemplateID},
	} {
		if f.in != nil {
			*f.out = *f.in
		}
	}
	for _, f := range []struct{ in, out *bool }{
		{p.UseSSDP, &ep.UseSSDP}, {p.MacRequired, &ep.MacRequired}, {p.RediscoverOnUpdate, &ep.RediscoverOnUpdate},
	} {
		if f.in != nil {
			*f.out = *f.in
		}
	}
	if p.Enabled != nil {
		ep.Enabled = p.Enabled
	}
}

// BMCCredential is one RedfishEndpoint's login, as the service-only route
// GET /Inventory/RedfishEndpointCredentials hands it to pcs (not a
// shipped HSM route: CSM keeps these in Vault).
type BMCCredential struct {
	ID       string `json:"ID"`
	User     string `json:"User"`
	Password string `json:"Password"`
}

// BMCCredentialList is the body of GET /Inventory/RedfishEndpointCredentials.
type BMCCredentialList struct {
	Credentials []BMCCredential `json:"Credentials"`
}
