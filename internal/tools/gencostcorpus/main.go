// Command gencostcorpus writes a small synthetic Claude Code corpus for the cost and date-view
// checks against ccusage (internal/audit/testdata/costcorpus): several models (a long-context tier
// above 200,000 tokens, 1-hour cache writes, fast mode), sessions in two projects with a subagent
// file, and requests around midnight and month ends in several time zones, with gaps that cut
// 5-hour blocks. It is deterministic (a fixed seed).
//
//	go run ./internal/tools/gencostcorpus -out internal/audit/testdata/costcorpus
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

type usage struct {
	Input         uint64         `json:"input_tokens"`
	CacheCreation uint64         `json:"cache_creation_input_tokens"`
	CacheRead     uint64         `json:"cache_read_input_tokens"`
	Split         map[string]any `json:"cache_creation,omitempty"`
	Output        uint64         `json:"output_tokens"`
	Tier          string         `json:"service_tier"`
	Speed         string         `json:"speed,omitempty"`
}

func main() {
	out := flag.String("out", "", "directory to write projects/ into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: gencostcorpus -out DIR")
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(13, 2026))
	models := []string{"claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-opus-4-8", "claude-sonnet-4-6"}
	type session struct {
		project, id string
		start       time.Time
		n           int
		sub         bool
	}
	sessions := []session{
		// Around a month end and midnight in UTC, New York and Tokyo.
		{"-home-dev-shop-api", "11111111-aaaa-4aaa-8aaa-000000000001", time.Date(2026, 1, 31, 21, 10, 0, 0, time.UTC), 40, true},
		{"-home-dev-shop-api", "11111111-aaaa-4aaa-8aaa-000000000002", time.Date(2026, 2, 1, 13, 40, 0, 0, time.UTC), 25, false},
		{"-home-dev-billing", "22222222-bbbb-4bbb-8bbb-000000000003", time.Date(2026, 2, 28, 14, 55, 0, 0, time.UTC), 30, true},
		{"-home-dev-billing", "22222222-bbbb-4bbb-8bbb-000000000004", time.Date(2026, 3, 7, 4, 20, 0, 0, time.UTC), 20, false},
	}
	seq := 0
	for si, s := range sessions {
		dir := filepath.Join(*out, "projects", s.project)
		if err := os.MkdirAll(filepath.Join(dir, s.id, "subagents"), 0o755); err != nil {
			fail(err)
		}
		var mainLines, subLines []any
		t := s.start
		for i := 0; i < s.n; i++ {
			// Mostly minutes apart, sometimes hours (new 5-hour blocks, other days).
			switch r := rng.IntN(20); {
			case r == 0:
				t = t.Add(time.Duration(5+rng.IntN(4))*time.Hour + time.Duration(rng.IntN(60))*time.Minute)
			case r < 3:
				t = t.Add(time.Duration(40+rng.IntN(120)) * time.Minute)
			default:
				t = t.Add(time.Duration(20+rng.IntN(400)) * time.Second)
			}
			seq++
			model := models[(si+i)%len(models)]
			u := usage{Input: uint64(1 + rng.IntN(50)), Output: uint64(20 + rng.IntN(3000)), CacheRead: uint64(rng.IntN(150_000)), Tier: "standard", Speed: "standard"}
			w5, w1 := uint64(rng.IntN(20_000)), uint64(0)
			if rng.IntN(3) == 0 {
				w1 = uint64(rng.IntN(30_000))
			}
			if rng.IntN(12) == 0 { // above 200,000 tokens of one kind: long-context tiers
				u.CacheRead = 200_000 + uint64(rng.IntN(150_000))
				if rng.IntN(2) == 0 {
					u.Input = 200_000 + uint64(rng.IntN(20_000))
				}
			}
			if model == "claude-opus-4-8" && rng.IntN(3) == 0 {
				u.Speed = "fast"
			}
			u.CacheCreation = w5 + w1
			if rng.IntN(4) != 0 { // some requests record no TTL split
				u.Split = map[string]any{"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}
			}
			sub := s.sub && i%4 == 3
			line := map[string]any{
				"parentUuid": nil, "isSidechain": sub, "userType": "external", "cwd": "/home/dev", "sessionId": s.id,
				"version": "2.1.98", "type": "assistant", "requestId": fmt.Sprintf("req_%04d", seq), "uuid": fmt.Sprintf("u-%04d", seq),
				"timestamp": t.Format("2006-01-02T15:04:05.000Z"),
				"message": map[string]any{"model": model, "id": fmt.Sprintf("msg_%04d", seq), "type": "message", "role": "assistant",
					"content": []any{map[string]any{"type": "text", "text": "done"}}, "stop_reason": "end_turn", "usage": u},
			}
			user := map[string]any{"parentUuid": nil, "isSidechain": sub, "userType": "external", "cwd": "/home/dev", "sessionId": s.id,
				"version": "2.1.98", "type": "user", "uuid": fmt.Sprintf("q-%04d", seq), "timestamp": t.Add(-3 * time.Second).Format("2006-01-02T15:04:05.000Z"),
				"message": map[string]any{"role": "user", "content": "next"}}
			if sub {
				line["agentId"] = "a1b2c3d"
				user["agentId"] = "a1b2c3d"
				subLines = append(subLines, user, line)
			} else {
				mainLines = append(mainLines, user, line)
			}
		}
		write(filepath.Join(dir, s.id+".jsonl"), mainLines)
		if len(subLines) > 0 {
			write(filepath.Join(dir, s.id, "subagents", "agent-a1b2c3d.jsonl"), subLines)
		} else {
			os.RemoveAll(filepath.Join(dir, s.id))
		}
	}
}

func write(path string, lines []any) {
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	enc := json.NewEncoder(f)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			fail(err)
		}
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gencostcorpus:", err)
	os.Exit(1)
}
