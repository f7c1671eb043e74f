package io.tidelog.broker.txn;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.network.PeerListener;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;

/**
 * The check a partition leader makes before it appends a transaction's records (KIP-890, Kafka's
 * {@code AddPartitionsToTxnManager}): it asks the transactional id's coordinator whether the
 * producer's ongoing transaction has each partition, in process when the coordinator is this
 * broker, else as AddPartitionsToTxn v4 with {@code verify_only}, the transactions waiting for one
 * coordinator sent together. Where no coordinator can answer, each partition gets
 * COORDINATOR_NOT_AVAILABLE, or the coordinator's error.
 *
 * <p>Threads: {@link #verify} from any thread; requests to other brokers run on one Vert.x context.
 */
public final class TransactionVerifier implements AutoCloseable {
  private static final short ADD_PARTITIONS_VERSION = 4;

  /** One transaction's partitions to verify. */
  private record Verify(
      String transactionalId,
      long producerId,
      short producerEpoch,
      Set<TopicPartition> partitions) {}

  private final TransactionCoordinator coordinator;
  private final MetadataStore metadata;
  private final Context context;
  private final PeerListener listener;
  private final int localId;
  private final int requestTimeoutMs;
  private final Map<Integer, BrokerChannel<Verify, Map<TopicPartition, Errors>>> channels =
      new HashMap<>();

  public TransactionVerifier(
      TransactionCoordinator coordinator,
      MetadataStore metadata,
      Vertx vertx,
      PeerListener listener,
      int localId,
      int requestTimeoutMs) {
    this.coordinator = coordinator;
    this.metadata = metadata;
    this.context = vertx.getOrCreateContext();
    this.listener = listener;
    this.localId = localId;
    this.requestTimeoutMs = requestTimeoutMs;
  }

  /** For each partition: NONE when the producer's transaction has it, else why not. */
  public CompletableFuture<Map<TopicPartition, Errors>> verify(
      String transactionalId,
      long producerId,
      short producerEpoch,
      Set<TopicPartition> partitions) {
    ClusterImage image = metadata.image();
    TopicMetadata topic = image.topics().get(TransactionCoordinator.TRANSACTION_TOPIC);
    PartitionState state =
        topic == null
            ? null
            : image
                .partition(
                    new TopicPartition(
                        TransactionCoordinator.TRANSACTION_TOPIC,
                        TransactionCoordinator.partitionFor(transactionalId, topic.partitions())))
                .orElse(null);
    if (state == null || state.leader() == PartitionState.NO_LEADER) {
      return CompletableFuture.completedFuture(all(partitions, Errors.COORDINATOR_NOT_AVAILABLE));
    }
    if (state.leader() == localId) {
      return coordinator.verifyPartitions(transactionalId, producerId, producerEpoch, partitions);
    }
    Verify verify = new Verify(transactionalId, producerId, producerEpoch, partitions);
    CompletableFuture<Map<TopicPartition, Errors>> result = new CompletableFuture<>();
    context.runOnContext(
        v -> channel(state.leader()).send(verify).whenComplete((r, e) -> result.complete(r)));
    return result;
  }

  private static Map<TopicPartition, Errors> all(Set<TopicPartition> partitions, Errors error) {
    Map<TopicPartition, Errors> errors = new HashMap<>();
    partitions.forEach(tp -> errors.put(tp, error));
    return errors;
  }

  private BrokerChannel<Verify, Map<TopicPartition, Errors>> channel(int brokerId) {
    return channels.computeIfAbsent(
        brokerId,
        id ->
            new BrokerChannel<>(
                id,
                context,
                listener,
                metadata,
                "tidelog-txn-verifier-" + localId,
                requestTimeoutMs,
                new VerifyProtocol()));
  }

  /** Verifications as AddPartitionsToTxn v4, one transaction per id in a request. */
  private static final class VerifyProtocol
      implements BrokerChannel.Protocol<Verify, Map<TopicPartition, Errors>> {
    @Override
    public boolean fits(Verify entry, List<Verify> batch) {
      return batch.stream().noneMatch(v -> v.transactionalId().equals(entry.transactionalId()));
    }

    @Override
    public AbstractRequest request(List<Verify> batch) {
      AddPartitionsToTxnTransactionCollection transactions =
          new AddPartitionsToTxnTransactionCollection();
      for (Verify verify : batch) {
        transactions.add(
            new AddPartitionsToTxnTransaction()
                .setTransactionalId(verify.transactionalId())
                .setProducerId(verify.producerId())
                .setProducerEpoch(verify.producerEpoch())
                .setVerifyOnly(true)
                .setTopics(topics(verify.partitions())));
      }
      return AddPartitionsToTxnRequest.Builder.forBroker(transactions)
          .build(ADD_PARTITIONS_VERSION);
    }

    private static AddPartitionsToTxnTopicCollection topics(Set<TopicPartition> partitions) {
      Map<String, AddPartitionsToTxnTopic> byTopic = new HashMap<>();
      for (TopicPartition tp : partitions) {
        byTopic
            .computeIfAbsent(tp.topic(), t -> new AddPartitionsToTxnTopic().setName(t))
            .partitions()
            .add(tp.partition());
      }
      AddPartitionsToTxnTopicCollection topics = new AddPartitionsToTxnTopicCollection();
      byTopic.values().forEach(topics::add);
      return topics;
    }

    @Override
    public Map<TopicPartition, Errors> result(Verify entry, AbstractResponse response) {
      if (response == null) {
        return all(entry.partitions(), Errors.NETWORK_EXCEPTION);
      }
      AddPartitionsToTxnResponse answer = (AddPartitionsToTxnResponse) response;
      if (answer.data().errorCode() != Errors.NONE.code()) {
        return all(entry.partitions(), Errors.forCode(answer.data().errorCode()));
      }
      Map<TopicPartition, Errors> errors = answer.errors().get(entry.transactionalId());
      return errors == null ? all(entry.partitions(), Errors.UNKNOWN_SERVER_ERROR) : errors;
    }
  }

  @Override
  public void close() {
    context.runOnContext(v -> channels.values().forEach(BrokerChannel::close));
  }
}
