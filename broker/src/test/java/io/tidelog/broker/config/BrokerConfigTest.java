package io.tidelog.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.auth.SecurityProtocol;
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
    assertThat(config.listeners().bound())
        .containsExactly(new Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "0.0.0.0", 9093));
    assertThat(config.listeners().advertised())
        .containsExactly(
            new Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "broker-3.tidelog", 9093));
    assertThat(config.listeners().interBrokerName()).isEqualTo("PLAINTEXT");
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
  void anHttpPortThatAListenerBindsIsRefused() {
    ConfigException shared =
        assertThrows(
            ConfigException.class,
            () ->
                BrokerConfig.parse(
                    Map.of(
                        "node.id", "0",
                        "log.dirs", "/d",
                        "listeners", "PLAINTEXT://127.0.0.1:9092",
                        "tidelog.http.port", "9092")));
    assertThat(shared.getMessage()).contains("tidelog.http.port").contains("PLAINTEXT");
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
    assertThat(listener.getMessage())
        .contains("security.inter.broker.protocol")
        .contains("inter.broker.listener.name");

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
    Map<String, String> brokerDefaults = Map.of("retention.ms", "1000", "segment.bytes", "2097152");

    var config =
        TopicConfigs.logConfig(
            brokerDefaults, Map.of("retention.ms", "5000", "min.insync.replicas", "2"));

    assertThat(config.retentionMs()).isEqualTo(5000);
    assertThat(config.segmentBytes()).isEqualTo(2097152);
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
        .contains("min.insync.replicas", "segment.ms", "compression.type", "preallocate");
    // Kafka's 1 MiB minimum of segment.bytes, and its internal.segment.bytes for tests below it
    assertThrows(
        ConfigException.class,
        () -> TopicConfigs.validate(Map.of(), Map.of("segment.bytes", "1024")));
    TopicConfigs.validate(Map.of(), Map.of("internal.segment.bytes", "1024"));
    assertThat(TopicConfigs.logConfig(Map.of(), Map.of("internal.segment.bytes", "1024")))
        .matches(c -> c.segmentBytes() == 1024);
  }

  @Test
  void namedListenersTakeTheirProtocolAndTheirOwnPrefixedSecurityConfigs() {
    Map<String, String> raw =
        Map.of(
            "node.id", "0",
            "log.dirs", "/d",
            "listeners", "INTERNAL://:9093,EXTERNAL://0.0.0.0:9094",
            "advertised.listeners", "INTERNAL://b0.internal:9093,EXTERNAL://b0.example.com:9094",
            "listener.security.protocol.map", "INTERNAL:SSL,EXTERNAL:SASL_SSL",
            "inter.broker.listener.name", "INTERNAL",
            "ssl.keystore.password", "store-secret",
            "sasl.enabled.mechanisms", "SCRAM-SHA-512",
            "listener.name.internal.ssl.client.auth", "required",
            "listener.name.external.scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;");
    BrokerConfig config = BrokerConfig.parse(raw);

    Listeners listeners = config.listeners();
    assertThat(listeners.bound())
        .containsExactly(
            new Listener("INTERNAL", SecurityProtocol.SSL, "", 9093),
            new Listener("EXTERNAL", SecurityProtocol.SASL_SSL, "0.0.0.0", 9094));
    assertThat(listeners.interBroker())
        .isEqualTo(new Listener("INTERNAL", SecurityProtocol.SSL, "b0.internal", 9093));
    Map<String, Object> internal = config.security(listeners.bound().get(0));
    Map<String, Object> external = config.security(listeners.bound().get(1));
    assertThat(internal).containsEntry("ssl.client.auth", "required");
    assertThat(external).containsEntry("ssl.client.auth", "none");
    assertThat(external.get("ssl.keystore.password")).isEqualTo(new Password("store-secret"));
    assertThat(external).containsKey("scram-sha-512.sasl.jaas.config");
    assertThat(internal).doesNotContainKey("scram-sha-512.sasl.jaas.config");

    Map<String, String> described = config.describe();
    assertThat(described).containsEntry("ssl.keystore.password", null);
    assertThat(described)
        .containsEntry("listener.name.external.scram-sha-512.sasl.jaas.config", null);
    assertThat(described).containsEntry("listener.name.internal.ssl.client.auth", "required");
    assertThat(described).containsEntry("tidelog.etcd.endpoints", null);
    assertThat(BrokerConfig.isSensitive("listener.name.internal.ssl.key.password")).isTrue();
    assertThat(BrokerConfig.isSensitive("ssl.client.auth")).isFalse();
  }

  @Test
  void listenersThatDoNotAddUpAreRefusedByName() {
    Map<String, String> base = Map.of("node.id", "0", "log.dirs", "/d");
    assertThat(refusal(base, "listeners", "INTERNAL://:9093,PLAINTEXT://:9094"))
        .contains("no security protocol for listener INTERNAL");
    assertThat(
            refusal(
                base,
                "listeners",
                "PLAINTEXT://:9093",
                "advertised.listeners",
                "OTHER://h:9093",
                "listener.security.protocol.map",
                "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT"))
        .contains("advertises OTHER, which is not one of the listeners");
    assertThat(refusal(base, "listeners", "PLAINTEXT://:9093,PLAINTEXT://:9094"))
        .contains("names PLAINTEXT twice");
    assertThat(refusal(base, "listener.name.plaintext.ssl.no.such.config", "x"))
        .contains("Unknown broker config");
    assertThat(refusal(base, "listeners", "PLAINTEXT://:9093,SASL_PLAINTEXT://:9094"))
        .contains("GSSAPI is not served");
    assertThat(
            refusal(
                base,
                "listeners",
                "PLAINTEXT://:9093,SASL_PLAINTEXT://:9094",
                "sasl.enabled.mechanisms",
                "PLAIN"))
        .contains("listener.name.sasl_plaintext.plain.sasl.jaas.config");
  }

  private static String refusal(Map<String, String> base, String... keyValues) {
    Map<String, String> raw = new java.util.HashMap<>(base);
    for (int i = 0; i < keyValues.length; i += 2) {
      raw.put(keyValues[i], keyValues[i + 1]);
    }
    return assertThrows(
            ConfigException.class,
            () -> {
              BrokerConfig config = BrokerConfig.parse(raw);
              config
                  .listeners()
                  .bound()
                  .forEach(
                      l ->
                          io.tidelog.broker.security.ListenerSecurity.create(
                              l.listenerName(),
                              l.protocol(),
                              config.security(l),
                              new io.tidelog.broker.security.ScramCredentials()));
            })
        .getMessage();
  }
}
