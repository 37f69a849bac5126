package pt2

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// serializationID computes the 40-digit .data/serialization_id that
// PyTorchStreamWriter::writeSerializationId writes for records written in
// the given order (the id record itself excluded): 20 digits of the
// c10::hash_combine of the record names' std::hash values, taken in the
// iteration order of the writer's std::unordered_set<std::string>, then 20
// digits of the hash_combine of the records' CRC-32s in write order. It
// reproduces libstdc++ (GCC) on a 64-bit little-endian host: _Hash_bytes
// with seed 0xc70f6907 and the _Prime_rehash_policy bucket growth. The
// fixtures' ids are reproduced digit for digit; the reader gives the id no
// meaning beyond logging it.
func serializationID(recs []record, crcs []uint32) string {
	var names, crcSum uint64
	set := newStdStringSet()
	for i, r := range recs {
		set.insert(r.name)
		crcSum = hashCombine(crcSum, uint64(crcs[i]))
	}
	for _, h := range set.iterationOrder() {
		names = hashCombine(names, h)
	}
	return fmt.Sprintf("%020d%020d", names, crcSum)
}

// hashCombine is c10::hash_combine.
func hashCombine(seed, value uint64) uint64 {
	return seed ^ (value + 0x9e3779b9 + (seed << 6) + (seed >> 2))
}

// stdHashBytes is libstdc++'s 64-bit std::_Hash_bytes (a MurmurHash2
// variant), which std::hash<std::string> calls with seed 0xc70f6907.
func stdHashBytes(s []byte, seed uint64) uint64 {
	const mul = 0xc6a4a793<<32 + 0x5bd1e995
	shiftMix := func(v uint64) uint64 { return v ^ v>>47 }
	n := len(s)
	aligned := n &^ 7
	h := seed ^ uint64(n)*mul
	for p := 0; p < aligned; p += 8 {
		d := shiftMix(binary.LittleEndian.Uint64(s[p:])*mul) * mul
		h ^= d
		h *= mul
	}
	if n&7 != 0 {
		var d uint64
		for i := n - 1; i >= aligned; i-- {
			d = d<<8 + uint64(s[i])
		}
		h ^= d
		h *= mul
	}
	h = shiftMix(h) * mul
	return shiftMix(h)
}

// stdPrimes is the start of libstdc++'s __prime_list (hashtable-aux.cc),
// enough for a set of about 150 000 records.
var stdPrimes = []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79,
	83, 89, 97, 103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313,
	337, 359, 383, 409, 439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109, 1193, 1289,
	1381, 1493, 1613, 1741, 1879, 2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739, 4027, 4349, 4703,
	5087, 5503, 5953, 6427, 6949, 7517, 8123, 8783, 9497, 10273, 11113, 12011, 12983, 14033, 15173, 16411,
	17749, 19183, 20753, 22447, 24281, 26267, 28411, 30727, 33223, 35933, 38873, 42043, 45481, 49201, 53201,
	57557, 62233, 67307, 72817, 78779, 85229, 92203, 99733, 107897, 116731, 126271, 136607, 147793, 159871}

// stdStringSet models the element order of a libstdc++
// std::unordered_set<std::string> with unique keys and max load factor 1:
// one singly linked list, each bucket pointing at the node before its
// first element. Inserting is O(1) and a rehash O(n), as in libstdc++.
type stdStringSet struct {
	hash       []uint64 // node hashes, by insertion
	next       []int32  // next node in the list, -1 at the end
	head       int32    // first node, -1 when empty
	before     []int32  // per bucket: the node before its first, beforeBegin, or noNode
	buckets    uint64
	nextResize uint64
}

const (
	noNode      = -1 // an empty bucket, the list's end
	beforeBegin = -2 // the bucket whose first node heads the list
)

func newStdStringSet() *stdStringSet {
	return &stdStringSet{head: noNode, before: []int32{noNode}, buckets: 1}
}

// nextBucket is _Prime_rehash_policy::_M_next_bkt.
func (s *stdStringSet) nextBucket(n uint64) uint64 {
	fast := []uint64{2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13}
	if n < uint64(len(fast)) {
		if n == 0 {
			return 1
		}
		s.nextResize = fast[n]
		return fast[n]
	}
	i, _ := slices.BinarySearch(stdPrimes[6:], n)
	if i+6 >= len(stdPrimes) {
		// beyond the table (over 150 000 records) the first half of the
		// id no longer follows libstdc++; it stays deterministic
		s.nextResize = n | 1
		return n | 1
	}
	p := stdPrimes[i+6]
	s.nextResize = p
	return p
}

// needRehash is _Prime_rehash_policy::_M_need_rehash for one insertion.
func (s *stdStringSet) needRehash(elems uint64) (uint64, bool) {
	if elems+1 <= s.nextResize {
		return 0, false
	}
	minBuckets := elems + 1
	if s.nextResize == 0 {
		minBuckets = max(minBuckets, 11)
	}
	if minBuckets >= s.buckets {
		return s.nextBucket(max(minBuckets+1, s.buckets*2)), true
	}
	s.nextResize = s.buckets
	return 0, false
}

// rehash is _M_rehash_aux for unique keys: nodes are taken in list order;
// the first node of a bucket goes to the list front, later ones to the
// start of their bucket (see link).
func (s *stdStringSet) rehash(n uint64) {
	p := s.head
	s.head, s.before, s.buckets = noNode, make([]int32, n), n
	for i := range s.before {
		s.before[i] = noNode
	}
	for p != noNode {
		nx := s.next[p]
		s.link(p)
		p = nx
	}
}

func (s *stdStringSet) insert(name string) {
	h := stdHashBytes([]byte(name), 0xc70f6907)
	if n, ok := s.needRehash(uint64(len(s.hash))); ok {
		s.rehash(n)
	}
	s.hash = append(s.hash, h)
	s.next = append(s.next, noNode)
	s.link(int32(len(s.hash) - 1))
}

// link puts node p in the list as an insert (and a rehash, node by node)
// does: the first of its bucket at the list front, else at the start of
// its bucket, right after the node before the bucket's first.
func (s *stdStringSet) link(p int32) {
	b := s.hash[p] % s.buckets
	switch prev := s.before[b]; prev {
	case noNode:
		s.next[p] = s.head
		if s.head != noNode {
			s.before[s.hash[s.head]%s.buckets] = p
		}
		s.head = p
		s.before[b] = beforeBegin
	case beforeBegin:
		s.next[p] = s.head
		s.head = p
	default:
		s.next[p] = s.next[prev]
		s.next[prev] = p
	}
}

// iterationOrder returns the hashes in the set's iteration order.
func (s *stdStringSet) iterationOrder() []uint64 {
	out := make([]uint64, 0, len(s.hash))
	for p := s.head; p != noNode; p = s.next[p] {
		out = append(out, s.hash[p])
	}
	return out
}
