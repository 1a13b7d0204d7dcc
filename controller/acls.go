package controller

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/metadata"
)

// CreateAcls (30) and DeleteAcls (31) as Kafka's AclControlManager
// runs them: a new ACL is validated and written as an
// AccessControlEntryRecord with a fresh id; one equal to an existing ACL
// (or to another of the same request) succeeds without a record; a
// deletion filter removes every ACL it matches, one
// RemoveAccessControlEntryRecord each. PlanCreateACLs and
// PlanDeleteACLs are pure: a single node's metadata file plans with
// them too.

// ACLEntry is the ACL an image's record holds.
func ACLEntry(r metadata.AccessControlEntryRecord) acl.Entry {
	return acl.Entry{ID: r.ID, Binding: acl.Binding{ResourceType: acl.ResourceType(r.ResourceType), ResourceName: r.ResourceName,
		PatternType: acl.PatternType(r.PatternType), Principal: r.Principal, Host: r.Host,
		Operation: acl.Operation(r.Operation), Permission: acl.Permission(r.PermissionType)}}
}

// ACLRecord is the record of an ACL.
func ACLRecord(e acl.Entry) metadata.AccessControlEntryRecord {
	return metadata.AccessControlEntryRecord{ID: e.ID, ResourceType: int8(e.ResourceType), ResourceName: e.ResourceName,
		PatternType: int8(e.PatternType), Principal: e.Principal, Host: e.Host,
		Operation: int8(e.Operation), PermissionType: int8(e.Permission)}
}

// ACLSnapshot indexes an image's ACLs for authorization.
func ACLSnapshot(img *metadata.Image) *acl.Snapshot {
	acls := img.ACLs()
	entries := make([]acl.Entry, 0, acls.Len())
	for r := range acls.All() {
		entries = append(entries, ACLEntry(r))
	}
	return acl.NewSnapshot(entries)
}

// PlanCreateACLs returns the records that create bindings over img and
// each binding's error (INVALID_REQUEST for what Kafka refuses; nil for
// a created or already present ACL). newID draws ids; one the image
// holds is drawn again.
func PlanCreateACLs(img *metadata.Image, bindings []acl.Binding, newID func() [16]byte) ([]metadata.Record, []error) {
	cur := ACLSnapshot(img)
	errs := make([]error, len(bindings))
	var recs []metadata.Record
	seen := map[acl.Binding]bool{}
	for i, b := range bindings {
		if err := b.Validate(); err != nil {
			errs[i] = fmt.Errorf("%w: %v", kerr.InvalidRequest, err)
			continue
		}
		if seen[b] || cur.Contains(b) {
			continue
		}
		seen[b] = true
		id := newID()
		for _, taken := img.ACLs().Get(id); taken || id == [16]byte{}; _, taken = img.ACLs().Get(id) {
			id = newID()
		}
		recs = append(recs, ACLRecord(acl.Entry{ID: id, Binding: b}))
	}
	return recs, errs
}

// ACLDeletion is one filter's outcome: the ACLs it removed, or its
// error.
type ACLDeletion struct {
	Err     error
	Deleted []acl.Entry
}

// PlanDeleteACLs returns the records that remove every ACL of img the
// filters match, and each filter's outcome. An ACL two filters match is
// removed once and reported under both, as Kafka does.
func PlanDeleteACLs(img *metadata.Image, filters []acl.Filter) ([]metadata.Record, []ACLDeletion) {
	cur := ACLSnapshot(img)
	out := make([]ACLDeletion, len(filters))
	var recs []metadata.Record
	removed := map[[16]byte]bool{}
	for i, f := range filters {
		if err := f.Validate(); err != nil {
			out[i].Err = fmt.Errorf("%w: %v", kerr.InvalidRequest, err)
			continue
		}
		out[i].Deleted = cur.Match(f)
		for _, e := range out[i].Deleted {
			if !removed[e.ID] {
				removed[e.ID] = true
				recs = append(recs, metadata.RemoveAccessControlEntryRecord{ID: e.ID})
			}
		}
	}
	return recs, out
}

// CreateACLs creates bindings (CreateAcls, api key 30): the records it
// proposed and each binding's error.
func (c *Controller) CreateACLs(bindings []acl.Binding) ([]metadata.Record, []error, error) {
	recs, errs := PlanCreateACLs(c.img, bindings, func() [16]byte { return c.cfg.NewTopicID() })
	if err := c.propose(recs); err != nil {
		return nil, nil, err
	}
	return recs, errs, nil
}

// DeleteACLs removes what filters match (DeleteAcls, api key 31).
func (c *Controller) DeleteACLs(filters []acl.Filter) ([]metadata.Record, []ACLDeletion, error) {
	recs, out := PlanDeleteACLs(c.img, filters)
	if err := c.propose(recs); err != nil {
		return nil, nil, err
	}
	return recs, out, nil
}
