package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hmsuite/hms/layout/sls"
)

func defineLayoutLoad(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, args []string) error {
		name := args[0]
		b, err := readInput(name)
		if err != nil {
			return failf("layout load: %w", err)
		}
		// The dump is checked here first, so a file that is not one is
		// refused before SLS's state is replaced.
		var d sls.Dump
		if err := json.Unmarshal(b, &d); err != nil {
			return failf("layout load: %s is not an SLS dump: %v", name, err)
		}
		if len(d.Hardware) == 0 && len(d.Networks) == 0 {
			return failf("layout load: %s holds no Hardware and no Networks", name)
		}
		p := newProgress(s, "layout load "+name, int64(len(b)))
		start := s.Now()
		err = s.sls().Load(ctx, &progressReader{r: bytes.NewReader(b), p: p})
		p.done()
		if err != nil {
			return err
		}
		fmt.Fprintf(s.Stdout, "loaded %s into sls: %d hardware objects, %d networks (%s)\n", name, len(d.Hardware),
			len(d.Networks), s.Now().Sub(start).Round(time.Millisecond))
		return nil
	}
}

func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

// progress draws "what: 42% of 1.2 MB sent" on stderr, redrawn in place on
// a terminal; elsewhere (a log, a pipe) it prints only the end.
type progress struct {
	w     io.Writer
	tty   bool
	what  string
	total int64
	sent  int64
	shown int // last percentage drawn
}

func newProgress(s *session, what string, total int64) *progress {
	return &progress{w: s.Stderr, tty: isTerminal(s.Stderr), what: what, total: total, shown: -1}
}

func (p *progress) add(n int) {
	p.sent += int64(n)
	pct := 100
	if p.total > 0 {
		pct = int(p.sent * 100 / p.total)
	}
	if pct == p.shown || !p.tty {
		return
	}
	p.shown = pct
	fmt.Fprintf(p.w, "\r%s: %3d%% of %s sent", p.what, pct, size(p.total))
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s: %s sent\n", p.what, size(p.sent))
}

// size is n bytes for people: 812 B, 12.3 KB, 4.0 MB.
func size(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

type progressReader struct {
	r io.Reader
	p *progress
}

func (r *progressReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.p.add(n)
	return n, err
}
