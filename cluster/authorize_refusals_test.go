package cluster_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every API refuses a principal without any ACL with Kafka's error, and
// serves the super user. Kafka: KafkaApis' authorize calls per API.
func TestACLRefusalsPerAPI(t *testing.T) {
	n := startACLNode(t, t.TempDir(), nil)
	if res, err := n.admin(t).CreateTopic(ctx(t), 1, 1, nil, "t"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	bob, admin := n.as(t, "bob"), n.as(t, "admin")
	tac, gac, cac := kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code
	xac := kerr.TransactionalIDAuthorizationFailed.Code
	for _, tc := range []struct {
		name string
		req  func() kmsg.Request
		code func(kmsg.Response) int16
		want int16
	}{
		{"OffsetForLeaderEpoch", func() kmsg.Request {
			r := kmsg.NewPtrOffsetForLeaderEpochRequest()
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic, rt.Partitions = "t", []kmsg.OffsetForLeaderEpochRequestTopicPartition{kmsg.NewOffsetForLeaderEpochRequestTopicPartition()}
			r.ReplicaID, r.Topics = -1, append(r.Topics, rt)
			return r
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
		}, tac},
		{"DeleteRecords", func() kmsg.Request {
			r := kmsg.NewPtrDeleteRecordsRequest()
			rt := kmsg.NewDeleteRecordsRequestTopic()
			rt.Topic, rt.Partitions = "t", []kmsg.DeleteRecordsRequestTopicPartition{kmsg.NewDeleteRecordsRequestTopicPartition()}
			r.Topics = append(r.Topics, rt)
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode }, tac},
		{"CreatePartitions", func() kmsg.Request {
			r := kmsg.NewPtrCreatePartitionsRequest()
			rt := kmsg.NewCreatePartitionsRequestTopic()
			rt.Topic, rt.Count = "t", 2
			r.Topics, r.ValidateOnly = append(r.Topics, rt), true
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode }, tac},
		{"IncrementalAlterConfigs", func() kmsg.Request {
			r := kmsg.NewPtrIncrementalAlterConfigsRequest()
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = "retention.ms", kmsg.StringPtr("1000")
			rr.Configs = append(rr.Configs, c)
			r.Resources = append(r.Resources, rr)
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode }, tac},
		{"DescribeConfigs broker", func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType = kmsg.ConfigResourceTypeBroker
			r.Resources = append(r.Resources, rr)
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode }, cac},
		{"DescribeUserScramCredentials", func() kmsg.Request {
			return kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		}, func(r kmsg.Response) int16 { return r.(*kmsg.DescribeUserSCRAMCredentialsResponse).ErrorCode }, cac},
		{"AlterUserScramCredentials", func() kmsg.Request {
			r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
			d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
			d.Name, d.Mechanism = "nobody", 1
			r.Deletions = append(r.Deletions, d)
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode }, cac},
		{"JoinGroup", func() kmsg.Request {
			r := kmsg.NewPtrJoinGroupRequest()
			r.Group, r.ProtocolType, r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = "g", "consumer", 10000, 10000
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name = "range"
			r.Protocols = append(r.Protocols, p)
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.JoinGroupResponse).ErrorCode }, gac},
		{"Heartbeat", func() kmsg.Request {
			r := kmsg.NewPtrHeartbeatRequest()
			r.Group, r.MemberID = "g", "m"
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.HeartbeatResponse).ErrorCode }, gac},
		{"DescribeGroups", func() kmsg.Request {
			r := kmsg.NewPtrDescribeGroupsRequest()
			r.Groups = []string{"g"}
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode }, gac},
		{"DeleteGroups", func() kmsg.Request {
			r := kmsg.NewPtrDeleteGroupsRequest()
			r.Groups = []string{"g"}
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode }, gac},
		{"FindCoordinator", func() kmsg.Request {
			r := kmsg.NewPtrFindCoordinatorRequest()
			r.CoordinatorKey, r.CoordinatorKeys = "g", []string{"g"}
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode }, gac},
		{"OffsetDelete", func() kmsg.Request {
			r := kmsg.NewPtrOffsetDeleteRequest()
			r.Group = "g"
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.OffsetDeleteResponse).ErrorCode }, gac},
		{"ElectLeaders", func() kmsg.Request { return kmsg.NewPtrElectLeadersRequest() },
			func(r kmsg.Response) int16 { return r.(*kmsg.ElectLeadersResponse).ErrorCode }, cac},
		{"DescribeLogDirs", func() kmsg.Request { return kmsg.NewPtrDescribeLogDirsRequest() },
			func(r kmsg.Response) int16 { return r.(*kmsg.DescribeLogDirsResponse).ErrorCode }, cac},
		{"AlterReplicaLogDirs", func() kmsg.Request {
			r := kmsg.NewPtrAlterReplicaLogDirsRequest()
			d := kmsg.NewAlterReplicaLogDirsRequestDir()
			d.Dir = "/nowhere"
			dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
			dt.Topic, dt.Partitions = "t", []int32{0}
			d.Topics = append(d.Topics, dt)
			r.Dirs = append(r.Dirs, d)
			return r
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.AlterReplicaLogDirsResponse).Topics[0].Partitions[0].ErrorCode
		}, cac},
		{"DescribeAcls", func() kmsg.Request {
			r := kmsg.NewPtrDescribeACLsRequest()
			r.ResourceType, r.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
			r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.DescribeACLsResponse).ErrorCode }, cac},
		// The transaction APIs. Kafka: KafkaApis' handlers of
		// AddPartitionsToTxn (v4, a broker's: ClusterAction), AddOffsetsToTxn,
		// EndTxn, TxnOffsetCommit, WriteTxnMarkers, DescribeTransactions and
		// DescribeProducers.
		{"AddPartitionsToTxn v4", func() kmsg.Request {
			r := kmsg.NewPtrAddPartitionsToTxnRequest()
			tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
			tx.TransactionalID, tx.ProducerID, tx.VerifyOnly = "tx", 1, true
			tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			tt.Topic, tt.Partitions = "t", []int32{0}
			tx.Topics = append(tx.Topics, tt)
			r.Transactions = append(r.Transactions, tx)
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.AddPartitionsToTxnResponse).ErrorCode }, cac},
		{"AddOffsetsToTxn", func() kmsg.Request {
			r := kmsg.NewPtrAddOffsetsToTxnRequest()
			r.TransactionalID, r.ProducerID, r.Group = "tx", 1, "g"
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.AddOffsetsToTxnResponse).ErrorCode }, xac},
		{"EndTxn", func() kmsg.Request {
			r := kmsg.NewPtrEndTxnRequest()
			r.TransactionalID, r.ProducerID, r.Commit = "tx", 1, true
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.EndTxnResponse).ErrorCode }, xac},
		{"TxnOffsetCommit", func() kmsg.Request {
			r := kmsg.NewPtrTxnOffsetCommitRequest()
			r.TransactionalID, r.Group, r.ProducerID, r.Generation = "tx", "g", 1, -1
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = "t"
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Offset = 1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		}, xac},
		{"WriteTxnMarkers", func() kmsg.Request {
			r := kmsg.NewPtrWriteTxnMarkersRequest()
			m := kmsg.NewWriteTxnMarkersRequestMarker()
			m.ProducerID, m.ProducerEpoch, m.Committed = 1, 0, false
			mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			mt.Topic, mt.Partitions = "t", []int32{0}
			m.Topics = append(m.Topics, mt)
			r.Markers = append(r.Markers, m)
			return r
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode
		}, cac},
		{"DescribeTransactions", func() kmsg.Request {
			r := kmsg.NewPtrDescribeTransactionsRequest()
			r.TransactionalIDs = []string{"tx"}
			return r
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.DescribeTransactionsResponse).TransactionStates[0].ErrorCode
		}, xac},
		{"DescribeProducers", func() kmsg.Request {
			r := kmsg.NewPtrDescribeProducersRequest()
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = "t", []int32{0}
			r.Topics = append(r.Topics, rt)
			return r
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode
		}, tac},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.code(request[kmsg.Response](t, bob, tc.req())); got != tc.want {
				t.Errorf("bob: %d, want %d", got, tc.want)
			}
			if got := tc.code(request[kmsg.Response](t, admin, tc.req())); got == tc.want {
				t.Errorf("admin, a super user, refused with %d", got)
			}
		})
	}
	// ListGroups: a principal without Describe on the cluster sees only
	// the groups it may describe.
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey, req.CoordinatorKeys = "g", []string{"g"}
	request[*kmsg.FindCoordinatorResponse](t, admin, req)
	if got := commitCode(t, admin, "g", "t"); got != 0 {
		t.Fatalf("admin commits for g: %d", got)
	}
	if groups := request[*kmsg.ListGroupsResponse](t, admin, kmsg.NewPtrListGroupsRequest()).Groups; len(groups) != 1 {
		t.Errorf("admin lists %d groups, want 1", len(groups))
	}
	if groups := request[*kmsg.ListGroupsResponse](t, bob, kmsg.NewPtrListGroupsRequest()).Groups; len(groups) != 0 {
		t.Errorf("bob lists %v", groups)
	}
}
