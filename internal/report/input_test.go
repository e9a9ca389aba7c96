package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// A saved input renders the same bytes as the input it was saved from: floats (NaN and ±Inf of an
// empty screen margin included), times, nil and empty sections.
func TestProposalInputRoundTripRendersTheSameBytes(t *testing.T) {
	in := sampleProposal()
	in.Screen = append(in.Screen, ScreenRow{Signal: "empty-margin", Phi: math.NaN(), LogOdds: math.Inf(1), Z: math.Inf(-1),
		FisherP: 1, HolmP: math.NaN(), MinP: 0.1 + 0.2})
	data, err := EncodeProposalInput(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), in.ID+".toml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, sha, err := LoadProposalInput(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); sha != hex.EncodeToString(sum[:]) {
		t.Errorf("sha %s is not the sha256 of the bytes read", sha)
	}
	got.Before, got.After = in.Before, in.After
	want, err := RenderProposal(in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := RenderProposal(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(again) {
		t.Fatalf("%d files, want %d", len(again), len(want))
	}
	for i := range want {
		if want[i].Name != again[i].Name || !bytes.Equal(want[i].Data, again[i].Data) {
			t.Errorf("%s: the saved input renders other bytes", want[i].Name)
		}
	}
	if r := got.Screen[len(got.Screen)-1]; !math.IsNaN(r.Phi) || !math.IsInf(r.LogOdds, 1) || r.MinP != 0.1+0.2 {
		t.Errorf("floats not kept exactly: %+v", r)
	}
}
