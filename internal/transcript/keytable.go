package transcript

import "math/bits"

// The key table of the deduplicator: the identity of a request (hashed ids) and the table that maps the
// keys of finalised requests to their records.

// idKey is a request's identity for deduplication: a 64-bit hash of message.id and a 32-bit hash of
// requestId (0 when the line has none). Hashes, not the ids, are kept once a request is finalised;
// two different requests share a key with probability about 2^-96 (2^-64 for the /btw rule, which
// matches on message.id alone), negligible next to the millions of requests a corpus holds.
type idKey struct {
	msg uint64
	req uint32
}

// Seeds of the id hashes. They are fixed so that a scan is deterministic, collisions included.
const (
	hashMsgSeed = 0x9e3779b97f4a7c15
	hashReqSeed = 0xc2b2ae3d27d4eb4f
	hashMul     = 0xa0761d6478bd642f
	hashMix     = 0xe7037ed1a0b428db
)

// hashID hashes an id eight bytes at a time with multiply-fold mixing (the wyhash construction).
// hash/maphash would do, but its seeds are random per process and results must not depend on the run.
func hashID(seed uint64, s string) uint64 {
	h := seed ^ uint64(len(s))*hashMul
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = mulFold(h^w^hashMix, hashMul)
	}
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	return mulFold(mulFold(h^w^hashMix, hashMul), hashMix)
}

func mulFold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func keyOf(msgID, reqID string, hasReq bool) idKey {
	k := idKey{msg: hashID(hashMsgSeed, msgID)}
	if hasReq {
		if k.req = uint32(hashID(hashReqSeed, reqID)); k.req == 0 {
			k.req = 1 // 0 means "no requestId"
		}
	}
	return k
}

// keyTable maps the keys of finalised requests to their records. It is open addressing with linear
// probing on the message hash, so that all requests sharing a message.id lie in one probe run (the
// /btw rule looks them up by message.id alone). A slot is 16 bytes and the load stays between 40 and
// 80 %; a Go map of the same keys would take about twice that, and a second map would be needed for
// the message lookup.
type keyTable struct {
	slots []keySlot
	used  int // occupied slots, dead ones included
}

type keySlot struct {
	msg  uint64
	req  uint32
	link uint32 // record position + 1; 0: empty; slotDead: the request was reopened
}

const slotDead = 1<<32 - 1

func (s *keySlot) pos() uint32 { return s.link - 1 }

func (s *keySlot) live() bool { return s.link != 0 && s.link != slotDead }

func (t *keyTable) insert(k idKey, pos uint32) {
	if (t.used+1)*5 > len(t.slots)*4 {
		t.grow()
	}
	mask := len(t.slots) - 1
	i := int(k.msg) & mask
	for t.slots[i].link != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = keySlot{msg: k.msg, req: k.req, link: pos + 1}
	t.used++
}

// grow resizes the table to a load of at most 40 % (at least 1,024 slots), dropping dead slots.
func (t *keyTable) grow() {
	old := t.slots
	live := 0
	for i := range old {
		if old[i].live() {
			live++
		}
	}
	size := 1024
	for live*5 > size*2 {
		size *= 2
	}
	t.slots, t.used = make([]keySlot, size), 0
	mask := size - 1
	for _, s := range old {
		if s.live() {
			i := int(s.msg) & mask
			for t.slots[i].link != 0 {
				i = (i + 1) & mask
			}
			t.slots[i] = s
			t.used++
		}
	}
}

// find returns the slot of the live entry with key k, or -1.
func (t *keyTable) find(k idKey) int {
	if len(t.slots) == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := int(k.msg) & mask; t.slots[i].link != 0; i = (i + 1) & mask {
		if s := &t.slots[i]; s.msg == k.msg && s.req == k.req && s.link != slotDead {
			return i
		}
	}
	return -1
}

// eachMessage calls fn with every live slot whose message hash is msg.
func (t *keyTable) eachMessage(msg uint64, fn func(i int)) {
	if len(t.slots) == 0 {
		return
	}
	mask := len(t.slots) - 1
	for i := int(msg) & mask; t.slots[i].link != 0; i = (i + 1) & mask {
		if s := &t.slots[i]; s.msg == msg && s.link != slotDead {
			fn(i)
		}
	}
}

func (t *keyTable) kill(i int) { t.slots[i].link = slotDead }
