package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// mergePatch applies patch (a JSON object) to cur and decodes the result
// into out, refusing fields out does not have: objects merge key by key,
// everything else replaces, as BOS's update handlers do.
func mergePatch(cur any, patch []byte, out any) error {
	var p map[string]any
	if err := httpserver.DecodeJSON(patch, &p); err != nil {
		return err
	}
	if p == nil {
		return problem.Invalidf("request body: a JSON object expected")
	}
	b, err := json.Marshal(cur)
	if err != nil {
		return fmt.Errorf("merge: encode: %w", err)
	}
	var base map[string]any
	if err := json.Unmarshal(b, &base); err != nil {
		return fmt.Errorf("merge: decode: %w", err)
	}
	merged, err := json.Marshal(mergeMaps(base, p))
	if err != nil {
		return fmt.Errorf("merge: encode: %w", err)
	}
	return decodeStrict(merged, out)
}

func mergeMaps(dst, src map[string]any) map[string]any {
	for k, v := range src {
		sm, ok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if ok && dok {
			dst[k] = mergeMaps(dm, sm)
			continue
		}
		dst[k] = v
	}
	return dst
}

// decodeStrict decodes b into v, refusing unknown fields (the spec's
// additionalProperties: false).
func decodeStrict(b []byte, v any) error {
	if err := httpserver.CheckJSON(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return httpserver.DecodeError(err)
	}
	if dec.More() {
		return problem.Invalidf("request body: unexpected data after the JSON value")
	}
	return nil
}
