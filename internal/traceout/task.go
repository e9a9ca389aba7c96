package traceout

import (
	"github.com/ldd-tools/tune/internal/jsonenc"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// AppendTask appends the compact JSON encoding/json writes for t (with SetEscapeHTML(false)), byte
// for byte: the fields of traceparse.Task and Entry in their declaration order under their JSON tags.
// It is hand-written because reflection over every task and entry was half the CPU of a streamed
// `tune trace --format jsonl` (docs/decisions.md#streaming-reads); TestAppendTaskIsEncodingJSON (every
// bundled log, generated logs, a task with every field set) and FuzzAppendTask hold it to
// encoding/json's output, and fail when a field is added to Task or Entry without it.
func AppendTask(dst []byte, t *traceparse.Task) []byte {
	dst = append(dst, `{"source":`...)
	dst = jsonenc.String(dst, t.Source)
	dst = append(dst, `,"line":`...)
	dst = jsonenc.Int(dst, int64(t.Line))
	dst = append(dst, `,"offset":`...)
	dst = jsonenc.Int(dst, t.Offset)
	dst = append(dst, `,"meta_timestamp":`...)
	dst = jsonenc.String(dst, t.MetaTimestamp)
	dst = append(dst, `,"legacy":`...)
	dst = jsonenc.Bool(dst, t.Legacy)
	dst = append(dst, `,"level":`...)
	dst = jsonenc.String(dst, t.Level)
	dst = append(dst, `,"dispatch":`...)
	dst = jsonenc.String(dst, t.Dispatch)
	dst = append(dst, `,"creativity":`...)
	dst = jsonenc.String(dst, t.Creativity)
	dst = append(dst, `,"signals":`...)
	if t.Signals == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, s := range t.Signals {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = jsonenc.String(dst, s.Name)
			dst = append(dst, `,"weight":`...)
			dst = s.Weight.AppendPlain(dst)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"weights_version":`...)
	dst = jsonenc.String(dst, t.WeightsVersion)
	dst = append(dst, `,"task":`...)
	dst = jsonenc.String(dst, t.Title)
	dst = append(dst, `,"loops":`...)
	dst = appendStrings(dst, t.Loops)
	dst = append(dst, `,"loops_used":`...)
	dst = appendStrings(dst, t.LoopsUsed)
	dst = append(dst, `,"closed":`...)
	dst = jsonenc.Bool(dst, t.Closed)
	dst = append(dst, `,"terminal":`...)
	dst = jsonenc.String(dst, t.Terminal)
	dst = append(dst, `,"loss_final":`...)
	dst = appendFloatPtr(dst, t.LossFinal)
	dst = append(dst, `,"loss_final_from":`...)
	dst = jsonenc.String(dst, t.LossFinalFrom)
	dst = append(dst, `,"regression_followed":`...)
	dst = jsonenc.Bool(dst, t.RegressionFollowed)
	dst = append(dst, `,"regression_of":`...)
	dst = jsonenc.String(dst, t.RegressionOf)
	for _, f := range [...]struct{ key, v string }{{`,"explore":`, t.Explore}, {`,"explore_level":`, t.ExploreLevel}, {`,"explore_share":`, t.ExploreShare}} {
		if f.v != "" { // omitempty
			dst = append(dst, f.key...)
			dst = jsonenc.String(dst, f.v)
		}
	}
	dst = append(dst, `,"files":`...)
	dst = appendStrings(dst, t.Files)
	if o := t.Omitted; o != nil {
		dst = append(dst, `,"omitted":{"line":`...)
		dst = jsonenc.Int(dst, int64(o.Line))
		dst = append(dst, `,"offset":`...)
		dst = jsonenc.Int(dst, o.Offset)
		dst = append(dst, `,"entries":`...)
		dst = jsonenc.Int(dst, int64(o.Entries))
		dst = append(dst, `,"iterations":`...)
		dst = jsonenc.Int(dst, int64(o.Iterations))
		dst = append(dst, `,"baselines":`...)
		dst = jsonenc.Int(dst, int64(o.Baselines))
		dst = append(dst, `,"departures":`...)
		dst = jsonenc.Int(dst, int64(o.Departures))
		dst = append(dst, `,"files":`...)
		dst = jsonenc.Int(dst, int64(o.Files))
		dst = append(dst, '}')
	}
	dst = append(dst, `,"iterations":`...)
	if t.Entries == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range t.Entries {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendEntry(dst, &t.Entries[i])
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendEntry(dst []byte, e *traceparse.Entry) []byte {
	dst = append(dst, `{"line":`...)
	dst = jsonenc.Int(dst, int64(e.Line))
	dst = append(dst, `,"offset":`...)
	dst = jsonenc.Int(dst, e.Offset)
	dst = append(dst, `,"timestamp":`...)
	dst = jsonenc.String(dst, e.Timestamp)
	dst = append(dst, `,"loop":`...)
	dst = jsonenc.String(dst, e.Loop)
	dst = append(dst, `,"kind":`...)
	dst = jsonenc.String(dst, e.Kind)
	dst = append(dst, `,"fields":`...)
	dst = e.Fields.AppendJSON(dst)
	dst = append(dst, `,"k":`...)
	if e.K == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonenc.Int(dst, int64(*e.K))
	}
	dst = append(dst, `,"baseline":`...)
	dst = jsonenc.Bool(dst, e.Baseline)
	dst = append(dst, `,"epoch":`...)
	dst = jsonenc.Int(dst, int64(e.Epoch))
	dst = append(dst, `,"loss":`...)
	dst = appendFloatPtr(dst, e.Loss)
	dst = append(dst, `,"delta_loss":`...)
	dst = appendFloatPtr(dst, e.DeltaLoss)
	return append(dst, '}')
}

func appendStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonenc.String(dst, s)
	}
	return append(dst, ']')
}

func appendFloatPtr(dst []byte, f *float64) []byte {
	if f == nil {
		return append(dst, "null"...)
	}
	return jsonenc.Float(dst, *f)
}
