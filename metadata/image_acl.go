package metadata

import (
	"bytes"
	"fmt"
	"iter"
	"maps"
	"slices"
)

// ACLs are the cluster's ACLs by id, as Kafka's AclsImage holds them.
// Like the rest of an Image they are immutable: a change makes a new
// ACLs, so a reader that kept the pointer of an earlier image can tell
// with one comparison whether the ACLs changed.
type ACLs struct {
	byID map[[16]byte]AccessControlEntryRecord
}

var noACLs = &ACLs{}

// ACLs returns the image's ACLs (never nil).
func (img *Image) ACLs() *ACLs {
	if img.acls == nil {
		return noACLs
	}
	return img.acls
}

// Len is the number of ACLs.
func (a *ACLs) Len() int { return len(a.byID) }

// Get returns the ACL with id.
func (a *ACLs) Get(id [16]byte) (AccessControlEntryRecord, bool) {
	r, ok := a.byID[id]
	return r, ok
}

// All yields every ACL in id order.
func (a *ACLs) All() iter.Seq[AccessControlEntryRecord] {
	return func(yield func(AccessControlEntryRecord) bool) {
		for _, id := range slices.SortedFunc(maps.Keys(a.byID), func(x, y [16]byte) int { return bytes.Compare(x[:], y[:]) }) {
			if !yield(a.byID[id]) {
				return
			}
		}
	}
}

// ownACLs copies the ACLs on the delta's first change of them.
func (d *delta) ownACLs() map[[16]byte]AccessControlEntryRecord {
	if !d.aclsOwned {
		d.next.acls = &ACLs{byID: maps.Clone(d.base.ACLs().byID)}
		if d.next.acls.byID == nil {
			d.next.acls.byID = map[[16]byte]AccessControlEntryRecord{}
		}
		d.aclsOwned = true
	}
	return d.next.acls.byID
}

func (d *delta) addACL(r AccessControlEntryRecord) error {
	if r.ID == ([16]byte{}) {
		return fmt.Errorf("%w: ACL with the zero id", ErrInvalidRecord)
	}
	d.ownACLs()[r.ID] = r
	return nil
}

// removeACL refuses an id the image does not hold, as Kafka's AclsDelta
// does.
func (d *delta) removeACL(r RemoveAccessControlEntryRecord) error {
	if _, ok := d.next.ACLs().byID[r.ID]; !ok {
		return fmt.Errorf("%w: removal of unknown ACL %x", ErrInvalidRecord, r.ID)
	}
	delete(d.ownACLs(), r.ID)
	return nil
}

// appendACLRecords writes the image's ACLs for a snapshot, in id order
// (Kafka's AclsImage.write).
func appendACLRecords(recs []Record, img *Image) []Record {
	for r := range img.ACLs().All() {
		recs = append(recs, r)
	}
	return recs
}
