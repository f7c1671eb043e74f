package io.tidelog.broker.protocol;

import io.tidelog.broker.replica.ReplicaManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestHeader;

/** ListOffsets: earliest, latest (the high watermark) and by timestamp. */
public final class ListOffsetsHandler {
  private final ReplicaManager replicas;

  public ListOffsetsHandler(ReplicaManager replicas) {
    this.replicas = replicas;
  }

  CompletableFuture<ListOffsetsResponse> handle(RequestHeader header, AbstractRequest request) {
    ListOffsetsRequest listOffsets = (ListOffsetsRequest) request;
    ListOffsetsResponseData data = new ListOffsetsResponseData();
    List<CompletableFuture<Void>> lookups = new ArrayList<>();
    for (ListOffsetsTopic topic : listOffsets.data().topics()) {
      ListOffsetsTopicResponse topicResponse = new ListOffsetsTopicResponse().setName(topic.name());
      data.topics().add(topicResponse);
      for (ListOffsetsPartition partition : topic.partitions()) {
        ListOffsetsPartitionResponse response =
            new ListOffsetsPartitionResponse()
                .setPartitionIndex(partition.partitionIndex())
                .setTimestamp(RecordBatch.NO_TIMESTAMP)
                .setOffset(-1);
        topicResponse.partitions().add(response);
        TopicPartition tp = new TopicPartition(topic.name(), partition.partitionIndex());
        lookups.add(
            lookup(tp, partition.timestamp(), response)
                .exceptionally(
                    e -> {
                      response.setErrorCode(ErrorMapping.errorOf(e, header).code());
                      return null;
                    }));
      }
    }
    return CompletableFuture.allOf(lookups.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              if (header.apiVersion() < 4) { // the leader epoch field exists from v4 on
                data.topics()
                    .forEach(
                        t ->
                            t.partitions()
                                .forEach(
                                    p -> p.setLeaderEpoch(RecordBatch.NO_PARTITION_LEADER_EPOCH)));
              }
              return new ListOffsetsResponse(data);
            });
  }

  private CompletableFuture<Void> lookup(
      TopicPartition tp, long timestamp, ListOffsetsPartitionResponse response) {
    if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP
        || timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
      boolean earliest = timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP;
      return replicas
          .offsets(tp)
          .thenAccept(
              offsets ->
                  response
                      .setErrorCode(Errors.NONE.code())
                      .setOffset(earliest ? offsets[0] : offsets[1])
                      .setLeaderEpoch(0));
    }
    if (timestamp < 0) {
      response.setErrorCode(Errors.UNSUPPORTED_VERSION.code());
      return CompletableFuture.completedFuture(null);
    }
    return replicas
        .offsetForTimestamp(tp, timestamp)
        .thenAccept(
            found -> {
              response.setErrorCode(Errors.NONE.code());
              found.ifPresent(
                  f ->
                      response
                          .setOffset(f.offset)
                          .setTimestamp(f.timestamp)
                          .setLeaderEpoch(
                              f.leaderEpoch.orElse(RecordBatch.NO_PARTITION_LEADER_EPOCH)));
            });
  }
}
