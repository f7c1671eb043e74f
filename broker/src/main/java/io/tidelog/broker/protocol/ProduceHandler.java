package io.tidelog.broker.protocol;

import io.tidelog.broker.log.LogAppendInfo;
import io.tidelog.broker.quota.ClientQuotaManager;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.security.Authorization;
import io.tidelog.broker.txn.TransactionVerifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData.TopicProduceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Produce: each partition's batches go to the partition's shard, which validates and appends them
 * on the leader. {@code acks=1} completes once the leader has appended; {@code acks=all} once the
 * high watermark passes the batch, or with REQUEST_TIMED_OUT after the request's timeout; {@code
 * acks=0} gets no response (the dispatcher drops it). Any other {@code acks} is refused with
 * INVALID_REQUIRED_ACKS for every partition, as Kafka refuses it. A topic the client may not WRITE
 * to is answered TOPIC_AUTHORIZATION_FAILED before anything else, as in Kafka.
 *
 * <p>Transactional records (a partition's first batch transactional, as Kafka checks) need the
 * request's {@code transactional_id} and WRITE on it, or the whole request is answered
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka answers it. With them, each partition of
 * transactional records is appended once the transaction's coordinator confirms that the producer's
 * ongoing transaction has it, or from v12 (transaction protocol 2) has added it ({@link
 * TransactionVerifier}, KIP-890), and answered as Kafka 4.1 answers otherwise ({@link
 * ErrorMapping#unverified}); a transactional id's requests append in the order they came ({@link
 * AppendOrder}).
 */
public final class ProduceHandler {
  private static final CompletableFuture<Errors> VERIFIED =
      CompletableFuture.completedFuture(Errors.NONE);

  private final ReplicaManager replicas;
  private final TransactionVerifier verifier;
  private final TopicMetrics metrics;
  private final Authorization authorization;
  private final ClientQuotaManager quota;
  private final AppendOrder order = new AppendOrder();

  public ProduceHandler(
      ReplicaManager replicas,
      TransactionVerifier verifier,
      TopicMetrics metrics,
      Authorization authorization,
      ClientQuotaManager quota) {
    this.replicas = replicas;
    this.verifier = verifier;
    this.metrics = metrics;
    this.authorization = authorization;
    this.quota = quota;
  }

  CompletableFuture<ProduceResponse> handle(RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    ProduceRequest produce = (ProduceRequest) request;
    boolean transactional = hasTransactionalRecords(produce);
    if (transactional
        && (produce.transactionalId() == null
            || !authorization.allowed(
                context,
                AclOperation.WRITE,
                ResourceType.TRANSACTIONAL_ID,
                produce.transactionalId()))) {
      return CompletableFuture.completedFuture(
          produce.getErrorResponse(0, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.exception()));
    }
    Predicate<String> writable = authorization.on(context, AclOperation.WRITE, ResourceType.TOPIC);
    boolean validAcks = produce.acks() == -1 || produce.acks() == 0 || produce.acks() == 1;
    List<CompletableFuture<Void>> appends = new ArrayList<>();
    List<Accepted> accepted = new ArrayList<>();
    Map<String, TopicProduceResponse> topicResponses = new LinkedHashMap<>();
    for (Map.Entry<TopicPartition, PartitionProduceData> entry : partitions(produce).entrySet()) {
      TopicPartition tp = entry.getKey();
      PartitionProduceResponse response = new PartitionProduceResponse().setIndex(tp.partition());
      topicResponses
          .computeIfAbsent(tp.topic(), name -> new TopicProduceResponse().setName(name))
          .partitionResponses()
          .add(response);
      if (!writable.test(tp.topic())) {
        response.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
        metrics.produceFailed(tp.topic());
        continue;
      }
      if (!validAcks) {
        response.setErrorCode(Errors.INVALID_REQUIRED_ACKS.code());
        metrics.produceFailed(tp.topic());
        continue;
      }
      if (Topic.isInternal(tp.topic())) {
        // Only the group coordinator writes __consumer_offsets, as in Kafka
        response
            .setErrorCode(Errors.INVALID_TOPIC_EXCEPTION.code())
            .setErrorMessage("Cannot append to internal topic " + tp.topic());
        metrics.produceFailed(tp.topic());
        continue;
      }
      if (!(entry.getValue().records() instanceof MemoryRecords records)) {
        response.setErrorCode(Errors.CORRUPT_MESSAGE.code());
        metrics.produceFailed(tp.topic());
        continue;
      }
      accepted.add(new Accepted(tp, records, response));
    }
    TransactionOperation operation = TransactionOperation.forProduce(header.apiVersion());
    Map<TopicPartition, CompletableFuture<Errors>> verified =
        transactional ? verify(produce.transactionalId(), accepted, operation.adds()) : Map.of();
    // a producer's requests append in the order they came, whatever order their checks end in
    AppendOrder.Turn turn =
        transactional ? order.enter(produce.transactionalId()) : AppendOrder.Turn.NOW;
    List<CompletableFuture<?>> handedOver = new ArrayList<>();
    for (Accepted partition : accepted) {
      TopicPartition tp = partition.tp();
      MemoryRecords records = partition.records();
      PartitionProduceResponse response = partition.response();
      CompletableFuture<CompletableFuture<LogAppendInfo>> started =
          verified
              .getOrDefault(tp, VERIFIED)
              .thenCombine(turn.previous(), (error, v) -> error)
              .thenApply(
                  error ->
                      error == Errors.NONE
                          ? replicas.append(tp, records, produce.acks(), produce.timeout())
                          : CompletableFuture.failedFuture(
                              ErrorMapping.unverified(error, operation)));
      handedOver.add(started);
      appends.add(
          started
              .thenCompose(Function.identity())
              .handle(
                  (info, e) -> {
                    if (e != null) {
                      metrics.produceFailed(tp.topic());
                      response
                          .setErrorCode(ErrorMapping.errorOf(e, header).code())
                          .setErrorMessage(ErrorMapping.messageOf(e))
                          .setBaseOffset(-1);
                    } else {
                      metrics.produced(tp.topic(), records.sizeInBytes(), info.recordCount());
                      response
                          .setErrorCode(Errors.NONE.code())
                          .setBaseOffset(info.firstOffset())
                          .setLogAppendTimeMs(info.logAppendTimeMs());
                    }
                    return null;
                  }));
    }
    CompletableFuture.allOf(handedOver.toArray(CompletableFuture[]::new))
        .whenComplete((v, e) -> turn.leave());
    ProduceResponseData data = new ProduceResponseData();
    topicResponses.values().forEach(data.responses()::add);
    long bytes = 0;
    for (PartitionProduceData partition : partitions(produce).values()) {
      bytes += partition.records() == null ? 0 : partition.records().sizeInBytes();
    }
    // producer_byte_rate counts the records' bytes; over it, the answer carries the throttle time
    int throttleMs =
        quota.recordAndGetThrottleTimeMs(context.principal.getName(), context.clientId(), bytes);
    return CompletableFuture.allOf(appends.toArray(CompletableFuture[]::new))
        .thenApply(v -> new ProduceResponse(data.setThrottleTimeMs(throttleMs)));
  }

  /**
   * Asks the transaction's coordinator whether it has the partitions of transactional records, or
   * with {@code add} to add them (KIP-890), in one question per producer id and epoch (a request
   * normally has one).
   */
  private Map<TopicPartition, CompletableFuture<Errors>> verify(
      String transactionalId, List<Accepted> accepted, boolean add) {
    Map<ProducerEpoch, Set<TopicPartition>> byProducer = new HashMap<>();
    for (Accepted partition : accepted) {
      if (isTransactional(partition.records())) {
        RecordBatch batch = partition.records().batches().iterator().next();
        byProducer
            .computeIfAbsent(
                new ProducerEpoch(batch.producerId(), batch.producerEpoch()), k -> new HashSet<>())
            .add(partition.tp());
      }
    }
    Map<TopicPartition, CompletableFuture<Errors>> verified = new HashMap<>();
    byProducer.forEach(
        (producer, tps) -> {
          CompletableFuture<Map<TopicPartition, Errors>> answer =
              verifier.addOrVerify(transactionalId, producer.id(), producer.epoch(), tps, add);
          tps.forEach(
              tp ->
                  verified.put(
                      tp,
                      answer.thenApply(
                          errors -> errors.getOrDefault(tp, Errors.UNKNOWN_SERVER_ERROR))));
        });
    return verified;
  }

  private record ProducerEpoch(long id, short epoch) {}

  /** A partition that passed the request's checks, to append. */
  private record Accepted(
      TopicPartition tp, MemoryRecords records, PartitionProduceResponse response) {}

  /** Whether some partition's first batch is transactional, as Kafka's RequestUtils checks. */
  private static boolean hasTransactionalRecords(ProduceRequest produce) {
    for (PartitionProduceData partition : partitions(produce).values()) {
      if (partition.records() instanceof MemoryRecords records && isTransactional(records)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isTransactional(MemoryRecords records) {
    var batches = records.batches().iterator();
    try {
      return batches.hasNext() && batches.next().isTransactional();
    } catch (RuntimeException malformed) {
      return false; // the partition's validation answers it
    }
  }

  /**
   * The request's partitions, each once: a partition named again replaces its earlier data, as
   * Kafka keeps the request in a map, so a request that repeats one partition appends once.
   */
  private static Map<TopicPartition, PartitionProduceData> partitions(ProduceRequest produce) {
    Map<TopicPartition, PartitionProduceData> partitions = new LinkedHashMap<>();
    for (TopicProduceData topic : produce.data().topicData()) {
      for (PartitionProduceData partition : topic.partitionData()) {
        partitions.put(new TopicPartition(topic.name(), partition.index()), partition);
      }
    }
    return partitions;
  }
}
