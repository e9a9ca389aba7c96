package weights

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/tomlbound"
)

// fileShape is the TOML layout of a version file. Numbers are read as floats so that 2.5 is accepted and
// then checked to be a multiple of 0.5.
type fileShape struct {
	Schema   int                `toml:"schema"`
	Version  int                `toml:"version"`
	Parent   int                `toml:"parent"`
	Created  time.Time          `toml:"created"`
	Reason   string             `toml:"reason"`
	Evidence string             `toml:"evidence"`
	Signals  map[string]float64 `toml:"signals"`
	Buckets  map[string]float64 `toml:"buckets"`
	Cost     map[string]int     `toml:"cost"`
}

var bucketKeys = [NumLevels - 1]string{"L0", "L1", "L2", "L3"}

var costKeys = []string{"too_low", "too_high", "other_item"}

// Parse reads a weights version from TOML. name (usually the file path) prefixes every error, and every
// error names the offending key.
func Parse(name string, data []byte) (Weights, error) {
	var f fileShape
	md, err := tomlbound.Decode(data, &f)
	if err != nil {
		return Weights{}, fmt.Errorf("%s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return Weights{}, fmt.Errorf("%s: unknown key %s", name, strings.Join(keys, ", "))
	}
	// fail names the key, and its line when the file defines it (a range or a value out of order is
	// found after the decode, which alone knows the lines).
	fail := func(key, format string, args ...any) (Weights, error) {
		return Weights{}, fmt.Errorf("%s: %s: %s", tomlbound.At(name, data, keyParts(key)...), key, fmt.Sprintf(format, args...))
	}
	if !md.IsDefined("schema") {
		return fail("schema", "missing")
	}
	if f.Schema != Schema {
		return fail("schema", "is %d, this build reads schema %d", f.Schema, Schema)
	}
	if f.Version <= 0 {
		return fail("version", "must be a positive integer")
	}
	if f.Parent < 0 || (f.Parent >= f.Version) {
		return fail("parent", "must be 0 (none) or an earlier version than %d", f.Version)
	}
	w := Weights{Schema: f.Schema, Version: f.Version, Parent: f.Parent, Created: f.Created.UTC(), Reason: f.Reason, Evidence: f.Evidence}
	seen := [NumSignals]bool{}
	names := make([]string, 0, len(f.Signals))
	for n := range f.Signals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s, ok := SignalByName(n)
		if !ok {
			return fail("signals."+quoteKey(n), "unknown signal (known: %s)", strings.Join(signalNames[:], ", "))
		}
		h, err := SaneHalf(f.Signals[n])
		if err != nil {
			return fail("signals."+quoteKey(n), "%v", err)
		}
		w.Signals[s] = h
		seen[s] = true
	}
	for i, ok := range seen {
		if !ok {
			return fail("signals."+quoteKey(signalNames[i]), "missing")
		}
	}
	for k := range f.Buckets {
		if !slices.Contains(bucketKeys[:], k) {
			return fail("buckets."+k, "unknown bucket edge (known: L0, L1, L2, L3)")
		}
	}
	for i, k := range bucketKeys {
		v, ok := f.Buckets[k]
		if !ok {
			return fail("buckets."+k, "missing")
		}
		h, err := SaneHalf(v)
		if err != nil {
			return fail("buckets."+k, "%v", err)
		}
		w.Buckets.Edges[i] = h
		if i > 0 && h <= w.Buckets.Edges[i-1] {
			return fail("buckets."+k, "edge %s must be above %s = %s (edges must increase)", h.Plain(), bucketKeys[i-1], w.Buckets.Edges[i-1].Plain())
		}
	}
	for k := range f.Cost {
		if !slices.Contains(costKeys, k) {
			return fail("cost."+k, "unknown cost (known: %s)", strings.Join(costKeys, ", "))
		}
	}
	for _, k := range costKeys {
		v, ok := f.Cost[k]
		if !ok {
			return fail("cost."+k, "missing")
		}
		if v < 0 || v > MaxCost {
			return fail("cost."+k, "%d: want a cost between 0 and %d", v, MaxCost)
		}
	}
	w.Cost = Cost{TooLow: f.Cost["too_low"], TooHigh: f.Cost["too_high"], OtherItem: f.Cost["other_item"]}
	return w, nil
}

// MaxMagnitude bounds every signal weight and bucket edge of a version file (±100; the reference's largest
// is 7, and evolve moves a weight by 0.5 or 1 a step): `ambiguous = -1000000` in a pull request is refused
// rather than scored with (docs/decisions.md#hostile-files-issue-25).
const MaxMagnitude = 100

// MaxCost bounds each cost of a version file (the reference's are 1 and 2).
const MaxCost = 1000

// SaneHalf is HalfFromFloat within ±MaxMagnitude (NaN and ±Inf are not multiples of 0.5 either).
func SaneHalf(f float64) (Half, error) {
	if !(f >= -MaxMagnitude && f <= MaxMagnitude) {
		return 0, fmt.Errorf("%v is outside the sane range -%d..+%d", f, MaxMagnitude, MaxMagnitude)
	}
	return HalfFromFloat(f)
}

// bareKey is compiled on first use, not at init: `tune score` links this package and rarely quotes a
// key (docs/decisions.md#score-start-up).
var bareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// keyParts splits a dotted key as quoteKey writes it ("signals.\"components>=3\"") into its parts.
func keyParts(key string) []string {
	table, rest, ok := strings.Cut(key, ".")
	if !ok {
		return []string{key}
	}
	return []string{table, strings.Trim(rest, `"`)}
}

func quoteKey(k string) string {
	if bareKey().MatchString(k) {
		return k
	}
	return `"` + k + `"`
}

// Marshal writes w in the canonical layout: a header comment, fixed key order, one weight per line. The
// same value always gives the same bytes, so version files diff well in a pull request.
func (w *Weights) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# tune weights %s", VersionName(w.Version))
	if w.Parent > 0 {
		fmt.Fprintf(&b, " (parent %s)", VersionName(w.Parent))
	}
	b.WriteString("\n")
	if w.Reason != "" {
		fmt.Fprintf(&b, "# reason: %s\n", oneLine(w.Reason))
	}
	if w.Evidence != "" {
		fmt.Fprintf(&b, "# evidence: %s\n", oneLine(w.Evidence))
	}
	b.WriteString("# Weights are multiples of 0.5. Buckets are inclusive upper edges; L4 is everything above L3.\n\n")
	fmt.Fprintf(&b, "schema = %d\n", w.Schema)
	fmt.Fprintf(&b, "version = %d\n", w.Version)
	fmt.Fprintf(&b, "parent = %d\n", w.Parent)
	fmt.Fprintf(&b, "created = %s\n", w.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "reason = %s\n", tomlString(w.Reason))
	if w.Evidence != "" {
		fmt.Fprintf(&b, "evidence = %s\n", tomlString(w.Evidence))
	}
	b.WriteString("\n[signals]\n")
	for i, h := range w.Signals {
		fmt.Fprintf(&b, "%s = %s\n", quoteKey(signalNames[i]), h.Plain())
	}
	b.WriteString("\n[buckets]\n")
	for i, h := range w.Buckets.Edges {
		fmt.Fprintf(&b, "%s = %s\n", bucketKeys[i], h.Plain())
	}
	b.WriteString("\n[cost]\n")
	fmt.Fprintf(&b, "too_low = %d\n", w.Cost.TooLow)
	fmt.Fprintf(&b, "too_high = %d\n", w.Cost.TooHigh)
	fmt.Fprintf(&b, "other_item = %d\n", w.Cost.OtherItem)
	return b.Bytes()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func tomlString(s string) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]string{"s": s}); err != nil {
		panic(err) // a string always encodes
	}
	return strings.TrimSpace(strings.TrimPrefix(b.String(), "s = "))
}

// Load reads one version file.
func Load(path string) (Weights, error) {
	data, err := regular.ReadLimited(path, regular.WeightsFile)
	if err != nil {
		return Weights{}, err
	}
	return Parse(path, data)
}

// ErrNoVersions is returned when a weights directory holds no version file.
var ErrNoVersions = errors.New("no weights version (vNNNN.toml) found")
