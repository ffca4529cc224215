package fanout

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// rng is an inclusive range of target ids. A queued SCN names its targets
// as ranges: the targets of one broadcast were mostly created together, so
// 10,000 of them are usually one range.
type rng struct{ lo, hi int64 }

// toRanges compresses ids, which it sorts, into ranges.
func toRanges(ids []int64) []rng {
	slices.Sort(ids)
	var out []rng
	for _, id := range ids {
		if n := len(out); n > 0 && id <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, id)
			continue
		}
		out = append(out, rng{lo: id, hi: id})
	}
	return out
}

// findRange returns the index of the range of rs (sorted, disjoint) that
// holds id; false if none does.
func findRange(rs []rng, id int64) (int, bool) {
	return slices.BinarySearchFunc(rs, id, func(r rng, id int64) int {
		switch {
		case r.hi < id:
			return -1
		case r.lo > id:
			return 1
		}
		return 0
	})
}

// encodeRanges spells rs as "lo-hi,id,...", the acks.targets column.
func encodeRanges(rs []rng) string {
	b := make([]byte, 0, 12*len(rs))
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, r.lo, 10)
		if r.hi != r.lo {
			b = append(b, '-')
			b = strconv.AppendInt(b, r.hi, 10)
		}
	}
	return string(b)
}

// parseRanges reads what encodeRanges wrote.
func parseRanges(s string) ([]rng, error) {
	var out []rng
	for part := range strings.SplitSeq(s, ",") {
		if part == "" {
			continue
		}
		los, his, isRange := strings.Cut(part, "-")
		lo, err := strconv.ParseInt(los, 10, 64)
		hi := lo
		if err == nil && isRange {
			hi, err = strconv.ParseInt(his, 10, 64)
		}
		if err != nil || hi < lo {
			return nil, fmt.Errorf("malformed target range %q", part)
		}
		out = append(out, rng{lo: lo, hi: hi})
	}
	return out, nil
}
