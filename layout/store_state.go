package layout

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// LoadState replaces all hardware and networks with the dump read from r, in
// one transaction. The whole dump is checked first; if any entry is wrong,
// nothing changes and the error names the entry, as in
// `Hardware["x1c9"]: Xname: ...`. It returns the number of objects loaded.
func (s *Store) LoadState(ctx context.Context, r io.Reader) (hardware, networks int, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, 0, fmt.Errorf("read sls_dump: %w", err)
	}
	if !json.Valid(data) {
		return 0, 0, dumpSyntaxError(data)
	}
	if err := httpserver.CheckJSON(data); err != nil {
		return 0, 0, fmt.Errorf("sls_dump: %w", err)
	}
	now := s.now()
	var entries []*entry
	var nets []Network
	known := false
	err = eachMember(data, func(k, v []byte) error {
		var err error
		switch {
		case bytes.EqualFold(k, []byte(`"Hardware"`)):
			entries, err = dumpEntries(v, now)
			known = true
		case bytes.EqualFold(k, []byte(`"Networks"`)):
			nets, err = dumpNetworks(v)
			known = true
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	// A dump with neither key (a typo such as "Hardwares", or {}) would
	// replace the whole layout with nothing; an explicit "Hardware":{} is
	// how to clear it.
	if i := skipSpace(data, 0); (i < len(data) && data[i] != '{') || !known {
		return 0, 0, problem.Invalidf("sls_dump: expected a JSON object with Hardware and/or Networks")
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

// dumpSyntaxError explains why data is not a single valid JSON document.
func dumpSyntaxError(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return problem.Invalidf("sls_dump: malformed JSON at byte %d: %v", se.Offset, se)
		case errors.Is(err, io.EOF):
			return problem.Invalidf("sls_dump: empty, expected a JSON document")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return problem.Invalidf("sls_dump: truncated JSON")
		}
		return problem.Invalidf("sls_dump: %v", err)
	}
	return problem.Invalidf("sls_dump: unexpected data after the JSON document")
}

// dumpEntries validates the Hardware object of a dump and returns its entries
// sorted by xname. Their ExtraProperties are copied into a few large blocks
// rather than one allocation each.
func dumpEntries(obj []byte, now time.Time) ([]*entry, error) {
	if obj[0] != '{' {
		return nil, problem.Invalidf("Hardware: expected an object keyed by xname")
	}
	nowText := timeText(now)
	names := interner{}
	var (
		entries []*entry
		arena   []byte
	)
	err := eachMember(obj, func(rk, v []byte) error {
		k := unquote(rk)
		h, err := looseHardware(v)
		if err != nil {
			return fmt.Errorf("Hardware[%q]: %w", k, err)
		}
		if h.Xname == "" {
			h.Xname = k
		}
		if xname.Normalize(h.Xname) != xname.Normalize(k) {
			return problem.Invalidf("Hardware[%q]: Xname %q does not match its key", k, h.Xname)
		}
		e, err := newEntry(h, now, nowText, names)
		if err != nil {
			return fmt.Errorf("Hardware[%q]: %w", k, err)
		}
		if n := len(e.extra); n > 0 {
			if cap(arena)-len(arena) < n {
				arena = make([]byte, 0, max(1<<20, n))
			}
			arena = append(arena, e.extra...)
			e.extra = arena[len(arena)-n : len(arena) : len(arena)]
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, cmpEntry)
	for i := 1; i < len(entries); i++ {
		if entries[i].xname == entries[i-1].xname {
			return nil, problem.Invalidf("Hardware: xname %s appears more than once (keys that differ only in case or leading zeros)", entries[i].xname)
		}
	}
	return entries, nil
}

// looseHardware reads the client-set fields of one dump entry; the derived
// ones are skipped. Field names match without regard to case, as encoding/json
// matches them.
func looseHardware(v []byte) (Hardware, error) {
	var h Hardware
	if v[0] != '{' {
		return h, problem.Invalidf("expected an object")
	}
	err := eachMember(v, func(k, fv []byte) error {
		var (
			err   error
			class string
		)
		switch {
		case bytes.EqualFold(k, []byte(`"Xname"`)):
			h.Xname, err = rawString("Xname", fv)
		case bytes.EqualFold(k, []byte(`"Class"`)):
			class, err = rawString("Class", fv)
			h.Class = Class(class)
		case bytes.EqualFold(k, []byte(`"Type"`)):
			h.Type, err = rawString("Type", fv)
		case bytes.EqualFold(k, []byte(`"ExtraProperties"`)):
			h.ExtraProperties = fv
		}
		return err
	})
	return h, err
}

// rawString decodes a raw JSON string; null is "".
func rawString(field string, raw []byte) (string, error) {
	if string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '"' {
		return "", problem.Invalidf("%s: expected a string", field)
	}
	return unquote(raw), nil
}

func dumpNetworks(obj []byte) ([]Network, error) {
	if obj[0] != '{' {
		return nil, problem.Invalidf("Networks: expected an object keyed by network name")
	}
	var out []Network
	err := eachMember(obj, func(rk, v []byte) error {
		k := unquote(rk)
		var n Network
		if err := json.Unmarshal(v, &n); err != nil {
			return fmt.Errorf("Networks[%q]: %w", k, httpserver.DecodeError(err))
		}
		n, err := checkNetwork(n, k)
		if err != nil {
			return fmt.Errorf("Networks[%q]: %w", k, err)
		}
		out = append(out, n)
		return nil
	})
	slices.SortFunc(out, func(a, b Network) int { return strings.Compare(a.Name, b.Name) })
	return out, err
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

// WriteDump writes the whole state, as /dumpstate returns it, to w. The
// hardware is copied under the read lock and rendered in chunks after it.
func (s *Store) WriteDump(ctx context.Context, w io.Writer) error {
	// Networks and hardware are taken under the write lock, so the dump is
	// one state, never half of a /loadstate (it is what backups are made of).
	s.wmu.Lock()
	nets, err := s.ListNetworks(ctx)
	r := s.allResults()
	s.wmu.Unlock()
	if err != nil {
		return err
	}
	cw := chunkWriter{w: w, b: make([]byte, 0, chunkSize+4096)}
	cw.b = append(cw.b, `{"Hardware":{`...)
	for i, e := range r.entries {
		if i > 0 {
			cw.b = append(cw.b, ',')
		}
		cw.b = append(append(append(cw.b, '"'), e.xname...), `":`...)
		cw.b = appendEntry(cw.b, e, r.kids[i], s.redact)
		cw.flushIfFull()
	}
	cw.b = append(cw.b, `},"Networks":{`...)
	for i, n := range nets {
		if i > 0 {
			cw.b = append(cw.b, ',')
		}
		k, _ := json.Marshal(n.Name)
		v, err := json.Marshal(n)
		if err != nil {
			return fmt.Errorf("encode network %s: %w", n.Name, err)
		}
		cw.b = append(append(append(cw.b, k...), ':'), v...)
	}
	cw.b = append(cw.b, "}}\n"...)
	return cw.flush()
}

// chunkSize is how much rendered JSON is buffered before it is written out.
const chunkSize = 64 << 10

// chunkWriter renders into b and writes it out whenever it passes chunkSize,
// so large answers need neither one huge buffer nor a write per object.
type chunkWriter struct {
	w   io.Writer
	b   []byte
	err error
}

func (c *chunkWriter) flushIfFull() {
	if len(c.b) >= chunkSize {
		c.flush()
	}
}

func (c *chunkWriter) flush() error {
	if c.err == nil && len(c.b) > 0 {
		_, c.err = c.w.Write(c.b)
	}
	c.b = c.b[:0]
	return c.err
}
