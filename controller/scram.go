package controller

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/metadata"
)

// AlterUserScramCredentials (api key 51, KIP-554) as Kafka's
// ScramControlManager.alterCredentials decides it. The client salts the
// password itself (the request carries the salt, the iteration count
// and SaltedPassword = Hi(password, salt, iterations) of RFC 5802); the
// controller derives StoredKey = H(HMAC(SaltedPassword, "Client Key"))
// and ServerKey = HMAC(SaltedPassword, "Server Key") and records those,
// so the metadata never holds a password nor what derives the client's
// key.
//
// Errors, per user, as Kafka's:
//   - DUPLICATE_RESOURCE: the user is named twice in the request
//     (deletions and upsertions together, whatever the mechanisms);
//   - UNSUPPORTED_SASL_MECHANISM: a mechanism that is not SCRAM-SHA-256
//     or SCRAM-SHA-512;
//   - UNACCEPTABLE_CREDENTIAL: iterations outside 4096..16384 (Kafka's
//     ScramMechanism bounds), an empty salted password (Java's HMAC
//     refuses an empty key), or an empty user name (Kafka's broker
//     refuses it before the controller sees it);
//   - RESOURCE_NOT_FOUND: deleting a credential that does not exist.
//
// The first error a user gets is its answer; its later entries are
// ignored. Users without an error get their records.

// Kafka's iteration bounds for both SCRAM mechanisms
// (ScramMechanism.minIterations, maxIterations).
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
)

// ScramDeletion removes a user's credential for a mechanism.
type ScramDeletion struct {
	Name      string
	Mechanism int8
}

// ScramUpsertion sets a user's credential for a mechanism.
type ScramUpsertion struct {
	Name           string
	Mechanism      int8
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

// ScramResult is one user's outcome.
type ScramResult struct {
	User string
	Err  error
}

// AlterScramResponse answers AlterUserScramCredentials: the records to
// commit and one result per user, in the order users first appear
// (deletions first, then upsertions).
type AlterScramResponse struct {
	Records []metadata.Record
	Results []ScramResult
}

// AlterUserScramCredentials changes credentials: see the comment above.
func (c *Controller) AlterUserScramCredentials(dels []ScramDeletion, ups []ScramUpsertion) (AlterScramResponse, error) {
	resp := PlanScramChanges(c.img, dels, ups)
	if err := c.propose(resp.Records); err != nil {
		return AlterScramResponse{}, err
	}
	return resp, nil
}

// PlanScramChanges decides AlterUserScramCredentials over img without
// applying anything: the controller's rules for a node whose metadata
// is its own (a single node) as for the active controller.
func PlanScramChanges(img *metadata.Image, dels []ScramDeletion, ups []ScramUpsertion) AlterScramResponse {
	p := scramPlan{img: img, errs: map[string]error{}, recs: map[string]metadata.Record{}}
	for _, d := range dels {
		if p.claim(d.Name) {
			rec, err := p.deletion(d)
			p.decide(d.Name, rec, err)
		}
	}
	for _, u := range ups {
		if p.claim(u.Name) {
			rec, err := p.upsertion(u)
			p.decide(u.Name, rec, err)
		}
	}
	var resp AlterScramResponse
	for _, user := range p.order {
		resp.Results = append(resp.Results, ScramResult{User: user, Err: p.errs[user]})
		if p.errs[user] == nil {
			resp.Records = append(resp.Records, p.recs[user])
		}
	}
	return resp
}

// scramPlan is one request's decisions, by user.
type scramPlan struct {
	img   *metadata.Image
	order []string                   // users in order of first appearance
	errs  map[string]error           // users refused
	recs  map[string]metadata.Record // users accepted
}

// claim reports whether an entry for user is to be decided: false when
// the user already has an error; a second entry for a user makes the
// user's answer DUPLICATE_RESOURCE.
func (p *scramPlan) claim(user string) bool {
	if p.errs[user] != nil {
		return false
	}
	if _, seen := p.recs[user]; seen {
		delete(p.recs, user)
		p.errs[user] = fmt.Errorf("%w: a user credential cannot be altered twice in the same request", kerr.DuplicateResource)
		return false
	}
	p.order = append(p.order, user)
	return true
}

func (p *scramPlan) decide(user string, rec metadata.Record, err error) {
	if err != nil {
		p.errs[user] = err
		return
	}
	p.recs[user] = rec
}

func (p *scramPlan) deletion(d ScramDeletion) (metadata.Record, error) {
	mech := metadata.ScramMechanism(d.Mechanism)
	if err := checkScramMechanism(mech); err != nil {
		return nil, err
	}
	if _, ok := p.img.ScramCredential(d.Name, mech); !ok {
		return nil, fmt.Errorf("%w: attempt to delete a user credential that does not exist", kerr.ResourceNotFound)
	}
	return metadata.RemoveUserScramCredentialRecord{Name: d.Name, Mechanism: mech}, nil
}

func (p *scramPlan) upsertion(u ScramUpsertion) (metadata.Record, error) {
	mech := metadata.ScramMechanism(u.Mechanism)
	switch err := checkScramMechanism(mech); {
	case err != nil:
		return nil, err
	case u.Name == "":
		return nil, fmt.Errorf("%w: username must not be empty", kerr.UnacceptableCredential)
	case u.Iterations < ScramMinIterations:
		return nil, fmt.Errorf("%w: too few iterations (%d, at least %d)", kerr.UnacceptableCredential, u.Iterations, ScramMinIterations)
	case u.Iterations > ScramMaxIterations:
		return nil, fmt.Errorf("%w: too many iterations (%d, at most %d)", kerr.UnacceptableCredential, u.Iterations, ScramMaxIterations)
	case len(u.SaltedPassword) == 0:
		return nil, fmt.Errorf("%w: empty salted password", kerr.UnacceptableCredential)
	}
	stored, server := ScramKeys(mech, u.SaltedPassword)
	return metadata.UserScramCredentialRecord{Name: u.Name, Mechanism: mech, Salt: append([]byte(nil), u.Salt...),
		StoredKey: stored, ServerKey: server, Iterations: u.Iterations}, nil
}

func checkScramMechanism(m metadata.ScramMechanism) error {
	if m != metadata.ScramSHA256 && m != metadata.ScramSHA512 {
		return fmt.Errorf("%w: unknown SCRAM mechanism %d", kerr.UnsupportedSaslMechanism, m)
	}
	return nil
}

// ScramKeys derives RFC 5802's StoredKey and ServerKey from a salted
// password, with mech's hash (mech is SCRAM-SHA-256 or -512).
func ScramKeys(mech metadata.ScramMechanism, saltedPassword []byte) (storedKey, serverKey []byte) {
	h := sha256.New
	if mech == metadata.ScramSHA512 {
		h = sha512.New
	}
	mac := func(msg string) []byte {
		m := hmac.New(h, saltedPassword)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	clientKey := mac("Client Key")
	return sum(h, clientKey), mac("Server Key")
}

func sum(h func() hash.Hash, b []byte) []byte {
	d := h()
	d.Write(b)
	return d.Sum(nil)
}
