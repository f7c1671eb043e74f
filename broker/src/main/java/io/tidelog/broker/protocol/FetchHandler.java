package io.tidelog.broker.protocol;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tidelog.broker.quota.ClientQuotaManager;
import io.tidelog.broker.replica.FetchParams;
import io.tidelog.broker.replica.FetchedPartition;
import io.tidelog.broker.replica.PartitionFetch;
import io.tidelog.broker.replica.PartitionRead;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchRequestData.FetchPartition;
import org.apache.kafka.common.message.FetchRequestData.FetchTopic;
import org.apache.kafka.common.message.FetchRequestData.ForgottenTopic;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.storage.internals.log.AbortedTxn;

/**
 * Fetch: decodes the request, makes one call to {@link ReplicaManager#fetch} (which reads, and
 * long-polls in its purgatory), and encodes the answer. A full fetch reads and answers every
 * partition it names once (a partition named twice counts once, its last entry), and gets an
 * incremental fetch session (KIP-227, {@link FetchSessionCache}) unless it asks for none; an
 * incremental fetch reads its session's partitions and is answered only those with something new.
 * Every answer stays within the smaller of the request's {@code max.bytes} and the broker's {@code
 * fetch.max.bytes}. Records go out as file regions.
 *
 * <p>As in Kafka, a follower's fetch (replica id 0 or more) needs CLUSTER_ACTION on the cluster and
 * a consumer's READ on each topic; a partition the client may not read is answered
 * TOPIC_AUTHORIZATION_FAILED and not read.
 */
public final class FetchHandler {
  private final ReplicaManager replicas;
  private final TopicMetrics metrics;
  private final int fetchMaxBytes;
  private final Authorization authorization;
  private final ClientQuotaManager quota;
  private final FetchSessionCache sessions;

  /**
   * @param fetchMaxBytes the broker's {@code fetch.max.bytes}: no response carries more record
   *     bytes than this (but a first batch that is larger), whatever the request asks
   * @param sessionSlots {@code max.incremental.fetch.session.cache.slots}
   */
  public FetchHandler(
      ReplicaManager replicas,
      TopicMetrics metrics,
      int fetchMaxBytes,
      Authorization authorization,
      ClientQuotaManager quota,
      int sessionSlots,
      PrometheusRegistry registry) {
    this.replicas = replicas;
    this.sessions = new FetchSessionCache(sessionSlots, registry);
    this.metrics = metrics;
    this.fetchMaxBytes = fetchMaxBytes;
    this.authorization = authorization;
    this.quota = quota;
  }

  CompletableFuture<FetchResponse> handle(RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    FetchRequestData data = ((FetchRequest) request).data();
    FetchParams params =
        new FetchParams(
            FetchRequest.replicaId(data),
            data.maxWaitMs(),
            data.minBytes(),
            Math.min(data.maxBytes(), fetchMaxBytes),
            IsolationLevel.forId(data.isolationLevel()));
    boolean byFollower = params.replicaId() >= 0;
    // before v7 the session fields keep their defaults: no session, the final epoch
    FetchSessionCache.Context session =
        sessions.context(
            data.sessionId(),
            data.sessionEpoch(),
            partitions(data),
            forgotten(data),
            byFollower,
            System.currentTimeMillis());
    if (session.error() != null) {
      return CompletableFuture.completedFuture(
          FetchResponse.of(
              new FetchResponseData()
                  .setErrorCode(session.error().code())
                  .setSessionId(FetchMetadata.INVALID_SESSION_ID)));
    }
    List<PartitionFetch> allowed = new ArrayList<>();
    List<FetchedPartition> refused = new ArrayList<>();
    boolean followerAllowed =
        !byFollower || authorization.allowedOnCluster(context, AclOperation.CLUSTER_ACTION);
    Predicate<String> readable = authorization.on(context, AclOperation.READ, ResourceType.TOPIC);
    for (PartitionFetch partition : session.reads()) {
      String topic = partition.tp().topic();
      boolean may = byFollower ? followerAllowed : readable.test(topic);
      if (may) {
        allowed.add(partition);
      } else {
        refused.add(
            new FetchedPartition(
                partition.tp(), null, new TopicAuthorizationException(Set.of(topic))));
      }
    }
    return replicas
        .fetch(params, allowed)
        .thenApply(
            fetched -> {
              int throttleMs = 0;
              if (!byFollower) { // followers are under no client quota
                long bytes = 0;
                for (FetchedPartition partition : fetched) {
                  PartitionRead read = partition.read();
                  bytes +=
                      read == null || read.read() == null ? 0 : read.read().records().sizeInBytes();
                }
                throttleMs =
                    quota.recordAndGetThrottleTimeMs(
                        context.principal.getName(), context.clientId(), bytes);
              }
              LinkedHashMap<TopicPartition, PartitionData> answered = new LinkedHashMap<>();
              for (FetchedPartition partition : fetched) {
                answered.put(partition.tp(), encode(partition, header, byFollower));
              }
              for (FetchedPartition partition : refused) {
                answered.put(partition.tp(), encode(partition, header, byFollower));
              }
              FetchSessionCache.Answer answer =
                  session.answer(answered, System.currentTimeMillis());
              return FetchResponse.of(
                  new FetchResponseData()
                      .setErrorCode(answer.error().code())
                      .setThrottleTimeMs(throttleMs)
                      .setSessionId(answer.sessionId())
                      .setResponses(byTopic(answer.partitions())));
            });
  }

  /** The partitions a request's session forgets. */
  private static List<TopicPartition> forgotten(FetchRequestData data) {
    List<TopicPartition> forgotten = new ArrayList<>();
    for (ForgottenTopic topic : data.forgottenTopicsData()) {
      for (int partition : topic.partitions()) {
        forgotten.add(new TopicPartition(topic.topic(), partition));
      }
    }
    return forgotten;
  }

  /**
   * The request's partitions, each once: a partition named again replaces its earlier entry, as
   * Kafka keeps a fetch's partitions in a map, so the cost of a request is linear in its size.
   */
  private static List<PartitionFetch> partitions(FetchRequestData data) {
    Map<TopicPartition, PartitionFetch> partitions = new LinkedHashMap<>();
    for (FetchTopic topic : data.topics()) {
      for (FetchPartition partition : topic.partitions()) {
        TopicPartition tp = new TopicPartition(topic.topic(), partition.partition());
        partitions.put(
            tp,
            new PartitionFetch(
                tp,
                partition.fetchOffset(),
                partition.lastFetchedEpoch(),
                partition.currentLeaderEpoch(),
                partition.partitionMaxBytes()));
      }
    }
    return List.copyOf(partitions.values());
  }

  /** The answered partitions grouped by topic, in order of each topic's first partition. */
  private static List<FetchableTopicResponse> byTopic(
      LinkedHashMap<TopicPartition, PartitionData> partitions) {
    List<FetchableTopicResponse> topics = new ArrayList<>();
    Map<String, FetchableTopicResponse> byName = new HashMap<>();
    partitions.forEach(
        (tp, data) ->
            byName
                .computeIfAbsent(
                    tp.topic(),
                    name -> {
                      FetchableTopicResponse created = new FetchableTopicResponse().setTopic(name);
                      topics.add(created);
                      return created;
                    })
                .partitions()
                .add(data));
    return topics;
  }

  private PartitionData encode(FetchedPartition fetched, RequestHeader header, boolean byFollower) {
    PartitionData response = new PartitionData().setPartitionIndex(fetched.tp().partition());
    PartitionRead read = fetched.read();
    if (fetched.error() != null) {
      metrics.fetchFailed(fetched.tp().topic());
      response
          .setErrorCode(ErrorMapping.errorOf(fetched.error(), header).code())
          .setHighWatermark(FetchResponse.INVALID_HIGH_WATERMARK)
          .setRecords(MemoryRecords.EMPTY);
      if (read != null) {
        response.setHighWatermark(read.highWatermark()).setLogStartOffset(read.logStartOffset());
      }
      return response;
    }
    response
        .setErrorCode(Errors.NONE.code())
        .setHighWatermark(read.highWatermark())
        .setLastStableOffset(read.lastStableOffset())
        .setLogStartOffset(read.logStartOffset())
        .setAbortedTransactions(
            read.abortedTransactions() == null
                ? null
                : read.abortedTransactions().stream()
                    .map(AbortedTxn::asAbortedTransaction)
                    .toList());
    if (read.divergingEpoch() != null) {
      response
          .divergingEpoch()
          .setEpoch(read.divergingEpoch().epoch())
          .setEndOffset(read.divergingEpoch().endOffset());
    }
    if (read.read() == null) {
      response.setRecords(MemoryRecords.EMPTY);
      metrics.fetched(fetched.tp().topic(), 0, byFollower);
    } else {
      response.setRecords(read.read().records());
      metrics.fetched(fetched.tp().topic(), read.read().records().sizeInBytes(), byFollower);
    }
    return response;
  }
}
