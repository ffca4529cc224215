// Command hsm is the Hardware State Manager: the HSM v2 API on /hsm/v2 over
// SQLite, with the SCN relay that publishes state changes to the bus and to
// /Subscriptions/SCN callbacks, and the reservation reaper.
package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/statemgr"
)

func main() { cli.Main("hsm", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("hsm", getenv, stdout)
	listen, dbPath, level := f.Listen(":27779"), f.DB("./hsm.db"), f.LogLevel()
	slsURL := f.URL("sls-url", "", "SLS base `URL` for node NID/Role defaults (empty: NodeMaps only)")
	brokers := f.Brokers()
	topic := f.String("scn-topic", bus.TopicSCN, "Kafka `TOPIC` SCNs are published to")
	retention := f.Seconds("scn-retention", 24*time.Hour, "how long an SCN a consumer has not taken is kept, in `SECONDS`")
	reap := f.Seconds("reservation-reap", 30*time.Second, "how often expired reservations are removed, in `SECONDS`")
	credKey := f.String("cred-key-file", "./hsm-cred.key", "`FILE` with the key that encrypts BMC credentials (created, mode 0600, if absent)")
	workers := f.Int("discovery-workers", 32, "how many BMCs are walked at once")
	walkTimeout := f.Seconds("discovery-timeout", 30*time.Second, "time limit of the walk of one BMC, in `SECONDS`")
	caBundle := f.String("bmc-ca-bundle", "", "PEM `FILE` of CAs BMC certificates are checked against (empty: not checked)")
	plainHTTP := f.Bool("bmc-http", false, "reach BMCs over plain HTTP instead of HTTPS")
	hmsConfig := f.String("hms-config", getenv("HMS_CONFIG_PATH"),
		"hms_config.json `FILE` with site Roles and SubRoles (HMSExtendedDefinitions), re-read when it changes (default $HMS_CONFIG_PATH)")
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	log := cli.NewLogger(os.Stderr, *level)
	var pub bus.Bus = bus.NewUnread() // standalone, nobody consumes it
	if len(*brokers) > 0 {
		k, err := bus.NewKafka(bus.KafkaConfig{Brokers: *brokers, ClientID: "hsm", Log: log})
		if err != nil {
			return err
		}
		pub = k
	}
	defer pub.Close()
	d, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: *listen, DB: *dbPath, SLSURL: *slsURL,
		Publisher: pub, Topic: *topic, Retention: *retention, Reap: *reap, CredKeyFile: *credKey,
		Discovery: statemgr.DiscoveryConfig{Workers: *workers, Timeout: *walkTimeout, PlainHTTP: *plainHTTP},
		CABundle:  *caBundle, HMSConfig: *hmsConfig, Log: log})
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
