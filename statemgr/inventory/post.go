package inventory

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// postHardware creates or updates the locations of {"Hardware":[...]} and
// their FRUs as a discovery walk does (history included). Every entry is
// checked first; one bad entry stores nothing.
func (a *API) postHardware(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Hardware []map[string]json.RawMessage `json:"Hardware"`
	}
	err := httpserver.ReadJSON(w, r, core.BulkLimit, &body)
	if err == nil && len(body.Hardware) == 0 {
		err = problem.Invalidf("Hardware: at least one location is required")
	}
	locs := make([]hwRow, 0, len(body.Hardware))
	seen := map[string]bool{}
	for i := 0; err == nil && i < len(body.Hardware); i++ {
		var loc hwRow
		if loc, err = hwFromPost(fmt.Sprintf("Hardware[%d]", i), body.Hardware[i]); err == nil && seen[loc.id] {
			err = problem.Invalidf("Hardware[%d].ID: %s is given twice", i, loc.id)
		}
		seen[loc.id] = true
		locs = append(locs, loc)
	}
	if err == nil {
		err = a.store.postHardware(r.Context(), locs)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	core.WriteMessage(w, fmt.Sprintf("Created %d entries", len(locs)))
}

// hwFromPost checks one posted location (at names it in errors) and
// completes it as discovery would: Type, Ordinal and the discriminators
// from its xname, Status from whether it has a PopulatedFRU, the FRUID made
// from the FRU info the way discovery makes one (a posted FRUID is
// replaced, as the shipped HSM does). Fields other than those of the spec
// and the *LocationInfo / *FRUInfo objects are dropped. A location without
// location info, or a FRU without FRU info, is refused with the shipped
// HSM's bare message.
func hwFromPost(at string, in map[string]json.RawMessage) (hwRow, error) {
	id, err := jsonString(at+".ID", in["ID"])
	if err != nil {
		return hwRow{}, err
	}
	if !xname.Valid(id) {
		return hwRow{}, problem.Invalidf("%s.ID: %q is not a valid xname", at, id)
	}
	id = xname.Normalize(id)
	t := xname.TypeOf(id)
	k, ok := hwKinds[t]
	if !ok {
		return hwRow{}, problem.Invalidf("%s.ID: %s is a %s, which has no hardware inventory type", at, id, t)
	}
	loc := map[string]any{"ID": id, "Type": string(t), "HWInventoryByLocationType": "HWInvByLoc" + k.disc}
	if err := checkSame(at, in, loc, "Type", "HWInventoryByLocationType"); err != nil {
		return hwRow{}, err
	}
	x, _ := xname.Parse(id)
	nums := x.Numbers()
	loc["Ordinal"] = nums[len(nums)-1]
	if v := in["Ordinal"]; !isNull(v) {
		var ord int
		if json.Unmarshal(v, &ord) != nil || ord < 0 {
			return hwRow{}, problem.Invalidf("%s.Ordinal: %s is not a non-negative integer", at, v)
		}
		loc["Ordinal"] = ord
	}
	if n, err := keepInfo(at, in, loc, "LocationInfo"); err != nil || n == 0 {
		return hwRow{}, cmp.Or(err, problem.Invalidf("Component location info is empty"))
	}
	row := hwRow{id: id, typ: string(t), loc: loc}
	loc["Status"] = hsm.StateEmpty
	if v := in["PopulatedFRU"]; !isNull(v) {
		loc["Status"] = hsm.StatePopulated
		if err := fruFromPost(at+".PopulatedFRU", v, k, id, &row); err != nil {
			return hwRow{}, err
		}
		loc["PopulatedFRU"] = row.fru
	}
	return row, checkSame(at, in, loc, "Status")
}

// fruFromPost checks the PopulatedFRU v of location id and sets the FRU of row.
func fruFromPost(at string, v json.RawMessage, k hwKind, id string, row *hwRow) error {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(v, &in); err != nil {
		return problem.Invalidf("%s: expected an object", at)
	}
	fru := map[string]any{"Type": row.typ, "HWInventoryByFRUType": "HWInvByFRU" + k.disc}
	if err := checkSame(at, in, fru, "Type", "HWInventoryByFRUType"); err != nil {
		return err
	}
	if n, err := keepInfo(at, in, fru, "FRUInfo"); err != nil || n == 0 {
		return cmp.Or(err, problem.Invalidf("FRU info is empty"))
	}
	for name, v := range in {
		if !strings.HasSuffix(name, "FRUInfo") || row.sn != "" {
			continue
		}
		var ident struct{ Manufacturer, PartNumber, SerialNumber string }
		if err := json.Unmarshal(v, &ident); err != nil {
			return problem.Invalidf("%s.%s: Manufacturer, PartNumber and SerialNumber must be strings", at, name)
		}
		row.manu, row.pn, row.sn = ident.Manufacturer, ident.PartNumber, ident.SerialNumber
	}
	fru["Subtype"] = ""
	for _, name := range []string{"FRUSubtype", "Subtype"} { // the swagger's name, then the wire's
		s, err := jsonString(at+"."+name, in[name])
		if err != nil && !isNull(in[name]) {
			return err
		}
		if s != "" {
			fru["Subtype"] = s
		}
	}
	fru["FRUID"] = redfish.FRUID(xname.Type(row.typ), id, row.manu, row.pn, row.sn)
	row.fru, row.fruID, row.fruType = fru, fru["FRUID"].(string), row.typ
	return nil
}

// checkSame refuses a field of in that is given but differs (in case) from
// the value it must have, set in out.
func checkSame(at string, in map[string]json.RawMessage, out map[string]any, fields ...string) error {
	for _, f := range fields {
		if isNull(in[f]) {
			continue
		}
		s, err := jsonString(at+"."+f, in[f])
		if err != nil {
			return err
		}
		if !strings.EqualFold(s, out[f].(string)) {
			return problem.Invalidf("%s.%s: %q, but %s is %q", at, f, s, at, out[f])
		}
	}
	return nil
}

// keepInfo copies the *<suffix> fields (the Redfish details) of in to out
// and returns how many it copied; each must be an object.
func keepInfo(at string, in map[string]json.RawMessage, out map[string]any, suffix string) (int, error) {
	n := 0
	for name, v := range in {
		if !strings.HasSuffix(name, suffix) || isNull(v) {
			continue
		}
		if b := bytes.TrimSpace(v); len(b) == 0 || b[0] != '{' {
			return n, problem.Invalidf("%s.%s: expected an object", at, name)
		}
		out[name] = v
		n++
	}
	return n, nil
}

// jsonString decodes the JSON string v; a missing one is ErrInvalid naming field.
func jsonString(field string, v json.RawMessage) (string, error) {
	var s string
	if isNull(v) {
		return "", problem.Invalidf("%s: required", field)
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return "", problem.Invalidf("%s: expected a string, got %s", field, v)
	}
	return s, nil
}

func isNull(v json.RawMessage) bool {
	b := bytes.TrimSpace(v)
	return len(b) == 0 || string(b) == "null"
}
