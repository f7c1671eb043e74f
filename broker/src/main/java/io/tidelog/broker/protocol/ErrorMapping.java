package io.tidelog.broker.protocol;

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * The one mapping from exceptions to Kafka error codes: kafka-clients' own {@link
 * Errors#forException}. Anything that is not a Kafka API exception becomes {@code
 * UNKNOWN_SERVER_ERROR} and goes to the {@link UnexpectedErrorLog} with the request's correlation
 * id.
 */
final class ErrorMapping {
  private static final UnexpectedErrorLog UNEXPECTED = new UnexpectedErrorLog();

  private ErrorMapping() {}

  static Errors errorOf(Throwable e, RequestHeader header) {
    Throwable cause = Errors.maybeUnwrapException(e);
    Errors error = Errors.forException(cause);
    if (!(cause instanceof ApiException)) {
      UNEXPECTED.log(
          header.apiKey(),
          "%s v%d (correlation id %d, client %s)"
              .formatted(
                  header.apiKey(), header.apiVersion(), header.correlationId(), header.clientId()),
          cause,
          System.currentTimeMillis());
    }
    return error;
  }

  /** The error and message for a response, {@code NONE} when {@code e} is null. */
  static ApiError apiError(Throwable e, RequestHeader header) {
    return e == null ? ApiError.NONE : new ApiError(errorOf(e, header), messageOf(e));
  }

  static String messageOf(Throwable e) {
    Throwable cause = Errors.maybeUnwrapException(e);
    return cause instanceof ApiException ? cause.getMessage() : null;
  }

  /**
   * PRODUCER_FENCED as a client of {@code version} knows it: INVALID_PRODUCER_EPOCH before version
   * {@code since} of its API, as Kafka answers older clients.
   */
  static Errors fencedAs(Errors error, short version, int since) {
    return error == Errors.PRODUCER_FENCED && version < since
        ? Errors.INVALID_PRODUCER_EPOCH
        : error;
  }

  /**
   * A failed KIP-890 verification or add ({@code TransactionVerifier}) as Kafka 4.1's leader
   * answers it: a partition not in the transaction is TRANSACTION_ABORTABLE, or INVALID_TXN_STATE
   * to clients that predate it; NOT_ENOUGH_REPLICAS (which clients retry without a metadata
   * refresh) when no coordinator could say; INVALID_PRODUCER_EPOCH for a fenced producer;
   * CONCURRENT_TRANSACTIONS as it is to a producer of transaction protocol 2, whose next
   * transaction waits for the last one's markers, and as NOT_ENOUGH_REPLICAS to the others.
   */
  static ApiException unverified(Errors error, TransactionOperation operation) {
    return switch (error) {
      case INVALID_TXN_STATE, CLUSTER_AUTHORIZATION_FAILED ->
          new InvalidTxnStateException("Partition was not added to the transaction");
      case TRANSACTION_ABORTABLE ->
          operation == TransactionOperation.VERIFY
              ? new InvalidTxnStateException("Partition was not added to the transaction")
              : error.exception();
      case CONCURRENT_TRANSACTIONS ->
          operation.adds() ? error.exception() : notEnoughReplicas(error);
      case NETWORK_EXCEPTION,
          COORDINATOR_LOAD_IN_PROGRESS,
          COORDINATOR_NOT_AVAILABLE,
          NOT_COORDINATOR ->
          notEnoughReplicas(error);
      case PRODUCER_FENCED -> Errors.INVALID_PRODUCER_EPOCH.exception();
      default -> error.exception();
    };
  }

  private static ApiException notEnoughReplicas(Errors error) {
    return new NotEnoughReplicasException(
        "Unable to verify the partition has been added to the transaction. Underlying error: "
            + error);
  }
}
