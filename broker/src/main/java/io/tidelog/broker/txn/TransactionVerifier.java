package io.tidelog.broker.txn;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.TransactionConfig;
import io.tidelog.broker.network.PeerListener;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
import org.apache.kafka.server.common.TransactionVersion;

/**
 * The check a partition leader makes before it appends a transaction's records (KIP-890, Kafka's
 * {@code AddPartitionsToTxnManager}): it asks the transactional id's coordinator whether the
 * producer's ongoing transaction has each partition or, for a producer of transaction protocol 2
 * (which sends no AddPartitionsToTxn of its own), to add them; in process when the coordinator is
 * this broker, else as AddPartitionsToTxn v4 ({@code verify_only} for a check), the transactions
 * waiting for one coordinator sent together. An add refused with CONCURRENT_TRANSACTIONS (the
 * previous transaction's markers are still being written) is asked again after {@code
 * add.partitions.to.txn.retry.backoff.ms}, for up to {@code
 * add.partitions.to.txn.retry.backoff.max.ms}. Where no coordinator can answer, each partition gets
 * COORDINATOR_NOT_AVAILABLE, or the coordinator's error.
 *
 * <p>Threads: {@link #addOrVerify} from any thread; requests to other brokers and the waits between
 * retries run on one Vert.x context.
 */
public final class TransactionVerifier implements AutoCloseable {
  private static final short ADD_PARTITIONS_VERSION = 4;

  /** One transaction's partitions to verify, or to add. */
  private record Verify(
      String transactionalId,
      long producerId,
      short producerEpoch,
      Set<TopicPartition> partitions,
      boolean add) {}

  private final TransactionCoordinator coordinator;
  private final MetadataStore metadata;
  private final Context context;
  private final PeerListener listener;
  private final int localId;
  private final TransactionConfig config;
  private final Map<Integer, BrokerChannel<Verify, Map<TopicPartition, Errors>>> channels =
      new HashMap<>();

  public TransactionVerifier(
      TransactionCoordinator coordinator,
      MetadataStore metadata,
      Vertx vertx,
      PeerListener listener,
      int localId,
      TransactionConfig config) {
    this.coordinator = coordinator;
    this.metadata = metadata;
    this.context = vertx.getOrCreateContext();
    this.listener = listener;
    this.localId = localId;
    this.config = config;
  }

  /**
   * For each partition: NONE when the producer's transaction has it (or, with {@code add}, now has
   * it), else why not.
   */
  public CompletableFuture<Map<TopicPartition, Errors>> addOrVerify(
      String transactionalId,
      long producerId,
      short producerEpoch,
      Set<TopicPartition> partitions,
      boolean add) {
    Verify verify = new Verify(transactionalId, producerId, producerEpoch, partitions, add);
    if (!add) {
      return ask(verify);
    }
    long retryMs = Math.min(config.addPartitionsRetryBackoffMaxMs(), config.requestTimeoutMs());
    CompletableFuture<Map<TopicPartition, Errors>> result = new CompletableFuture<>();
    askUntil(verify, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(retryMs), result);
    return result;
  }

  /** Asks to add again while CONCURRENT_TRANSACTIONS is the answer, until {@code deadline}. */
  private void askUntil(
      Verify verify, long deadlineNanos, CompletableFuture<Map<TopicPartition, Errors>> result) {
    ask(verify)
        .thenAccept(
            errors -> {
              if (!errors.containsValue(Errors.CONCURRENT_TRANSACTIONS)
                  || System.nanoTime() >= deadlineNanos) {
                result.complete(errors);
                return;
              }
              context.runOnContext(
                  v ->
                      context
                          .owner()
                          .setTimer(
                              config.addPartitionsRetryBackoffMs(),
                              t -> askUntil(verify, deadlineNanos, result)));
            });
  }

  private CompletableFuture<Map<TopicPartition, Errors>> ask(Verify verify) {
    Set<TopicPartition> partitions = verify.partitions();
    ClusterImage image = metadata.image();
    TopicMetadata topic = image.topics().get(TransactionCoordinator.TRANSACTION_TOPIC);
    PartitionState state =
        topic == null
            ? null
            : image
                .partition(
                    new TopicPartition(
                        TransactionCoordinator.TRANSACTION_TOPIC,
                        TransactionCoordinator.partitionFor(
                            verify.transactionalId(), topic.partitions())))
                .orElse(null);
    if (state == null || state.leader() == PartitionState.NO_LEADER) {
      return CompletableFuture.completedFuture(all(partitions, Errors.COORDINATOR_NOT_AVAILABLE));
    }
    if (state.leader() == localId) {
      return verify.add()
          ? coordinator
              .addPartitions(
                  verify.transactionalId(),
                  verify.producerId(),
                  verify.producerEpoch(),
                  partitions,
                  TransactionVersion.TV_2)
              .thenApply(error -> all(partitions, error))
          : coordinator.verifyPartitions(
              verify.transactionalId(), verify.producerId(), verify.producerEpoch(), partitions);
    }
    CompletableFuture<Map<TopicPartition, Errors>> result = new CompletableFuture<>();
    context.runOnContext(
        v ->
            channel(state.leader())
                .send(verify)
                .whenComplete(
                    (r, e) ->
                        result.complete(
                            e != null ? all(partitions, Errors.NETWORK_EXCEPTION) : r)));
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
                config.requestTimeoutMs(),
                new VerifyProtocol()));
  }

  /** Verifications and adds as AddPartitionsToTxn v4, one transaction per id in a request. */
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
                .setVerifyOnly(!verify.add())
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
