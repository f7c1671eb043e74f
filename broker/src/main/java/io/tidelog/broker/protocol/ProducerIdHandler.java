package io.tidelog.broker.protocol;

import io.tidelog.broker.security.Authorization;
import io.tidelog.broker.txn.ProducerIds;
import io.tidelog.broker.txn.TransactionCoordinator;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.resource.ResourceType;

/**
 * InitProducerId. For an idempotent producer: a fresh producer id at epoch 0, or the same id at the
 * next epoch when the producer asks for a bump (KIP-360). For a transactional one: what its
 * coordinator answers ({@link TransactionCoordinator#initProducerId}); a producer id without an
 * epoch, or an epoch without an id, is INVALID_REQUEST, and versions before 4 get
 * INVALID_PRODUCER_EPOCH where later ones get PRODUCER_FENCED, as in Kafka.
 */
public final class ProducerIdHandler {
  private final ProducerIds producerIds;
  private final TransactionCoordinator transactions;
  private final Authorization authorization;

  public ProducerIdHandler(
      ProducerIds producerIds, TransactionCoordinator transactions, Authorization authorization) {
    this.producerIds = producerIds;
    this.transactions = transactions;
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
      boolean noId = data.producerId() == RecordBatch.NO_PRODUCER_ID;
      boolean noEpoch = data.producerEpoch() == RecordBatch.NO_PRODUCER_EPOCH;
      if (noId != noEpoch) {
        return CompletableFuture.completedFuture(error(Errors.INVALID_REQUEST));
      }
      short version = context.header.apiVersion();
      return transactions
          .initProducerId(
              data.transactionalId(),
              data.transactionTimeoutMs(),
              data.producerId(),
              data.producerEpoch())
          .thenApply(
              result ->
                  result.error() != Errors.NONE
                      ? error(ErrorMapping.fencedAs(result.error(), version, 4))
                      : response(result.producerId(), result.producerEpoch()));
    }
    boolean bump =
        data.producerId() >= 0
            && data.producerEpoch() >= 0
            && data.producerEpoch() < Short.MAX_VALUE - 1;
    if (bump) {
      return CompletableFuture.completedFuture(
          response(data.producerId(), (short) (data.producerEpoch() + 1)));
    }
    return producerIds.next().thenApply(id -> response(id, (short) 0));
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
