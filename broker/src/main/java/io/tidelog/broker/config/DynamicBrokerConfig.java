package io.tidelog.broker.config;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's config as it runs now, as Kafka's {@code DynamicBrokerConfig}: the static config
 * (file and environment) under the cluster-wide dynamic default, under this broker's own dynamic
 * configs, both stored in etcd and followed from its watch. Whoever applies a dynamic key live
 * listens for new configs ({@link #addListener}).
 *
 * <p>A key is dynamic when Kafka 4.1 updates it without a restart and Tidelog applies it live
 * ({@link #DYNAMIC}); AdminDifferentialIT checks each against Kafka. Kafka's dynamic listener, SSL
 * and SASL configs and {@code num.io.threads} are read-only here: adding a listener or resizing the
 * storage shards needs a restart, and certificate files are reloaded when they change on disk
 * instead.
 */
public final class DynamicBrokerConfig {
  private static final Logger LOG = LoggerFactory.getLogger(DynamicBrokerConfig.class);

  /** The keys that change without a restart, each applied live by the broker. */
  public static final Set<String> DYNAMIC =
      Set.of(
          // the defaults of topic configs, which every log takes up at once
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
          // the log cleaner, started again with them
          BrokerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE,
          BrokerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND,
          BrokerConfig.LOG_CLEANER_BACKOFF_MS,
          // the listeners' connection limits, for the connections that come next
          BrokerConfig.MAX_CONNECTIONS,
          BrokerConfig.MAX_CONNECTIONS_PER_IP,
          // read when logs are recovered, at the next start
          BrokerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR);

  private final BrokerConfig staticConfig;
  private final String nodeId;
  private final List<Consumer<BrokerConfig>> listeners = new CopyOnWriteArrayList<>();
  private Map<String, String> clusterDefault = Map.of();
  private Map<String, String> own = Map.of();
  private volatile BrokerConfig current;

  public DynamicBrokerConfig(BrokerConfig staticConfig) {
    this.staticConfig = staticConfig;
    this.nodeId = String.valueOf(staticConfig.nodeId());
    this.current = staticConfig;
  }

  /** The config the broker runs with now. */
  public BrokerConfig current() {
    return current;
  }

  /** The topic-config defaults of {@link #current()}. */
  public Map<String, String> topicDefaults() {
    return current.topicDefaults();
  }

  public BrokerConfig staticConfig() {
    return staticConfig;
  }

  /** The cluster-wide dynamic default, as stored. */
  public synchronized Map<String, String> clusterDefault() {
    return clusterDefault;
  }

  /** This broker's own dynamic configs, as stored. */
  public synchronized Map<String, String> own() {
    return own;
  }

  /** Tells {@code listener} every config the broker runs with from now on, as it comes. */
  public void addListener(Consumer<BrokerConfig> listener) {
    listeners.add(listener);
  }

  /**
   * Takes up the dynamic configs stored now: the cluster default and those of each broker by id.
   * Values that do not parse (written by another version) are logged and the config before them is
   * kept.
   */
  public void update(Map<String, Map<String, String>> stored) {
    BrokerConfig next;
    synchronized (this) {
      Map<String, String> newDefault = stored.getOrDefault("", Map.of());
      Map<String, String> newOwn = stored.getOrDefault(nodeId, Map.of());
      if (newDefault.equals(clusterDefault) && newOwn.equals(own)) {
        return;
      }
      try {
        next = staticConfig.withDynamic(merged(newDefault, newOwn));
      } catch (ConfigException e) {
        LOG.warn(
            "Keeping the broker config as it is: the dynamic configs do not parse: {}",
            e.getMessage());
        return;
      }
      clusterDefault = newDefault;
      own = newOwn;
      current = next;
    }
    LOG.info(
        "Broker config now has the dynamic default {} and this broker's {}",
        BrokerConfig.withoutSensitive(clusterDefault()),
        BrokerConfig.withoutSensitive(own()));
    listeners.forEach(l -> l.accept(next));
  }

  /**
   * Checks the dynamic configs that {@code entity} (a broker id, or the empty name of the cluster
   * default) would have, as Kafka's controller does: a key Kafka knows but cannot change without a
   * restart is refused, as is an invalid value; a key it does not know is stored and not used, as
   * in Kafka.
   *
   * @throws InvalidRequestException with Kafka's message
   */
  public void validate(String entity, Map<String, String> configs) {
    Set<String> readOnly = new TreeSet<>();
    for (String key : configs.keySet()) {
      if (BrokerConfig.isKnown(key) && !DYNAMIC.contains(key)) {
        readOnly.add(key);
      }
    }
    if (!readOnly.isEmpty()) {
      throw new InvalidRequestException(
          "Cannot update these configs dynamically: Set(" + String.join(", ", readOnly) + ")");
    }
    Map<String, String> layers;
    synchronized (this) {
      layers = entity.isEmpty() ? merged(configs, own) : merged(clusterDefault, configs);
    }
    try {
      staticConfig.withDynamic(layers);
    } catch (ConfigException e) {
      throw new InvalidRequestException(e.getMessage());
    }
  }

  private static Map<String, String> merged(
      Map<String, String> clusterDefault, Map<String, String> broker) {
    Map<String, String> merged = new HashMap<>(clusterDefault);
    merged.putAll(broker);
    return merged;
  }
}
