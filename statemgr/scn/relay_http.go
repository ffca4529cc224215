package scn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

const subBatchRows = 64

// deliver posts the outbox to one subscriber, in order, from its cursor on.
// A failed post is retried with exponential backoff until it succeeds or the
// subscription goes away, except that one the subscriber refuses for good
// (4xx other than 408/429) becomes a dead letter; the cursor advances only
// past delivered, dead-lettered (or unwanted) rows. A subscription whose
// posts have failed for RelayConfig.DeadAfter is dropped.
func (r *Relay) deliver(ctx context.Context, sub hsm.Subscription) {
	name := subCursor(sub.ID)
	cur, err := r.store.core.Cursor(ctx, name)
	if err != nil {
		return // deleted meanwhile
	}
	var f failing
	if f.since, err = r.store.failingSince(ctx, sub.ID); err != nil {
		return // deleted meanwhile
	}
	for {
		wake := r.store.outbox.Wait()
		rows, err := r.store.core.OutboxAfter(ctx, cur, subBatchRows)
		if err != nil {
			if ctx.Err() != nil || !r.wait(ctx, r.cfg.MinBackoff) {
				return
			}
			continue
		}
		if len(rows) == 0 {
			if !core.Idle(ctx, wake) {
				return
			}
			continue
		}
		if gap := rows[0].Seq - cur - 1; gap > 0 {
			r.m.skipped.WithLabelValues(r.m.names.label(sub.Subscriber)).Add(float64(gap))
			r.cfg.Log.WarnContext(ctx, "scn_subscriber_missed_expired", "subscription", sub.ID, "count", gap)
		}
		stopped := false
		for _, row := range rows {
			if sub.Matches(&row.SCN) && !r.postUntilDone(ctx, sub, &row.SCN, &f) {
				stopped = true
				break
			}
			cur = row.Seq
		}
		// Saved even when stopping, so a clean shutdown does not replay.
		if err := r.store.core.SetCursor(context.WithoutCancel(ctx), name, cur); err != nil {
			r.cfg.Log.WarnContext(ctx, "scn_cursor_store_failed", "subscription", sub.ID, "err", err)
		}
		if stopped {
			return
		}
	}
}

// postUntilDone posts scn until the subscriber takes it; false means ctx
// ended or sub was dropped (see failed).
func (r *Relay) postUntilDone(ctx context.Context, sub hsm.Subscription, scn *hsm.SCN, f *failing) bool {
	body, err := json.Marshal(scn)
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "scn_encode_failed", "seq", scn.Seq, "err", err)
		return true
	}
	backoff := r.cfg.MinBackoff
	for {
		err := r.post(ctx, sub.Url, body)
		if err == nil {
			r.m.delivered.WithLabelValues(r.m.names.label(sub.Subscriber)).Inc()
			r.succeeded(ctx, sub, f)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if errors.Is(err, httpclient.ErrRefused) {
			r.succeeded(ctx, sub, f)
			return r.deadLetter(ctx, sub, scn, body, err)
		}
		if r.failed(ctx, sub, f) && r.drop(ctx, sub, f) {
			return false
		}
		r.m.retries.WithLabelValues(r.m.names.label(sub.Subscriber)).Inc()
		r.cfg.Log.InfoContext(ctx, "scn_post_failed", "subscription", sub.ID, "url", redact.URL(sub.Url), "seq", scn.Seq,
			"retry_in", backoff, "err", err)
		if !r.wait(ctx, backoff) {
			return false
		}
		backoff = min(2*backoff, r.cfg.MaxBackoff)
	}
}

func (r *Relay) post(ctx context.Context, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("post scn: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hsm")
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("post scn: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("post scn: subscriber %w", httpclient.StatusError(resp.StatusCode))
	}
	return nil
}

// deadLetter moves an SCN the subscriber refused for good aside (stored,
// counted, logged once) so that the SCNs after it are delivered; false
// means ctx ended before it was stored.
func (r *Relay) deadLetter(ctx context.Context, sub hsm.Subscription, scn *hsm.SCN, body []byte, refusal error) bool {
	d := hsm.DeadLetter{SubscriptionID: sub.ID, Subscriber: sub.Subscriber, Seq: scn.Seq, Epoch: scn.Epoch,
		Error: refusal.Error(), SCN: body}
	for backoff := r.cfg.MinBackoff; ; backoff = min(2*backoff, r.cfg.MaxBackoff) {
		err := r.store.addDeadLetter(ctx, d)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return false
		}
		r.cfg.Log.ErrorContext(ctx, "scn_dead_letter_store_failed", "subscription", sub.ID, "seq", scn.Seq, "err", err)
		if !r.wait(ctx, backoff) {
			return false
		}
	}
	r.m.deadLetters.WithLabelValues(r.m.names.label(sub.Subscriber)).Inc()
	r.cfg.Log.WarnContext(ctx, "scn_dead_lettered", "subscription", sub.ID, "seq", scn.Seq,
		"components", len(scn.Components), "err", refusal)
	return true
}
