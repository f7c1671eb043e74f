package io.tidelog.broker.log;

import static org.apache.kafka.common.config.ConfigDef.Importance.HIGH;
import static org.apache.kafka.common.config.ConfigDef.Importance.MEDIUM;
import static org.apache.kafka.common.config.ConfigDef.Range.atLeast;
import static org.apache.kafka.common.config.ConfigDef.Range.between;
import static org.apache.kafka.common.config.ConfigDef.Type.DOUBLE;
import static org.apache.kafka.common.config.ConfigDef.Type.INT;
import static org.apache.kafka.common.config.ConfigDef.Type.LIST;
import static org.apache.kafka.common.config.ConfigDef.Type.LONG;
import static org.apache.kafka.common.config.ConfigDef.Type.STRING;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.ValidList;
import org.apache.kafka.common.config.ConfigDef.ValidString;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.record.LegacyRecord;
import org.apache.kafka.common.record.TimestampType;

/**
 * The per-topic settings that shape a partition's log, under Kafka's own topic config names and
 * with Kafka's defaults.
 *
 * <p>Durability: {@code flush.messages} and {@code flush.ms} default to never, as in Kafka. An
 * append is then in the operating system's page cache when it returns: it survives the broker
 * process being killed, but not the machine losing power. Durability against machine loss comes
 * from replication to other brokers; set {@code flush.messages=1} to fsync every append instead.
 *
 * <p>{@code compression} is the codec (with its level) that batches are stored in, from {@code
 * compression.type} and its level configs; null for {@code producer}: as the producer sent them. A
 * producer's record of CreateTime more than {@code messageTimestampBeforeMaxMs} before the broker's
 * clock or {@code messageTimestampAfterMaxMs} after it is refused (Kafka 4's defaults: any time
 * before, at most an hour after).
 */
public record LogConfig(
    int segmentBytes,
    long segmentMs,
    int segmentIndexBytes,
    int indexIntervalBytes,
    int maxMessageBytes,
    long retentionMs,
    long retentionBytes,
    long flushMessages,
    long flushMs,
    TimestampType messageTimestampType,
    List<String> cleanupPolicy,
    long deleteRetentionMs,
    double minCleanableDirtyRatio,
    long minCompactionLagMs,
    int maxUncompressedMessageBytes,
    Compression compression,
    long messageTimestampBeforeMaxMs,
    long messageTimestampAfterMaxMs,
    long segmentJitterMs,
    long maxCompactionLagMs,
    long fileDeleteDelayMs) {

  /**
   * Tidelog's limit on what one record batch may decompress to (Kafka has none): {@code
   * max.message.bytes} bounds a batch as sent, compressed, so a small batch of zeros could
   * otherwise carry gigabytes that every consumer must inflate.
   */
  public static final String MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG =
      "tidelog.max.uncompressed.message.bytes";

  /** Kafka's definitions, used to parse and validate topic configs from any source. */
  public static final ConfigDef CONFIG_DEF =
      new ConfigDef()
          .define(
              TopicConfig.SEGMENT_BYTES_CONFIG,
              INT,
              1024 * 1024 * 1024,
              atLeast(LegacyRecord.RECORD_OVERHEAD_V0),
              MEDIUM,
              TopicConfig.SEGMENT_BYTES_DOC)
          .define(
              TopicConfig.SEGMENT_MS_CONFIG,
              LONG,
              7 * 24 * 60 * 60 * 1000L,
              atLeast(1),
              MEDIUM,
              TopicConfig.SEGMENT_MS_DOC)
          .define(
              TopicConfig.SEGMENT_INDEX_BYTES_CONFIG,
              INT,
              10 * 1024 * 1024,
              atLeast(TimeIndex.ENTRY_SIZE),
              MEDIUM,
              TopicConfig.SEGMENT_INDEX_BYTES_DOC)
          .define(
              TopicConfig.INDEX_INTERVAL_BYTES_CONFIG,
              INT,
              4096,
              atLeast(0),
              MEDIUM,
              TopicConfig.INDEX_INTERVAL_BYTES_DOC)
          .define(
              TopicConfig.MAX_MESSAGE_BYTES_CONFIG,
              INT,
              1024 * 1024 + 12,
              atLeast(0),
              MEDIUM,
              TopicConfig.MAX_MESSAGE_BYTES_DOC)
          .define(
              TopicConfig.RETENTION_MS_CONFIG,
              LONG,
              7 * 24 * 60 * 60 * 1000L,
              atLeast(-1),
              HIGH,
              TopicConfig.RETENTION_MS_DOC)
          .define(
              TopicConfig.RETENTION_BYTES_CONFIG,
              LONG,
              -1L,
              atLeast(-1),
              HIGH,
              TopicConfig.RETENTION_BYTES_DOC)
          .define(
              TopicConfig.FLUSH_MESSAGES_INTERVAL_CONFIG,
              LONG,
              Long.MAX_VALUE,
              atLeast(1),
              MEDIUM,
              TopicConfig.FLUSH_MESSAGES_INTERVAL_DOC)
          .define(
              TopicConfig.FLUSH_MS_CONFIG,
              LONG,
              Long.MAX_VALUE,
              between(0, Long.MAX_VALUE),
              MEDIUM,
              TopicConfig.FLUSH_MS_DOC)
          .define(
              TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG,
              STRING,
              TimestampType.CREATE_TIME.name,
              ValidString.in(TimestampType.CREATE_TIME.name, TimestampType.LOG_APPEND_TIME.name),
              MEDIUM,
              TopicConfig.MESSAGE_TIMESTAMP_TYPE_DOC)
          .define(
              TopicConfig.CLEANUP_POLICY_CONFIG,
              LIST,
              TopicConfig.CLEANUP_POLICY_DELETE,
              ValidList.in(TopicConfig.CLEANUP_POLICY_DELETE, TopicConfig.CLEANUP_POLICY_COMPACT),
              MEDIUM,
              TopicConfig.CLEANUP_POLICY_DOC)
          .define(
              TopicConfig.DELETE_RETENTION_MS_CONFIG,
              LONG,
              24 * 60 * 60 * 1000L,
              atLeast(0),
              MEDIUM,
              TopicConfig.DELETE_RETENTION_MS_DOC)
          .define(
              TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG,
              DOUBLE,
              0.5,
              between(0, 1),
              MEDIUM,
              TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_DOC)
          .define(
              TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG,
              LONG,
              0L,
              atLeast(0),
              MEDIUM,
              TopicConfig.MIN_COMPACTION_LAG_MS_DOC)
          .define(
              MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG,
              INT,
              128 * 1024 * 1024,
              atLeast(1),
              MEDIUM,
              "The most bytes a compressed record batch may hold once decompressed; a produce"
                  + " of more fails with MESSAGE_TOO_LARGE, checked while decompressing, so a"
                  + " compression bomb costs neither memory nor more than this much work.")
          .define(kafkas(TopicConfig.COMPRESSION_TYPE_CONFIG))
          .define(kafkas(TopicConfig.COMPRESSION_GZIP_LEVEL_CONFIG))
          .define(kafkas(TopicConfig.COMPRESSION_LZ4_LEVEL_CONFIG))
          .define(kafkas(TopicConfig.COMPRESSION_ZSTD_LEVEL_CONFIG))
          .define(kafkas(TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG))
          .define(kafkas(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG))
          .define(kafkas(TopicConfig.SEGMENT_JITTER_MS_CONFIG))
          .define(kafkas(TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG))
          .define(kafkas(TopicConfig.FILE_DELETE_DELAY_MS_CONFIG));

  /** Kafka's own definition of topic config {@code name}: its type, default and check. */
  private static ConfigDef.ConfigKey kafkas(String name) {
    return org.apache.kafka.storage.internals.log.LogConfig.configKeys().get(name);
  }

  public static final LogConfig DEFAULTS = parse(Map.of());

  /**
   * Parses topic configs given under Kafka's names; absent keys take Kafka's defaults.
   *
   * @throws ConfigException naming the key and the value when a value is invalid
   */
  @SuppressWarnings("unchecked")
  public static LogConfig parse(Map<String, ?> configs) {
    Map<String, Object> v = CONFIG_DEF.parse(configs);
    return new LogConfig(
        (Integer) v.get(TopicConfig.SEGMENT_BYTES_CONFIG),
        (Long) v.get(TopicConfig.SEGMENT_MS_CONFIG),
        (Integer) v.get(TopicConfig.SEGMENT_INDEX_BYTES_CONFIG),
        (Integer) v.get(TopicConfig.INDEX_INTERVAL_BYTES_CONFIG),
        (Integer) v.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG),
        (Long) v.get(TopicConfig.RETENTION_MS_CONFIG),
        (Long) v.get(TopicConfig.RETENTION_BYTES_CONFIG),
        (Long) v.get(TopicConfig.FLUSH_MESSAGES_INTERVAL_CONFIG),
        (Long) v.get(TopicConfig.FLUSH_MS_CONFIG),
        TimestampType.forName((String) v.get(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG)),
        List.copyOf((List<String>) v.get(TopicConfig.CLEANUP_POLICY_CONFIG)),
        (Long) v.get(TopicConfig.DELETE_RETENTION_MS_CONFIG),
        (Double) v.get(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG),
        (Long) v.get(TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG),
        (Integer) v.get(MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG),
        compression(v),
        (Long) v.get(TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG),
        (Long) v.get(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG),
        (Long) v.get(TopicConfig.SEGMENT_JITTER_MS_CONFIG),
        (Long) v.get(TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG),
        (Long) v.get(TopicConfig.FILE_DELETE_DELAY_MS_CONFIG));
  }

  /**
   * How long a segment may stay active, as Kafka's {@code LogConfig.maxSegmentMs}: {@code
   * segment.ms}, or {@code max.compaction.lag.ms} when that is shorter on a compacted topic, so
   * that no record waits in the active segment, which is never cleaned, beyond it.
   */
  public long maxSegmentMs() {
    return compactEnabled() ? Math.min(maxCompactionLagMs, segmentMs) : segmentMs;
  }

  /**
   * A new segment's jitter, as Kafka's {@code randomSegmentJitter}: a random part of {@code
   * segment.jitter.ms} (below {@link #maxSegmentMs()}) taken off its roll time, so that the
   * segments of many partitions created together do not all roll together.
   */
  long randomSegmentJitterMs() {
    return segmentJitterMs == 0
        ? 0
        : java.util.concurrent.ThreadLocalRandom.current()
            .nextLong(Math.min(segmentJitterMs, maxSegmentMs()));
  }

  /** The codec of {@code compression.type} at its level, or null for {@code producer}. */
  private static Compression compression(Map<String, Object> v) {
    String type = (String) v.get(TopicConfig.COMPRESSION_TYPE_CONFIG);
    return switch (type) {
      case "producer" -> null;
      case "uncompressed" -> Compression.NONE;
      case "gzip" ->
          Compression.gzip()
              .level((Integer) v.get(TopicConfig.COMPRESSION_GZIP_LEVEL_CONFIG))
              .build();
      case "lz4" ->
          Compression.lz4()
              .level((Integer) v.get(TopicConfig.COMPRESSION_LZ4_LEVEL_CONFIG))
              .build();
      case "zstd" ->
          Compression.zstd()
              .level((Integer) v.get(TopicConfig.COMPRESSION_ZSTD_LEVEL_CONFIG))
              .build();
      case "snappy" -> Compression.snappy().build();
      default -> throw new ConfigException(TopicConfig.COMPRESSION_TYPE_CONFIG, type);
    };
  }

  /** {@code cleanup.policy} holds {@code delete}: retention deletes old segments. */
  public boolean deleteEnabled() {
    return cleanupPolicy.contains(TopicConfig.CLEANUP_POLICY_DELETE);
  }

  /** {@code cleanup.policy} holds {@code compact}: the cleaner keeps the latest record per key. */
  public boolean compactEnabled() {
    return cleanupPolicy.contains(TopicConfig.CLEANUP_POLICY_COMPACT);
  }
}
