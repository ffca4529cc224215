package nodes

// batch is the services' writes of one apply, grouped so that each
// service gets them in as few requests as it allows.
type batch struct{}
