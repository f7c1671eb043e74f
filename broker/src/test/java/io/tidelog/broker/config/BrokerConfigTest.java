package io.tidelog.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tidelog.broker.config.BrokerConfig.Listener;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerConfigTest {
  @TempDir Path dir;

  @Test
  void readsServerPropertiesWithKafkaNamesDefaultsAndEnvironmentOverrides() throws IOException {
    Path file =
        Files.writeString(
            dir.resolve("server.properties"),
            String.join(
                "\n",
                "node.id=3",
                "listeners=PLAINTEXT://0.0.0.0:9093",
                "advertised.listeners=PLAINTEXT://broker-3.tidelog:9093",
                "log.dirs=/data/a,/data/b",
                "log.retention.hours=24",
                "log.segment.bytes=1048576",
                "min.insync.replicas=2",
                "unclean.leader.election.enable=true"));

    BrokerConfig config =
        BrokerConfig.load(file, Map.of("TIDELOG_NUM_PARTITIONS", "6", "HOME", "/root"));

    assertThat(config.nodeId()).isEqualTo(3);
    assertThat(config.listeners()).containsExactly(new Listener("PLAINTEXT", "0.0.0.0", 9093));
    assertThat(config.advertisedListeners())
        .containsExactly(new Listener("PLAINTEXT", "broker-3.tidelog", 9093));
    assertThat(config.logDirs()).containsExactly(Path.of("/data/a"), Path.of("/data/b"));
    assertThat(config.numPartitions()).isEqualTo(6);
    assertThat(config.autoCreateTopicsEnable()).isTrue();
    assertThat(config.socketRequestMaxBytes()).isEqualTo(104857600);
    assertThat(config.listenerLimits().maxConnectionsPerIp()).isEqualTo(1_000);
    assertThat(config.topicDefaults())
        .containsEntry("retention.ms", "86400000")
        .containsEntry("segment.bytes", "1048576")
        .containsEntry("min.insync.replicas", "2")
        .containsEntry("unclean.leader.election.enable", "true");
  }

  @Test
  void unknownKeysAndInvalidValuesAreRefusedByName() {
    ConfigException unknown =
        assertThrows(
            ConfigException.class,
            () ->
                BrokerConfig.parse(
                    Map.of("node.id", "0", "log.dirs", "/d", "log.retentoin.ms", "5")));
    assertThat(unknown.getMessage()).contains("log.retentoin.ms");

    ConfigException invalid =
        assertThrows(
            ConfigException.class,
            () ->
                BrokerConfig.parse(
                    Map.of("node.id", "0", "log.dirs", "/d", "num.partitions", "zero")));
    assertThat(invalid.getMessage()).contains("num.partitions");

    ConfigException budget =
        assertThrows(
            ConfigException.class,
            () ->
                BrokerConfig.parse(
                    Map.of("node.id", "0", "log.dirs", "/d", "queued.max.request.bytes", "1024")));
    assertThat(budget.getMessage())
        .contains(
            "queued.max.request.bytes (1024) must be -1 or at least socket.request.max.bytes");
    assertThat(
            BrokerConfig.parse(
                    Map.of("node.id", "0", "log.dirs", "/d", "socket.request.max.bytes", "1024"))
                .listenerLimits()
                .queuedMaxRequestBytes())
        .isEqualTo(Runtime.getRuntime().maxMemory() / 4);

    ConfigException missing =
        assertThrows(ConfigException.class, () -> BrokerConfig.parse(Map.of("log.dirs", "/d")));
    assertThat(missing.getMessage()).contains("node.id");

    ConfigException listener =
        assertThrows(
            ConfigException.class,
            () ->
                BrokerConfig.parse(
                        Map.of("node.id", "0", "log.dirs", "/d", "listeners", "SSL://h:1"))
                    .listeners());
    assertThat(listener.getMessage()).contains("listeners").contains("PLAINTEXT");

    ConfigException badTopicDefault =
        assertThrows(
            ConfigException.class,
            () ->
                BrokerConfig.parse(
                    Map.of(
                        "node.id",
                        "0",
                        "log.dirs",
                        "/d",
                        "log.message.timestamp.type",
                        "Whenever")));
    assertThat(badTopicDefault.getMessage()).contains("message.timestamp.type");
  }

  @Test
  void topicConfigsLayerKafkaDefaultsBrokerDefaultsAndOverrides() {
    Map<String, String> brokerDefaults = Map.of("retention.ms", "1000", "segment.bytes", "2000");

    var config =
        TopicConfigs.logConfig(
            brokerDefaults, Map.of("retention.ms", "5000", "min.insync.replicas", "2"));

    assertThat(config.retentionMs()).isEqualTo(5000);
    assertThat(config.segmentBytes()).isEqualTo(2000);
    assertThat(config.maxMessageBytes()).isEqualTo(1048588);
    assertThrows(
        ConfigException.class,
        () -> TopicConfigs.validate(brokerDefaults, Map.of("cleanup.policy", "compress")));
    assertThat(TopicConfigs.logConfig(brokerDefaults, Map.of("cleanup.policy", "compact,delete")))
        .matches(c -> c.compactEnabled() && c.deleteEnabled());
    assertThrows(
        ConfigException.class,
        () -> TopicConfigs.validate(brokerDefaults, Map.of("retention.mss", "1")));
    TopicConfigs.validate(brokerDefaults, Map.of("unclean.leader.election.enable", "true"));
    assertThat(List.of(TopicConfigs.CONFIG_DEF.names().toArray()))
        .contains("min.insync.replicas", "segment.ms");
  }
}
