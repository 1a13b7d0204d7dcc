// Package acl is Kafka's access control model and its StandardAuthorizer
// decision: principals (User:alice), hosts, resources (Topic, Group,
// Cluster, TransactionalId, DelegationToken) named literally, by prefix
// or by the wildcard "*", operations with ALLOW and DENY, super.users
// and allow.everyone.if.no.acl.found.
//
// A Binding is one ACL (Kafka's AclBinding), a Filter selects ACLs for
// DescribeAcls and DeleteAcls (Kafka's AclBindingFilter, with the ANY
// and MATCH pattern types), an Entry is an ACL with the id the cluster
// metadata keeps it under. A Snapshot indexes a set of entries for
// decisions (index.go: sorted by resource type, pattern type and name,
// PREFIXED lookups walk the prefixes of the name); an Authorizer
// decides against the current Snapshot (authorizer.go). Codes are
// Kafka's, as its protocol and metadata records carry them.
//
// The package imports nothing of Varve's: the node (package cluster)
// builds a Snapshot from the ACLs of its metadata image and asks the
// Authorizer before serving a request.
//
// # Concurrency
//
// A Snapshot is immutable once NewSnapshot returns. An Authorizer holds
// its Snapshot in an atomic.Pointer: Authorize is safe for any number
// of goroutines and takes no lock; Store swaps the snapshot whole, so a
// decision sees the ACLs before or after a change, never half of one.
// The package has no goroutines.
//
// # Invariants
//
//   - DENY wins: a matching DENY denies whatever ALLOWs also match.
//   - Only ALLOW ACLs imply operations (Read, Write, Delete, Alter imply
//     Describe; AlterConfigs implies DescribeConfigs); a DENY of Read
//     does not deny Describe. All matches every operation, either way.
//   - The default (allow.everyone.if.no.acl.found) decides only for a
//     resource no ACL applies to, whoever that ACL names.
package acl
