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
   * A failed KIP-890 verification ({@code TransactionVerifier}) as Kafka 4.1's leader answers it
   * (transaction protocol 0 and 1): INVALID_TXN_STATE for a partition not in the transaction,
   * NOT_ENOUGH_REPLICAS (which clients retry without a metadata refresh) when no coordinator could
   * say, INVALID_PRODUCER_EPOCH for a fenced producer.
   */
  static ApiException unverified(Errors error) {
    return switch (error) {
      case INVALID_TXN_STATE, CLUSTER_AUTHORIZATION_FAILED ->
          new InvalidTxnStateException("Partition was not added to the transaction");
      case NETWORK_EXCEPTION,
          COORDINATOR_LOAD_IN_PROGRESS,
          COORDINATOR_NOT_AVAILABLE,
          NOT_COORDINATOR,
          CONCURRENT_TRANSACTIONS ->
          new NotEnoughReplicasException(
              "Unable to verify the partition has been added to the transaction. Underlying error: "
                  + error);
      case PRODUCER_FENCED -> Errors.INVALID_PRODUCER_EPOCH.exception();
      default -> error.exception();
    };
  }
}
