package io.tidelog.broker;

import java.util.List;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocol;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocolCollection;
import org.apache.kafka.common.message.LeaveGroupRequestData.MemberIdentity;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestPartition;
import org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestTopic;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData.OffsetDeleteRequestPartition;
import org.apache.kafka.common.message.OffsetDeleteRequestData.OffsetDeleteRequestTopic;
import org.apache.kafka.common.message.OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;

/**
 * A valid request of every group API at any version, built by kafka-clients, for {@link
 * SampleRequests}: a first JoinGroup of a group of its own per version, and the other requests
 * about group {@code <topic>-group}, which commits offset 1 of partition 0 of {@code topic}.
 */
final class SampleGroupRequests {
  private SampleGroupRequests() {}

  static AbstractRequest of(ApiKeys api, short v, String topic) {
    String group = topic + "-group";
    return switch (api) {
      case FIND_COORDINATOR ->
          new FindCoordinatorRequest.Builder(
                  v >= FindCoordinatorRequest.MIN_BATCHED_VERSION
                      ? new FindCoordinatorRequestData().setCoordinatorKeys(List.of(group))
                      : new FindCoordinatorRequestData().setKey(group))
              .build(v);
      case JOIN_GROUP -> {
        JoinGroupRequestProtocolCollection protocols = new JoinGroupRequestProtocolCollection();
        protocols.add(new JoinGroupRequestProtocol().setName("range").setMetadata(new byte[0]));
        yield new JoinGroupRequest.Builder(
                new JoinGroupRequestData()
                    .setGroupId(topic + "-join-" + v)
                    .setMemberId("")
                    .setProtocolType("consumer")
                    .setProtocols(protocols)
                    .setSessionTimeoutMs(10_000)
                    .setRebalanceTimeoutMs(10_000))
            .build(v);
      }
      case SYNC_GROUP ->
          new SyncGroupRequest.Builder(
                  new SyncGroupRequestData()
                      .setGroupId(group)
                      .setGenerationId(1)
                      .setMemberId("m")
                      .setProtocolType("consumer")
                      .setProtocolName("range"))
              .build(v);
      case HEARTBEAT ->
          new HeartbeatRequest.Builder(
                  new HeartbeatRequestData().setGroupId(group).setGenerationId(1).setMemberId("m"))
              .build(v);
      case LEAVE_GROUP ->
          new LeaveGroupRequest.Builder(group, List.of(new MemberIdentity().setMemberId("m")))
              .build(v);
      case OFFSET_COMMIT ->
          OffsetCommitRequest.Builder.forTopicNames(
                  new OffsetCommitRequestData()
                      .setGroupId(group)
                      .setGenerationIdOrMemberEpoch(-1)
                      .setMemberId("")
                      .setTopics(
                          List.of(
                              new OffsetCommitRequestTopic()
                                  .setName(topic)
                                  .setPartitions(
                                      List.of(
                                          new OffsetCommitRequestPartition()
                                              .setPartitionIndex(0)
                                              .setCommittedOffset(1))))))
              .build(v);
      case OFFSET_FETCH ->
          OffsetFetchRequest.Builder.forTopicNames(
                  new OffsetFetchRequestData()
                      .setGroups(
                          List.of(
                              new OffsetFetchRequestGroup()
                                  .setGroupId(group)
                                  .setTopics(
                                      List.of(
                                          new OffsetFetchRequestTopics()
                                              .setName(topic)
                                              .setPartitionIndexes(List.of(0)))))),
                  false)
              .build(v);
      case LIST_GROUPS -> new ListGroupsRequest.Builder(new ListGroupsRequestData()).build(v);
      case DESCRIBE_GROUPS ->
          new DescribeGroupsRequest.Builder(
                  new DescribeGroupsRequestData().setGroups(List.of(group)))
              .build(v);
      case DELETE_GROUPS ->
          new DeleteGroupsRequest.Builder(
                  new DeleteGroupsRequestData().setGroupsNames(List.of(topic + "-no-such-group")))
              .build(v);
      case OFFSET_DELETE -> {
        OffsetDeleteRequestTopicCollection topics = new OffsetDeleteRequestTopicCollection();
        topics.add(
            new OffsetDeleteRequestTopic()
                .setName(topic)
                .setPartitions(List.of(new OffsetDeleteRequestPartition().setPartitionIndex(1))));
        yield new OffsetDeleteRequest.Builder(
                new OffsetDeleteRequestData().setGroupId(group).setTopics(topics))
            .build(v);
      }
      default -> throw new AssertionError("advertised but not covered by this test: " + api);
    };
  }

  /**
   * The errors a group API answers these samples with: the requests about a member that never
   * joined are answered UNKNOWN_MEMBER_ID, a first JoinGroup from v4 MEMBER_ID_REQUIRED (KIP-394),
   * and DeleteGroups of an unknown group GROUP_ID_NOT_FOUND.
   */
  static List<Errors> expectedErrors(ApiKeys api) {
    return switch (api) {
      case JOIN_GROUP -> List.of(Errors.NONE, Errors.MEMBER_ID_REQUIRED);
      case SYNC_GROUP, HEARTBEAT -> List.of(Errors.UNKNOWN_MEMBER_ID);
      case LEAVE_GROUP -> List.of(Errors.NONE, Errors.UNKNOWN_MEMBER_ID); // v3+: NONE, per member
      case DELETE_GROUPS -> List.of(Errors.GROUP_ID_NOT_FOUND);
      default -> List.of(Errors.NONE);
    };
  }
}
