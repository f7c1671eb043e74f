package io.tidelog.broker.txn;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.TransactionConfig;
import io.tidelog.broker.network.PeerListener;
import io.tidelog.broker.replica.PartitionRead;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.txn.TransactionMarkers.Marker;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;
import org.apache.kafka.server.common.TransactionVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's transaction coordinator. The coordinator of a transactional id is the leader of partition
 * {@code abs(transactionalId.hashCode()) % n} of {@code __transaction_state}, which holds each id's
 * state as records ({@link TransactionRecords}): a new leader loads them before it serves the
 * partition's ids (COORDINATOR_LOAD_IN_PROGRESS meanwhile), finishes the transactions it finds
 * half-ended, and a broker that stops leading unloads them (NOT_COORDINATOR from then on).
 *
 * <p>As in Kafka (transaction protocol versions 0 and 1): InitProducerId hands an id its producer
 * id and the next epoch, fencing the producers of older epochs, and aborts a transaction the
 * previous producer left open (CONCURRENT_TRANSACTIONS until then); AddPartitionsToTxn and
 * AddOffsetsToTxn record the partitions the transaction writes; EndTxn writes PrepareCommit or
 * PrepareAbort, is answered, writes the markers into every partition ({@link TransactionMarkers}),
 * then CompleteCommit or CompleteAbort. Every change is written with {@code acks=all} before it
 * takes effect. A transaction older than its {@code transaction.timeout.ms} is aborted with a
 * bumped epoch, which fences its producer; an id idle for {@code transactional.id.expiration.ms} is
 * deleted.
 *
 * <p>Threads: every id's state lives on one coordinator thread ({@code tidelog-txn-coordinator}),
 * which the public methods hop onto and whose queue is bounded; loading reads the log on a thread
 * of its own; a timer starts the timeout and expiration sweeps. Callers get futures and never
 * block.
 */
public final class TransactionCoordinator implements AutoCloseable {
  public static final String TRANSACTION_TOPIC = Topic.TRANSACTION_STATE_TOPIC_NAME;

  private static final Logger LOG = LoggerFactory.getLogger(TransactionCoordinator.class);
  private static final int QUEUE_CAPACITY = 10_000;
  private static final long LOAD_READ_TIMEOUT_MS = 30_000;

  /**
   * A producer id and epoch, or an error: InitProducerId's answer, and EndTxn's, whose epoch is the
   * next transaction's under transaction protocol 2.
   */
  public record ProducerAnswer(long producerId, short producerEpoch, Errors error) {
    static ProducerAnswer of(Errors error) {
      return new ProducerAnswer(RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, error);
    }
  }

  /** A transactional id as DescribeTransactions and ListTransactions show it. */
  public record TransactionListing(
      String transactionalId,
      long producerId,
      short producerEpoch,
      TransactionState state,
      int timeoutMs,
      long startTimestampMs,
      Set<TopicPartition> partitions) {}

  private final TransactionConfig config;
  private final MetadataStore metadata;
  private final ReplicaManager replicas;
  private final ProducerIds producerIds;
  private final TransactionMarkers markers;
  private final Time time;
  private final ExecutorService thread =
      new ThreadPoolExecutor(
          1,
          1,
          0,
          TimeUnit.MILLISECONDS,
          new ArrayBlockingQueue<>(QUEUE_CAPACITY),
          r -> new Thread(r, "tidelog-txn-coordinator"));
  private final ExecutorService loader =
      Executors.newSingleThreadExecutor(r -> new Thread(r, "tidelog-txn-loader"));
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "tidelog-txn-timer"));

  /**
   * The {@code __transaction_state} partitions led here, by partition; on the coordinator thread.
   */
  private final Map<Integer, TransactionPartition> partitions = new HashMap<>();

  private final LongAdder committed = new LongAdder();
  private final LongAdder aborted = new LongAdder();
  private final LongAdder timedOut = new LongAdder();

  public TransactionCoordinator(
      TransactionConfig config,
      MetadataStore metadata,
      ReplicaManager replicas,
      ProducerIds producerIds,
      Vertx vertx,
      PeerListener peers,
      Time time) {
    this.config = config;
    this.metadata = metadata;
    this.replicas = replicas;
    this.producerIds = producerIds;
    this.markers =
        new TransactionMarkers(vertx, peers, replicas, metadata, config.requestTimeoutMs());
    this.time = time;
  }

  /** Starts following leadership of {@code __transaction_state} and the periodic sweeps. */
  public void start() {
    replicas.addLeadershipListener(this::onLeadershipChange);
    timer.scheduleWithFixedDelay(
        () -> execute(this::abortTimedOutTransactions),
        config.abortTimedOutIntervalMs(),
        config.abortTimedOutIntervalMs(),
        TimeUnit.MILLISECONDS);
    timer.scheduleWithFixedDelay(
        () -> execute(this::removeExpiredTransactionalIds),
        config.removeExpiredIntervalMs(),
        config.removeExpiredIntervalMs(),
        TimeUnit.MILLISECONDS);
  }

  /** The partition of {@code __transaction_state} that holds an id, as Kafka places it. */
  public static int partitionFor(String transactionalId, int partitionCount) {
    return Utils.abs(transactionalId.hashCode()) % partitionCount;
  }

  private void onLeadershipChange(TopicPartition tp, boolean leader, int leaderEpoch) {
    if (!tp.topic().equals(TRANSACTION_TOPIC)) {
      return;
    }
    execute(
        () -> {
          if (partitions.remove(tp.partition()) != null) {
            LOG.info("Unloaded the transactions of {}", tp);
          }
          if (leader) {
            TransactionPartition loading = new TransactionPartition(tp, leaderEpoch);
            partitions.put(tp.partition(), loading);
            loader.execute(() -> load(loading));
          }
        });
  }

  /** On the loader thread: replays the partition up to its log end, then hands it over. */
  private void load(TransactionPartition loading) {
    long offset = 0;
    try {
      while (true) {
        PartitionRead read =
            replicas
                .readAsLeader(loading.tp, offset, config.loadBufferSize())
                .get(LOAD_READ_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        if (read.read().records().sizeInBytes() == 0) {
          break;
        }
        for (RecordBatch batch : read.read().records().batches()) {
          if (batch.isControlBatch()) {
            continue;
          }
          for (Record record : batch) {
            try {
              TransactionRecords.parse(record).ifPresent(loading::replay);
            } catch (RuntimeException e) {
              LOG.warn("{}: skipping unreadable record at {}: {}", loading.tp, record.offset(), e);
            }
          }
        }
        offset = read.read().nextOffset();
      }
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      LOG.warn(
          "{}: loading transactions failed, at offset {}: {}", loading.tp, offset, e.toString());
      execute(() -> partitions.remove(loading.tp.partition(), loading));
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    execute(
        () -> {
          if (partitions.get(loading.tp.partition()) != loading) {
            return; // leadership moved on while loading
          }
          loading.completeLoad();
          int resumed = 0;
          for (TransactionMetadata txn : List.copyOf(loading.transactions())) {
            if (txn.state == TransactionState.PREPARE_COMMIT
                || txn.state == TransactionState.PREPARE_ABORT) {
              completeTransaction(loading, txn);
              resumed++;
            }
          }
          LOG.info(
              "Loaded {} transactional ids of {} (coordinator epoch {}), finishing {} ended ones",
              loading.transactions().size(),
              loading.tp,
              loading.coordinatorEpoch,
              resumed);
        });
  }

  /**
   * InitProducerId with a transactional id.
   *
   * @param expectedProducerId the producer's id when it asks to continue after an error (KIP-360),
   *     else -1
   * @param expectedEpoch its epoch then, else -1
   */
  public CompletableFuture<ProducerAnswer> initProducerId(
      String transactionalId, int timeoutMs, long expectedProducerId, short expectedEpoch) {
    if (transactionalId.isEmpty()) {
      return CompletableFuture.completedFuture(ProducerAnswer.of(Errors.INVALID_REQUEST));
    }
    if (timeoutMs <= 0 || timeoutMs > config.maxTimeoutMs()) {
      return CompletableFuture.completedFuture(
          ProducerAnswer.of(Errors.INVALID_TRANSACTION_TIMEOUT));
    }
    return init(transactionalId, timeoutMs, expectedProducerId, expectedEpoch, null)
        .exceptionally(e -> ProducerAnswer.of(errorOf(e)));
  }

  /** On the coordinator thread, with {@code freshProducerId} once one was needed and taken. */
  private CompletableFuture<ProducerAnswer> init(
      String transactionalId,
      int timeoutMs,
      long expectedProducerId,
      short expectedEpoch,
      Long freshProducerId) {
    return onPartition(
            transactionalId,
            part -> {
              long nowMs = time.milliseconds();
              TransactionMetadata txn = part.get(transactionalId);
              if (txn == null) {
                if (freshProducerId == null) {
                  return needsProducerId(
                      transactionalId, timeoutMs, expectedProducerId, expectedEpoch);
                }
                txn =
                    part.putIfAbsent(
                        new TransactionMetadata(
                            transactionalId, freshProducerId, timeoutMs, nowMs));
              }
              boolean hasExpected = expectedProducerId != RecordBatch.NO_PRODUCER_ID;
              if (txn.hasPendingTransition()) {
                return done(ProducerAnswer.of(Errors.CONCURRENT_TRANSACTIONS));
              }
              if (hasExpected
                  && txn.producerEpoch != RecordBatch.NO_PRODUCER_EPOCH
                  && expectedProducerId != txn.producerId) {
                return done(ProducerAnswer.of(Errors.PRODUCER_FENCED));
              }
              switch (txn.state) {
                case PREPARE_ABORT, PREPARE_COMMIT -> {
                  return done(ProducerAnswer.of(Errors.CONCURRENT_TRANSACTIONS));
                }
                case ONGOING -> {
                  // Abort what the previous producer left open, at a bumped epoch that fences it;
                  // the producer retries and gets an epoch of its own once the abort is written
                  return abortFenced(part, txn, txn.prepareFenceProducerEpoch())
                      .thenApply(
                          error ->
                              ProducerAnswer.of(
                                  error == Errors.NONE ? Errors.CONCURRENT_TRANSACTIONS : error));
                }
                case EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT -> {
                  TxnTransitMetadata next;
                  if (txn.isProducerEpochExhausted()
                      && (!hasExpected || expectedEpoch == txn.producerEpoch)) {
                    if (freshProducerId == null) {
                      return needsProducerId(
                          transactionalId, timeoutMs, expectedProducerId, expectedEpoch);
                    }
                    next =
                        txn.prepareProducerIdRotation(
                            freshProducerId, timeoutMs, nowMs, hasExpected);
                  } else {
                    next =
                        txn.prepareIncrementProducerEpoch(
                            timeoutMs, hasExpected, expectedEpoch, nowMs);
                  }
                  return write(part, txn, next)
                      .thenApply(
                          error -> {
                            if (error != Errors.NONE) {
                              return ProducerAnswer.of(error);
                            }
                            LOG.info(
                                "Initialized {} with producer id {} at epoch {} on {}",
                                transactionalId,
                                next.producerId(),
                                next.producerEpoch(),
                                part.tp);
                            return new ProducerAnswer(
                                next.producerId(), next.producerEpoch(), Errors.NONE);
                          });
                }
                default ->
                    throw new IllegalStateException(transactionalId + " is in state " + txn.state);
              }
            })
        .thenCompose(Function.identity());
  }

  private CompletableFuture<ProducerAnswer> needsProducerId(
      String transactionalId, int timeoutMs, long expectedProducerId, short expectedEpoch) {
    return producerIds
        .next()
        .thenCompose(id -> init(transactionalId, timeoutMs, expectedProducerId, expectedEpoch, id));
  }

  /**
   * AddPartitionsToTxn: records that the transaction writes to {@code added}, and starts it when
   * none is ongoing. For a producer of transaction protocol 2 (whose leaders ask) while its last
   * transaction is still writing its markers, or another change of the id is being written, the
   * answer waits until that is done (for up to {@code add.partitions.to.txn.retry.backoff.max.ms},
   * then CONCURRENT_TRANSACTIONS, as Kafka answers at once), so that the transaction goes on as
   * soon as it can rather than after a leader's backoff.
   *
   * @param version the producer's transaction protocol, as its request's version says it
   */
  public CompletableFuture<Errors> addPartitions(
      String transactionalId,
      long producerId,
      short producerEpoch,
      Set<TopicPartition> added,
      TransactionVersion version) {
    if (transactionalId == null || transactionalId.isEmpty()) {
      return CompletableFuture.completedFuture(Errors.INVALID_REQUEST);
    }
    return onPartition(
            transactionalId,
            part ->
                addPartitions(
                    part,
                    transactionalId,
                    producerId,
                    producerEpoch,
                    added,
                    version,
                    System.nanoTime()
                        + (version.supportsEpochBump()
                            ? TimeUnit.MILLISECONDS.toNanos(config.addPartitionsRetryBackoffMaxMs())
                            : 0)))
        .thenCompose(Function.identity())
        .exceptionally(TransactionCoordinator::errorOf);
  }

  /**
   * On the coordinator thread; waits for the id's change in progress until {@code waitUntilNanos}
   * ({@link System#nanoTime}), and answers CONCURRENT_TRANSACTIONS after it.
   */
  private CompletableFuture<Errors> addPartitions(
      TransactionPartition part,
      String transactionalId,
      long producerId,
      short producerEpoch,
      Set<TopicPartition> added,
      TransactionVersion version,
      long waitUntilNanos) {
    TransactionMetadata txn = part.get(transactionalId);
    if (txn == null || txn.producerId != producerId) {
      return done(Errors.INVALID_PRODUCER_ID_MAPPING);
    }
    if (txn.producerEpoch != producerEpoch) {
      return done(Errors.PRODUCER_FENCED);
    }
    boolean busy =
        txn.hasPendingTransition()
            || txn.state == TransactionState.PREPARE_COMMIT
            || txn.state == TransactionState.PREPARE_ABORT;
    long leftNanos = waitUntilNanos - System.nanoTime();
    if (busy && leftNanos > 0) {
      return txn.settled()
          .copy()
          .completeOnTimeout(null, leftNanos, TimeUnit.NANOSECONDS)
          .thenComposeAsync(
              v ->
                  owns(part)
                      ? addPartitions(
                          part,
                          transactionalId,
                          producerId,
                          producerEpoch,
                          added,
                          version,
                          waitUntilNanos)
                      : done(Errors.NOT_COORDINATOR),
              thread);
    }
    if (busy) {
      return done(Errors.CONCURRENT_TRANSACTIONS);
    }
    if (txn.state == TransactionState.ONGOING && txn.partitions.containsAll(added)) {
      return done(Errors.NONE);
    }
    return write(part, txn, txn.prepareAddPartitions(added, time.milliseconds(), version));
  }

  /**
   * The check a partition leader asks for before it appends a transaction's first records
   * (KIP-890): for each partition, NONE when the ongoing transaction of this producer and epoch has
   * it, TRANSACTION_ABORTABLE when it does not.
   */
  public CompletableFuture<Map<TopicPartition, Errors>> verifyPartitions(
      String transactionalId, long producerId, short producerEpoch, Set<TopicPartition> written) {
    return onPartition(
            transactionalId,
            part -> {
              TransactionMetadata txn = part.get(transactionalId);
              Errors all =
                  txn == null || txn.producerId != producerId
                      ? Errors.INVALID_PRODUCER_ID_MAPPING
                      : txn.producerEpoch != producerEpoch
                          ? Errors.PRODUCER_FENCED
                          : txn.state == TransactionState.PREPARE_COMMIT
                                  || txn.state == TransactionState.PREPARE_ABORT
                              ? Errors.CONCURRENT_TRANSACTIONS
                              : null;
              Map<TopicPartition, Errors> errors = new HashMap<>();
              for (TopicPartition tp : written) {
                errors.put(
                    tp,
                    all != null
                        ? all
                        : txn.partitions.contains(tp) ? Errors.NONE : Errors.TRANSACTION_ABORTABLE);
              }
              return errors;
            })
        .exceptionally(
            e -> {
              Map<TopicPartition, Errors> errors = new HashMap<>();
              written.forEach(tp -> errors.put(tp, errorOf(e)));
              return errors;
            });
  }

  /**
   * EndTxn: commits or aborts the producer's ongoing transaction. Under transaction protocol 2 the
   * answer carries the producer id and epoch of its next transaction.
   *
   * @param version the producer's transaction protocol, as its request's version says it
   */
  public CompletableFuture<ProducerAnswer> endTransaction(
      String transactionalId,
      long producerId,
      short producerEpoch,
      boolean commit,
      TransactionVersion version) {
    if (transactionalId == null || transactionalId.isEmpty()) {
      return CompletableFuture.completedFuture(ProducerAnswer.of(Errors.INVALID_REQUEST));
    }
    return onPartition(
            transactionalId,
            part -> {
              TransactionMetadata txn = part.get(transactionalId);
              return version.supportsEpochBump()
                  ? endTransactionBumping(part, txn, producerId, producerEpoch, commit, true)
                  : endTransaction(part, txn, producerId, producerEpoch, commit, true)
                      .thenApply(ProducerAnswer::of);
            })
        .thenCompose(Function.identity())
        .exceptionally(e -> ProducerAnswer.of(errorOf(e)));
  }

  /**
   * The coordinator's own abort of an ongoing transaction (its timeout, or a new producer's
   * InitProducerId), at the epoch {@code fence} bumped, in the protocol of the transaction.
   */
  private CompletableFuture<Errors> abortFenced(
      TransactionPartition part, TransactionMetadata txn, TxnTransitMetadata fence) {
    return txn.clientTransactionVersion.supportsEpochBump()
        ? endTransactionBumping(part, txn, fence.producerId(), fence.producerEpoch(), false, false)
            .thenApply(ProducerAnswer::error)
        : endTransaction(part, txn, fence.producerId(), fence.producerEpoch(), false, false);
  }

  /**
   * On the coordinator thread, EndTxn of transaction protocol 2 (Kafka's {@code endTransaction}):
   * the epoch goes up by one at every end, so the retry of an EndTxn that succeeded carries the
   * epoch before it, and an abort is accepted with no transaction ongoing:
   *
   * <pre>
   *                 | abort: retry / current | commit: retry / current
   * Empty           | PRODUCER_FENCED / bump | PRODUCER_FENCED / INVALID_TXN_STATE
   * CompleteAbort   | NONE / bump            | INVALID_TXN_STATE / INVALID_TXN_STATE
   * CompleteCommit  | INVALID_TXN_STATE/bump | NONE / INVALID_TXN_STATE
   * </pre>
   */
  private CompletableFuture<ProducerAnswer> endTransactionBumping(
      TransactionPartition part,
      TransactionMetadata txn,
      long producerId,
      short producerEpoch,
      boolean commit,
      boolean fromClient) {
    if (txn == null) {
      return done(ProducerAnswer.of(Errors.INVALID_PRODUCER_ID_MAPPING));
    }
    boolean fence = txn.pendingState == TransactionState.PREPARE_EPOCH_FENCE;
    boolean retryOnOverflow =
        !fence
            && txn.previousProducerId == producerId
            && producerEpoch == Short.MAX_VALUE - 1
            && txn.producerEpoch == 0;
    boolean retryOnBump = !fence && txn.producerEpoch == producerEpoch + 1;
    boolean validEpoch =
        fence
            ? (!fromClient || producerEpoch == txn.producerEpoch)
                && producerEpoch >= txn.producerEpoch
            : switch (txn.state) {
              case ONGOING, EMPTY, DEAD, PREPARE_EPOCH_FENCE -> producerEpoch == txn.producerEpoch;
              case PREPARE_COMMIT, PREPARE_ABORT -> retryOnBump;
              case COMPLETE_COMMIT, COMPLETE_ABORT ->
                  retryOnBump || retryOnOverflow || producerEpoch == txn.producerEpoch;
            };
    boolean retry = retryOnBump || retryOnOverflow;
    if (txn.producerId != producerId && !retryOnOverflow) {
      return done(ProducerAnswer.of(Errors.INVALID_PRODUCER_ID_MAPPING));
    }
    if (!validEpoch) {
      return done(ProducerAnswer.of(Errors.PRODUCER_FENCED));
    }
    if (txn.hasPendingTransition() && !fence) {
      return done(ProducerAnswer.of(Errors.CONCURRENT_TRANSACTIONS));
    }
    ProducerAnswer unchanged = new ProducerAnswer(txn.producerId, txn.producerEpoch, Errors.NONE);
    return switch (txn.state) {
      case ONGOING ->
          endBumping(
              part,
              txn,
              producerEpoch,
              commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT,
              fence,
              false);
      case COMPLETE_COMMIT ->
          commit
              ? done(retry ? unchanged : ProducerAnswer.of(Errors.INVALID_TXN_STATE))
              : retry
                  ? done(ProducerAnswer.of(Errors.INVALID_TXN_STATE))
                  : endBumping(
                      part, txn, producerEpoch, TransactionState.PREPARE_ABORT, fence, true);
      case COMPLETE_ABORT ->
          !commit && retry
              ? done(unchanged)
              : !commit
                  ? endBumping(
                      part, txn, producerEpoch, TransactionState.PREPARE_ABORT, fence, true)
                  : done(ProducerAnswer.of(Errors.INVALID_TXN_STATE));
      case PREPARE_COMMIT ->
          done(
              ProducerAnswer.of(
                  commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE));
      case PREPARE_ABORT ->
          done(
              ProducerAnswer.of(
                  commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS));
      case EMPTY ->
          commit
              ? done(ProducerAnswer.of(Errors.INVALID_TXN_STATE))
              : endBumping(part, txn, producerEpoch, TransactionState.PREPARE_ABORT, fence, true);
      default -> throw new IllegalStateException(txn.transactionalId + " is in state " + txn.state);
    };
  }

  /**
   * On the coordinator thread: writes PrepareCommit or PrepareAbort at the next epoch (and with a
   * next producer id once the epochs are exhausted), answers with what the producer uses next, and
   * writes the markers.
   */
  private CompletableFuture<ProducerAnswer> endBumping(
      TransactionPartition part,
      TransactionMetadata txn,
      short producerEpoch,
      TransactionState next,
      boolean fence,
      boolean noPartitionAdded) {
    if (!fence && txn.isProducerEpochExhausted()) {
      TransactionState before = txn.state;
      return producerIds
          .next()
          .thenComposeAsync(
              id ->
                  owns(part)
                          && part.get(txn.transactionalId) == txn
                          && !txn.hasPendingTransition()
                          && txn.state == before
                          && txn.producerEpoch == producerEpoch
                      ? prepareEndBumping(
                          part, txn, producerEpoch, next, false, noPartitionAdded, id)
                      : done(ProducerAnswer.of(Errors.CONCURRENT_TRANSACTIONS)),
              thread);
    }
    return prepareEndBumping(
        part, txn, producerEpoch, next, fence, noPartitionAdded, RecordBatch.NO_PRODUCER_ID);
  }

  private CompletableFuture<ProducerAnswer> prepareEndBumping(
      TransactionPartition part,
      TransactionMetadata txn,
      short producerEpoch,
      TransactionState next,
      boolean fence,
      boolean noPartitionAdded,
      long nextProducerId) {
    if (fence) {
      txn.abandon();
      txn.producerEpoch = producerEpoch;
      txn.lastProducerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
    }
    TxnTransitMetadata prepared =
        txn.prepareAbortOrCommit(
            next, TransactionVersion.TV_2, nextProducerId, time.milliseconds(), noPartitionAdded);
    return write(part, txn, prepared)
        .thenApply(
            error -> {
              if (error != Errors.NONE) {
                if (fence) {
                  txn.failedEpochFence = true;
                }
                return ProducerAnswer.of(error);
              }
              completeTransaction(part, txn);
              return txn.nextProducerId != RecordBatch.NO_PRODUCER_ID
                  ? new ProducerAnswer(txn.nextProducerId, (short) 0, Errors.NONE)
                  : new ProducerAnswer(txn.producerId, txn.producerEpoch, Errors.NONE);
            });
  }

  /**
   * On the coordinator thread: writes PrepareCommit or PrepareAbort and, once written, answers and
   * writes the markers. {@code fromClient} false: the coordinator's own abort (a timeout, or a new
   * producer's InitProducerId), whose epoch was bumped by {@code prepareFenceProducerEpoch}.
   */
  private CompletableFuture<Errors> endTransaction(
      TransactionPartition part,
      TransactionMetadata txn,
      long producerId,
      short producerEpoch,
      boolean commit,
      boolean fromClient) {
    if (txn == null || txn.producerId != producerId) {
      return done(Errors.INVALID_PRODUCER_ID_MAPPING);
    }
    if ((fromClient && producerEpoch != txn.producerEpoch) || producerEpoch < txn.producerEpoch) {
      return done(Errors.PRODUCER_FENCED);
    }
    if (txn.hasPendingTransition() && txn.pendingState != TransactionState.PREPARE_EPOCH_FENCE) {
      return done(Errors.CONCURRENT_TRANSACTIONS);
    }
    switch (txn.state) {
      case ONGOING -> {
        TransactionState next =
            commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT;
        boolean fence = false;
        if (!commit && txn.pendingState == TransactionState.PREPARE_EPOCH_FENCE) {
          fence = true;
          txn.abandon();
          txn.producerEpoch = producerEpoch;
          txn.lastProducerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
        }
        boolean fencing = fence;
        TxnTransitMetadata prepared =
            txn.prepareAbortOrCommit(
                next,
                TransactionVersion.TV_0,
                RecordBatch.NO_PRODUCER_ID,
                time.milliseconds(),
                false);
        return write(part, txn, prepared)
            .thenApply(
                error -> {
                  if (error != Errors.NONE) {
                    if (fencing) {
                      txn.failedEpochFence = true;
                    }
                    return error;
                  }
                  completeTransaction(part, txn);
                  return Errors.NONE;
                });
      }
      case COMPLETE_COMMIT -> {
        return done(commit ? Errors.NONE : Errors.INVALID_TXN_STATE);
      }
      case COMPLETE_ABORT -> {
        return done(commit ? Errors.INVALID_TXN_STATE : Errors.NONE);
      }
      case PREPARE_COMMIT -> {
        return done(commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE);
      }
      case PREPARE_ABORT -> {
        return done(commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS);
      }
      case EMPTY -> {
        return done(Errors.INVALID_TXN_STATE);
      }
      default -> throw new IllegalStateException(txn.transactionalId + " is in state " + txn.state);
    }
  }

  /**
   * On the coordinator thread, for a transaction in PrepareCommit or PrepareAbort: writes its
   * markers, then CompleteCommit or CompleteAbort.
   */
  private void completeTransaction(TransactionPartition part, TransactionMetadata txn) {
    boolean commit = txn.state == TransactionState.PREPARE_COMMIT;
    Marker marker = new Marker(txn.producerId, txn.producerEpoch, part.coordinatorEpoch, commit);
    Set<TopicPartition> written = Set.copyOf(txn.partitions);
    markers
        .write(marker, written, () -> owns(part))
        .whenCompleteAsync(
            (v, e) -> {
              if (e != null) {
                LOG.info(
                    "Markers of {} ({}) not all written: {}",
                    txn.transactionalId,
                    commit ? "commit" : "abort",
                    e.toString());
                return;
              }
              if (!owns(part)
                  || part.get(txn.transactionalId) != txn
                  || txn.hasPendingTransition()) {
                return;
              }
              writeCompletion(part, txn);
            },
            thread);
  }

  /** On the coordinator thread: writes CompleteCommit or CompleteAbort, retrying what may pass. */
  private void writeCompletion(TransactionPartition part, TransactionMetadata txn) {
    TxnTransitMetadata complete = txn.prepareComplete(time.milliseconds());
    write(part, txn, complete)
        .thenAccept(
            error -> {
              if (error == Errors.NONE) {
                LOG.debug("{} is {}", txn.transactionalId, complete.txnState());
                (complete.txnState() == TransactionState.COMPLETE_COMMIT ? committed : aborted)
                    .increment();
              } else if (error == Errors.COORDINATOR_NOT_AVAILABLE && owns(part)) {
                timer.schedule(
                    () ->
                        execute(
                            () -> {
                              if (owns(part)
                                  && part.get(txn.transactionalId) == txn
                                  && !txn.hasPendingTransition()) {
                                writeCompletion(part, txn);
                              }
                            }),
                    config.requestTimeoutMs() / 10 + 1,
                    TimeUnit.MILLISECONDS);
              } else {
                LOG.info("Completing {} failed: {}", txn.transactionalId, error);
              }
            });
  }

  /** Transactions this coordinator completed with their commit markers written, since start. */
  public long committedTransactions() {
    return committed.sum();
  }

  /** Transactions this coordinator completed with their abort markers written, since start. */
  public long abortedTransactions() {
    return aborted.sum();
  }

  /** Transactions this coordinator began to abort because they ran past their timeout. */
  public long timedOutTransactions() {
    return timedOut.sum();
  }

  /** DescribeTransactions: the id's state, or null when no such id is kept here. */
  public CompletableFuture<TransactionListing> describe(String transactionalId) {
    return onPartition(
        transactionalId,
        part -> {
          TransactionMetadata txn = part.get(transactionalId);
          return txn == null || txn.state == TransactionState.DEAD ? null : listing(txn);
        });
  }

  /** ListTransactions: the ids coordinated here. */
  public CompletableFuture<List<TransactionListing>> list() {
    return supply(
        () -> {
          List<TransactionListing> listed = new ArrayList<>();
          for (TransactionPartition part : partitions.values()) {
            if (!part.isLoaded()) {
              throw Errors.COORDINATOR_LOAD_IN_PROGRESS.exception(part.tp + " is still loading");
            }
            for (TransactionMetadata txn : part.transactions()) {
              if (txn.state != TransactionState.DEAD) {
                listed.add(listing(txn));
              }
            }
          }
          return listed;
        });
  }

  private static TransactionListing listing(TransactionMetadata txn) {
    return new TransactionListing(
        txn.transactionalId,
        txn.producerId,
        txn.producerEpoch,
        txn.state,
        txn.timeoutMs,
        txn.startTimestampMs,
        Set.copyOf(txn.partitions));
  }

  /** On the coordinator thread: aborts, with a fencing epoch, what ran past its timeout. */
  private void abortTimedOutTransactions() {
    long nowMs = time.milliseconds();
    for (TransactionPartition part : List.copyOf(partitions.values())) {
      if (!part.isLoaded()) {
        continue;
      }
      for (TransactionMetadata txn : List.copyOf(part.transactions())) {
        if (txn.state == TransactionState.ONGOING
            && !txn.hasPendingTransition()
            && txn.startTimestampMs + txn.timeoutMs < nowMs) {
          LOG.info(
              "Aborting {}: its transaction started {} ms ago, its timeout is {} ms",
              txn.transactionalId,
              nowMs - txn.startTimestampMs,
              txn.timeoutMs);
          abortFenced(part, txn, txn.prepareFenceProducerEpoch())
              .thenAccept(
                  error -> {
                    if (error == Errors.NONE) {
                      timedOut.increment();
                    } else {
                      LOG.info("Aborting {} failed: {}", txn.transactionalId, error);
                    }
                  });
        }
      }
    }
  }

  /** On the coordinator thread: deletes ids idle past {@code transactional.id.expiration.ms}. */
  private void removeExpiredTransactionalIds() {
    long nowMs = time.milliseconds();
    for (TransactionPartition part : List.copyOf(partitions.values())) {
      if (!part.isLoaded()) {
        continue;
      }
      for (TransactionMetadata txn : List.copyOf(part.transactions())) {
        if (txn.state.isExpirationAllowed()
            && !txn.hasPendingTransition()
            && txn.lastUpdateTimestampMs + config.transactionalIdExpirationMs() <= nowMs) {
          txn.prepareDead();
          append(part, TransactionRecords.tombstone(txn.transactionalId, nowMs))
              .whenCompleteAsync(
                  (v, e) -> {
                    txn.abandon();
                    if (e == null) {
                      part.remove(txn);
                      LOG.info("Removed the expired transactional id {}", txn.transactionalId);
                    }
                  },
                  thread);
        }
      }
    }
  }

  /**
   * On the coordinator thread: writes a prepared change and applies it once written; answers its
   * error otherwise, with the change dropped.
   */
  private CompletableFuture<Errors> write(
      TransactionPartition part, TransactionMetadata txn, TxnTransitMetadata transit) {
    return append(part, TransactionRecords.of(txn.transactionalId, transit, time.milliseconds()))
        .handleAsync(
            (v, e) -> {
              if (!owns(part) || part.get(txn.transactionalId) != txn) {
                return Errors.NOT_COORDINATOR;
              }
              if (e != null) {
                txn.abandon();
                return appendError(e);
              }
              txn.complete(transit);
              return Errors.NONE;
            },
            thread);
  }

  private CompletableFuture<Void> append(TransactionPartition part, SimpleRecord record) {
    return replicas
        .appendAsCoordinator(
            part.tp, MemoryRecords.withRecords(Compression.NONE, record), config.requestTimeoutMs())
        .thenApply(info -> null);
  }

  /** On the coordinator thread: whether {@code part} is still the one loaded here. */
  private boolean owns(TransactionPartition part) {
    return partitions.get(part.tp.partition()) == part;
  }

  /** The error a client gets when a write to {@code __transaction_state} failed, as in Kafka. */
  private static Errors appendError(Throwable failure) {
    return switch (Errors.forException(Errors.maybeUnwrapException(failure))) {
      case UNKNOWN_TOPIC_OR_PARTITION,
          NOT_ENOUGH_REPLICAS,
          NOT_ENOUGH_REPLICAS_AFTER_APPEND,
          REQUEST_TIMED_OUT ->
          Errors.COORDINATOR_NOT_AVAILABLE;
      case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> Errors.NOT_COORDINATOR;
      case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE -> Errors.UNKNOWN_SERVER_ERROR;
      default -> Errors.forException(Errors.maybeUnwrapException(failure));
    };
  }

  /** A failure's error code; one that is not Kafka's is a bug here, and logged. */
  private static Errors errorOf(Throwable failure) {
    Throwable cause = Errors.maybeUnwrapException(failure);
    if (cause instanceof ApiException) {
      return Errors.forException(cause);
    }
    LOG.error("The transaction coordinator failed unexpectedly", cause);
    return Errors.UNKNOWN_SERVER_ERROR;
  }

  private static <T> CompletableFuture<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  /**
   * Runs {@code work} on the coordinator thread with the id's partition, once loaded; fails with
   * NOT_COORDINATOR when this broker does not lead it.
   */
  private <T> CompletableFuture<T> onPartition(
      String transactionalId, Function<TransactionPartition, T> work) {
    return supply(
        () -> {
          TopicMetadata topic = metadata.topic(TRANSACTION_TOPIC).orElse(null);
          if (topic == null) {
            throw Errors.NOT_COORDINATOR.exception(TRANSACTION_TOPIC + " does not exist yet");
          }
          TransactionPartition part =
              partitions.get(partitionFor(transactionalId, topic.partitions()));
          if (part == null) {
            throw Errors.NOT_COORDINATOR.exception(
                "Broker " + replicas.localId() + " is not the coordinator of " + transactionalId);
          }
          if (!part.isLoaded()) {
            throw Errors.COORDINATOR_LOAD_IN_PROGRESS.exception(part.tp + " is still loading");
          }
          return work.apply(part);
        });
  }

  private <T> CompletableFuture<T> supply(Supplier<T> work) {
    try {
      return CompletableFuture.supplyAsync(work, thread);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(
          Errors.COORDINATOR_NOT_AVAILABLE.exception(
              "The transaction coordinator is overloaded or closed"));
    }
  }

  private void execute(Runnable work) {
    try {
      thread.execute(work);
    } catch (RejectedExecutionException e) {
      LOG.warn("The transaction coordinator dropped a task: {}", e.toString());
    }
  }

  @Override
  public void close() throws InterruptedException {
    timer.shutdownNow();
    loader.shutdownNow();
    markers.close();
    thread.shutdown();
    thread.awaitTermination(5, TimeUnit.SECONDS);
  }
}
