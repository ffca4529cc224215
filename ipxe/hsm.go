package ipxe

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// HSM's wire types, as BSS reads them.
type (
	// Component is an HSM component.
	Component = hsm.Component
	// EthernetInterface is an HSM EthernetInterface (a MAC, its IPs and its node).
	EthernetInterface = hsm.EthernetInterface
	// IPAddressMapping is one address of an EthernetInterface.
	IPAddressMapping = hsm.IPAddressMapping
	// SCN is an HSM state-change notification.
	SCN = hsm.SCN
	// Subscription is an HSM SCN subscription.
	Subscription = hsm.Subscription
	// Values are the enum values HSM accepts (GET /service/values): a
	// subscription naming anything else is refused.
	Values = hsm.Values
)

// HSM is what BSS needs of HSM; statemgr/client's Client is one.
type HSM interface {
	Components(ctx context.Context, query url.Values) ([]Component, error)
	QueryComponents(ctx context.Context, ids []string) ([]Component, error)
	EthernetInterfaces(ctx context.Context, query url.Values) ([]EthernetInterface, error)
	Ready(ctx context.Context) error
	// Values and the subscription calls, which keep BSS's SCN subscription.
	client.Subscriber
}

// NewHSMClient returns the HSM client BSS uses for the HSM at base.
func NewHSMClient(base string, hc *http.Client) HSM {
	return client.New(base, hc, "bss")
}
