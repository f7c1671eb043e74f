/**
 * Transactions, as Kafka's transaction coordinator runs them ({@link
 * io.tidelog.broker.txn.TransactionCoordinator}): each transactional id's state lives in a
 * compacted {@code __transaction_state} partition, whose leader is the id's coordinator; it hands
 * out producer ids and epochs, records the partitions a transaction writes to, and ends a
 * transaction by writing commit or abort markers into each of them ({@link
 * io.tidelog.broker.txn.TransactionMarkers}).
 *
 * <p>Threads: all state is on the coordinator's one thread; loading reads the log on a thread of
 * its own; markers to other brokers travel on a Vert.x context.
 */
package io.tidelog.broker.txn;
