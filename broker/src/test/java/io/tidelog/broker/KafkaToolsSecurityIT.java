package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.security.ScramCredentialSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's own CLI tools, unmodified, against a Tidelog with SCRAM-SHA-512 and ACLs on, deny by
 * default: the first super user comes from --add-scram; kafka-configs adds a SCRAM user and
 * describes it, kafka-acls grants that user WRITE on a topic and lists it, kafka-topics creates the
 * topic, and kafka-console-producer with --command-config writes as the user, which it may not do
 * to another topic.
 */
class KafkaToolsSecurityIT {
  @TempDir static Path dir;
  static TestBroker broker;
  static String bootstrap;
  static Path adminConfig;
  static Path aliceConfig;

  @BeforeAll
  static void start() throws Exception {
    int saslPort = EtcdServer.freePort();
    Map<String, String> config = new HashMap<>();
    config.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:"
            + EtcdServer.freePort()
            + ",SASL_PLAINTEXT://127.0.0.1:"
            + saslPort);
    config.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
    config.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
    config.put("super.users", "User:admin");
    broker =
        TestBroker.start(
            dir.resolve("logs"),
            config,
            List.of(ScramCredentialSpec.parse("SCRAM-SHA-512=[name=admin,password=admin-secret]")));
    bootstrap = "127.0.0.1:" + saslPort;
    adminConfig = clientConfig("admin", "admin-secret");
    aliceConfig = clientConfig("alice", "alice-secret");
  }

  private static Path clientConfig(String user, String password) throws Exception {
    return Files.writeString(
        dir.resolve(user + ".properties"),
        String.join(
            "\n",
            "security.protocol=SASL_PLAINTEXT",
            "sasl.mechanism=SCRAM-SHA-512",
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required"
                + " username=\""
                + user
                + "\" password=\""
                + password
                + "\";"));
  }

  @AfterAll
  static void stop() throws Exception {
    broker.close();
  }

  private static ApacheKafka.ToolRun tool(String input, String... classAndArgs) throws Exception {
    return ApacheKafka.tool(input, classAndArgs);
  }

  @Test
  void kafkaConfigsKafkaAclsAndTheConsoleProducerWorkAsOnKafka() throws Exception {
    ApacheKafka.ToolRun addUser =
        tool(
            "",
            "kafka.admin.ConfigCommand",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            adminConfig.toString(),
            "--alter",
            "--add-config",
            "SCRAM-SHA-512=[iterations=8192,password=alice-secret]",
            "--entity-type",
            "users",
            "--entity-name",
            "alice");
    assertThat(addUser.exitStatus()).as(addUser.output()).isZero();
    ApacheKafka.ToolRun describeUser =
        tool(
            "",
            "kafka.admin.ConfigCommand",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            adminConfig.toString(),
            "--describe",
            "--entity-type",
            "users",
            "--entity-name",
            "alice");
    assertThat(describeUser.output()).contains("SCRAM-SHA-512=iterations=8192");
    ApacheKafka.ToolRun quota =
        tool(
            "",
            "kafka.admin.ConfigCommand",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            adminConfig.toString(),
            "--alter",
            "--add-config",
            "producer_byte_rate=1048576,consumer_byte_rate=2097152",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
            "--entity-type",
            "clients",
            "--entity-default");
    assertThat(quota.exitStatus()).as(quota.output()).isZero();
    ApacheKafka.ToolRun describeQuota =
        tool(
            "",
            "kafka.admin.ConfigCommand",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            adminConfig.toString(),
            "--describe",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
            "--entity-type",
            "clients",
            "--entity-default");
    assertThat(describeQuota.output())
        .contains("producer_byte_rate=1048576.0")
        .contains("consumer_byte_rate=2097152.0");

    ApacheKafka.ToolRun createTopics =
        tool(
            "",
            "org.apache.kafka.tools.TopicCommand",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            adminConfig.toString(),
            "--create",
            "--topic",
            "orders",
            "--partitions",
            "1",
            "--replication-factor",
            "1");
    assertThat(createTopics.exitStatus()).as(createTopics.output()).isZero();
    tool(
        "",
        "org.apache.kafka.tools.TopicCommand",
        "--bootstrap-server",
        bootstrap,
        "--command-config",
        adminConfig.toString(),
        "--create",
        "--topic",
        "payments",
        "--partitions",
        "1",
        "--replication-factor",
        "1");

    ApacheKafka.ToolRun grant =
        tool(
            "",
            "org.apache.kafka.tools.AclCommand",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            adminConfig.toString(),
            "--add",
            "--allow-principal",
            "User:alice",
            "--operation",
            "Write",
            "--operation",
            "Describe",
            "--topic",
            "orders");
    assertThat(grant.exitStatus()).as(grant.output()).isZero();
    ApacheKafka.ToolRun list =
        tool(
            "",
            "org.apache.kafka.tools.AclCommand",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            adminConfig.toString(),
            "--list",
            "--topic",
            "orders");
    assertThat(list.output())
        .contains("principal=User:alice")
        .contains("operation=WRITE")
        .contains("operation=DESCRIBE");

    ApacheKafka.ToolRun produce =
        tool(
            "first\nsecond\n",
            "org.apache.kafka.tools.ConsoleProducer",
            "--bootstrap-server",
            bootstrap,
            "--producer.config",
            aliceConfig.toString(),
            "--topic",
            "orders");
    assertThat(produce.exitStatus()).as(produce.output()).isZero();
    assertThat(read("orders")).containsExactly("first", "second");

    ApacheKafka.ToolRun refused =
        tool(
            "third\n",
            "org.apache.kafka.tools.ConsoleProducer",
            "--bootstrap-server",
            bootstrap,
            "--producer.config",
            aliceConfig.toString(),
            "--topic",
            "payments");
    assertThat(refused.output()).contains("TopicAuthorizationException");
    assertThat(read("payments")).isEmpty();
  }

  /** The topic's records, read by the super user. */
  private static List<String> read(String topic) throws Exception {
    Properties p = new Properties();
    p.load(Files.newBufferedReader(adminConfig));
    p.put("bootstrap.servers", bootstrap);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
                return values.size() >= end;
              });
    }
    return values;
  }
}
