package transcript

import (
	"encoding/binary"
	"math"
)

// The record codec of the deduplicator: a finalised request is kept as one varint-encoded record in
// never-moving 64 KB chunks (60–75 bytes a request), with its strings interned.

// Record flags (the first byte of a record; the second is the class).
const (
	recSidechain    = 1 << iota // keptSidechain
	recProgress                 // fromProgress
	recSplit                    // usage.HasSplit
	recThinking                 // usage.HasThinking
	recMessageID                // hasMessageID
	recSideQuestion             // emitted as a side question
	recReopened                 // reopened into a later group: a newer record will replace it
	recCost                     // usage.HasCost: the recorded costUSD follows the thinking counts
)

// Records live in chunks of 64 KB (a longer record, possible only with ids, gets a chunk of its own)
// and never move. A position is chunk<<16 | offset, so 32 bits address 4 GB of records: about a
// hundred million requests.
const (
	chunkBits = 16
	chunkSize = 1 << chunkBits
	maxChunks = 1<<(32-chunkBits) - 1 // the last position is kept free (keySlot's dead marker)
)

// encode appends r's record and returns its position. Layout: flags, class, then varints: seq;
// file; agent, model, effort, version and speed (interned); the seven usage fields; usage total −
// maxTotal (zigzag); first time (zigzag ms), last − first, usage time − first; best thinking blocks
// and characters; the recorded cost (8 bytes, when recCost); with keepIDs, the two ids (length and bytes).
func (d *Deduper) encode(r *reqState, sideQuestion bool) uint32 {
	var flags byte
	for _, f := range [...]struct {
		on  bool
		bit byte
	}{{r.keptSidechain, recSidechain}, {r.fromProgress, recProgress}, {r.usage.HasSplit, recSplit},
		{r.usage.HasThinking, recThinking}, {r.hasMessageID, recMessageID}, {sideQuestion, recSideQuestion},
		{r.usage.HasCost, recCost}} {
		if f.on {
			flags |= f.bit
		}
	}
	b := append(d.scratch[:0], flags, byte(r.class))
	b = binary.AppendUvarint(b, uint64(r.seq))
	b = binary.AppendUvarint(b, uint64(r.file))
	for _, s := range [...]string{r.agentID, r.model, r.effort, r.version, r.usage.Speed} {
		b = binary.AppendUvarint(b, uint64(d.intern(s)))
	}
	u := &r.usage
	for _, v := range [...]uint64{u.Input, u.Output, u.CacheCreation, u.Cache5m, u.Cache1h, u.CacheRead, u.Thinking} {
		b = binary.AppendUvarint(b, v)
	}
	// maxTotal is the total of one line; with the field-wise maximum (and a cache split on some lines
	// only) the merged usage can total more or less, so the difference is stored signed.
	b = binary.AppendVarint(b, int64(u.total()-r.maxTotal))
	b = binary.AppendVarint(b, r.firstMs)
	b = binary.AppendUvarint(b, uint64(r.lastMs-r.firstMs))
	b = binary.AppendUvarint(b, uint64(r.usageMs-r.firstMs))
	b = binary.AppendUvarint(b, uint64(r.bestBlocks))
	b = binary.AppendUvarint(b, uint64(r.bestChars))
	if u.HasCost {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(u.Cost))
	}
	if d.keepIDs {
		b = binary.AppendUvarint(b, uint64(len(r.messageID)))
		b = append(b, r.messageID...)
		b = binary.AppendUvarint(b, uint64(len(r.requestID)))
		b = append(b, r.requestID...)
	}
	d.scratch = b
	n := len(d.chunks)
	if n == 0 || len(d.chunks[n-1])+len(b) > cap(d.chunks[n-1]) {
		if n == maxChunks {
			panic("transcript: more than 4 GB of request records in one scan")
		}
		d.chunks = append(d.chunks, make([]byte, 0, max(chunkSize, len(b))))
		n++
	}
	off := len(d.chunks[n-1])
	d.chunks[n-1] = append(d.chunks[n-1], b...)
	return uint32(n-1)<<chunkBits | uint32(off)
}

// record returns the bytes from a record's start to the end of its chunk.
func (d *Deduper) record(pos uint32) []byte {
	return d.chunks[pos>>chunkBits][pos&(chunkSize-1):]
}

// recordSeq reads the seq of the record at pos.
func (d *Deduper) recordSeq(pos uint32) uint32 {
	v, _ := binary.Uvarint(d.record(pos)[2:])
	return uint32(v)
}

// next returns the position of the record after the one at pos, in the order written.
func (d *Deduper) next(pos uint32) (uint32, bool) {
	var r reqState
	c, off := pos>>chunkBits, pos&(chunkSize-1)
	if n := uint32(d.decode(pos, &r)); int(off+n) < len(d.chunks[c]) {
		return pos + n, true
	}
	if int(c)+1 < len(d.chunks) {
		return (c + 1) << chunkBits, true
	}
	return 0, false
}

// decode reads the record at pos into r (its key and links are the caller's) and returns the
// record's length in bytes. Whether it was emitted as a side question is sideQ's.
func (d *Deduper) decode(pos uint32, r *reqState) int {
	b := d.record(pos)
	flags := b[0]
	*r = reqState{class: Class(b[1]), origin: -1, nextMsg: -1}
	i := 2
	next := func() uint64 {
		v, n := binary.Uvarint(b[i:])
		i += n
		return v
	}
	r.seq = uint32(next())
	r.file = int32(next())
	r.agentID, r.model, r.effort, r.version = d.strs[next()], d.strs[next()], d.strs[next()], d.strs[next()]
	u := &r.usage
	u.Speed = d.strs[next()]
	u.Input, u.Output, u.CacheCreation, u.Cache5m, u.Cache1h, u.CacheRead, u.Thinking = next(), next(), next(), next(), next(), next(), next()
	u.HasInput, u.HasOutput = true, true
	u.HasSplit, u.HasThinking = flags&recSplit != 0, flags&recThinking != 0
	delta, n := binary.Varint(b[i:])
	i += n
	r.maxTotal = u.total() - uint64(delta)
	first, n := binary.Varint(b[i:])
	i += n
	r.firstMs = first
	r.lastMs = first + int64(next())
	r.usageMs = first + int64(next())
	r.bestBlocks, r.bestChars = int32(next()), int64(next())
	if flags&recCost != 0 {
		u.Cost, u.HasCost = math.Float64frombits(binary.LittleEndian.Uint64(b[i:])), true
		i += 8
	}
	if d.keepIDs {
		l := int(next())
		r.messageID = string(b[i : i+l])
		i += l
		l = int(next())
		r.requestID = string(b[i : i+l])
		i += l
	}
	r.keptSidechain = flags&recSidechain != 0
	r.fromProgress = flags&recProgress != 0
	r.hasMessageID = flags&recMessageID != 0
	return i
}

// sideQ reports whether the record at pos was emitted as a side question.
func (d *Deduper) sideQ(pos uint32) bool { return d.record(pos)[0]&recSideQuestion != 0 }

func (d *Deduper) intern(s string) uint32 {
	if i, ok := d.strIdx[s]; ok {
		return i
	}
	i := uint32(len(d.strs))
	d.strs = append(d.strs, s)
	d.strIdx[s] = i
	return i
}
