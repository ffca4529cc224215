package core

import (
	"context"
)

// NodeInfo is what the layout service knows about a node: its default NID,
// Role and SubRole (SLS ExtraProperties).
type NodeInfo struct {
	NID     *int   `json:"NID,omitempty"`
	Role    string `json:"Role,omitempty"`
	SubRole string `json:"SubRole,omitempty"`
}

// LayoutSource looks up a node in the intended system layout (SLS). found is
// false when SLS has no entry for xname.
type LayoutSource interface {
	NodeInfo(ctx context.Context, xname string) (info NodeInfo, found bool, err error)
}
