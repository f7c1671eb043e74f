package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * InitProducerId for idempotent producers: a fresh producer id at epoch 0, or the same id at the
 * next epoch when the producer asks for a bump (KIP-360). Transactions are not served yet.
 */
public final class ProducerIdHandler {
  private final MetadataStore metadata;
  private final Executor metadataExecutor;

  public ProducerIdHandler(MetadataStore metadata, Executor metadataExecutor) {
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
  }

  CompletableFuture<InitProducerIdResponse> handle(RequestHeader header, AbstractRequest request) {
    InitProducerIdRequestData data = ((InitProducerIdRequest) request).data();
    if (data.transactionalId() != null) {
      return CompletableFuture.failedFuture(
          new InvalidRequestException("Transactions are not supported yet"));
    }
    boolean bump =
        data.producerId() >= 0
            && data.producerEpoch() >= 0
            && data.producerEpoch() < Short.MAX_VALUE - 1;
    if (bump) {
      return CompletableFuture.completedFuture(
          response(data.producerId(), (short) (data.producerEpoch() + 1)));
    }
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return response(metadata.allocateProducerIds(1), (short) 0);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        },
        metadataExecutor);
  }

  private static InitProducerIdResponse response(long producerId, short epoch) {
    return new InitProducerIdResponse(
        new InitProducerIdResponseData()
            .setErrorCode(Errors.NONE.code())
            .setProducerId(producerId)
            .setProducerEpoch(epoch));
  }
}
