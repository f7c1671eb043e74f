package io.tidelog.broker.protocol;

import io.tidelog.broker.replica.ReplicaManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData.TopicProduceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Produce: each partition's batches go to the partition's shard, which validates and appends them
 * on the leader. {@code acks=1} completes once the leader has appended; {@code acks=all} once the
 * high watermark passes the batch, or with REQUEST_TIMED_OUT after the request's timeout; {@code
 * acks=0} gets no response (the dispatcher drops it).
 */
public final class ProduceHandler {
  private final ReplicaManager replicas;
  private final TopicMetrics metrics;

  public ProduceHandler(ReplicaManager replicas, TopicMetrics metrics) {
    this.replicas = replicas;
    this.metrics = metrics;
  }

  CompletableFuture<ProduceResponse> handle(RequestHeader header, AbstractRequest request) {
    ProduceRequest produce = (ProduceRequest) request;
    List<CompletableFuture<Void>> appends = new ArrayList<>();
    ProduceResponseData data = new ProduceResponseData();
    for (TopicProduceData topic : produce.data().topicData()) {
      TopicProduceResponse topicResponse = new TopicProduceResponse().setName(topic.name());
      data.responses().add(topicResponse);
      for (PartitionProduceData partition : topic.partitionData()) {
        PartitionProduceResponse response =
            new PartitionProduceResponse().setIndex(partition.index());
        topicResponse.partitionResponses().add(response);
        TopicPartition tp = new TopicPartition(topic.name(), partition.index());
        if (Topic.isInternal(topic.name())) {
          // Only the group coordinator writes __consumer_offsets, as in Kafka
          response
              .setErrorCode(Errors.INVALID_TOPIC_EXCEPTION.code())
              .setErrorMessage("Cannot append to internal topic " + topic.name());
          metrics.produceFailed(topic.name());
          continue;
        }
        if (!(partition.records() instanceof MemoryRecords records)) {
          response.setErrorCode(Errors.CORRUPT_MESSAGE.code());
          metrics.produceFailed(topic.name());
          continue;
        }
        appends.add(
            replicas
                .append(tp, records, produce.acks(), produce.timeout())
                .handle(
                    (info, e) -> {
                      if (e != null) {
                        metrics.produceFailed(tp.topic());
                        response
                            .setErrorCode(ErrorMapping.errorOf(e, header).code())
                            .setErrorMessage(ErrorMapping.messageOf(e))
                            .setBaseOffset(-1);
                      } else {
                        metrics.produced(tp.topic(), records.sizeInBytes(), info.recordCount());
                        response
                            .setErrorCode(Errors.NONE.code())
                            .setBaseOffset(info.firstOffset())
                            .setLogAppendTimeMs(info.logAppendTimeMs());
                      }
                      return null;
                    }));
      }
    }
    return CompletableFuture.allOf(appends.toArray(CompletableFuture[]::new))
        .thenApply(v -> new ProduceResponse(data));
  }
}
