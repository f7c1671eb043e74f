package io.tidelog.broker.protocol;

import io.tidelog.broker.replica.LogDirStatus;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.replica.ReplicaStatus;
import io.tidelog.broker.security.Authorization;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsPartition;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsResult;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;
import org.apache.kafka.common.requests.RequestContext;

/**
 * DescribeLogDirs, as {@code kafka-log-dirs} and Admin's {@code describeLogDirs} ask it: each log
 * directory of this broker with its file system's size and free space, and the replicas it holds
 * (of every partition, or of those asked) with their size on disk and how far their log end is
 * below the high watermark ({@code offsetLag}, 0 for a leader). An offline directory is answered
 * KAFKA_STORAGE_ERROR. Authorized as in Kafka: DESCRIBE on the cluster, else the request's error is
 * CLUSTER_AUTHORIZATION_FAILED with no directory. Tidelog moves no replica between directories, so
 * none is a future replica.
 */
public final class LogDirsHandler {
  private final ReplicaManager replicas;
  private final Authorization authorization;

  public LogDirsHandler(ReplicaManager replicas, Authorization authorization) {
    this.replicas = replicas;
    this.authorization = authorization;
  }

  CompletableFuture<DescribeLogDirsResponse> describe(
      RequestContext context, AbstractRequest request) {
    DescribeLogDirsRequestData data = ((DescribeLogDirsRequest) request).data();
    if (!authorization.allowedOnCluster(context, AclOperation.DESCRIBE)) {
      return CompletableFuture.completedFuture(
          new DescribeLogDirsResponse(
              new DescribeLogDirsResponseData()
                  .setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())));
    }
    Set<TopicPartition> asked = asked(data);
    return replicas
        .logDirStatuses()
        .thenCombine(
            replicas.replicaStatuses(), (dirs, statuses) -> response(dirs, statuses, asked));
  }

  /** The partitions asked for, or null for all of them. */
  private static Set<TopicPartition> asked(DescribeLogDirsRequestData data) {
    if (data.topics() == null) {
      return null;
    }
    Set<TopicPartition> asked = new HashSet<>();
    data.topics()
        .forEach(t -> t.partitions().forEach(p -> asked.add(new TopicPartition(t.topic(), p))));
    return asked;
  }

  private static DescribeLogDirsResponse response(
      List<LogDirStatus> dirs, List<ReplicaStatus> statuses, Set<TopicPartition> asked) {
    DescribeLogDirsResponseData data = new DescribeLogDirsResponseData();
    for (LogDirStatus dir : dirs) {
      DescribeLogDirsResult result = new DescribeLogDirsResult().setLogDir(dir.dir());
      if (dir.offline()) {
        data.results().add(result.setErrorCode(Errors.KAFKA_STORAGE_ERROR.code()));
        continue;
      }
      Map<String, DescribeLogDirsTopic> topics = new LinkedHashMap<>();
      for (ReplicaStatus replica : statuses) {
        if (!replica.logDir().equals(dir.dir())
            || (asked != null && !asked.contains(replica.tp()))) {
          continue;
        }
        topics
            .computeIfAbsent(replica.tp().topic(), name -> new DescribeLogDirsTopic().setName(name))
            .partitions()
            .add(
                new DescribeLogDirsPartition()
                    .setPartitionIndex(replica.tp().partition())
                    .setPartitionSize(replica.sizeBytes())
                    .setOffsetLag(Math.max(replica.highWatermark() - replica.logEndOffset(), 0))
                    .setIsFutureKey(false));
      }
      data.results()
          .add(
              result
                  .setErrorCode(Errors.NONE.code())
                  .setTopics(List.copyOf(topics.values()))
                  .setTotalBytes(dir.totalBytes())
                  .setUsableBytes(dir.usableBytes()));
    }
    return new DescribeLogDirsResponse(data);
  }
}
