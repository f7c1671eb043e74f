package io.tidelog.broker.config;

/**
 * The transaction coordinator's settings, Kafka's broker configs of the same names.
 *
 * @param topicPartitions {@code transaction.state.log.num.partitions}
 * @param topicReplicationFactor {@code transaction.state.log.replication.factor}
 * @param topicMinIsr {@code transaction.state.log.min.isr}
 * @param topicSegmentBytes {@code transaction.state.log.segment.bytes}
 * @param loadBufferSize {@code transaction.state.log.load.buffer.size}
 * @param maxTimeoutMs {@code transaction.max.timeout.ms}
 * @param transactionalIdExpirationMs {@code transactional.id.expiration.ms}
 * @param abortTimedOutIntervalMs {@code
 *     transaction.abort.timed.out.transaction.cleanup.interval.ms}
 * @param removeExpiredIntervalMs {@code transaction.remove.expired.transaction.cleanup.interval.ms}
 * @param requestTimeoutMs {@code request.timeout.ms}: how long a write to {@code
 *     __transaction_state} waits for the ISR
 * @param addPartitionsRetryBackoffMs {@code add.partitions.to.txn.retry.backoff.ms}: how long a
 *     leader waits before it asks again to add a partition that CONCURRENT_TRANSACTIONS refused
 * @param addPartitionsRetryBackoffMaxMs {@code add.partitions.to.txn.retry.backoff.max.ms}: how
 *     long it keeps asking before it answers the producer CONCURRENT_TRANSACTIONS
 */
public record TransactionConfig(
    int topicPartitions,
    short topicReplicationFactor,
    int topicMinIsr,
    int topicSegmentBytes,
    int loadBufferSize,
    int maxTimeoutMs,
    int transactionalIdExpirationMs,
    int abortTimedOutIntervalMs,
    int removeExpiredIntervalMs,
    int requestTimeoutMs,
    int addPartitionsRetryBackoffMs,
    int addPartitionsRetryBackoffMaxMs) {}
