// Package report is the node side of bos's actual state: it reads the
// kernel command line the node booted (/proc/cmdline) and PATCHes the
// node's BOS component with it (PATCH /v2/components/{xname}), so bos knows
// what the node runs even when BSS's fetch history cannot tell (bos was
// down when the node booted, or the node booted outside a session). It
// links only the standard library: hbagent, which runs on every node,
// sends the report.
package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// bootChain are the parameters BSS's boot script adds to the boot set's
// own (ipxe's params), and the node token: not part of what bos asked for.
var bootChain = []string{"initrd=", "xname=", "nid=", "ds=", "bss_referral_token=", "hms_node_token="}

// Parse splits a kernel command line into the boot set's parameters and
// the BSS referral token the node booted with ("" when there is none).
func Parse(cmdline string) (params, token string) {
	var keep []string
outer:
	for _, f := range strings.Fields(cmdline) {
		if v, ok := strings.CutPrefix(f, "bss_referral_token="); ok {
			token = v
		}
		for _, p := range bootChain {
			if strings.HasPrefix(f, p) {
				continue outer
			}
		}
		keep = append(keep, f)
	}
	return strings.Join(keep, " "), token
}

// Send reports the command line cmdline as xname's actual state to the bos
// at bosURL. bos takes the kernel and initrd to be those it set in BSS when
// the token is the one BSS issued for them.
func Send(ctx context.Context, hc *http.Client, bosURL, xname, cmdline string) error {
	params, token := Parse(cmdline)
	if token == "" {
		return fmt.Errorf("bos report: no bss_referral_token on the kernel command line")
	}
	body, err := json.Marshal(map[string]any{"actual_state": map[string]any{
		"boot_artifacts": map[string]string{"kernel_parameters": params}, "bss_token": token}})
	if err != nil {
		return fmt.Errorf("bos report: %w", err)
	}
	u := strings.TrimRight(bosURL, "/") + "/v2/components/" + url.PathEscape(xname)
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("bos report: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("bos report: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bos report: PATCH %s: %s %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}
