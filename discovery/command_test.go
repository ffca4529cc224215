package discovery

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

// TestMEDSDefaults: the meds binary is the daemon in the Mountain role
// alone, on its own port, database and key, with env twins HMS_MEDS_*;
// reds keeps both roles.
func TestMEDSDefaults(t *testing.T) {
	parse := func(name string, d Defaults, env map[string]string) (DaemonConfig, error) {
		f := cli.NewFlagSet(name, func(k string) string { return env[k] }, io.Discard)
		fl := RegisterFlagsWith(f, d)
		if err := f.ParseOrUsage([]string{"-listen", "127.0.0.1:0"}); err != nil {
			return DaemonConfig{}, err
		}
		return fl.Config()
	}
	cfg, err := parse("meds", MEDSDefaults(), nil)
	if err != nil || cfg.Service.River || !cfg.Service.Mountain || cfg.DB != "./meds.db" || cfg.CredKeyFile != "./meds-cred.key" {
		t.Errorf("meds: %+v, %v; want the Mountain role alone on meds.db", cfg.Service, err)
	}
	if cfg, err := parse("meds", MEDSDefaults(), map[string]string{"HMS_MEDS_ROLES": "river,mountain"}); err != nil || !cfg.Service.River {
		t.Errorf("HMS_MEDS_ROLES=river,mountain: River %v, %v", cfg.Service.River, err)
	}
	if cfg, err := parse("reds", REDSDefaults(), nil); err != nil || !cfg.Service.River || !cfg.Service.Mountain || cfg.DB != "./reds.db" {
		t.Errorf("reds: %+v, %v; want both roles on reds.db", cfg.Service, err)
	}
	var help bytes.Buffer
	err = Command("meds", MEDSDefaults())(t.Context(), []string{"-help"}, func(string) string { return "" }, &help)
	if !errors.Is(err, cli.ErrHelp) || !strings.Contains(help.String(), ":8270") || !strings.Contains(help.String(), "HMS_MEDS_ROLES") {
		t.Errorf("meds -help: %v\n%s", err, help.String())
	}
}
