package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.cluster.TopicCreator;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.GroupConfig;
import io.tidelog.broker.config.TransactionConfig;
import io.tidelog.broker.group.GroupCoordinator;
import io.tidelog.broker.security.Authorization;
import io.tidelog.broker.txn.TransactionCoordinator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.InvalidGroupIdException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.FindCoordinatorResponseData.Coordinator;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest.CoordinatorType;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * FindCoordinator: the broker that coordinates a group (key type 0) or a transactional id (key type
 * 1), the leader of the key's partition of {@code __consumer_offsets} or {@code
 * __transaction_state}. The topic is created on first use, COORDINATOR_NOT_AVAILABLE meanwhile.
 * Authorized as in Kafka: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or on the
 * transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
 */
public final class FindCoordinatorHandler {
  private static final Logger LOG = LoggerFactory.getLogger(FindCoordinatorHandler.class);

  private final GroupConfig groups;
  private final TransactionConfig transactions;
  private final MetadataStore metadata;
  private final TopicCreator creator;
  private final Authorization authorization;

  public FindCoordinatorHandler(
      GroupConfig groups,
      TransactionConfig transactions,
      MetadataStore metadata,
      TopicCreator creator,
      Authorization authorization) {
    this.groups = groups;
    this.transactions = transactions;
    this.metadata = metadata;
    this.creator = creator;
    this.authorization = authorization;
  }

  CompletableFuture<FindCoordinatorResponse> handle(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    FindCoordinatorRequestData data = ((FindCoordinatorRequest) request).data();
    boolean batched = header.apiVersion() >= FindCoordinatorRequest.MIN_BATCHED_VERSION;
    List<String> keys = batched ? data.coordinatorKeys() : List.of(data.key());
    List<CompletableFuture<Coordinator>> found = new ArrayList<>();
    for (String key : keys) {
      found.add(
          find(context, data.keyType(), key)
              .exceptionally(
                  e ->
                      new Coordinator()
                          .setKey(key)
                          .setNodeId(-1)
                          .setHost("")
                          .setPort(-1)
                          .setErrorCode(ErrorMapping.errorOf(e, header).code())
                          .setErrorMessage(ErrorMapping.messageOf(e))));
    }
    return CompletableFuture.allOf(found.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              FindCoordinatorResponseData response = new FindCoordinatorResponseData();
              if (batched) {
                found.forEach(f -> response.coordinators().add(f.join()));
              } else {
                Coordinator c = found.get(0).join();
                response
                    .setErrorCode(c.errorCode())
                    .setErrorMessage(c.errorMessage())
                    .setNodeId(c.nodeId())
                    .setHost(c.host())
                    .setPort(c.port());
              }
              return new FindCoordinatorResponse(response);
            });
  }

  private CompletableFuture<Coordinator> find(RequestContext context, byte keyType, String key) {
    CoordinatorType type;
    try {
      type = CoordinatorType.forId(keyType);
    } catch (IllegalArgumentException e) {
      return CompletableFuture.failedFuture(new InvalidRequestException(e.getMessage()));
    }
    return switch (type) {
      case GROUP -> {
        if (!authorization.allowed(context, AclOperation.DESCRIBE, ResourceType.GROUP, key)) {
          yield CompletableFuture.failedFuture(new GroupAuthorizationException(key));
        }
        if (key == null || key.isEmpty()) {
          yield CompletableFuture.failedFuture(
              new InvalidGroupIdException("The group id is empty"));
        }
        yield locate(
            key,
            GroupCoordinator.OFFSETS_TOPIC,
            GroupCoordinator::partitionFor,
            context.listenerName(),
            this::createOffsetsTopic);
      }
      case TRANSACTION -> {
        if (!authorization.allowed(
            context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)) {
          yield CompletableFuture.failedFuture(new TransactionalIdAuthorizationException(key));
        }
        if (key == null || key.isEmpty()) {
          yield CompletableFuture.failedFuture(
              new InvalidRequestException("The transactional id is empty"));
        }
        yield locate(
            key,
            TransactionCoordinator.TRANSACTION_TOPIC,
            TransactionCoordinator::partitionFor,
            context.listenerName(),
            this::createTransactionTopic);
      }
      default ->
          CompletableFuture.failedFuture(
              new InvalidRequestException(
                  "Coordinators of key type " + keyType + " are not served"));
    };
  }

  /** How a coordinator's topic spreads its keys over its partitions. */
  private interface Placement {
    int partitionFor(String key, int partitionCount);
  }

  /** The leader of the key's partition of {@code topic}, creating the topic when it is missing. */
  private CompletableFuture<Coordinator> locate(
      String key,
      String topicName,
      Placement placement,
      String listener,
      java.util.function.Supplier<CompletableFuture<TopicMetadata>> create) {
    TopicMetadata topic = metadata.topic(topicName).orElse(null);
    if (topic == null) {
      return create
          .get()
          .thenApply(
              created -> {
                throw new CoordinatorNotAvailableException(topicName + " is being created");
              });
    }
    ClusterImage image = metadata.image();
    int partition = placement.partitionFor(key, topic.partitions());
    PartitionState state = image.partition(new TopicPartition(topicName, partition)).orElse(null);
    BrokerInfo leader = state == null ? null : image.brokers().get(state.leader());
    BrokerInfo.Endpoint endpoint = leader == null ? null : leader.endpoint(listener).orElse(null);
    if (endpoint == null) {
      return CompletableFuture.failedFuture(
          new CoordinatorNotAvailableException(
              topicName
                  + "-"
                  + partition
                  + (leader == null ? " has no leader" : "'s leader has no listener " + listener)));
    }
    return CompletableFuture.completedFuture(
        new Coordinator()
            .setKey(key)
            .setNodeId(leader.id())
            .setHost(endpoint.host())
            .setPort(endpoint.port())
            .setErrorCode(Errors.NONE.code()));
  }

  /**
   * Creates {@code __consumer_offsets}: compacted, {@code offsets.topic.num.partitions} partitions,
   * replicated on as many brokers as {@code offsets.topic.replication.factor} asks and are live.
   */
  private CompletableFuture<TopicMetadata> createOffsetsTopic() {
    return createInternalTopic(
        GroupCoordinator.OFFSETS_TOPIC,
        groups.offsetsTopicPartitions(),
        groups.offsetsTopicReplicationFactor(),
        Map.of(
            TopicConfig.CLEANUP_POLICY_CONFIG,
            TopicConfig.CLEANUP_POLICY_COMPACT,
            TopicConfig.SEGMENT_BYTES_CONFIG,
            String.valueOf(groups.offsetsTopicSegmentBytes())));
  }

  /**
   * Creates {@code __transaction_state} as Kafka does: compacted, uncompressed, no unclean leader
   * election, {@code transaction.state.log.*} partitions, replication factor (capped at the live
   * brokers), segment size and minimum ISR (capped at the replication factor).
   */
  private CompletableFuture<TopicMetadata> createTransactionTopic() {
    short replication = replication(transactions.topicReplicationFactor());
    return createInternalTopic(
        TransactionCoordinator.TRANSACTION_TOPIC,
        transactions.topicPartitions(),
        replication,
        Map.of(
            TopicConfig.CLEANUP_POLICY_CONFIG,
            TopicConfig.CLEANUP_POLICY_COMPACT,
            TopicConfig.COMPRESSION_TYPE_CONFIG,
            "uncompressed",
            TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG,
            "false",
            TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG,
            String.valueOf(Math.min(transactions.topicMinIsr(), replication)),
            TopicConfig.SEGMENT_BYTES_CONFIG,
            String.valueOf(transactions.topicSegmentBytes())));
  }

  private short replication(int wanted) {
    int live = metadata.image().activeBrokers().size();
    return (short) Math.max(1, Math.min(wanted, live));
  }

  private CompletableFuture<TopicMetadata> createInternalTopic(
      String name, int partitions, int replicationFactor, Map<String, String> configs) {
    return creator
        .createInternalTopic(name, partitions, replication(replicationFactor), configs)
        .exceptionally(
            e -> {
              // Another broker may have created it first; anything else is worth a line, and the
              // client retries after COORDINATOR_NOT_AVAILABLE either way
              if (!(Errors.maybeUnwrapException(e) instanceof TopicExistsException)) {
                LOG.warn("Creating {} failed: {}", name, Errors.maybeUnwrapException(e).toString());
              }
              return null;
            });
  }
}
