package io.tidelog.broker.protocol;

import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData.WritableTxnMarker;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData.WritableTxnMarkerTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;

/**
 * WriteTxnMarkers, which a transaction coordinator sends to the leaders of a transaction's
 * partitions, and Admin's {@code abortTransaction} ({@code kafka-transactions abort}) to close a
 * hanging one: each marker is written to each of its partitions as a commit or abort control batch
 * ({@code PartitionLog.appendMarker}), and answered once the ISR has it or {@code
 * request.timeout.ms} passed. As in Kafka: CLUSTER_ACTION on the cluster or every partition is
 * CLUSTER_AUTHORIZATION_FAILED; a marker of an older producer epoch is INVALID_PRODUCER_EPOCH, of
 * an older coordinator epoch TRANSACTION_COORDINATOR_FENCED; the answer merges the markers of one
 * producer id.
 */
public final class WriteTxnMarkersHandler {
  private final ReplicaManager replicas;
  private final Authorization authorization;
  private final int requestTimeoutMs;

  public WriteTxnMarkersHandler(
      ReplicaManager replicas, Authorization authorization, int requestTimeoutMs) {
    this.replicas = replicas;
    this.authorization = authorization;
    this.requestTimeoutMs = requestTimeoutMs;
  }

  CompletableFuture<WriteTxnMarkersResponse> handle(
      RequestContext context, AbstractRequest request) {
    WriteTxnMarkersRequest markers = (WriteTxnMarkersRequest) request;
    if (!authorization.allowedOnCluster(context, AclOperation.CLUSTER_ACTION)) {
      return CompletableFuture.completedFuture(
          markers.getErrorResponse(0, Errors.CLUSTER_AUTHORIZATION_FAILED.exception()));
    }
    Map<Long, Map<TopicPartition, Errors>> errors = new LinkedHashMap<>();
    List<CompletableFuture<Void>> appends = new ArrayList<>();
    for (WritableTxnMarker marker : markers.data().markers()) {
      Map<TopicPartition, Errors> producerErrors =
          errors.computeIfAbsent(marker.producerId(), id -> new LinkedHashMap<>());
      EndTransactionMarker endMarker =
          new EndTransactionMarker(
              marker.transactionResult() ? ControlRecordType.COMMIT : ControlRecordType.ABORT,
              marker.coordinatorEpoch());
      for (WritableTxnMarkerTopic topic : marker.topics()) {
        for (int partition : topic.partitionIndexes()) {
          TopicPartition tp = new TopicPartition(topic.name(), partition);
          appends.add(
              replicas
                  .appendMarker(
                      tp, marker.producerId(), marker.producerEpoch(), endMarker, requestTimeoutMs)
                  .handle(
                      (info, e) -> {
                        Errors error =
                            e == null ? Errors.NONE : ErrorMapping.errorOf(e, context.header);
                        synchronized (producerErrors) {
                          producerErrors.put(tp, error);
                        }
                        return null;
                      }));
        }
      }
    }
    return CompletableFuture.allOf(appends.toArray(CompletableFuture[]::new))
        .thenApply(v -> new WriteTxnMarkersResponse(errors));
  }
}
