package io.tidelog.operator.cluster;

import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.brokers.BrokerAccess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;

/**
 * The {@code spec.config} keys that brokers take without a restart, and how the operator gives them
 * to the running brokers: as the cluster-wide dynamic default (Kafka's {@code kafka-configs
 * --entity-type brokers --entity-default}), through IncrementalAlterConfigs, as Strimzi does for
 * Kafka's dynamic configs. A change of these keys alone restarts no broker; they stay in
 * server.properties too, but out of the hash that rolls the pods.
 */
public final class DynamicConfigs {
  /**
   * The broker's dynamic keys ({@code DynamicBrokerConfig.DYNAMIC} in the broker, which an e2e test
   * keeps equal to this; the operator runs without the broker's classes), but for the listeners,
   * which the operator owns and brokers take only per broker, and {@code num.io.threads}, which a
   * broker reads at its start: a change of it rolls the brokers.
   */
  public static final Set<String> KEYS =
      Set.of(
          "log.segment.bytes",
          "log.roll.ms",
          "log.index.size.max.bytes",
          "log.index.interval.bytes",
          "message.max.bytes",
          "log.retention.ms",
          "log.retention.bytes",
          "log.flush.interval.messages",
          "log.flush.interval.ms",
          "log.message.timestamp.type",
          "log.cleanup.policy",
          "log.cleaner.delete.retention.ms",
          "log.cleaner.min.cleanable.ratio",
          "log.cleaner.min.compaction.lag.ms",
          "compression.type",
          "compression.gzip.level",
          "compression.lz4.level",
          "compression.zstd.level",
          "min.insync.replicas",
          "unclean.leader.election.enable",
          "log.segment.delete.delay.ms",
          "log.cleaner.dedupe.buffer.size",
          "log.cleaner.io.max.bytes.per.second",
          "log.cleaner.backoff.ms",
          "leader.replication.throttled.rate",
          "follower.replication.throttled.rate",
          "replica.alter.log.dirs.io.max.bytes.per.second",
          "max.connections",
          "max.connections.per.ip",
          "num.recovery.threads.per.data.dir");

  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final ConfigResource CLUSTER_DEFAULT =
      new ConfigResource(ConfigResource.Type.BROKER, "");

  private DynamicConfigs() {}

  /** The dynamic keys of {@code c}'s spec.config, with their values. */
  static Map<String, String> of(Cluster c) {
    Map<String, String> dynamic = new TreeMap<>();
    if (c.getSpec().config != null) {
      c.getSpec()
          .config
          .forEach(
              (key, value) -> {
                if (KEYS.contains(key)) {
                  dynamic.put(key, value);
                }
              });
    }
    return dynamic;
  }

  /**
   * Makes the brokers' dynamic default of the {@link #KEYS} equal to {@code desired}: sets what
   * differs, deletes what is no longer declared (keys outside {@link #KEYS} are left to whoever set
   * them). Returns what it changed, as {@code key=value} and {@code -key}; empty when nothing.
   */
  static List<String> apply(BrokerAccess access, Map<String, String> desired) throws Exception {
    try (Admin admin = access.newAdmin(TIMEOUT, TIMEOUT)) {
      Map<String, String> current = new TreeMap<>();
      for (ConfigEntry entry :
          admin
              .describeConfigs(List.of(CLUSTER_DEFAULT))
              .all()
              .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
              .get(CLUSTER_DEFAULT)
              .entries()) {
        if (KEYS.contains(entry.name())) {
          current.put(entry.name(), entry.value());
        }
      }
      List<AlterConfigOp> ops = new ArrayList<>();
      List<String> changed = new ArrayList<>();
      desired.forEach(
          (key, value) -> {
            if (!value.equals(current.get(key))) {
              ops.add(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET));
              changed.add(key + "=" + value);
            }
          });
      current.keySet().stream()
          .filter(key -> !desired.containsKey(key))
          .forEach(
              key -> {
                ops.add(new AlterConfigOp(new ConfigEntry(key, null), AlterConfigOp.OpType.DELETE));
                changed.add("-" + key);
              });
      if (!ops.isEmpty()) {
        admin
            .incrementalAlterConfigs(Map.of(CLUSTER_DEFAULT, ops))
            .all()
            .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      }
      return changed;
    }
  }
}
