package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.group.ClassicGroup;
import io.tidelog.broker.group.ClassicGroup.JoinRequest;
import io.tidelog.broker.group.ClassicGroup.Protocol;
import io.tidelog.broker.group.ClassicGroup.Snapshot;
import io.tidelog.broker.group.CommittedOffset;
import io.tidelog.broker.group.GroupCoordinator;
import io.tidelog.broker.group.GroupCoordinator.FetchedOffsets;
import io.tidelog.broker.group.GroupCoordinator.Leaving;
import io.tidelog.broker.security.Authorization;
import io.tidelog.broker.txn.TransactionVerifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResult;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroup;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroupMember;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData.JoinGroupResponseMember;
import org.apache.kafka.common.message.LeaveGroupResponseData.MemberResponse;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetCommitResponseData.OffsetCommitResponsePartition;
import org.apache.kafka.common.message.OffsetCommitResponseData.OffsetCommitResponseTopic;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetDeleteResponseData.OffsetDeleteResponsePartition;
import org.apache.kafka.common.message.OffsetDeleteResponseData.OffsetDeleteResponseTopic;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponsePartitions;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseTopics;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetDeleteResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
 * OffsetFetch, ListGroups, DescribeGroups, DeleteGroups and OffsetDelete, served by the {@link
 * GroupCoordinator}. Runs on event loops; the coordinator answers with futures.
 *
 * <p>Authorized as in Kafka: DescribeGroups needs DESCRIBE on the group; joining, syncing,
 * heartbeats, leaving and committing READ; DeleteGroups and OffsetDelete DELETE
 * (GROUP_AUTHORIZATION_FAILED otherwise). Committing and deleting offsets also need READ on each
 * topic, fetching them DESCRIBE (TOPIC_AUTHORIZATION_FAILED, or for a fetch of all offsets, leaving
 * the topic out). ListGroups lists every group to a client with DESCRIBE on the cluster, and the
 * groups it may DESCRIBE to others.
 */
public final class GroupHandler {

  private final MetadataStore metadata;
  private final GroupCoordinator coordinator;
  private final TransactionVerifier verifier;
  private final Authorization authorization;

  public GroupHandler(
      MetadataStore metadata,
      GroupCoordinator coordinator,
      TransactionVerifier verifier,
      Authorization authorization) {
    this.authorization = authorization;
    this.metadata = metadata;
    this.coordinator = coordinator;
    this.verifier = verifier;
  }

  CompletableFuture<JoinGroupResponse> joinGroup(RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    String clientHost = context.clientAddress().getHostAddress();
    JoinGroupRequestData data = ((JoinGroupRequest) request).data();
    short version = header.apiVersion();
    if (!readable(context, data.groupId())) {
      return CompletableFuture.completedFuture(
          joinError(Errors.GROUP_AUTHORIZATION_FAILED, data.memberId(), version));
    }
    if (data.groupId().isEmpty()) {
      return CompletableFuture.completedFuture(
          joinError(Errors.INVALID_GROUP_ID, data.memberId(), version));
    }
    List<Protocol> protocols = new ArrayList<>();
    data.protocols().forEach(p -> protocols.add(new Protocol(p.name(), p.metadata())));
    JoinRequest join =
        new JoinRequest(
            data.memberId(),
            data.groupInstanceId(),
            header.clientId(),
            "/" + clientHost,
            data.protocolType(),
            protocols,
            data.sessionTimeoutMs(),
            version == 0 ? data.sessionTimeoutMs() : data.rebalanceTimeoutMs(),
            version >= 4);
    return coordinator
        .join(data.groupId(), join)
        .thenApply(
            r -> {
              JoinGroupResponseData response =
                  new JoinGroupResponseData()
                      .setErrorCode(r.error().code())
                      .setGenerationId(r.generation())
                      .setProtocolType(r.protocolType())
                      .setProtocolName(
                          r.protocolName() == null && version < 7 ? "" : r.protocolName())
                      .setLeader(r.leaderId())
                      .setMemberId(r.memberId());
              r.members()
                  .forEach(
                      m ->
                          response
                              .members()
                              .add(
                                  new JoinGroupResponseMember()
                                      .setMemberId(m.memberId())
                                      .setGroupInstanceId(m.groupInstanceId())
                                      .setMetadata(m.metadata())));
              return new JoinGroupResponse(response, version);
            });
  }

  private boolean readable(RequestContext context, String groupId) {
    return authorization.allowed(context, AclOperation.READ, ResourceType.GROUP, groupId);
  }

  private static JoinGroupResponse joinError(Errors error, String memberId, short version) {
    return new JoinGroupResponse(
        new JoinGroupResponseData()
            .setErrorCode(error.code())
            .setGenerationId(-1)
            .setProtocolName(version < 7 ? "" : null)
            .setMemberId(memberId),
        version);
  }

  CompletableFuture<SyncGroupResponse> syncGroup(RequestContext context, AbstractRequest request) {
    SyncGroupRequestData data = ((SyncGroupRequest) request).data();
    if (!readable(context, data.groupId())) {
      return CompletableFuture.completedFuture(
          new SyncGroupResponse(
              new SyncGroupResponseData()
                  .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())
                  .setAssignment(new byte[0])));
    }
    Map<String, byte[]> assignments = new HashMap<>();
    data.assignments().forEach(a -> assignments.put(a.memberId(), a.assignment()));
    return coordinator
        .sync(
            data.groupId(),
            data.memberId(),
            data.groupInstanceId(),
            data.generationId(),
            data.protocolType(),
            data.protocolName(),
            assignments)
        .thenApply(
            r ->
                new SyncGroupResponse(
                    new SyncGroupResponseData()
                        .setErrorCode(r.error().code())
                        .setProtocolType(r.protocolType())
                        .setProtocolName(r.protocolName())
                        .setAssignment(r.assignment())));
  }

  CompletableFuture<HeartbeatResponse> heartbeat(RequestContext context, AbstractRequest request) {
    var data = ((HeartbeatRequest) request).data();
    if (!readable(context, data.groupId())) {
      return CompletableFuture.completedFuture(
          new HeartbeatResponse(
              new HeartbeatResponseData().setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
    }
    return coordinator
        .heartbeat(data.groupId(), data.memberId(), data.groupInstanceId(), data.generationId())
        .thenApply(
            error -> new HeartbeatResponse(new HeartbeatResponseData().setErrorCode(error.code())));
  }

  CompletableFuture<LeaveGroupResponse> leaveGroup(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    LeaveGroupRequest leave = (LeaveGroupRequest) request;
    if (!readable(context, leave.data().groupId())) {
      return CompletableFuture.completedFuture(
          new LeaveGroupResponse(
              List.of(), Errors.GROUP_AUTHORIZATION_FAILED, 0, header.apiVersion()));
    }
    List<Leaving> leaving =
        leave.members().stream().map(m -> new Leaving(m.memberId(), m.groupInstanceId())).toList();
    return coordinator
        .leave(leave.data().groupId(), leaving)
        .thenApply(
            errors -> {
              List<MemberResponse> members = new ArrayList<>();
              for (int i = 0; i < leaving.size(); i++) {
                members.add(
                    new MemberResponse()
                        .setMemberId(leaving.get(i).memberId())
                        .setGroupInstanceId(leaving.get(i).groupInstanceId())
                        .setErrorCode(errors.get(i).code()));
              }
              return new LeaveGroupResponse(members, Errors.NONE, 0, header.apiVersion());
            });
  }

  CompletableFuture<OffsetCommitResponse> offsetCommit(
      RequestContext context, AbstractRequest request) {
    OffsetCommitRequestData data = ((OffsetCommitRequest) request).data();
    ClusterImage image = metadata.image();
    Map<TopicPartition, CommittedOffset> offsets = new LinkedHashMap<>();
    Map<TopicPartition, Errors> unknown = new LinkedHashMap<>();
    boolean groupReadable = readable(context, data.groupId());
    Predicate<String> topicReadable =
        authorization.on(context, AclOperation.READ, ResourceType.TOPIC);
    for (var topic : data.topics()) {
      TopicMetadata known = image.topics().get(topic.name());
      for (var p : topic.partitions()) {
        TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
        if (!groupReadable) {
          unknown.put(tp, Errors.GROUP_AUTHORIZATION_FAILED);
        } else if (!topicReadable.test(topic.name())) {
          unknown.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
        } else if (known == null
            || p.partitionIndex() < 0
            || p.partitionIndex() >= known.partitions()) {
          unknown.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
        } else {
          offsets.put(
              tp,
              new CommittedOffset(
                  p.committedOffset(), p.committedLeaderEpoch(), p.committedMetadata(), -1));
        }
      }
    }
    CompletableFuture<Map<TopicPartition, Errors>> committed =
        offsets.isEmpty()
            ? CompletableFuture.completedFuture(Map.of())
            : coordinator.commitOffsets(
                data.groupId(),
                data.memberId(),
                data.groupInstanceId(),
                data.generationIdOrMemberEpoch(),
                offsets);
    return committed.thenApply(
        results -> {
          Map<TopicPartition, Errors> all = new LinkedHashMap<>(unknown);
          all.putAll(results);
          return new OffsetCommitResponse(commitResponse(data, all));
        });
  }

  /**
   * TxnOffsetCommit, a transactional producer's commit of a group's offsets (Kafka Streams' and
   * {@code sendOffsetsToTransaction}'s): WRITE on the transactional id
   * (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and READ on the group (GROUP_AUTHORIZATION_FAILED) for
   * all partitions, READ on each topic, as in Kafka; versions before 3 get INVALID_PRODUCER_EPOCH
   * where later ones get PRODUCER_FENCED.
   */
  CompletableFuture<TxnOffsetCommitResponse> txnOffsetCommit(
      RequestContext context, AbstractRequest request) {
    TxnOffsetCommitRequestData data = ((TxnOffsetCommitRequest) request).data();
    Errors refusedAll =
        !authorization.allowed(
                context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, data.transactionalId())
            ? Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            : !readable(context, data.groupId()) ? Errors.GROUP_AUTHORIZATION_FAILED : null;
    ClusterImage image = metadata.image();
    Predicate<String> topicReadable =
        authorization.on(context, AclOperation.READ, ResourceType.TOPIC);
    Map<TopicPartition, CommittedOffset> offsets = new LinkedHashMap<>();
    Map<TopicPartition, Errors> refused = new LinkedHashMap<>();
    for (var topic : data.topics()) {
      TopicMetadata known = image.topics().get(topic.name());
      for (var p : topic.partitions()) {
        TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
        if (refusedAll != null) {
          refused.put(tp, refusedAll);
        } else if (!topicReadable.test(topic.name())) {
          refused.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
        } else if (known == null
            || p.partitionIndex() < 0
            || p.partitionIndex() >= known.partitions()) {
          refused.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
        } else {
          offsets.put(
              tp,
              new CommittedOffset(
                  p.committedOffset(), p.committedLeaderEpoch(), p.committedMetadata(), -1));
        }
      }
    }
    short version = context.header.apiVersion();
    CompletableFuture<Map<TopicPartition, Errors>> committed =
        offsets.isEmpty()
            ? CompletableFuture.completedFuture(Map.of())
            : verifyOffsetsPartition(data, TransactionOperation.forTxnOffsetCommit(version))
                .thenCompose(
                    error -> {
                      if (error != Errors.NONE) {
                        Map<TopicPartition, Errors> failed = new LinkedHashMap<>();
                        offsets.keySet().forEach(tp -> failed.put(tp, error));
                        return CompletableFuture.completedFuture(failed);
                      }
                      return coordinator.commitTransactionalOffsets(
                          data.groupId(),
                          data.producerId(),
                          data.producerEpoch(),
                          data.memberId(),
                          data.groupInstanceId(),
                          data.generationId(),
                          offsets);
                    })
                .exceptionally(
                    e -> {
                      Errors error = ErrorMapping.errorOf(e, context.header);
                      Map<TopicPartition, Errors> failed = new LinkedHashMap<>();
                      offsets.keySet().forEach(tp -> failed.put(tp, error));
                      return failed;
                    });
    return committed.thenApply(
        results -> {
          Map<TopicPartition, Errors> all = new LinkedHashMap<>(refused);
          results.forEach((tp, error) -> all.put(tp, ErrorMapping.fencedAs(error, version, 3)));
          return new TxnOffsetCommitResponse(0, all);
        });
  }

  /**
   * KIP-890's check that the transaction has the group's partition of {@code __consumer_offsets}
   * (AddOffsetsToTxn added it), or from v5 (transaction protocol 2, which sends no AddOffsetsToTxn)
   * its add, as Kafka's group coordinator makes it before it writes; a failure is answered as the
   * coordinator answers a failed write.
   */
  private CompletableFuture<Errors> verifyOffsetsPartition(
      TxnOffsetCommitRequestData data, TransactionOperation operation) {
    TopicMetadata offsetsTopic = metadata.topic(GroupCoordinator.OFFSETS_TOPIC).orElse(null);
    if (offsetsTopic == null) {
      return CompletableFuture.completedFuture(Errors.NONE); // the coordinator: NOT_COORDINATOR
    }
    TopicPartition tp =
        new TopicPartition(
            GroupCoordinator.OFFSETS_TOPIC,
            GroupCoordinator.partitionFor(data.groupId(), offsetsTopic.partitions()));
    return verifier
        .addOrVerify(
            data.transactionalId(),
            data.producerId(),
            data.producerEpoch(),
            Set.of(tp),
            operation.adds())
        .thenApply(
            errors -> {
              Errors error = errors.getOrDefault(tp, Errors.UNKNOWN_SERVER_ERROR);
              if (error == Errors.NONE) {
                return Errors.NONE;
              }
              Errors mapped = Errors.forException(ErrorMapping.unverified(error, operation));
              return mapped == Errors.NOT_ENOUGH_REPLICAS
                  ? Errors.COORDINATOR_NOT_AVAILABLE
                  : mapped;
            });
  }

  private static OffsetCommitResponseData commitResponse(
      OffsetCommitRequestData request, Map<TopicPartition, Errors> errors) {
    OffsetCommitResponseData response = new OffsetCommitResponseData();
    for (var topic : request.topics()) {
      OffsetCommitResponseTopic t = new OffsetCommitResponseTopic().setName(topic.name());
      for (var p : topic.partitions()) {
        Errors error = errors.get(new TopicPartition(topic.name(), p.partitionIndex()));
        t.partitions()
            .add(
                new OffsetCommitResponsePartition()
                    .setPartitionIndex(p.partitionIndex())
                    .setErrorCode(error.code()));
      }
      response.topics().add(t);
    }
    return response;
  }

  CompletableFuture<OffsetFetchResponse> offsetFetch(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    OffsetFetchRequest fetch = (OffsetFetchRequest) request;
    Predicate<String> topicDescribable =
        authorization.on(context, AclOperation.DESCRIBE, ResourceType.TOPIC);
    List<CompletableFuture<OffsetFetchResponseGroup>> groups = new ArrayList<>();
    for (OffsetFetchRequestGroup group : fetch.groups()) {
      if (!authorization.allowed(
          context, AclOperation.DESCRIBE, ResourceType.GROUP, group.groupId())) {
        groups.add(
            CompletableFuture.completedFuture(
                new OffsetFetchResponseGroup()
                    .setGroupId(group.groupId())
                    .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
        continue;
      }
      List<TopicPartition> partitions = null;
      List<TopicPartition> refused = new ArrayList<>();
      if (group.topics() != null) {
        partitions = new ArrayList<>();
        for (var topic : group.topics()) {
          for (int p : topic.partitionIndexes()) {
            TopicPartition tp = new TopicPartition(topic.name(), p);
            (topicDescribable.test(topic.name()) ? partitions : refused).add(tp);
          }
        }
      }
      CompletableFuture<FetchedOffsets> fetched =
          partitions != null && partitions.isEmpty()
              ? CompletableFuture.completedFuture(new FetchedOffsets(Map.of(), Set.of()))
              : coordinator.fetchOffsets(group.groupId(), partitions);
      groups.add(
          fetched.handle(
              (offsets, e) -> {
                if (e != null) {
                  return new OffsetFetchResponseGroup()
                      .setGroupId(group.groupId())
                      .setErrorCode(ErrorMapping.errorOf(e, header).code());
                }
                Map<TopicPartition, CommittedOffset> shown = new LinkedHashMap<>();
                offsets
                    .offsets()
                    .forEach(
                        (tp, offset) -> {
                          if (topicDescribable.test(tp.topic())) { // a fetch of all omits them
                            shown.put(tp, offset);
                          }
                        });
                Set<TopicPartition> unstable =
                    fetch.requireStable() ? offsets.unstable() : Set.of();
                OffsetFetchResponseGroup answer = fetchResponse(group.groupId(), shown, unstable);
                refused.forEach(tp -> refusedPartition(answer, tp));
                return answer;
              }));
    }
    return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new))
        .thenApply(
            v ->
                new OffsetFetchResponse.Builder(
                        groups.stream().map(CompletableFuture::join).toList())
                    .build(header.apiVersion()));
  }

  /**
   * The group's answer; a partition of {@code unstable} (an open transaction committed its offset,
   * and the client asked for stable offsets) is UNSTABLE_OFFSET_COMMIT without an offset, as in
   * Kafka.
   */
  private static OffsetFetchResponseGroup fetchResponse(
      String groupId, Map<TopicPartition, CommittedOffset> offsets, Set<TopicPartition> unstable) {
    Map<String, OffsetFetchResponseTopics> topics = new LinkedHashMap<>();
    offsets.forEach(
        (tp, committed) -> {
          boolean stable = !unstable.contains(tp);
          CommittedOffset offset = stable ? committed : null;
          topics
              .computeIfAbsent(tp.topic(), n -> new OffsetFetchResponseTopics().setName(n))
              .partitions()
              .add(
                  new OffsetFetchResponsePartitions()
                      .setPartitionIndex(tp.partition())
                      .setCommittedOffset(offset == null ? -1 : offset.offset())
                      .setCommittedLeaderEpoch(
                          offset == null
                              ? RecordBatch.NO_PARTITION_LEADER_EPOCH
                              : offset.leaderEpoch())
                      .setMetadata(offset == null ? "" : offset.metadata())
                      .setErrorCode(
                          stable ? Errors.NONE.code() : Errors.UNSTABLE_OFFSET_COMMIT.code()));
        });
    return new OffsetFetchResponseGroup()
        .setGroupId(groupId)
        .setTopics(new ArrayList<>(topics.values()))
        .setErrorCode(Errors.NONE.code());
  }

  private static void refusedPartition(OffsetFetchResponseGroup group, TopicPartition tp) {
    OffsetFetchResponseTopics topic =
        group.topics().stream().filter(t -> t.name().equals(tp.topic())).findFirst().orElse(null);
    if (topic == null) {
      topic = new OffsetFetchResponseTopics().setName(tp.topic());
      group.topics().add(topic);
    }
    topic
        .partitions()
        .add(
            new OffsetFetchResponsePartitions()
                .setPartitionIndex(tp.partition())
                .setCommittedOffset(-1)
                .setCommittedLeaderEpoch(RecordBatch.NO_PARTITION_LEADER_EPOCH)
                .setMetadata("")
                .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
  }

  CompletableFuture<ListGroupsResponse> listGroups(
      RequestContext context, AbstractRequest request) {
    ListGroupsRequestData data = ((ListGroupsRequest) request).data();
    boolean all = authorization.allowedOnCluster(context, AclOperation.DESCRIBE);
    Predicate<String> describable =
        authorization.on(context, AclOperation.DESCRIBE, ResourceType.GROUP);
    // Clients send "Classic", "Stable"...; Kafka matches both filters without regard to case
    Set<String> states = lowerCase(data.statesFilter());
    Set<String> types = lowerCase(data.typesFilter());
    return coordinator
        .listGroups()
        .thenApply(
            listed -> {
              ListGroupsResponseData response =
                  new ListGroupsResponseData().setErrorCode(Errors.NONE.code());
              for (var g : listed) {
                String state = stateName(g.state());
                String type = "classic";
                if ((all || describable.test(g.groupId()))
                    && (states.isEmpty() || states.contains(state.toLowerCase(Locale.ROOT)))
                    && (types.isEmpty() || types.contains(type))) {
                  response
                      .groups()
                      .add(
                          new ListedGroup()
                              .setGroupId(g.groupId())
                              .setProtocolType(g.protocolType() == null ? "" : g.protocolType())
                              .setGroupState(state)
                              .setGroupType(type));
                }
              }
              return new ListGroupsResponse(response);
            });
  }

  private static Set<String> lowerCase(List<String> names) {
    return names.stream().map(n -> n.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
  }

  CompletableFuture<DescribeGroupsResponse> describeGroups(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    DescribeGroupsRequestData data = ((DescribeGroupsRequest) request).data();
    List<CompletableFuture<DescribedGroup>> described = new ArrayList<>();
    for (String groupId : data.groups()) {
      if (!authorization.allowed(context, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) {
        described.add(
            CompletableFuture.completedFuture(
                new DescribedGroup()
                    .setGroupId(groupId)
                    .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
        continue;
      }
      described.add(
          coordinator
              .describe(groupId)
              .handle(
                  (snapshot, e) -> {
                    DescribedGroup group =
                        e != null
                            ? new DescribedGroup()
                                .setGroupId(groupId)
                                .setErrorCode(ErrorMapping.errorOf(e, header).code())
                            : describedGroup(groupId, snapshot);
                    if (data.includeAuthorizedOperations()) {
                      group.setAuthorizedOperations(
                          authorization.authorizedOperations(context, ResourceType.GROUP, groupId));
                    }
                    return group;
                  }));
    }
    return CompletableFuture.allOf(described.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              DescribeGroupsResponseData response = new DescribeGroupsResponseData();
              described.forEach(d -> response.groups().add(d.join()));
              return new DescribeGroupsResponse(response);
            });
  }

  private static DescribedGroup describedGroup(String groupId, Snapshot group) {
    DescribedGroup described =
        new DescribedGroup().setGroupId(groupId).setErrorCode(Errors.NONE.code());
    if (group == null) {
      return described.setGroupState("Dead").setProtocolType("").setProtocolData("");
    }
    described
        .setGroupState(stateName(group.state()))
        .setProtocolType(group.protocolType() == null ? "" : group.protocolType())
        .setProtocolData(group.protocolName() == null ? "" : group.protocolName());
    boolean stable = group.state() == ClassicGroup.State.STABLE;
    group
        .members()
        .forEach(
            m ->
                described
                    .members()
                    .add(
                        new DescribedGroupMember()
                            .setMemberId(m.memberId())
                            .setGroupInstanceId(m.groupInstanceId())
                            .setClientId(m.clientId())
                            .setClientHost(m.clientHost())
                            .setMemberMetadata(stable ? m.metadata() : new byte[0])
                            .setMemberAssignment(stable ? m.assignment() : new byte[0])));
    return described;
  }

  /** Kafka's names of the classic group states. */
  private static String stateName(ClassicGroup.State state) {
    return switch (state) {
      case EMPTY -> "Empty";
      case PREPARING_REBALANCE -> "PreparingRebalance";
      case COMPLETING_REBALANCE -> "CompletingRebalance";
      case STABLE -> "Stable";
    };
  }

  CompletableFuture<DeleteGroupsResponse> deleteGroups(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    List<String> names = ((DeleteGroupsRequest) request).data().groupsNames();
    List<CompletableFuture<DeletableGroupResult>> results = new ArrayList<>();
    for (String groupId : names) {
      if (!authorization.allowed(context, AclOperation.DELETE, ResourceType.GROUP, groupId)) {
        results.add(
            CompletableFuture.completedFuture(
                new DeletableGroupResult()
                    .setGroupId(groupId)
                    .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
        continue;
      }
      results.add(
          coordinator
              .deleteGroup(groupId)
              .handle(
                  (error, e) ->
                      new DeletableGroupResult()
                          .setGroupId(groupId)
                          .setErrorCode(
                              (e != null ? ErrorMapping.errorOf(e, header) : error).code())));
    }
    return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              DeleteGroupsResponseData response = new DeleteGroupsResponseData();
              results.forEach(r -> response.results().add(r.join()));
              return new DeleteGroupsResponse(response);
            });
  }

  CompletableFuture<OffsetDeleteResponse> offsetDelete(
      RequestContext context, AbstractRequest request) {
    OffsetDeleteRequestData data = ((OffsetDeleteRequest) request).data();
    if (!authorization.allowed(context, AclOperation.DELETE, ResourceType.GROUP, data.groupId())) {
      return CompletableFuture.completedFuture(
          new OffsetDeleteResponse(
              new OffsetDeleteResponseData()
                  .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
    }
    Predicate<String> topicReadable =
        authorization.on(context, AclOperation.READ, ResourceType.TOPIC);
    List<TopicPartition> partitions = new ArrayList<>();
    Map<TopicPartition, Errors> refused = new LinkedHashMap<>();
    data.topics()
        .forEach(
            t ->
                t.partitions()
                    .forEach(
                        p -> {
                          TopicPartition tp = new TopicPartition(t.name(), p.partitionIndex());
                          if (topicReadable.test(t.name())) {
                            partitions.add(tp);
                          } else {
                            refused.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
                          }
                        }));
    return coordinator
        .deleteOffsets(data.groupId(), partitions)
        .thenApply(
            deleted -> {
              Map<TopicPartition, Errors> results = new LinkedHashMap<>(refused);
              results.putAll(deleted);
              OffsetDeleteResponseData response =
                  new OffsetDeleteResponseData().setErrorCode(Errors.NONE.code());
              results.forEach(
                  (tp, error) -> {
                    OffsetDeleteResponseTopic topic = response.topics().find(tp.topic());
                    if (topic == null) {
                      topic = new OffsetDeleteResponseTopic().setName(tp.topic());
                      response.topics().add(topic);
                    }
                    topic
                        .partitions()
                        .add(
                            new OffsetDeleteResponsePartition()
                                .setPartitionIndex(tp.partition())
                                .setErrorCode(error.code()));
                  });
              return new OffsetDeleteResponse(response);
            });
  }
}
