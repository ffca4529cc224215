package statemgr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// TestHMSConfigExtendsRolesAndSubRoles: a site's hms_config.json adds
// SubRoles (and Roles) that components, filters and /service/values accept;
// a broken file is refused and changes nothing.
func TestHMSConfigExtendsRolesAndSubRoles(t *testing.T) {
	pg.EachDB(t, testHMSConfigExtendsRolesAndSubRoles)
}

func testHMSConfigExtendsRolesAndSubRoles(t *testing.T, db testpeer.DB) {
	a := newServerOn(t, db, core.Config{})
	node := map[string]any{"Components": []map[string]any{{"ID": "x1c0s0b0n0", "State": "On", "Role": "Application", "SubRole": "login"}}}
	a.Must(400, "POST", "/State/Components", node)

	path := filepath.Join(t.TempDir(), "hms_config.json")
	os.WriteFile(path, []byte(`{"HMSExtendedDefinitions":{"Role":["Gateway"],"SubRole":["Login","master",""]}}`), 0o644)
	if err := core.LoadHMSConfig(path, a.Store.Vocab()); err != nil {
		t.Fatal(err)
	}
	a.Must(204, "POST", "/State/Components", node)
	if _, ok := core.NewVocab().Get().SubRoles.Normalize("Login"); ok {
		t.Error("one store's site values leaked into the built-ins")
	}
	if got := a.List("?subrole=LOGIN"); len(got) != 1 || got[0].SubRole != "Login" {
		t.Fatalf("?subrole=LOGIN = %+v, want the node with SubRole Login", got)
	}
	var v hsm.Values
	json.Unmarshal(a.Must(200, "GET", "/service/values/subrole", nil), &v)
	// The site file replaces CSM's default extras, as on CSM.
	if diff := cmp.Diff([]string{"Master", "Worker", "Storage", "Login"}, v.SubRole); diff != "" {
		t.Errorf("subroles (-want +got):\n%s", diff)
	}

	os.WriteFile(path, []byte(`{"HMSExtendedDefinitions":`), 0o644)
	if err := core.LoadHMSConfig(path, a.Store.Vocab()); err == nil {
		t.Error("a truncated file was accepted")
	}
	if _, ok := a.Store.Vocab().Get().SubRoles.Normalize("Login"); !ok {
		t.Error("a broken file removed the values in force")
	}
}

// TestWatchHMSConfig: a changed file is applied by the watcher without a restart.
func TestWatchHMSConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "hms_config.json")
		os.WriteFile(path, []byte(`{"HMSExtendedDefinitions":{"SubRole":["UAN"]}}`), 0o644)
		v := core.NewVocab()
		if err := core.LoadHMSConfig(path, v); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- core.WatchHMSConfig(ctx, path, 10*time.Second, v, slog.New(slog.DiscardHandler)) }()
		synctest.Wait() // the watcher has its first look
		os.WriteFile(path, []byte(`{"HMSExtendedDefinitions":{"SubRole":["UAN","Gateway"]}}`), 0o644)
		time.Sleep(11 * time.Second)
		synctest.Wait()
		if _, ok := v.Get().SubRoles.Normalize("gateway"); !ok {
			t.Errorf("SubRoles after the change = %v, want Gateway added", v.Get().SubRoles.Values)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestSLSValueOutsideVocabularyWarns: a node's SubRole from SLS that HSM does
// not know is dropped, as shipped, but with a warning naming it.
func TestSLSValueOutsideVocabularyWarns(t *testing.T) {
	pg.EachDB(t, testSLSValueOutsideVocabularyWarns)
}

func testSLSValueOutsideVocabularyWarns(t *testing.T, db testpeer.DB) {
	sls := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"Xname":"x0c0s0b0n1","Type":"comptype_node","ExtraProperties":{"NID":20,"Role":"Application","SubRole":"Login"}}`))
	}))
	defer sls.Close()
	a := newServerOn(t, db, core.Config{Layout: component.NewSLS(sls.URL, sls.Client())})
	var logs bytes.Buffer
	err := component.NewStore(a.Store).UpsertComponents(t.Context(), []hsm.Component{{ID: "x0c0s0b0n1", State: "On"}}, false, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := component.NewStore(a.Store).Component("x0c0s0b0n1"); c.Role != "Application" || c.SubRole != "" {
		t.Errorf("component %+v, want Role Application and no SubRole", c)
	}
	if want := "msg=sls_value_not_in_vocabulary xname=x0c0s0b0n1 field=SubRole value=Login"; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, logs.String())
	}
}
