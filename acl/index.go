package acl

import (
	"cmp"
	"slices"
	"sort"
	"strings"
)

// Entry is an ACL with its id, as the cluster metadata holds it
// (Kafka: StandardAclWithId; the id is AccessControlEntryRecord.Id).
type Entry struct {
	ID [16]byte
	Binding
}

// Snapshot is an immutable set of ACLs indexed for authorization. Its
// ACLs are kept sorted by resource type, pattern type, then resource
// name (then the rest, so that the order is total): all ACLs of one
// resource type and pattern type form a section, ordered by name, in
// which a LITERAL name is found by binary search and the PREFIXED ACLs
// that match a name are found by walking down the name's prefixes
// (see prefixed), as Kafka's StandardAuthorizerData walks its
// aclsByResource set. A Snapshot is never modified after NewSnapshot:
// any number of goroutines may read it.
type Snapshot struct {
	sorted   []Entry
	sections map[section][]Entry // sub-slices of sorted
}

type section struct {
	rt ResourceType
	pt PatternType
}

// NewSnapshot indexes entries. It keeps its own copy.
func NewSnapshot(entries []Entry) *Snapshot {
	s := &Snapshot{sorted: slices.Clone(entries), sections: map[section][]Entry{}}
	slices.SortFunc(s.sorted, compareEntries)
	for i := 0; i < len(s.sorted); {
		sec := section{s.sorted[i].ResourceType, s.sorted[i].PatternType}
		j := i + 1
		for j < len(s.sorted) && (section{s.sorted[j].ResourceType, s.sorted[j].PatternType}) == sec {
			j++
		}
		s.sections[sec] = s.sorted[i:j:j]
		i = j
	}
	return s
}

func compareEntries(a, b Entry) int {
	return cmp.Or(
		cmp.Compare(a.ResourceType, b.ResourceType),
		cmp.Compare(a.PatternType, b.PatternType),
		strings.Compare(a.ResourceName, b.ResourceName),
		strings.Compare(a.Principal, b.Principal),
		strings.Compare(a.Host, b.Host),
		cmp.Compare(a.Operation, b.Operation),
		cmp.Compare(a.Permission, b.Permission),
		slices.Compare(a.ID[:], b.ID[:]),
	)
}

// Len is the number of ACLs.
func (s *Snapshot) Len() int { return len(s.sorted) }

// Entries returns every ACL in the index's order. The slice is the
// snapshot's own: it must not be modified.
func (s *Snapshot) Entries() []Entry { return s.sorted }

// Match returns the ACLs a filter selects, in the index's order.
func (s *Snapshot) Match(f Filter) []Entry {
	var out []Entry
	for _, e := range s.sorted {
		if f.Matches(e.Binding) {
			out = append(out, e)
		}
	}
	return out
}

// Contains reports whether an ACL equal to b (its id aside) exists.
func (s *Snapshot) Contains(b Binding) bool {
	for _, e := range s.literal(s.sections[section{b.ResourceType, b.PatternType}], b.ResourceName) {
		if e.Binding == b {
			return true
		}
	}
	return false
}

// literal returns the entries of sec named exactly name.
func (s *Snapshot) literal(sec []Entry, name string) []Entry {
	lo := sort.Search(len(sec), func(i int) bool { return sec[i].ResourceName >= name })
	hi := lo
	for hi < len(sec) && sec[hi].ResourceName == name {
		hi++
	}
	return sec[lo:hi]
}

// prefixed calls visit for each PREFIXED entry of sec whose name is a
// prefix of name, longest names first, until visit returns false.
//
// Every such entry's name is a prefix of name, so sorts at or before
// it. The walk takes the last entry at or before the current bound n
// (a prefix of name): if its name c is a prefix of name, it and its
// equals are visited and the bound becomes c less its last byte;
// otherwise no entry between c and n can match, and the bound becomes
// the common prefix of c and name, which is shorter than n. Each step
// is one binary search and shortens the bound, so a lookup costs at
// most one search per matching name plus one per divergence.
func (s *Snapshot) prefixed(sec []Entry, name string, visit func(*Entry) bool) {
	n, hi := name, len(sec)
	for hi > 0 {
		i := sort.Search(hi, func(i int) bool { return sec[i].ResourceName > n }) - 1
		if i < 0 {
			return
		}
		c := sec[i].ResourceName
		if !strings.HasPrefix(name, c) {
			n, hi = name[:commonPrefix(c, name)], i
			continue
		}
		for ; i >= 0 && sec[i].ResourceName == c; i-- {
			if !visit(&sec[i]) {
				return
			}
		}
		if c == "" {
			return
		}
		n, hi = c[:len(c)-1], i+1
	}
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
