package hsm

// Group is a labelled, possibly overlapping set of components (Group.1.0.0).
// A component may be in any number of groups, except that it is in at most one of
// the groups that share an ExclusiveGroup label.
type Group struct {
	Label          string   `json:"label"`
	Description    string   `json:"description"`
	ExclusiveGroup string   `json:"exclusiveGroup,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	Members        Members  `json:"members"`
}

// Partition is a named, non-overlapping set of components (Partition.1.0.0): a
// component is in at most one partition.
type Partition struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags,omitempty"`
	Members     Members  `json:"members"`
}

// Members is the fully enumerated member list of a group or partition.
type Members struct {
	IDs []string `json:"ids"`
}

// MemberID is the body that adds one member to a group or partition.
type MemberID struct {
	ID string `json:"id"`
}

// GroupPatch updates a group's or partition's metadata; nil fields are kept.
type GroupPatch struct {
	Description *string   `json:"description"`
	Tags        *[]string `json:"tags"`
}

// Membership lists the partition and groups a component belongs to.
type Membership struct {
	ID            string   `json:"id"`
	PartitionName string   `json:"partitionName"`
	GroupLabels   []string `json:"groupLabels"`
}
