package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.security.Authorization;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.resource.ResourceType;

/**
 * InitProducerId for idempotent producers: a fresh producer id at epoch 0, or the same id at the
 * next epoch when the producer asks for a bump (KIP-360). Transactions are not served yet.
 *
 * <p>Ids come from blocks of {@link #BLOCK_SIZE} reserved in etcd, as Kafka's brokers take blocks
 * from the controller; the block is touched only on the single metadata executor.
 */
public final class ProducerIdHandler {
  private static final int BLOCK_SIZE = 1000;
  private final MetadataStore metadata;
  private final Executor metadataExecutor;
  private final Authorization authorization;
  private long nextId;
  private long blockEnd;

  public ProducerIdHandler(
      MetadataStore metadata, Executor metadataExecutor, Authorization authorization) {
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
  }

  /**
   * As in Kafka, a transactional producer needs WRITE on its transactional id, and an idempotent
   * one IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
   */
  CompletableFuture<InitProducerIdResponse> handle(
      RequestContext context, AbstractRequest request) {
    InitProducerIdRequestData data = ((InitProducerIdRequest) request).data();
    if (data.transactionalId() != null
        && !authorization.allowed(
            context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, data.transactionalId())) {
      return CompletableFuture.completedFuture(error(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
    }
    if (data.transactionalId() == null
        && !authorization.allowedOnCluster(context, AclOperation.IDEMPOTENT_WRITE)
        && !authorization.allowedOnSome(context, AclOperation.WRITE, ResourceType.TOPIC)) {
      return CompletableFuture.completedFuture(error(Errors.CLUSTER_AUTHORIZATION_FAILED));
    }
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
          if (nextId == blockEnd) {
            nextId = metadata.allocateProducerIds(BLOCK_SIZE);
            blockEnd = nextId + BLOCK_SIZE;
          }
          return response(nextId++, (short) 0);
        },
        metadataExecutor);
  }

  private static InitProducerIdResponse error(Errors error) {
    return new InitProducerIdResponse(
        new InitProducerIdResponseData()
            .setErrorCode(error.code())
            .setProducerId(-1)
            .setProducerEpoch((short) -1));
  }

  private static InitProducerIdResponse response(long producerId, short epoch) {
    return new InitProducerIdResponse(
        new InitProducerIdResponseData()
            .setErrorCode(Errors.NONE.code())
            .setProducerId(producerId)
            .setProducerEpoch(epoch));
  }
}
