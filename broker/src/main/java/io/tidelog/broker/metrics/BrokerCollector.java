package io.tidelog.broker.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.tidelog.broker.cluster.BrokerRegistration;
import io.tidelog.broker.cluster.Controller;
import io.tidelog.broker.cluster.CrashDetector;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.group.GroupCoordinator;
import io.tidelog.broker.group.GroupCoordinator.PartitionLag;
import io.tidelog.broker.log.LogManager;
import io.tidelog.broker.replica.LeaderOffsets;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.replica.ReplicaStatus;
import io.tidelog.broker.txn.TransactionCoordinator;
import io.tidelog.broker.txn.TransactionCoordinator.TransactionListing;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the broker's state says at scrape time: the replicas here and their health, the controller,
 * the etcd session, the log directories, the lag of the groups and the transactions this broker
 * coordinates. One snapshot of each source per scrape, so the families agree with each other.
 *
 * <p>Per-partition series ({@code tidelog_log_*_offset}, {@code tidelog_log_size_bytes}, {@code
 * tidelog_last_stable_offset_lag}, {@code tidelog_consumer_group_lag}) are left out when {@code
 * tidelog.metrics.partition.enable} is false; their per-topic sums stay. Runs on the scrape's
 * worker thread: it waits, bounded, for the storage shards and the coordinators to answer.
 */
public final class BrokerCollector implements MultiCollector {
  private static final Logger LOG = LoggerFactory.getLogger(BrokerCollector.class);
  private static final long SNAPSHOT_TIMEOUT_MS = 5_000;

  private final ReplicaManager replicas;
  private final MetadataStore metadata;
  private final Controller controller;
  private final BrokerRegistration registration;
  private final LogManager logManager;
  private final CrashDetector crashes;
  private final GroupCoordinator groups;
  private final TransactionCoordinator transactions;
  private final LeaderOffsets leaderOffsets;
  private final boolean perPartition;

  public BrokerCollector(
      ReplicaManager replicas,
      MetadataStore metadata,
      Controller controller,
      BrokerRegistration registration,
      LogManager logManager,
      GroupCoordinator groups,
      TransactionCoordinator transactions,
      LeaderOffsets leaderOffsets,
      CrashDetector crashes,
      boolean perPartition) {
    this.crashes = crashes;
    this.replicas = replicas;
    this.metadata = metadata;
    this.controller = controller;
    this.registration = registration;
    this.logManager = logManager;
    this.groups = groups;
    this.transactions = transactions;
    this.leaderOffsets = leaderOffsets;
    this.perPartition = perPartition;
  }

  @Override
  public MetricSnapshots collect() {
    MetricSnapshots.Builder out = MetricSnapshots.builder();
    // Both asked at once: the shards and the partition leaders answer in parallel
    CompletableFuture<List<ReplicaStatus>> replicaStatuses = replicas.replicaStatuses();
    CompletableFuture<List<PartitionLag>> groupLags = groups.lag(leaderOffsets::highWatermarks);
    CompletableFuture<List<TransactionListing>> listings = transactions.list();
    List<ReplicaStatus> statuses = await(replicaStatuses, "replica states");
    if (statuses != null) {
      addReplicas(out, statuses);
    }
    List<PartitionLag> lags = await(groupLags, "group lag");
    if (lags != null) {
      addLag(out, lags);
    }
    List<TransactionListing> listed = await(listings, "transactions");
    if (listed != null) {
      addTransactions(out, listed);
    }
    boolean active = controller.isActive();
    out.metricSnapshot(
        gauge(
            "tidelog_controller_active",
            "1 on the active controller, 0 elsewhere",
            active ? 1 : 0));
    out.metricSnapshot(
        gauge(
            "tidelog_offline_partitions",
            "Partitions without a leader; reported by the active controller, 0 elsewhere",
            active
                ? metadata.image().partitions().values().stream()
                    .filter(p -> p.leader() == PartitionState.NO_LEADER)
                    .count()
                : 0));
    out.metricSnapshot(
        counter(
            "tidelog_controller_elections",
            "Controller elections this broker won",
            controller.elections()));
    out.metricSnapshot(
        counter(
            "tidelog_etcd_lease_keepalive_failures",
            "Failures of the registration lease's keep-alive stream to etcd",
            registration.keepAliveFailures()));
    out.metricSnapshot(
        counter(
            "tidelog_etcd_watch_resyncs",
            "Times the metadata watch ended and the metadata was read again from etcd",
            metadata.watchResyncs()));
    out.metricSnapshot(
        counter(
            "tidelog_crashed_brokers_fenced",
            "Sessions of crashed brokers (their port refusing after a connection broke) that this"
                + " broker ended before etcd expired them",
            crashes.revoked()));
    out.metricSnapshot(
        counter(
            "tidelog_isr_shrinks",
            "ISR changes this broker made as leader that dropped a replica",
            replicas.isrShrinks()));
    out.metricSnapshot(
        counter(
            "tidelog_isr_expands",
            "ISR changes this broker made as leader that added a replica",
            replicas.isrExpands()));
    out.metricSnapshot(
        GaugeSnapshot.builder()
            .name("tidelog_purgatory_size")
            .help("Requests waiting in a purgatory: Fetch long polls, acks=all Produce appends")
            .dataPoint(point(replicas.waitingFetches(), "operation", "Fetch"))
            .dataPoint(point(replicas.waitingProduces(), "operation", "Produce"))
            .build());
    addLogDirs(out);
    return out.build();
  }

  private void addReplicas(MetricSnapshots.Builder out, List<ReplicaStatus> statuses) {
    out.metricSnapshot(
        gauge("tidelog_partitions", "Partition replicas hosted by this broker", statuses.size()));
    out.metricSnapshot(
        gauge(
            "tidelog_leader_partitions",
            "Partitions this broker leads",
            statuses.stream().filter(ReplicaStatus::isLeader).count()));
    out.metricSnapshot(
        gauge(
            "tidelog_under_replicated_partitions",
            "Partitions led here with an assigned replica out of the ISR",
            statuses.stream().filter(ReplicaStatus::isUnderReplicated).count()));
    out.metricSnapshot(
        gauge(
            "tidelog_under_min_isr_partitions",
            "Partitions led here with fewer in-sync replicas than min.insync.replicas",
            statuses.stream().filter(ReplicaStatus::isUnderMinIsr).count()));
    Map<String, Long> sizeByTopic =
        statuses.stream()
            .collect(
                Collectors.groupingBy(
                    r -> r.tp().topic(),
                    TreeMap::new,
                    Collectors.summingLong(ReplicaStatus::sizeBytes)));
    GaugeSnapshot.Builder topicSize =
        GaugeSnapshot.builder()
            .name("tidelog_topic_log_size_bytes")
            .help("Size on disk of the topic's replicas on this broker");
    sizeByTopic.forEach((topic, bytes) -> topicSize.dataPoint(point(bytes, "topic", topic)));
    out.metricSnapshot(topicSize.build());
    if (perPartition) {
      out.metricSnapshot(
          perReplica(statuses, "tidelog_log_size_bytes", "Size on disk", ReplicaStatus::sizeBytes));
      out.metricSnapshot(
          perReplica(
              statuses,
              "tidelog_log_start_offset",
              "The log's first offset",
              ReplicaStatus::logStartOffset));
      out.metricSnapshot(
          perReplica(
              statuses,
              "tidelog_log_end_offset",
              "The offset after the log's last record (LEO)",
              ReplicaStatus::logEndOffset));
      out.metricSnapshot(
          perReplica(
              statuses.stream().filter(ReplicaStatus::isLeader).toList(),
              "tidelog_last_stable_offset_lag",
              "Leaders: the high watermark minus the last stable offset, the records that"
                  + " read_committed consumers wait for while transactions are open",
              r -> Math.max(0, r.highWatermark() - r.lastStableOffset())));
    }
  }

  private static GaugeSnapshot perReplica(
      List<ReplicaStatus> statuses, String name, String help, Function<ReplicaStatus, Long> value) {
    GaugeSnapshot.Builder gauge = GaugeSnapshot.builder().name(name).help(help);
    for (ReplicaStatus r : statuses) {
      gauge.dataPoint(
          point(
              value.apply(r),
              "topic",
              r.tp().topic(),
              "partition",
              String.valueOf(r.tp().partition())));
    }
    return gauge.build();
  }

  private void addTransactions(MetricSnapshots.Builder out, List<TransactionListing> listed) {
    Map<TransactionState, Long> byState = new EnumMap<>(TransactionState.class);
    for (TransactionState state : TransactionState.values()) {
      byState.put(state, 0L);
    }
    listed.forEach(txn -> byState.merge(txn.state(), 1L, Long::sum));
    GaugeSnapshot.Builder states =
        GaugeSnapshot.builder()
            .name("tidelog_transactions")
            .help("Transactional ids this broker coordinates, per state of their transaction");
    byState.forEach((state, count) -> states.dataPoint(point(count, "state", state.stateName())));
    out.metricSnapshot(states.build());
    out.metricSnapshot(
        CounterSnapshot.builder()
            .name("tidelog_transactions_completed")
            .help("Transactions this coordinator completed, their markers written, per result")
            .dataPoint(counterPoint(transactions.committedTransactions(), "result", "commit"))
            .dataPoint(counterPoint(transactions.abortedTransactions(), "result", "abort"))
            .build());
    out.metricSnapshot(
        counter(
            "tidelog_transactions_timed_out",
            "Transactions this coordinator aborted because they ran past their timeout",
            transactions.timedOutTransactions()));
  }

  private void addLag(MetricSnapshots.Builder out, List<PartitionLag> lags) {
    Map<String, Map<String, Long>> byGroup = new TreeMap<>();
    for (PartitionLag lag : lags) {
      byGroup
          .computeIfAbsent(lag.groupId(), g -> new TreeMap<>())
          .merge(lag.tp().topic(), lag.lag(), Long::sum);
    }
    GaugeSnapshot.Builder topicLag =
        GaugeSnapshot.builder()
            .name("tidelog_consumer_group_topic_lag")
            .help(
                "Records of the topic a group has not committed yet: the sum over its partitions"
                    + " of high watermark minus committed offset");
    byGroup.forEach(
        (group, byTopic) ->
            byTopic.forEach(
                (topic, lag) -> topicLag.dataPoint(point(lag, "group", group, "topic", topic))));
    out.metricSnapshot(topicLag.build());
    if (perPartition) {
      GaugeSnapshot.Builder partitionLag =
          GaugeSnapshot.builder()
              .name("tidelog_consumer_group_lag")
              .help("High watermark minus the group's committed offset, per partition");
      for (PartitionLag lag : lags) {
        partitionLag.dataPoint(
            point(
                lag.lag(),
                "group",
                lag.groupId(),
                "topic",
                lag.tp().topic(),
                "partition",
                String.valueOf(lag.tp().partition())));
      }
      out.metricSnapshot(partitionLag.build());
    }
  }

  private void addLogDirs(MetricSnapshots.Builder out) {
    out.metricSnapshot(
        gauge(
            "tidelog_log_dirs_offline",
            "Log directories taken offline after an I/O error",
            logManager.offlineDirs().size()));
    GaugeSnapshot.Builder free =
        GaugeSnapshot.builder()
            .name("tidelog_log_dir_free_bytes")
            .help("Space left for the broker on the file system of a live log directory");
    GaugeSnapshot.Builder total =
        GaugeSnapshot.builder()
            .name("tidelog_log_dir_size_bytes")
            .help("Size of the file system of a live log directory");
    for (Path dir : logManager.liveDirs()) {
      try {
        FileStore store = Files.getFileStore(dir);
        free.dataPoint(point(store.getUsableSpace(), "dir", dir.toString()));
        total.dataPoint(point(store.getTotalSpace(), "dir", dir.toString()));
      } catch (IOException e) {
        LOG.warn("Reading the file system of {} failed: {}", dir, e.toString());
      }
    }
    out.metricSnapshot(free.build());
    out.metricSnapshot(total.build());
  }

  private static <T> T await(CompletableFuture<T> future, String what) {
    try {
      return future.get(SNAPSHOT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException | TimeoutException e) {
      LOG.warn("Leaving {} out of this scrape: {}", what, e.toString());
      return null;
    }
  }

  private static GaugeSnapshot gauge(String name, String help, double value) {
    return GaugeSnapshot.builder()
        .name(name)
        .help(help)
        .dataPoint(GaugeDataPointSnapshot.builder().value(value).build())
        .build();
  }

  private static CounterSnapshot counter(String name, String help, double value) {
    return CounterSnapshot.builder()
        .name(name)
        .help(help)
        .dataPoint(CounterDataPointSnapshot.builder().value(value).build())
        .build();
  }

  private static CounterDataPointSnapshot counterPoint(double value, String... labels) {
    return CounterDataPointSnapshot.builder().value(value).labels(Labels.of(labels)).build();
  }

  private static GaugeDataPointSnapshot point(double value, String... labels) {
    return GaugeDataPointSnapshot.builder().value(value).labels(Labels.of(labels)).build();
  }
}
