package io.tidelog.broker.protocol;

/**
 * What a partition leader (Produce) or the group coordinator (TxnOffsetCommit) does with a
 * transaction's partition before it writes, by the request's version, as Kafka's {@code
 * TransactionSupportedOperation} decides it: older clients get INVALID_TXN_STATE where newer ones
 * know TRANSACTION_ABORTABLE, and clients of transaction protocol 2 have the partition added.
 */
enum TransactionOperation {
  /** Verify; a partition not in the transaction is INVALID_TXN_STATE. */
  VERIFY,
  /** Verify; a partition not in the transaction is TRANSACTION_ABORTABLE (KIP-890). */
  VERIFY_ABORTABLE,
  /** Add the partition to the transaction (transaction protocol 2). */
  ADD;

  static TransactionOperation forProduce(short version) {
    return version > 11 ? ADD : version > 10 ? VERIFY_ABORTABLE : VERIFY;
  }

  static TransactionOperation forTxnOffsetCommit(short version) {
    return version > 4 ? ADD : version > 3 ? VERIFY_ABORTABLE : VERIFY;
  }

  boolean adds() {
    return this == ADD;
  }
}
