package layout

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// dumpIn is a /loadstate document as decoded. Entries are decoded loosely,
// every field as raw JSON, because the decoder's type errors do not say which
// map entry they are in; looseHardware.hardware reports them with the key.
type dumpIn struct {
	Hardware map[string]looseHardware   `json:"Hardware"`
	Networks map[string]json.RawMessage `json:"Networks"`
}

// looseHardware is a dump entry; the derived fields are not even decoded.
type looseHardware struct {
	Xname, Class, Type, ExtraProperties json.RawMessage
}

func (l looseHardware) hardware() (Hardware, error) {
	var (
		h   Hardware
		err error
	)
	if h.Xname, err = rawString("Xname", l.Xname); err != nil {
		return h, err
	}
	var class string
	if class, err = rawString("Class", l.Class); err != nil {
		return h, err
	}
	h.Class = Class(class)
	if h.Type, err = rawString("Type", l.Type); err != nil {
		return h, err
	}
	h.ExtraProperties = l.ExtraProperties
	return h, nil
}

// rawString decodes a raw JSON string; absent or null is "".
func rawString(field string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", problem.Invalidf("%s: expected a string", field)
	}
	return s, nil
}

// LoadState replaces all hardware and networks with the dump read from r, in
// one transaction. The whole dump is checked first; if any entry is wrong,
// nothing changes and the error names the entry, as in
// `Hardware["x1c9"]: Xname: ...`. It returns the number of objects loaded.
func (s *Store) LoadState(ctx context.Context, r io.Reader) (hardware, networks int, err error) {
	var d dumpIn
	dec := json.NewDecoder(r)
	if err := dec.Decode(&d); err != nil {
		return 0, 0, dumpDecodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return 0, 0, problem.Invalidf("sls_dump: unexpected data after the JSON document")
	}
	now := s.now()
	entries, err := dumpEntries(d.Hardware, now)
	if err != nil {
		return 0, 0, err
	}
	nets, err := dumpNetworks(d.Networks)
	if err != nil {
		return 0, 0, err
	}
	ix := newIndex(entries)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err = s.write(ctx, now, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM hardware`, `DELETE FROM networks`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("clear sls state: %w", err)
			}
		}
		if err := insertEntries(ctx, tx, entries); err != nil {
			return err
		}
		for _, n := range nets {
			if err := putNetworkTx(ctx, tx, n, now); err != nil {
				return err
			}
		}
		return nil
	}, func(s *Store) { s.ix = ix })
	if err != nil {
		return 0, 0, err
	}
	return len(entries), len(nets), nil
}

// dumpEntries validates the hardware of a dump and returns its entries sorted
// by xname.
func dumpEntries(hw map[string]looseHardware, now time.Time) ([]*entry, error) {
	keys := make([]string, 0, len(hw))
	for k := range hw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	nowText := timeText(now)
	entries := make([]*entry, 0, len(keys))
	seen := make(map[string]string, len(keys))
	for _, k := range keys {
		h, err := hw[k].hardware()
		if err != nil {
			return nil, fmt.Errorf("Hardware[%q]: %w", k, err)
		}
		if h.Xname == "" {
			h.Xname = k
		}
		if xname.Normalize(h.Xname) != xname.Normalize(k) {
			return nil, problem.Invalidf("Hardware[%q]: Xname %q does not match its key", k, h.Xname)
		}
		e, err := newEntry(h, now, nowText)
		if err != nil {
			return nil, fmt.Errorf("Hardware[%q]: %w", k, err)
		}
		if other, dup := seen[e.xname]; dup {
			return nil, problem.Invalidf("Hardware[%q]: same xname as Hardware[%q]", k, other)
		}
		seen[e.xname] = k
		entries = append(entries, e)
	}
	// Keys that normalise differently from how they sort ("X1" vs "x1") would
	// leave the list out of order; sorting an already sorted list is cheap.
	sort.Slice(entries, func(i, j int) bool { return entries[i].xname < entries[j].xname })
	return entries, nil
}

func dumpNetworks(nets map[string]json.RawMessage) ([]Network, error) {
	names := make([]string, 0, len(nets))
	for k := range nets {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]Network, 0, len(names))
	for _, k := range names {
		var n Network
		if err := json.Unmarshal(nets[k], &n); err != nil {
			return nil, fmt.Errorf("Networks[%q]: %w", k, httpserver.DecodeError(err))
		}
		n, err := checkNetwork(n, k)
		if err != nil {
			return nil, fmt.Errorf("Networks[%q]: %w", k, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// insertBatch is the number of rows per multi-row INSERT: 6 parameters a row
// keeps a statement well under SQLite's parameter limit.
const insertBatch = 200

// insertEntries inserts entries with prepared multi-row INSERT statements.
func insertEntries(ctx context.Context, tx *sql.Tx, entries []*entry) error {
	prepare := func(rows int) (*sql.Stmt, error) {
		var b strings.Builder
		b.WriteString(`INSERT INTO hardware (xname, parent, type, class, extra, last_updated) VALUES `)
		for i := range rows {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?, ?, ?, ?, ?, ?)")
		}
		st, err := tx.PrepareContext(ctx, b.String())
		if err != nil {
			return nil, fmt.Errorf("prepare hardware insert: %w", err)
		}
		return st, nil
	}
	var full *sql.Stmt
	args := make([]any, 0, insertBatch*6)
	for start := 0; start < len(entries); start += insertBatch {
		batch := entries[start:min(start+insertBatch, len(entries))]
		args = args[:0]
		for _, e := range batch {
			args = append(args, e.xname, e.parent, e.stype, string(e.class), extraArg(e), e.updated)
		}
		st := full
		if len(batch) < insertBatch || full == nil {
			var err error
			if st, err = prepare(len(batch)); err != nil {
				return err
			}
			if len(batch) == insertBatch {
				full = st
			} else {
				defer st.Close()
			}
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert hardware: %w", err)
		}
	}
	if full != nil {
		full.Close()
	}
	return nil
}

// dumpDecodeError turns a decoding error of a dump into an ErrInvalid error
// naming the entry, such as `Hardware["x1"].Class: expected string`.
func dumpDecodeError(err error) error {
	var (
		ute *json.UnmarshalTypeError
		se  *json.SyntaxError
	)
	switch {
	case errors.As(err, &ute):
		return problem.Invalidf("%s: expected %s, got JSON %s", dumpPath(ute.Field), ute.Type, ute.Value)
	case errors.As(err, &se):
		return problem.Invalidf("sls_dump: malformed JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.EOF):
		return problem.Invalidf("sls_dump: empty, expected a JSON document")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return problem.Invalidf("sls_dump: truncated JSON")
	default:
		return fmt.Errorf("sls_dump: %w", err)
	}
}

// dumpPath rewrites a decoder field path "Hardware.x1c9.Class" as
// `Hardware["x1c9"].Class`.
func dumpPath(field string) string {
	top, rest, ok := strings.Cut(field, ".")
	if !ok || (top != "Hardware" && top != "Networks") {
		if field == "" {
			return "sls_dump"
		}
		return field
	}
	key, sub, _ := strings.Cut(rest, ".")
	p := fmt.Sprintf("%s[%q]", top, key)
	if sub != "" {
		p += "." + sub
	}
	return p
}

// AppendDump appends the whole state, as /dumpstate returns it, to b.
func (s *Store) AppendDump(ctx context.Context, b []byte) ([]byte, error) {
	nets, err := s.ListNetworks(ctx)
	if err != nil {
		return b, err
	}
	b = append(b, `{"Hardware":{`...)
	s.mu.RLock()
	for i, e := range s.ix.all {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, e.xname...)
		b = append(b, `":`...)
		b = appendEntry(b, e, s.ix.children[e.xname])
	}
	s.mu.RUnlock()
	b = append(b, `},"Networks":{`...)
	for i, n := range nets {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(n.Name)
		v, err := json.Marshal(n)
		if err != nil {
			return b, fmt.Errorf("encode network %s: %w", n.Name, err)
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, "}}"...), nil
}
