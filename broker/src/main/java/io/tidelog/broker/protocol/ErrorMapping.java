package io.tidelog.broker.protocol;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.RequestHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one mapping from exceptions to Kafka error codes: kafka-clients' own {@link
 * Errors#forException}. Anything that is not a Kafka API exception becomes {@code
 * UNKNOWN_SERVER_ERROR} and is logged with the request's correlation id.
 */
final class ErrorMapping {
  private static final Logger LOG = LoggerFactory.getLogger(ErrorMapping.class);

  private ErrorMapping() {}

  static Throwable unwrap(Throwable e) {
    Throwable cause = e;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  static Errors errorOf(Throwable e, RequestHeader header) {
    Throwable cause = unwrap(e);
    Errors error = Errors.forException(cause);
    if (!(cause instanceof ApiException)) {
      LOG.error(
          "Unexpected error serving {} v{} (correlation id {}, client {})",
          header.apiKey(),
          header.apiVersion(),
          header.correlationId(),
          header.clientId(),
          cause);
    }
    return error;
  }

  /** The error and message for a response, {@code NONE} when {@code e} is null. */
  static ApiError apiError(Throwable e, RequestHeader header) {
    return e == null ? ApiError.NONE : new ApiError(errorOf(e, header), messageOf(e));
  }

  static String messageOf(Throwable e) {
    Throwable cause = unwrap(e);
    return cause instanceof ApiException ? cause.getMessage() : null;
  }
}
